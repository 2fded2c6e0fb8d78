package japanese

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/fairdeal"
)

// statesOf plays a local and a live match of seed to the end (the live one
// resigned midway when seed is odd) and returns every state on the way.
func statesOf(t *testing.T, seed uint64) []Game {
	t.Helper()
	var out []Game
	set := Settings{Target: targets[seed%uint64(len(targets))]}
	local, err := New(seed, set)
	if err != nil {
		t.Fatal(err)
	}
	live, err := NewLive(set)
	if err != nil {
		t.Fatal(err)
	}
	r := NewRandomBot(seed)
	for _, g := range []*Game{local, live} {
		for step := 0; ; step++ {
			out = append(out, *g)
			switch {
			case g.Over():
			case g == live && seed%2 == 1 && step == 60:
				_, err = g.Apply(ResignMove(0), nil)
			case g.AwaitingDeal():
				_, err = g.Deal(fairdeal.LocalKey(seed^0xdea1, g.hand), nil)
			default:
				m, _ := r.Choose(g, g.ToMove())
				_, err = g.Apply(m, nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			if g.Over() && out[len(out)-1] == *g {
				break
			}
		}
	}
	return out
}

func TestState_RoundTripIsExactAtEveryStep(t *testing.T) {
	n := 0
	for seed := range uint64(6) {
		for _, g := range statesOf(t, 40+seed) {
			var back Game
			if err := back.SetState(g.State()); err != nil {
				t.Fatalf("hand %d phase %v: %v", g.hand, g.phase, err)
			}
			if back != g {
				t.Fatalf("hand %d phase %v: the state read back differs", g.hand, g.phase)
			}
			n++
		}
	}
	// A long match whose record of hands has wrapped around.
	g := newGame(t, 1)
	g.hand, g.finished = 200, 200
	for h := range MaxRecordedHands {
		g.results[h] = packResult(uint8(h%19), cards.Suit(h%5))
	}
	g.startHand()
	s := g.State()
	if len(s.Results) != MaxRecordedHands || s.Results[0].Tricks[0] != (200-MaxRecordedHands)%MaxRecordedHands%19 {
		t.Fatalf("the record of a long match: %d hands, the first %+v", len(s.Results), s.Results[0])
	}
	var back Game
	if err := back.SetState(s); err != nil || back != *g {
		t.Fatalf("a long match does not round-trip: %v", err)
	}
	t.Logf("%d states", n)
}

// TestState_SetStateTakesOnlyWhatItHoldsExactly: a state with any one field
// changed, to a value near its own or far out of range, is refused, or is a
// state the binary snapshot accepts too and reads back exactly as it was
// given: SetState never narrows a number into another one, nor drops one.
func TestState_SetStateTakesOnlyWhatItHoldsExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	num := func(v int) int {
		switch rng.IntN(4) {
		case 0:
			return v + rng.IntN(5) - 2
		case 1:
			return []int{-129, -2, 127, 128, 255, 256, 1 << 20}[rng.IntN(7)]
		default:
			return rng.IntN(40) - 1
		}
	}
	card := func() cards.Card { return cards.Card(rng.IntN(40)) }
	mutations := []func(s *State){
		func(s *State) { s.Target = num(s.Target) },
		func(s *State) { s.Hand = uint32(num(int(s.Hand))) },
		func(s *State) { s.Finished = uint32(num(int(s.Finished))) },
		func(s *State) { s.FirstDeclarer = num(s.FirstDeclarer) },
		func(s *State) { s.Leader = num(s.Leader) },
		func(s *State) { s.TricksFinished = num(s.TricksFinished) },
		func(s *State) { s.Winner = num(s.Winner) },
		func(s *State) { i := rng.IntN(Seats); s.Tricks[i] = num(s.Tricks[i]) },
		func(s *State) { i := rng.IntN(Seats); s.Scores[i] = num(s.Scores[i]) },
		func(s *State) { s.Phase = Phase(rng.IntN(6)) },
		func(s *State) { s.Reason = EndReason(rng.IntN(6)) },
		func(s *State) { s.Trump = cards.Suit(rng.IntN(6)) },
		func(s *State) { s.Named = cards.Suit(rng.IntN(6)) },
		func(s *State) { s.TrumpChosen = !s.TrumpChosen },
		func(s *State) { s.Key[rng.IntN(len(s.Key))] ^= 1 },
		func(s *State) { s.Local = !s.Local },
		func(s *State) { s.LocalSeed ^= 1 },
		func(s *State) { s.Trick[rng.IntN(Seats)] = card() },
		func(s *State) { i := rng.IntN(Seats); s.Hands[i] ^= 1 << rng.IntN(40) },
		func(s *State) { s.Gone ^= 1 << rng.IntN(40) },
		func(s *State) { s.Up[rng.IntN(Seats)][rng.IntN(Columns)] = card() },
		func(s *State) { s.Down[rng.IntN(Seats)][rng.IntN(Columns)] = card() },
		func(s *State) { s.Results = append(s.Results, HandRecord{Tricks: [Seats]int{9, 9}}) },
		func(s *State) {
			if len(s.Results) > 0 {
				s.Results = s.Results[1:]
			}
		},
		func(s *State) {
			if len(s.Results) > 0 {
				r := &s.Results[rng.IntN(len(s.Results))]
				switch rng.IntN(3) {
				case 0:
					r.Trump = cards.Suit(rng.IntN(8))
				case 1:
					r.Tricks[0] = num(r.Tricks[0])
				default:
					r.Tricks[0], r.Tricks[1] = r.Tricks[1], r.Tricks[0]
				}
			}
		},
	}
	refused, taken := 0, 0
	for seed := range uint64(4) {
		for k, g := range statesOf(t, 60+seed) {
			if k%3 != 0 {
				continue
			}
			for range 4 {
				s := g.State()
				s.Results = slices.Clone(s.Results)
				mutations[rng.IntN(len(mutations))](&s)
				got := g
				err := got.SetState(s)
				if err != nil {
					if !errors.Is(err, ErrBadState) || got != g {
						t.Fatalf("refused with %v, or changed the game", err)
					}
					refused++
					continue
				}
				taken++
				b, _ := got.MarshalBinary()
				var viaBinary Game
				if err := viaBinary.UnmarshalBinary(b); err != nil || viaBinary != got {
					t.Fatalf("SetState took a state the binary snapshot refuses: %v", err)
				}
				back := got.State()
				if len(back.Results) == 0 && len(s.Results) == 0 {
					back.Results, s.Results = nil, nil
				}
				if !reflect.DeepEqual(back, s) {
					t.Fatalf("SetState took %+v and holds %+v", s, back)
				}
			}
		}
	}
	t.Logf("%d changed states refused, %d taken", refused, taken)
	if refused < 100 || taken < 10 {
		t.Fatalf("only %d of %d changed states refused", refused, refused+taken)
	}
}
