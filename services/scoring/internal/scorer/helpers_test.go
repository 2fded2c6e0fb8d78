package scorer_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/services/scoring/internal/scorer"
	"github.com/pulka/pulka/services/scoring/internal/sheetstore"
)

// pulkaII are the four nine-card hands of the seed sheet's pulka II: Giorgi
// makes every hand (premia +250), Ana, Levan and Nika get moshla −200, −150
// and −300. A nines game repeats them four times.
var pulkaII = [][2][]int{
	{{2, 3, 2, 1}, {2, 3, 3, 1}},
	{{3, 2, 2, 3}, {3, 2, 2, 2}},
	{{1, 1, 1, 5}, {1, 2, 1, 5}},
	{{4, 3, 3, 0}, {4, 3, 2, 0}},
}

var names = []string{"giorgi", "ana", "levan", "nika"}

// ninesInputs is a whole nines game: start, 16 hands, end.
func ninesInputs(tid, gid string, players []string) []*scoringv1.ScoringInput {
	in := func(x any) *scoringv1.ScoringInput {
		s := &scoringv1.ScoringInput{TableId: tid, GameId: gid}
		switch v := x.(type) {
		case *scoringv1.GameStarted:
			s.Input = &scoringv1.ScoringInput_GameStarted{GameStarted: v}
		case *scoringv1.HandResult:
			s.Input = &scoringv1.ScoringInput_HandResult{HandResult: v}
		case *scoringv1.GameEnded:
			s.Input = &scoringv1.ScoringInput_GameEnded{GameEnded: v}
		}
		return s
	}
	start := &scoringv1.GameStarted{Settings: &lobbyv1.TableSettings{
		Game: lobbyv1.Game_GAME_CLASSIC, ClassicVariant: lobbyv1.ClassicVariant_CLASSIC_VARIANT_NINES,
		Khishti: lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_200, Premia: true, Moshla: true, RestDocked: true,
	}}
	for seat, p := range players {
		start.Players = append(start.Players, &scoringv1.SheetPlayer{Seat: uint32(seat), PlayerId: p, DisplayName: names[seat]})
	}
	out := []*scoringv1.ScoringInput{in(start)}
	for i := range 16 {
		h := &scoringv1.HandResult{HandIndex: uint32(i), CardsPerSeat: 9}
		p := pulkaII[i%4]
		for seat := range 4 {
			h.Seats = append(h.Seats, &scoringv1.SeatTricks{Seat: uint32(seat), Bid: uint32(p[0][seat]), Tricks: uint32(p[1][seat])})
		}
		out = append(out, in(h))
	}
	return append(out, in(&scoringv1.GameEnded{Completed: true}))
}

func publish(t *testing.T, rdb redis.UniversalClient, inputs ...*scoringv1.ScoringInput) {
	t.Helper()
	pub := streams.NewPublisher(rdb, streams.WithMaxLen(0))
	for _, in := range inputs {
		e, err := scoringclient.InputEntry(in)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pub.Publish(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
}

func newScorer(t *testing.T, rdb redis.UniversalClient) *scorer.Scorer { return newScorerB(t, rdb) }

func newScorerB(t testing.TB, rdb redis.UniversalClient) *scorer.Scorer {
	t.Helper()
	s, err := scorer.New(rdb, sheetstore.WriterOptions{}, slog.New(slog.NewTextHandler(io.Discard, nil)),
		tracenoop.NewTracerProvider(), metricnoop.NewMeterProvider())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// fast makes reclaims quick enough for tests.
func fast(extra ...streams.Option) []streams.Option {
	return append([]streams.Option{
		streams.WithMinIdle(300 * time.Millisecond),
		streams.WithClaimInterval(50 * time.Millisecond),
		streams.WithBlock(200 * time.Millisecond),
		streams.WithBackoff(10*time.Millisecond, 100*time.Millisecond),
		streams.WithShutdownGrace(time.Second),
	}, extra...)
}

// runConsumer runs a consumer of the hands stream until stop is called.
func runConsumer(t *testing.T, rdb redis.UniversalClient, name string, h streams.Handler, opts ...streams.Option) (stop func()) {
	t.Helper()
	c := streams.NewConsumer(rdb, "scoring", name, h, fast(opts...)...)
	ctx, cancel := context.WithCancel(context.Background())
	if err := c.Add(ctx, scoringclient.HandsStream); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("consumer %s: %v", name, err)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("consumer %s did not stop", name)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// settled: every entry of the hands stream was delivered and acknowledged.
func settled(ctx context.Context, rdb redis.UniversalClient) bool {
	groups, err := rdb.XInfoGroups(ctx, scoringclient.HandsStream).Result()
	if err != nil || len(groups) == 0 {
		return false
	}
	return groups[0].Lag == 0 && groups[0].Pending == 0
}

var errCrash = errors.New("consumer died after its effect, before the ack")

// crashing wraps a handler: for the entries pick chooses, the first delivery
// runs the whole effect and then fails, as a consumer killed between its
// effect and its XACK would: the entry stays pending and is redelivered.
func crashing(h streams.Handler, pick func(n int) bool) (streams.Handler, func() int) {
	var mu sync.Mutex
	seen := map[string]bool{}
	n, crashes := 0, 0
	return func(ctx context.Context, m streams.Message) error {
			err := h(ctx, m)
			mu.Lock()
			defer mu.Unlock()
			first := !seen[m.ID]
			seen[m.ID] = true
			if first {
				n++
				if err == nil && pick(n) {
					crashes++
					return errCrash
				}
			}
			return err
		}, func() int {
			mu.Lock()
			defer mu.Unlock()
			return crashes
		}
}

func xrange(t *testing.T, rdb redis.UniversalClient, stream string) []streams.Message {
	t.Helper()
	xs, err := rdb.XRange(context.Background(), stream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]streams.Message, len(xs))
	for i, x := range xs {
		s, _ := x.Values[streams.FieldData].(string)
		out[i] = streams.Message{Stream: stream, ID: x.ID, Data: []byte(s)}
	}
	return out
}

func mustUnmarshal[T proto.Message](t *testing.T, b []byte, m T) T {
	t.Helper()
	if err := proto.Unmarshal(b, m); err != nil {
		t.Fatal(err)
	}
	return m
}
