package classic

import (
	"strings"
	"testing"

	"github.com/pulka/pulka/pkg/cards"
)

// set parses "AH KH JK1" into a card set.
func set(t testing.TB, s string) cards.Set {
	t.Helper()
	var out cards.Set
	for _, f := range strings.Fields(s) {
		c, err := cards.Parse(f)
		if err != nil {
			t.Fatalf("bad card %q: %v", f, err)
		}
		out = out.With(c)
	}
	return out
}

func card(t testing.TB, s string) cards.Card {
	t.Helper()
	c, err := cards.Parse(s)
	if err != nil {
		t.Fatalf("bad card %q: %v", s, err)
	}
	return c
}

// position describes a play-phase position to build directly.
type position struct {
	hand   int // 0-based hand of the standard game; decides the cards dealt and the dealer
	dealer int // dealer of that hand
	trump  cards.Suit
	hands  [Seats]string
	bids   [Seats]int8
	leader int
}

// build makes a game in the play phase of p: each seat holds p.hands, the
// trick is empty and p.leader is to lead. It bypasses the deal on purpose, so
// positions can be chosen card by card.
func build(t testing.TB, p position) *Game {
	t.Helper()
	g := &Game{variant: Standard}
	g.hand = int8(p.hand)
	g.firstDealer = int8(((p.dealer-p.hand)%Seats + Seats) % Seats)
	g.resetHand()
	g.phase = PhasePlay
	g.trump = p.trump
	g.bids = p.bids
	n := -1
	for s := range Seats {
		g.hands[s] = set(t, p.hands[s])
		if n >= 0 && g.hands[s].Len() != n {
			t.Fatalf("seat %d holds %d cards, others %d", s, g.hands[s].Len(), n)
		}
		n = g.hands[s].Len()
	}
	g.trickNo = int8(g.CardsDealt() - n)
	if g.trickNo < 0 {
		t.Fatalf("hand %d deals %d cards, position has %d", p.hand, g.CardsDealt(), n)
	}
	g.leader, g.turn = int8(p.leader), int8(p.leader)
	if g.Dealer() != p.dealer {
		t.Fatalf("dealer = %d, want %d", g.Dealer(), p.dealer)
	}
	return g
}

// play applies text moves ("2 play AH") and fails the test on any error.
func play(t testing.TB, g *Game, moves ...string) []Event {
	t.Helper()
	var evs []Event
	for _, s := range moves {
		var m Move
		if err := m.UnmarshalText([]byte(s)); err != nil {
			t.Fatalf("move %q: %v", s, err)
		}
		var err error
		evs, err = g.Apply(m, evs)
		if err != nil {
			t.Fatalf("move %q rejected: %v", s, err)
		}
	}
	return evs
}

func mv(t testing.TB, s string) Move {
	t.Helper()
	var m Move
	if err := m.UnmarshalText([]byte(s)); err != nil {
		t.Fatalf("move %q: %v", s, err)
	}
	return m
}

// trickWonBy returns the winner of the last trick in evs, or -1.
func trickWonBy(evs []Event) int {
	w := -1
	for _, e := range evs {
		if e.Kind == EventTrickWon {
			w = int(e.Seat)
		}
	}
	return w
}

// containsMove reports whether legal holds m in canonical form.
func containsMove(legal []Move, m Move) bool {
	c := m.canon()
	for _, l := range legal {
		if l == c {
			return true
		}
	}
	return false
}
