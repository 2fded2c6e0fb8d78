package japanese

import (
	"flag"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/internal/threadcpu"
)

var fastStrong = StrongBot{Seed: 3, Rollouts: 24}

// reshuffleHidden deals the opponent's hand and every face-down card anew
// among the same places.
func reshuffleHidden(g *Game, s int, r *cards.RNG) Game {
	var hidden []cards.Card
	hidden = g.hands[1-s].AppendCards(hidden)
	for seat := range Seats {
		for _, c := range g.down[seat] {
			if c != cards.NoCard {
				hidden = append(hidden, c)
			}
		}
	}
	for i := len(hidden) - 1; i > 0; i-- {
		j := r.IntN(i + 1)
		hidden[i], hidden[j] = hidden[j], hidden[i]
	}
	h := *g
	n := h.hands[1-s].Len()
	h.hands[1-s] = cards.SetOf(hidden[:n]...)
	k := n
	for seat := range Seats {
		for i, c := range h.down[seat] {
			if c != cards.NoCard {
				h.down[seat][i] = hidden[k]
				k++
			}
		}
	}
	h.key[0] ^= 0xff
	return h
}

// TestStrongBot_IsHonest: with the opponent's hand and the face-down cards
// dealt anew (the seat's View unchanged) the strong bot makes the same move.
func TestStrongBot_IsHonest(t *testing.T) {
	checked := 0
	for seed := range uint64(120) {
		g := fuzzGame(t, seed, uint16(seed%60))
		if g.Over() || g.phase != PhasePlay {
			continue
		}
		s := g.ToMove()
		r := cards.NewRNG(seed, 99)
		h := reshuffleHidden(g, s, &r)
		if h.hands == g.hands && h.down == g.down {
			continue
		}
		if !viewsEqual(g.View(s), h.View(s)) {
			t.Fatalf("seed %d: the reshuffle changed the seat's view", seed)
		}
		want, _ := fastStrong.Choose(g, s)
		if got, _ := fastStrong.Choose(&h, s); got != want {
			t.Fatalf("seed %d: strong bot chose %v, but %v once hidden cards moved", seed, want, got)
		}
		checked++
	}
	if checked < 40 {
		t.Fatalf("only %d positions checked", checked)
	}
}

func viewsEqual(a, b View) bool {
	return a.Seat == b.Seat && a.Phase == b.Phase && slices.Equal(a.MyCards, b.MyCards) &&
		slices.Equal(a.LegalCards, b.LegalCards) && a.HandSizes == b.HandSizes &&
		slices.Equal(a.Columns[0], b.Columns[0]) && slices.Equal(a.Columns[1], b.Columns[1]) &&
		slices.Equal(a.Played, b.Played) && slices.Equal(a.CurrentTrick, b.CurrentTrick) &&
		a.Tricks == b.Tricks && a.Scores == b.Scores && a.Trump == b.Trump
}

func TestStrongBot_AlwaysLegalAndDeterministic(t *testing.T) {
	n := uint64(20)
	if testing.Short() || checkEvery > 2 { // checkEvery > 2: the race detector
		n = 4
	}
	for seed := range n {
		g := newGame(t, seed)
		var legal []Move
		for !g.Over() {
			s := g.ToMove()
			var m Move
			if s == int(seed%2) {
				m, _ = fastStrong.Choose(g, s)
				legal = g.Legal(s, legal[:0])
				if !slices.Contains(legal, m) {
					t.Fatalf("seed %d: strong move %v not in %v", seed, m, legal)
				}
				if again, _ := fastStrong.Choose(g.Clone(), s); again != m {
					t.Fatalf("seed %d: strong bot chose %v then %v", seed, m, again)
				}
			} else {
				m, _ = Bot{}.Choose(g, s)
			}
			mustApply(t, g, m)
		}
		if _, ok := fastStrong.Choose(g, 0); ok {
			t.Fatal("strong bot moves after the end")
		}
	}
}

