package japanese

import (
	"strings"
	"testing"

	"github.com/pulka/pulka/pkg/cards"
)

// pos describes a position in the middle of a hand, for rule tests that need
// particular cards. Cards are written as cards.Card.String does, separated by
// spaces; a column list has one entry per column, "-" for a taken column.
type pos struct {
	Trump    cards.Suit // NoSuit: bezi
	Leader   int
	TrickNo  int // 0: nobody has played yet, so the first-card rule applies
	Tricks   [Seats]int
	Scores   [Seats]int
	Target   int
	Hands    [Seats]string
	Up, Down [Seats]string
	Lead     string     // the card the leader has already led, if any
	Named    cards.Suit // the suit named by a led joker
}

func parseCards(t testing.TB, s string) []cards.Card {
	t.Helper()
	var out []cards.Card
	for _, f := range strings.Fields(s) {
		if f == "-" {
			out = append(out, cards.NoCard)
			continue
		}
		c, err := cards.Parse(f)
		if err != nil {
			t.Fatalf("bad card %q: %v", f, err)
		}
		out = append(out, c)
	}
	return out
}

func setOf(t testing.TB, s string) cards.Set { return cards.SetOf(parseCards(t, s)...) }

func card(t testing.TB, s string) cards.Card { return parseCards(t, s)[0] }

// game builds the position directly (it need not be reachable from a deal:
// rule tests look at one trick).
func (p pos) game(t testing.TB) *Game {
	t.Helper()
	target := p.Target
	if target == 0 {
		target = DefaultTarget
	}
	g := &Game{target: uint8(target), phase: PhasePlay, trump: p.Trump, chosen: true, leader: uint8(p.Leader),
		trickNo: uint8(p.TrickNo), named: cards.NoSuit, winner: -1,
		trick: [Seats]cards.Card{cards.NoCard, cards.NoCard}}
	// Hand 0's declarer is `first`; make the leader the declarer.
	g.first = uint8(p.Leader)
	g.local = true // the next hand is dealt from LocalKey(0, hand)
	for s := range Seats {
		g.hands[s] = setOf(t, p.Hands[s])
		g.tricks[s] = uint8(p.Tricks[s])
		g.scores[s] = uint8(p.Scores[s])
		for i := range Columns {
			g.up[s][i], g.down[s][i] = cards.NoCard, cards.NoCard
		}
		for i, c := range parseCards(t, p.Up[s]) {
			g.up[s][i] = c
		}
		for i, c := range parseCards(t, p.Down[s]) {
			g.down[s][i] = c
		}
	}
	g.syncFaceUps()
	if p.Lead != "" {
		g.trick[p.Leader] = card(t, p.Lead)
		g.named = p.Named
	}
	return g
}

// mustApply applies m and fails the test on error.
func mustApply(t testing.TB, g *Game, m Move) []Event {
	t.Helper()
	ev, err := g.Apply(m, nil)
	if err != nil {
		t.Fatalf("Apply(%v): %v", m, err)
	}
	return ev
}

// eventsOf returns the events of kind k.
func eventsOf(ev []Event, k EventKind) []Event {
	var out []Event
	for _, e := range ev {
		if e.Kind == k {
			out = append(out, e)
		}
	}
	return out
}

// newGame starts a match, failing the test on error.
func newGame(t testing.TB, seed uint64) *Game {
	t.Helper()
	g, err := New(seed, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}
