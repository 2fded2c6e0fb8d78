package japanese

import (
	"errors"
	"testing"

	"github.com/pulka/pulka/pkg/fairdeal"
)

// TestLive_EveryHandWaitsForItsKeyAndDealsAsALocalMatch: a live match deals
// nothing by itself; given the keys a local match makes from its seed it
// plays exactly as that local match, and its state survives both encodings
// while it waits.
func TestLive_EveryHandWaitsForItsKeyAndDealsAsALocalMatch(t *testing.T) {
	const seed = 17
	live, err := NewLive(Settings{Target: 11})
	if err != nil {
		t.Fatal(err)
	}
	local, _ := New(seed, Settings{Target: 11})
	for hands := 0; !live.Over(); hands++ {
		if !live.AwaitingDeal() || live.ToMove() != -1 || (hands == 0 && live.Declarer() != -1) {
			t.Fatalf("hand %d: phase %v, to move %d, declarer %d", live.Hand(), live.Phase(), live.ToMove(), live.Declarer())
		}
		liveRoundTrip(t, live)
		if _, ok := (Bot{}).Choose(live, -1); ok {
			t.Fatal("the bot moves for nobody while the hand waits for its deal")
		}
		if _, err := live.Apply(TrumpMove(0, 0), nil); !errors.Is(err, ErrWrongPhase) {
			t.Fatalf("trump before the deal: %v", err)
		}
		evs, err := live.Deal(fairdeal.LocalKey(seed, uint32(live.Hand())), nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := local.StartEvents(nil); len(evs) != len(want) || evs[0] != want[0] || evs[1] != want[1] || evs[2] != want[2] {
			t.Fatalf("hand %d: deal %v, want %v", live.Hand(), evs, want)
		}
		if _, err := live.Deal(fairdeal.Key{}, nil); !errors.Is(err, ErrWrongPhase) {
			t.Fatalf("a second deal: %v", err)
		}
		liveRoundTrip(t, live)
		h := live.Hand()
		for live.Hand() == h && !live.Over() {
			m, _ := Bot{}.Choose(local, local.ToMove())
			mustApply(t, local, m)
			mustApply(t, live, m)
		}
		if live.Over() != local.Over() || live.Scores() != local.Scores() {
			t.Fatalf("hand %d: live %v %v, local %v %v", h, live.Over(), live.Scores(), local.Over(), local.Scores())
		}
	}
}

func liveRoundTrip(t *testing.T, g *Game) {
	t.Helper()
	b, err := g.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var n Game
	if err := n.UnmarshalBinary(b); err != nil || n != *g {
		t.Fatalf("phase %v: binary round trip: %v", g.Phase(), err)
	}
	j, err := g.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var m Game
	if err := m.UnmarshalJSON(j); err != nil || m != *g {
		t.Fatalf("phase %v: JSON round trip: %v", g.Phase(), err)
	}
}

// TestLive_ResignWhileWaitingForTheDeal: a seat may resign before a hand is
// dealt (its seeds are still being gathered); the state stays valid.
func TestLive_ResignWhileWaitingForTheDeal(t *testing.T) {
	g, _ := NewLive(Settings{})
	evs, err := g.Resign(1, nil)
	if err != nil || !g.Over() || g.Winner() != 0 || len(evs) != 1 || evs[0].Kind != EventGameEnded {
		t.Fatalf("resign before the deal: %v %v", evs, err)
	}
	liveRoundTrip(t, g)
}
