package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/assign"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
)

// BenchmarkRunner_CommandToEvent is one move's path through the runner:
// XADD of the command → shared reader → table goroutine → Apply → fenced
// append → the event read back (what a gateway sees), one move at a time.
func BenchmarkRunner_CommandToEvent(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	r, err := New(rdb, testOptions("r1"))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	defer func() { cancel(); <-done }()

	t := &testing.T{}
	game := 0
	var d *jDriver
	newGame := func() {
		game++
		ts := japaneseStart(fmt.Sprint("j", game), uint64(game), 31, "alice", "bob")
		place(t, rdb, ts, "r1")
		d = newJDriver(t, rdb, ts)
	}
	newGame()
	b.ResetTimer()
	for b.Loop() {
		if d.g.Over() {
			b.StopTimer()
			newGame()
			b.StartTimer()
		}
		if d.g.AwaitingDeal() {
			// A hand waits for its seed deadline (the driver sends no
			// client seeds): not a command's latency.
			b.StopTimer()
			d.sync()
			b.StartTimer()
		}
		seat := d.g.ToMove()
		m, _ := japanese.Bot{}.Choose(d.g, seat)
		send(t, rdb, d.table, d.players[seat], commandOf(m))
		for moved := false; !moved; {
			res, err := rdb.XRead(context.Background(), &redis.XReadArgs{
				Streams: []string{streams.TableEvents(d.table), d.after}, Block: 5 * time.Second}).Result()
			if err != nil {
				b.Fatal(err)
			}
			for _, x := range res[0].Messages {
				d.after = x.ID
				s, _ := x.Values[streams.FieldData].(string)
				ev := &tablev1.Event{}
				if err := proto.Unmarshal([]byte(s), ev); err != nil {
					b.Fatal(err)
				}
				if isMove(ev) {
					moved = true
				}
				if err := d.follow(ev); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	if t.Failed() {
		b.Fatal("helper failed")
	}
}

// BenchmarkRunner_ConcurrentBotGames runs b.N classic games of four bots
// (bot delay 1 ms) on one runner at once: every step is a timer tick, an
// Apply and a fenced append. It reports the steps per second.
func BenchmarkRunner_ConcurrentBotGames(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b, func(o *redis.Options) { o.PoolSize = 64 })
	r, err := New(rdb, testOptions("r1"))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	t := &testing.T{}
	store := assign.NewStore(rdb)
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		place(t, rdb, classicStart(fmt.Sprint("c", i), uint64(i)), "r1")
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	for i := range b.N {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Since(start) < 5*time.Minute {
				if _, ok, err := store.Owner(context.Background(), fmt.Sprint("c", i)); err == nil && !ok {
					return
				}
				time.Sleep(20 * time.Millisecond)
			}
			mu.Lock()
			failed = errors.New("a game did not finish")
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if failed != nil || t.Failed() {
		b.Fatal(failed)
	}
	steps := 0
	for i := range b.N {
		n, err := rdb.XLen(context.Background(), streams.TableEvents(fmt.Sprint("c", i))).Result()
		if err != nil {
			b.Fatal(err)
		}
		steps += int(n)
	}
	b.ReportMetric(float64(steps)/elapsed.Seconds(), "events/s")
}

// BenchmarkRunner_NewEntropy is what drawing every step's entropy from
// crypto/rand costs (docs/table-runner.md compares it with a step).
func BenchmarkRunner_NewEntropy(b *testing.B) {
	for b.Loop() {
		_ = newEntropy()
	}
}
