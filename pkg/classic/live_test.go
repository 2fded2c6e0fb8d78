package classic

import (
	"errors"
	"testing"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/fairdeal"
)

// TestLive_EveryHandWaitsForItsKeyAndDealsAsALocalGame: a live game deals
// nothing by itself; given the keys a local game makes from its seed it
// plays exactly as that local game, hand after hand, and its state survives
// the binary encoding while it waits.
func TestLive_EveryHandWaitsForItsKeyAndDealsAsALocalGame(t *testing.T) {
	for _, v := range []Variant{Standard, Nines} {
		const seed = 42
		local := newGame(t, seed, v)
		live, err := NewLive(Settings{Variant: v})
		if err != nil {
			t.Fatal(err)
		}
		r := localDeck(seed, 99) // any fixed stream of choices
		hands := 0
		for !live.Over() {
			if !live.AwaitingDeal() || live.ToMove() != -1 || live.Phase() != PhaseDeal {
				t.Fatalf("%v hand %d: phase %v, to move %d; want it waiting for its deal", v, live.HandIndex(), live.Phase(), live.ToMove())
			}
			if live.HandIndex() == 0 && live.Dealer() != -1 {
				t.Fatalf("dealer %d before the first deal", live.Dealer())
			}
			roundTrip(t, live)
			if _, ok := (Bot{}).Choose(live, -1); ok {
				t.Fatal("the bot moves for nobody while the hand waits for its deal")
			}
			if _, err := live.Apply(BidMove(0, 0), nil); !errors.Is(err, ErrWrongPhase) {
				t.Fatalf("a bid before the deal: %v", err)
			}
			evs, err := live.Deal(fairdeal.LocalKey(seed, uint32(live.HandIndex())), nil)
			if err != nil {
				t.Fatal(err)
			}
			if want := local.StartEvents(nil); !equalEvents(evs, want) {
				t.Fatalf("%v hand %d: deal events %v, want %v", v, live.HandIndex(), evs, want)
			}
			if _, err := live.Deal(fairdeal.Key{}, nil); !errors.Is(err, ErrWrongPhase) {
				t.Fatalf("a second deal of one hand: %v", err)
			}
			hands++
			h := live.HandIndex()
			for live.HandIndex() == h && !live.Over() {
				legal := local.Legal(local.ToMove(), nil)
				m := legal[int(r[len(legal)%len(r)])%len(legal)]
				a, errA := local.Apply(m, nil)
				b, errB := live.Apply(m, nil)
				if errA != nil || errB != nil {
					t.Fatal(errA, errB)
				}
				if live.HandIndex() != h && !live.Over() {
					// The local game dealt the next hand in the same move;
					// the live one stops after the hand's end.
					a = a[:len(b)]
				}
				if !equalEvents(a, b) {
					t.Fatalf("move %v: live events %v, local %v", m, b, a)
				}
			}
		}
		if hands != v.Hands() || !local.Over() || live.HandResults()[hands-1] != local.HandResults()[hands-1] {
			t.Fatalf("%v: %d hands dealt, local over %v", v, hands, local.Over())
		}
	}
}

func equalEvents(a, b []Event) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func roundTrip(t *testing.T, g *Game) {
	t.Helper()
	b, err := g.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var n Game
	if err := n.UnmarshalBinary(b); err != nil {
		t.Fatalf("phase %v: %v", g.Phase(), err)
	}
	if n != *g {
		t.Fatal("the state changed through its encoding")
	}
}

// TestLive_StateWithAKeyThatIsNotTheDealIsRefused: a restored state must be
// the deal of its key.
func TestLive_StateWithAKeyThatIsNotTheDealIsRefused(t *testing.T) {
	g, _ := NewLive(Settings{Variant: Standard})
	if _, err := g.Deal(fairdeal.LocalKey(7, 0), nil); err != nil {
		t.Fatal(err)
	}
	b, _ := g.MarshalBinary()
	b[1] ^= 1 // the key's first byte
	if err := new(Game).UnmarshalBinary(b); !errors.Is(err, ErrBadState) {
		t.Fatalf("a key that is not the deal's: %v", err)
	}
}

// FuzzLiveDeal deals a live game's hands from arbitrary keys (the fuzzer's
// bytes, stretched) and plays random legal moves: no panic, every deal
// gives each seat its cards once, and the state round-trips through its
// encoding while it waits and while it plays.
func FuzzLiveDeal(f *testing.F) {
	f.Add(uint64(1), []byte{0})
	f.Add(uint64(2), []byte("a key of fewer than 32 bytes"))
	f.Add(uint64(3), make([]byte, 64))
	f.Fuzz(func(t *testing.T, seed uint64, raw []byte) {
		g, err := NewLive(Settings{Variant: Variant(seed % 2)})
		if err != nil {
			t.Fatal(err)
		}
		r := localDeck(seed, 0)
		for step := 0; !g.Over() && step < 2000; step++ {
			if g.AwaitingDeal() {
				roundTrip(t, g)
				var k fairdeal.Key
				copy(k[:], raw)
				k[31] ^= byte(g.HandIndex())
				if _, err := g.Deal(k, nil); err != nil {
					t.Fatal(err)
				}
				var all cards.Set
				for s := range Seats {
					if all&g.Hand(s) != 0 || g.Hand(s).Len() != g.CardsDealt() && g.Phase() != PhaseTrump {
						t.Fatalf("hand %d: seat %d dealt %v", g.HandIndex(), s, g.Hand(s))
					}
					all |= g.Hand(s)
				}
				roundTrip(t, g)
				continue
			}
			legal := g.Legal(g.ToMove(), nil)
			if _, err := g.Apply(legal[int(r[step%len(r)])%len(legal)], nil); err != nil {
				t.Fatal(err)
			}
		}
	})
}
