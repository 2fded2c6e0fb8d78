package classic

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/pulka/pulka/pkg/cards"
)

func TestMove_TextRoundTripsEveryLegalMove(t *testing.T) {
	for seed := range uint64(20) {
		g := newGame(t, seed, Variant(seed%2))
		r := cards.NewRNG(seed, 2)
		for !g.Over() {
			legal := g.Legal(g.ToMove(), nil)
			for _, m := range legal {
				b, err := m.MarshalText()
				if err != nil {
					t.Fatalf("%+v: %v", m, err)
				}
				var back Move
				if err := back.UnmarshalText(b); err != nil || back != m {
					t.Fatalf("%q read back as %+v (%v), want %+v", b, back, err, m)
				}
				j, _ := json.Marshal(m)
				if string(j) != `"`+string(b)+`"` {
					t.Fatalf("JSON %s, want the text %q", j, b)
				}
			}
			if _, err := g.Apply(legal[r.IntN(len(legal))], nil); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestMove_TextRejectsMalformedMoves(t *testing.T) {
	for _, s := range []string{"", "1", "1 bid", "4 bid 1", "-1 bid 1", "x bid 1", "1 bid 10", "1 bid x",
		"1 trump X", "1 trump", "1 play", "1 play ZZ", "1 play 6S", "1 play AH take", "1 play JK1",
		"1 play JK1 take S", "1 play JK1 highest", "1 play JK1 highest NT", "1 play JK1 jump",
		"1 fold", "1 bid 1 2"} {
		var m Move
		if err := m.UnmarshalText([]byte(s)); err == nil {
			t.Errorf("%q parsed as %+v", s, m)
		}
	}
	for _, m := range []Move{{Seat: 4, Kind: MoveBid}, {Kind: 0}, {Kind: MovePlay, Card: 40},
		{Kind: MovePlay, Card: cards.Joker1}, {Kind: MoveTrump, Suit: 9},
		{Kind: MovePlay, Card: cards.Joker2, Joker: JokerGive, Suit: cards.NoSuit}} {
		if b, err := m.MarshalText(); err == nil {
			t.Errorf("%+v marshalled as %q", m, b)
		}
	}
}

func TestEvent_JSONRoundTrip(t *testing.T) {
	g := newGame(t, 17, Standard)
	evs := randomPlay(t, g, 17, nil)
	kinds := map[EventKind]bool{}
	for _, e := range evs {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("%+v: %v", e, err)
		}
		var back Event
		if err := json.Unmarshal(b, &back); err != nil || back != e {
			t.Fatalf("%s read back as %+v (%v), want %+v", b, back, err, e)
		}
		kinds[e.Kind] = true
	}
	if len(kinds) != int(EventGameEnded) {
		t.Fatalf("only kinds %v were seen", kinds)
	}
	b, _ := json.Marshal(Event{Kind: EventPlayed, To: Public, Hand: 3, Seat: 2, Card: cards.Joker1,
		Joker: JokerHighest, Suit: cards.Spades})
	if want := `{"kind":"played","to":-1,"hand":3,"trick":0,"seat":2,"card":"JK1","joker":"highest","suit":"S"}`; string(b) != want {
		t.Fatalf("JSON %s, want %s", b, want)
	}
}

func TestSnapshot_RoundTripIsExactAtEveryStep(t *testing.T) {
	for _, v := range []Variant{Standard, Nines} {
		g := newGame(t, 23, v)
		r := cards.NewRNG(23, 3)
		for {
			b, err := g.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var back Game
			if err := back.UnmarshalBinary(b); err != nil {
				t.Fatalf("%v hand %d phase %v: %v", v, g.hand, g.phase, err)
			}
			if back != *g {
				t.Fatalf("restored state differs")
			}
			again, _ := back.MarshalBinary()
			if !bytes.Equal(again, b) {
				t.Fatalf("re-encoding differs")
			}
			if g.Over() {
				break
			}
			legal := g.Legal(g.ToMove(), nil)
			if _, err := g.Apply(legal[r.IntN(len(legal))], nil); err != nil {
				t.Fatal(err)
			}
		}
		j, err := json.Marshal(g)
		if err != nil {
			t.Fatal(err)
		}
		var back Game
		if err := json.Unmarshal(j, &back); err != nil || back != *g {
			t.Fatalf("JSON snapshot: %v", err)
		}
	}
}

func TestSnapshot_RejectsStatesTheRulesCannotReach(t *testing.T) {
	g := newGame(t, 29, Standard)
	randomPlay(t, g, 29, func(g *Game) bool { return g.hand == 5 && g.phase == PhasePlay && g.trickNo == 2 && g.nPlayed == 1 })
	good, _ := g.MarshalBinary()
	for _, tc := range []struct {
		name   string
		change func(*Game)
	}{
		{"card moved to another seat", func(g *Game) {
			c := g.hands[0].Lowest()
			g.hands[0], g.hands[1] = g.hands[0].Without(c), g.hands[1].With(c)
		}},
		{"trump differs from the turned card", func(g *Game) { g.trump = (g.trump + 1) % 4 }},
		{"tricks do not add up", func(g *Game) { g.tricks[0]++ }},
		{"bids total the cards", func(g *Game) {
			sum := 0
			for s := 1; s < Seats; s++ {
				sum += int(g.bids[s])
			}
			g.bids[0] = int8(g.CardsDealt() - sum)
		}},
		{"wrong seat to move", func(g *Game) { g.turn = (g.turn + 1) % Seats }},
		{"unknown phase", func(g *Game) { g.phase = 9 }},
		{"unknown variant", func(g *Game) { g.variant = 7 }},
		{"result of a future hand", func(g *Game) { g.results[20].bids[0] = 1 }},
		{"past hand tricks do not add up", func(g *Game) { g.results[0].tricks[0]++ }},
		{"hand out of range", func(g *Game) { g.hand = 40 }},
		{"leading joker without a suit", func(g *Game) {
			g.trickJoker[0], g.ledSuit = JokerHighest, cards.NoSuit
		}},
		{"card in the trick still held", func(g *Game) {
			g.hands[g.leader] = g.hands[g.leader].With(g.trickCards[0])
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := *g
			tc.change(&bad)
			b, _ := bad.MarshalBinary()
			before := *g
			if err := g.UnmarshalBinary(b); !errors.Is(err, ErrBadState) {
				t.Fatalf("accepted (err %v)", err)
			}
			if *g != before {
				t.Fatal("a rejected snapshot changed the game")
			}
		})
	}
	for _, b := range [][]byte{nil, {}, {2}, good[:len(good)-1], append(append([]byte{}, good...), 0)} {
		var x Game
		if err := x.UnmarshalBinary(b); !errors.Is(err, ErrBadState) {
			t.Errorf("%d bytes accepted: %v", len(b), err)
		}
	}
}

func TestView_JSONHasNamedFields(t *testing.T) {
	g := newGame(t, 31, Standard)
	randomPlay(t, g, 31, func(g *Game) bool { return g.phase == PhasePlay && g.nPlayed == 1 })
	b, err := json.Marshal(g.View(g.ToMove()))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"seat", "variant", "hand", "cards", "dealer", "phase", "toMove", "trump",
		"myCards", "handSizes", "bids", "tricks", "trick", "results", "over"} {
		if _, ok := m[k]; !ok {
			t.Errorf("view JSON lacks %q: %s", k, b)
		}
	}
	if m["phase"] != "play" || m["variant"] != "standard" {
		t.Errorf("phase %v variant %v", m["phase"], m["variant"])
	}
}
