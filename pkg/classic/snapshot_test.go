package classic

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/fairdeal"
)

// statesOf plays a local and a live game of seed to the end and returns
// every state on the way: waiting for a deal, in every phase, and over.
func statesOf(t *testing.T, seed uint64, v Variant) []Game {
	t.Helper()
	var out []Game
	local := newGame(t, seed, v)
	live, err := NewLive(Settings{Variant: v})
	if err != nil {
		t.Fatal(err)
	}
	r := cards.NewRNG(seed, 7)
	for _, g := range []*Game{local, live} {
		for {
			out = append(out, *g)
			if g.Over() {
				break
			}
			if g.AwaitingDeal() {
				if _, err := g.Deal(fairdeal.LocalKey(seed^0xdea1, uint32(g.hand)), nil); err != nil {
					t.Fatal(err)
				}
				continue
			}
			legal := g.Legal(g.ToMove(), nil)
			if _, err := g.Apply(legal[r.IntN(len(legal))], nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

func TestState_RoundTripIsExactAtEveryStep(t *testing.T) {
	for seed := range uint64(6) {
		for _, g := range statesOf(t, 40+seed, Variant(seed%2)) {
			var back Game
			if err := back.SetState(g.State()); err != nil {
				t.Fatalf("hand %d phase %v: %v", g.hand, g.phase, err)
			}
			if back != g {
				t.Fatalf("hand %d phase %v: the state read back differs", g.hand, g.phase)
			}
		}
	}
}

// TestState_SetStateTakesOnlyWhatItHoldsExactly: a state with any one field
// changed, to a value near its own or far out of range, is refused, or is a
// state the binary snapshot accepts too and reads back exactly as it was
// given: SetState never narrows a number into another one, nor drops one.
func TestState_SetStateTakesOnlyWhatItHoldsExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	num := func(v int) int {
		switch rng.IntN(4) {
		case 0:
			return v + rng.IntN(5) - 2
		case 1:
			return []int{-129, -2, 127, 128, 256, 1 << 20}[rng.IntN(6)]
		default:
			return rng.IntN(30) - 1
		}
	}
	mutations := []func(s *State){
		func(s *State) { s.Hand = num(s.Hand) },
		func(s *State) { s.FirstDealer = num(s.FirstDealer) },
		func(s *State) { s.Turn = num(s.Turn) },
		func(s *State) { s.TricksFinished = num(s.TricksFinished) },
		func(s *State) { s.Leader = num(s.Leader) },
		func(s *State) { i := rng.IntN(Seats); s.Bids[i] = num(s.Bids[i]) },
		func(s *State) { i := rng.IntN(Seats); s.Tricks[i] = num(s.Tricks[i]) },
		func(s *State) { s.Phase = Phase(rng.IntN(8)) },
		func(s *State) { s.Variant = Variant(rng.IntN(4)) },
		func(s *State) { s.Trump = cards.Suit(rng.IntN(6)) },
		func(s *State) { s.LedSuit = cards.Suit(rng.IntN(6)) },
		func(s *State) { s.Turned = cards.Card(rng.IntN(40)) },
		func(s *State) { s.Key[rng.IntN(len(s.Key))] ^= 1 },
		func(s *State) { s.Local = !s.Local },
		func(s *State) { s.LocalSeed ^= 1 },
		func(s *State) { i := rng.IntN(Seats); s.Hands[i] ^= 1 << rng.IntN(40) },
		func(s *State) { s.Played ^= 1 << rng.IntN(40) },
		func(s *State) {
			s.Trick = append(s.Trick, TrickCard{Card: cards.Card(rng.IntN(36)), Joker: JokerMode(rng.IntN(6))})
		},
		func(s *State) {
			if len(s.Trick) > 0 {
				s.Trick = s.Trick[:len(s.Trick)-1]
			}
		},
		func(s *State) {
			if len(s.Trick) > 0 {
				s.Trick[0].Joker = JokerMode(rng.IntN(6))
			}
		},
		func(s *State) {
			s.Results = append(s.Results, HandResult{Cards: 1, Bids: [Seats]int{1}, Tricks: [Seats]int{1}})
		},
		func(s *State) {
			if len(s.Results) > 0 {
				s.Results = s.Results[:len(s.Results)-1]
			}
		},
		func(s *State) {
			if len(s.Results) > 0 {
				r := &s.Results[rng.IntN(len(s.Results))]
				switch rng.IntN(3) {
				case 0:
					r.Cards = num(r.Cards)
				case 1:
					r.Bids[rng.IntN(Seats)] = num(0)
				default:
					r.Tricks[rng.IntN(Seats)] = num(0)
				}
			}
		},
	}
	refused, taken := 0, 0
	for seed := range uint64(4) {
		for k, g := range statesOf(t, 60+seed, Variant(seed%2)) {
			if k%3 != 0 {
				continue
			}
			for range 4 {
				s := g.State()
				s.Trick, s.Results = slices.Clone(s.Trick), slices.Clone(s.Results)
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
				if back := got.State(); !reflect.DeepEqual(normal(back), normal(s)) {
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

// normal makes empty and nil slices alike for comparing states.
func normal(s State) State {
	if len(s.Trick) == 0 {
		s.Trick = nil
	}
	if len(s.Results) == 0 {
		s.Results = nil
	}
	return s
}
