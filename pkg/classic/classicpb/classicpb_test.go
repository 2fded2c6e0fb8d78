package classicpb

import (
	"testing"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/classic"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// TestJokerAction_EveryDeclarationRoundTrips: each mode has its own enum
// value and reads back; no mode and unknown values are unspecified.
func TestJokerAction_EveryDeclarationRoundTrips(t *testing.T) {
	seen := map[tablev1.JokerAction]bool{}
	for _, j := range []classic.JokerMode{classic.JokerTake, classic.JokerDiscard, classic.JokerHighest, classic.JokerGive} {
		a := JokerAction(j)
		if a == tablev1.JokerAction_JOKER_ACTION_UNSPECIFIED || seen[a] {
			t.Fatalf("%v: %v", j, a)
		}
		seen[a] = true
		if back, ok := FromJokerAction(a); !ok || back != j {
			t.Fatalf("%v → %v → %v %v", j, a, back, ok)
		}
	}
	if JokerAction(classic.JokerNone) != tablev1.JokerAction_JOKER_ACTION_UNSPECIFIED || JokerAction(99) != tablev1.JokerAction_JOKER_ACTION_UNSPECIFIED {
		t.Fatal("no declaration has an action")
	}
	if _, ok := FromJokerAction(tablev1.JokerAction_JOKER_ACTION_UNSPECIFIED); ok {
		t.Fatal("unspecified reads as a declaration")
	}
	if _, ok := FromJokerAction(42); ok {
		t.Fatal("an unknown value reads as a declaration")
	}
}

// TestPhase_ThePhasesInPlayRoundTrip: trump, bid and play read back; the
// deal is waiting and the end game over, which no move is made in.
func TestPhase_ThePhasesInPlayRoundTrip(t *testing.T) {
	for _, p := range []classic.Phase{classic.PhaseTrump, classic.PhaseBid, classic.PhasePlay} {
		if back, ok := FromPhase(Phase(p)); !ok || back != p {
			t.Fatalf("%v → %v → %v %v", p, Phase(p), back, ok)
		}
	}
	if Phase(classic.PhaseDeal) != tablev1.Phase_PHASE_WAITING || Phase(classic.PhaseOver) != tablev1.Phase_PHASE_GAME_OVER {
		t.Fatal("deal and end")
	}
	for _, p := range []tablev1.Phase{tablev1.Phase_PHASE_WAITING, tablev1.Phase_PHASE_GAME_OVER, tablev1.Phase_PHASE_UNSPECIFIED, 77} {
		if _, ok := FromPhase(p); ok {
			t.Fatalf("%v reads as a phase in play", p)
		}
	}
}

// TestDeclare_OnlyALedJokerNamesASuit: highest and give carry the suit,
// take and discard none even when the move holds one.
func TestDeclare_OnlyALedJokerNamesASuit(t *testing.T) {
	for _, c := range []struct {
		j    classic.JokerMode
		want commonv1.Suit
	}{
		{classic.JokerHighest, commonv1.Suit_SUIT_HEARTS},
		{classic.JokerGive, commonv1.Suit_SUIT_HEARTS},
		{classic.JokerTake, commonv1.Suit_SUIT_UNSPECIFIED},
		{classic.JokerDiscard, commonv1.Suit_SUIT_UNSPECIFIED},
	} {
		a, s := Declare(c.j, cards.Hearts)
		if a != JokerAction(c.j) || s != c.want {
			t.Errorf("%v: %v %v, want %v %v", c.j, a, s, JokerAction(c.j), c.want)
		}
	}
}
