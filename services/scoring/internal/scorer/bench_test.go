package scorer_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
)

// BenchmarkHandle_NinesGame handles the 18 inputs of a whole game (start, 16
// hands, end) directly, one after the other: the service's cost per input
// with Redis round trips included, without the consumer around it.
func BenchmarkHandle_NinesGame(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	s := newScorerB(b, rdb)
	ctx := context.Background()
	n := 0
	for b.Loop() {
		gid := fmt.Sprint("g", n)
		for i, in := range ninesInputs(fmt.Sprint("t", n%50), gid, names) {
			e, err := scoringclient.InputEntry(in)
			if err != nil {
				b.Fatal(err)
			}
			m := streams.Message{Stream: scoringclient.HandsStream, ID: fmt.Sprintf("%d-%d", time.Now().UnixMilli(), i), Data: e.Data}
			if err := s.Handle(ctx, m); err != nil {
				b.Fatal(err)
			}
		}
		n++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*18), "ns/input")
}

// BenchmarkConsumer_Games publishes whole games and measures how fast one
// consumer (one replica) settles them: inputs per second end to end.
func BenchmarkConsumer_Games(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	const games = 100
	for b.Loop() {
		b.StopTimer()
		if err := rdb.FlushAll(context.Background()).Err(); err != nil {
			b.Fatal(err)
		}
		pub := streams.NewPublisher(rdb, streams.WithMaxLen(0))
		var entries []streams.Entry
		for g := range games {
			for _, in := range ninesInputs(fmt.Sprint("t", g), fmt.Sprint("g", g), names) {
				e, _ := scoringclient.InputEntry(in)
				entries = append(entries, e)
			}
		}
		if _, err := pub.PublishBatch(context.Background(), entries); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c := streams.NewConsumer(rdb, "scoring", "bench", newScorerB(b, rdb).Handle, fast()...)
		ctx, cancel := context.WithCancel(context.Background())
		if err := c.Add(ctx, scoringclient.HandsStream); err != nil {
			b.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- c.Run(ctx) }()
		for rdb.XLen(ctx, scoringclient.StandingsStream).Val() < games || !settled(ctx, rdb) {
			time.Sleep(time.Millisecond)
		}
		cancel()
		if err := <-done; err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(games*18*b.N)/b.Elapsed().Seconds(), "inputs/s")
}
