package classic

import (
	"errors"
	"testing"
)

// TestFromView_BotsChooseAsInTheRealGame: over random games of every
// variant, at every decision, the baseline bot and the strong bot choose in
// FromView(g.View(seat)) exactly the move they choose in g — they decide
// only from what their seat knows, and FromView keeps all of it. This is
// what lets a client run the engine's bots from the events it was sent.
func TestFromView_BotsChooseAsInTheRealGame(t *testing.T) {
	games, strongEvery := 60, 7
	if testing.Short() || raceOn {
		games = 10
	}
	decisions, strong := 0, 0
	var evs [16]Event
	for i := range games {
		v := Standard
		if i%3 == 2 {
			v = Nines
		}
		g := newGame(t, uint64(9100+i), v)
		p := StrongBot{Rollouts: 8}
		for !g.Over() {
			seat := g.ToMove()
			fv, err := FromView(g.View(seat))
			if err != nil {
				t.Fatalf("game %d hand %d: FromView: %v", i, g.hand, err)
			}
			want, _ := Bot{}.Choose(g, seat)
			if got, ok := (Bot{}).Choose(fv, seat); !ok || got != want {
				t.Fatalf("game %d hand %d trick %d: the bot chooses %v from the view, %v in the game", i, g.hand, g.trickNo, got, want)
			}
			decisions++
			if decisions%strongEvery == 0 {
				strong++
				sw, _ := p.Choose(g, seat)
				if got, _ := p.Choose(fv, seat); got != sw {
					t.Fatalf("game %d hand %d trick %d: the strong bot chooses %v from the view, %v in the game", i, g.hand, g.trickNo, got, sw)
				}
			}
			m := want
			if i%2 == 1 { // other lines of play: a random legal move
				legal := g.Legal(seat, nil)
				m = legal[(decisions*7919)%len(legal)]
			}
			if _, err := g.Apply(m, evs[:0]); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("%d games, %d decisions, %d of the strong bot", games, decisions, strong)
}

// TestFromView_RefusesAViewOfNoGameInPlay: a spectator's view, a finished
// game's, and hand sizes the unseen cards cannot fill.
func TestFromView_RefusesAViewOfNoGameInPlay(t *testing.T) {
	g := newGame(t, 5, Standard)
	seat := g.ToMove()
	bad := map[string]func(v *View){
		"spectator":        func(v *View) { v.Seat = -1 },
		"over":             func(v *View) { v.Phase = PhaseOver },
		"bad variant":      func(v *View) { v.Variant = 99 },
		"too many cards":   func(v *View) { v.HandSizes[(seat+1)%Seats] = 40 },
		"trump in words":   func(v *View) { v.Trump = "X" },
		"bid out of range": func(v *View) { v.Bids[0] = 12 },
	}
	for name, f := range bad {
		v := g.View(seat)
		f(&v)
		if _, err := FromView(v); !errors.Is(err, ErrBadView) && !errors.Is(err, ErrBadSettings) {
			t.Errorf("%s: %v, want ErrBadView", name, err)
		}
	}
}

// FuzzFromView: a view from a seeded game at a random moment, then bent by
// arbitrary bytes (seat, phase, sizes, bids, trick, trump words): FromView
// refuses it or makes a game in which the bots choose a move without
// panicking, and that move is legal there.
func FuzzFromView(f *testing.F) {
	f.Add(uint64(1), uint16(0), []byte{})
	f.Add(uint64(2), uint16(40), []byte{0, 1, 9, 3, 200, 7})
	f.Add(uint64(3), uint16(300), []byte{3, 3, 0, 0, 0, 0, 1, 2, 3, 4, 5})
	f.Fuzz(func(t *testing.T, seed uint64, steps uint16, raw []byte) {
		g, err := New(seed, Settings{Variant: Variant(seed % 2)})
		if err != nil {
			t.Fatal(err)
		}
		var evs [16]Event
		for i := 0; i < int(steps) && !g.Over(); i++ {
			legal := g.Legal(g.ToMove(), nil)
			if _, err := g.Apply(legal[(i*31+int(seed))%len(legal)], evs[:0]); err != nil {
				t.Fatal(err)
			}
		}
		v := g.View(g.ToMove())
		b := func(i int) int {
			if i < len(raw) {
				return int(int8(raw[i]))
			}
			return 0
		}
		v.Seat += b(0)
		v.Phase += Phase(b(1))
		v.HandSizes[b(2)&3] += b(3)
		v.Bids[b(4)&3] += b(5)
		v.ToMove += b(6)
		if b(7) != 0 && len(v.Trick) > 0 {
			v.Trick[0].Suit = string(raw[7:])
		}
		if b(8) != 0 {
			v.Trump = string(raw[8:])
		}
		v.TrickNo += b(9)
		fv, err := FromView(v)
		if err != nil {
			return
		}
		for _, p := range []Player{Bot{}, StrongBot{Rollouts: 4}} {
			if m, ok := p.Choose(fv, fv.ToMove()); ok && !containsMove(fv.Legal(fv.ToMove(), nil), m) {
				t.Fatalf("%T chose %v, not legal in the game from the view", p, m)
			}
		}
	})
}
