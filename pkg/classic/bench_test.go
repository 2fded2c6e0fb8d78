package classic

import (
	"testing"

	"github.com/pulka/pulka/pkg/cards"
)

// recordGame plays a random game and returns its states before each move
// and the moves, for benchmarks and allocation tests.
func recordGame(tb testing.TB, seed uint64) ([]Game, []Move) {
	tb.Helper()
	g, err := New(seed, Settings{Variant: Standard})
	if err != nil {
		tb.Fatal(err)
	}
	r := cards.NewRNG(seed, 9)
	var states []Game
	var moves []Move
	for !g.Over() {
		legal := g.Legal(g.ToMove(), nil)
		m := legal[r.IntN(len(legal))]
		states = append(states, *g)
		moves = append(moves, m)
		if _, err := g.Apply(m, nil); err != nil {
			tb.Fatal(err)
		}
	}
	return states, moves
}

func TestLegal_DoesNotAllocate(t *testing.T) {
	states, _ := recordGame(t, 1)
	buf := make([]Move, 0, 32)
	i := 0
	allocs := testing.AllocsPerRun(1000, func() {
		g := &states[i%len(states)]
		buf = g.Legal(g.ToMove(), buf[:0])
		i++
	})
	if allocs != 0 {
		t.Fatalf("Legal allocates %.1f times per call", allocs)
	}
}

func TestApply_DoesNotAllocate(t *testing.T) {
	states, moves := recordGame(t, 2)
	evs := make([]Event, 0, 32)
	i := 0
	var g Game
	allocs := testing.AllocsPerRun(len(moves), func() {
		g = states[i]
		var err error
		if evs, err = g.Apply(moves[i], evs[:0]); err != nil {
			t.Fatal(err)
		}
		i = (i + 1) % len(moves)
	})
	if allocs != 0 {
		t.Fatalf("Apply allocates %.2f times per move", allocs)
	}
}

func TestBot_DoesNotAllocate(t *testing.T) {
	states, _ := recordGame(t, 3)
	i := 0
	allocs := testing.AllocsPerRun(len(states), func() {
		g := &states[i]
		if _, ok := (Bot{}).Choose(g, g.ToMove()); !ok {
			t.Fatal("no move")
		}
		i = (i + 1) % len(states)
	})
	if allocs != 0 {
		t.Fatalf("the baseline bot allocates %.2f times per move", allocs)
	}
}

func BenchmarkLegal(b *testing.B) {
	states, _ := recordGame(b, 1)
	buf := make([]Move, 0, 32)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		g := &states[i]
		buf = g.Legal(g.ToMove(), buf[:0])
		if i++; i == len(states) {
			i = 0
		}
	}
}

func BenchmarkApply(b *testing.B) {
	states, moves := recordGame(b, 2)
	evs := make([]Event, 0, 32)
	b.ReportAllocs()
	g := states[0]
	i := 0
	for b.Loop() {
		var err error
		if evs, err = g.Apply(moves[i], evs[:0]); err != nil {
			b.Fatal(err)
		}
		if i++; i == len(moves) {
			i, g = 0, states[0]
		}
	}
}

func BenchmarkBot(b *testing.B) {
	states, _ := recordGame(b, 3)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		g := &states[i]
		_, _ = Bot{}.Choose(g, g.ToMove())
		if i++; i == len(states) {
			i = 0
		}
	}
}

// BenchmarkWholeGame is one standard game (24 hands) of four baseline bots;
// games/s is 1e9 / ns/op.
func BenchmarkWholeGame(b *testing.B) {
	evs := make([]Event, 0, 32)
	b.ReportAllocs()
	seed := uint64(0)
	for b.Loop() {
		seed++
		g, _ := New(seed, Settings{Variant: Standard})
		for !g.Over() {
			seat := g.ToMove()
			m, _ := Bot{}.Choose(g, seat)
			var err error
			if evs, err = g.Apply(m, evs[:0]); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "games/s")
}
