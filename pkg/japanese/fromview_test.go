package japanese

import (
	"errors"
	"slices"
	"testing"
)

// TestFromView_BotsChooseAsInTheRealMatch: over random matches, at every
// decision, the baseline bot and the strong bot choose in
// FromView(g.View(seat)) exactly the move they choose in g — they decide
// only from what their seat knows, and FromView keeps all of it.
func TestFromView_BotsChooseAsInTheRealMatch(t *testing.T) {
	games, strongEvery := 80, 5
	if testing.Short() || checkEvery > 2 { // short, or under the race detector
		games = 12
	}
	decisions, strong := 0, 0
	for i := range games {
		g := newGame(t, uint64(9300+i))
		p := StrongBot{Rollouts: 8}
		for !g.Over() {
			seat := g.ToMove()
			if seat < 0 {
				t.Fatalf("match %d: nobody to move before the end", i)
			}
			fv, err := FromView(g.View(seat))
			if err != nil {
				t.Fatalf("match %d hand %d: FromView: %v", i, g.hand, err)
			}
			want, _ := Bot{}.Choose(g, seat)
			if got, ok := (Bot{}).Choose(fv, seat); !ok || got != want {
				t.Fatalf("match %d hand %d trick %d: the bot chooses %v from the view, %v in the match", i, g.hand, g.trickNo, got, want)
			}
			decisions++
			if decisions%strongEvery == 0 {
				strong++
				sw, _ := p.Choose(g, seat)
				if got, _ := p.Choose(fv, seat); got != sw {
					t.Fatalf("match %d hand %d trick %d: the strong bot chooses %v from the view, %v in the match", i, g.hand, g.trickNo, got, sw)
				}
			}
			m := want
			if i%2 == 1 {
				legal := g.Legal(seat, nil)
				m = legal[(decisions*7919)%len(legal)]
			}
			if _, err := g.Apply(m, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("%d matches, %d decisions, %d of the strong bot", games, decisions, strong)
}

// TestFromView_RefusesAViewOfNoMatchInPlay: a spectator's view and views
// whose cards, turn or sizes no match can show.
func TestFromView_RefusesAViewOfNoMatchInPlay(t *testing.T) {
	g := newGame(t, 5)
	seat := g.ToMove()
	bad := map[string]func(v *View){
		"spectator":        func(v *View) { v.Seat = -1 },
		"over":             func(v *View) { v.Phase = PhaseOver },
		"no target":        func(v *View) { v.Target = 12 },
		"a card twice":     func(v *View) { v.Played = append(v.Played, v.MyCards[0]) },
		"too many cards":   func(v *View) { v.HandSizes[1-seat] = 40 },
		"wrong seat moves": func(v *View) { v.ToMove = 1 - v.ToMove },
		"trump in words":   func(v *View) { v.Trump = "X" },
	}
	for name, f := range bad {
		v := g.View(seat)
		f(&v)
		if _, err := FromView(v); !errors.Is(err, ErrBadView) {
			t.Errorf("%s: %v, want ErrBadView", name, err)
		}
	}
}

// FuzzFromView: a view from a seeded match at a random moment, bent by
// arbitrary bytes: FromView refuses it or makes a match in which the bots
// choose a legal move without panicking.
func FuzzFromView(f *testing.F) {
	f.Add(uint64(1), uint16(0), []byte{})
	f.Add(uint64(2), uint16(40), []byte{0, 1, 9, 3, 200, 7})
	f.Add(uint64(3), uint16(300), []byte{1, 1, 0, 0, 0, 0, 1, 2, 3, 4, 5})
	f.Fuzz(func(t *testing.T, seed uint64, steps uint16, raw []byte) {
		g, err := New(seed, Settings{})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < int(steps) && !g.Over(); i++ {
			legal := g.Legal(g.ToMove(), nil)
			if _, err := g.Apply(legal[(i*31+int(seed%97))%len(legal)], nil); err != nil {
				t.Fatal(err)
			}
		}
		if g.Over() {
			return
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
		v.HandSizes[b(2)&1] += b(3)
		v.Leader += b(4)
		v.ToMove += b(5)
		v.Trick += b(6)
		if b(7) != 0 && len(v.CurrentTrick) > 0 {
			v.CurrentTrick[0].Named = string(raw[7:])
		}
		if b(8) != 0 {
			v.Trump = string(raw[8:])
		}
		if n := b(9); n != 0 && len(v.Columns[n&1]) > 0 {
			v.Columns[n&1][0].Column += n
		}
		fv, err := FromView(v)
		if err != nil {
			return
		}
		for _, p := range []Player{Bot{}, StrongBot{Rollouts: 4}} {
			if m, ok := p.Choose(fv, fv.ToMove()); ok && !slices.Contains(fv.Legal(fv.ToMove(), nil), m) {
				t.Fatalf("%T chose %v, not legal in the match from the view", p, m)
			}
		}
	})
}