func TestSampler_KeepsEveryCountAndEverySeenCard(t *testing.T) {
	for seed := range uint64(60) {
		g := fuzzGame(t, seed, uint16(seed%60))
		if g.Over() || g.phase != PhasePlay {
			continue
		}
		s := g.ToMove()
		sm := newSampler(g, s, seed)
		for range 10 {
			w := sm.sample()
			if w.hands[s] != g.hands[s] || w.up != g.up || w.hands[1-s].Len() != g.hands[1-s].Len() {
				t.Fatalf("seed %d: the sample changed what the seat sees", seed)
			}
			all := w.hands[0] | w.hands[1] | w.faceUps[0] | w.faceUps[1] | w.gone
			n := w.hands[0].Len() + w.hands[1].Len() + w.faceUps[0].Len() + w.faceUps[1].Len() + w.gone.Len()
			for p := range Seats {
				if w.trick[p] != cards.NoCard {
					all, n = all.With(w.trick[p]), n+1
				}
				for i := range Columns {
					if (w.down[p][i] == cards.NoCard) != (g.down[p][i] == cards.NoCard) {
						t.Fatalf("seed %d: a face-down card appeared or vanished", seed)
					}
					if c := w.down[p][i]; c != cards.NoCard {
						all, n = all.With(c), n+1
					}
				}
			}
			if all != cards.FullDeck || n != cards.DeckSize {
				t.Fatalf("seed %d: the sample holds %d cards (%d distinct)", seed, n, all.Len())
			}
		}
	}
}

// TestStrongBot_RolloutsAreItsHardCap: a decision never runs more playouts
// than its budget (each at most the rest of one hand), so the CPU a move
// costs has a ceiling no clock decides; an unset budget is StrongRollouts.
func TestStrongBot_RolloutsAreItsHardCap(t *testing.T) {
	pos, _ := benchPositions(t)
	pos = pos[:min(len(pos), 120)]
	for _, b := range []StrongBot{{Seed: 1, Rollouts: 40}, {Seed: 2}} {
		budget := b.Rollouts
		if budget == 0 {
			budget = StrongRollouts
		}
		most := 0
		for j := range pos {
			g := &pos[j]
			m, n := b.decide(g, g.ToMove())
			if n > budget {
				t.Fatalf("position %d (%v): %d playouts, budget %d", j, m, n, budget)
			}
			most = max(most, n)
		}
		// The budget is spent, not just bounded: at least half of it on the
		// busiest decision (rounding down per candidate loses the rest).
		if most < budget/2 {
			t.Fatalf("budget %d: the busiest decision ran %d playouts", budget, most)
		}
	}
}

var matchN = flag.Int("botmatch.matches", 0, "matches in TestStrongBot_Match (0: a short check)")

// TestStrongBot_Match plays seeded matches of the strong bot against the
// baseline (seats alternating) and reports its match and hand win rates
// and time per move: go test ./pkg/japanese -run TestStrongBot_Match -botmatch.matches 10000 -v
func TestStrongBot_Match(t *testing.T) {
	n := *matchN
	if n == 0 {
		n = 10
		if testing.Short() || checkEvery > 2 {
			n = 2
		}
	}
	defer threadcpu.Lock()()
	var won, hands, handsWon, handsLost int
	var cpu []time.Duration
	buf := make([]Event, 0, 24)
	for seed := range uint64(n) {
		g, _ := New(seed*7+1, Settings{})
		me := int(seed % 2)
		var players [Seats]Player
		players[me], players[1-me] = StrongBot{Seed: seed}, Bot{}
		for !g.Over() {
			s := g.ToMove()
			start := threadcpu.Now()
			m, _ := players[s].Choose(g, s)
			if s == me {
				cpu = append(cpu, threadcpu.Now()-start)
			}
			var err error
			if buf, err = g.Apply(m, buf[:0]); err != nil {
				t.Fatal(err)
			}
			for _, e := range buf {
				if e.Kind == EventHandEnded {
					hands++
					switch {
					case e.Points[me] > 0:
						handsWon++
					case e.Points[1-me] > 0:
						handsLost++
					}
				}
			}
		}
		if g.Winner() == me {
			won++
		}
	}
	sort.Slice(cpu, func(i, j int) bool { return cpu[i] < cpu[j] })
	t.Logf("strong vs baseline, %d matches to 21: won %.1f%%; hands won %.1f%%, lost %.1f%% of %d; per move (%s) p50 %v p99 %v max %v",
		n, 100*float64(won)/float64(n), 100*float64(handsWon)/float64(hands), 100*float64(handsLost)/float64(hands), hands,
		threadcpu.Clock, cpu[len(cpu)/2], cpu[len(cpu)*99/100], cpu[len(cpu)-1])
	if *matchN >= 100 && won*2 <= n {
		t.Errorf("the strong bot does not beat the baseline")
	}
}

func BenchmarkStrongBot(b *testing.B) {
	pos, _ := benchPositions(b)
	bot := StrongBot{Seed: 1}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		_, _ = bot.Choose(&pos[i], pos[i].ToMove())
		if i++; i == len(pos) {
			i = 0
		}
	}
}
