package scorer_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/services/scoring/internal/scorer"
)

func TestOrderKey_IsTheInputsTable(t *testing.T) {
	input, err := proto.Marshal(&scoringv1.ScoringInput{TableId: "t1", GameId: "g1",
		Input: &scoringv1.ScoringInput_GameEnded{GameEnded: &scoringv1.GameEnded{Completed: true}}})
	if err != nil {
		t.Fatal(err)
	}
	noTable, _ := proto.Marshal(&scoringv1.ScoringInput{GameId: "g1"})
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"an input is keyed by its table", input, "t1"},
		{"an input without a table keeps the stream", noTable, scoringclient.HandsStream},
		{"bytes that are no protobuf keep the stream", []byte{0xff, 0xff, 0xff}, scoringclient.HandsStream},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := scorer.OrderKey(streams.Message{Stream: scoringclient.HandsStream, Data: tc.data}); got != tc.want {
				t.Fatalf("OrderKey = %q, want %q", got, tc.want)
			}
		})
	}
}

// The service's consumer handles the hands stream by table: one table's
// inputs do not wait for another's (the first input of table-a waits until
// one of table-b was handled, which one worker for the stream never
// allowed), and both games are scored and their standings published once.
func TestConsumerOptions_TablesRunInParallel(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	cfg, err := load(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := ninesInputs("table-a", "game-a", []string{"p1", "p2", "p3", "p4"}), ninesInputs("table-b", "game-b", []string{"p5", "p6", "p7", "p8"})
	publish(t, rdb, a...)
	publish(t, rdb, b...)
	s := newScorer(t, rdb)
	bHandled := make(chan struct{})
	var once sync.Once
	var firstA sync.Once
	h := func(ctx context.Context, m streams.Message) error {
		switch scorer.OrderKey(m) {
		case "table-a":
			firstA.Do(func() {
				select {
				case <-bHandled:
				case <-time.After(5 * time.Second):
					t.Error("table-a's input waited 5 s for table-b's: the stream's inputs ran one at a time")
				}
			})
		case "table-b":
			defer once.Do(func() { close(bHandled) })
		}
		return s.Handle(ctx, m)
	}
	runConsumer(t, rdb, "c1", h, cfg.ConsumerOptions()...)
	ctx := context.Background()
	eventually(t, 20*time.Second, "every input handled", func() bool { return settled(ctx, rdb) })
	if got := xrange(t, rdb, scoringclient.StandingsStream); len(got) != 2 {
		t.Fatalf("%d standings published, want one per game", len(got))
	}
}
