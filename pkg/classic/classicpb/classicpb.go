// Package classicpb maps pkg/classic's joker declarations and phases to and
// from the contracts' enums (pulka.table.v1 JokerAction and Phase): the one
// place the mapping is written, for the runner that emits them and the
// clients that read them back (docs/protocol-contracts.md).
package classicpb

import (
	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/cards/cardpb"
	"github.com/pulka/pulka/pkg/classic"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// JokerAction is j's enum value; JOKER_ACTION_UNSPECIFIED for JokerNone or
// an unknown mode.
func JokerAction(j classic.JokerMode) tablev1.JokerAction {
	switch j {
	case classic.JokerTake:
		return tablev1.JokerAction_JOKER_ACTION_TAKE
	case classic.JokerDiscard:
		return tablev1.JokerAction_JOKER_ACTION_DISCARD
	case classic.JokerHighest:
		return tablev1.JokerAction_JOKER_ACTION_HIGHEST
	case classic.JokerGive:
		return tablev1.JokerAction_JOKER_ACTION_GIVE
	}
	return tablev1.JokerAction_JOKER_ACTION_UNSPECIFIED
}

// Declare is the contract's declaration of a joker played as j naming
// suit: its action, and the suit only for a led joker (highest, give) —
// SUIT_UNSPECIFIED for one that follows, whatever suit the move holds.
func Declare(j classic.JokerMode, suit cards.Suit) (tablev1.JokerAction, commonv1.Suit) {
	if j == classic.JokerHighest || j == classic.JokerGive {
		return JokerAction(j), cardpb.Suit(suit)
	}
	return JokerAction(j), commonv1.Suit_SUIT_UNSPECIFIED
}

// FromJokerAction reads an enum declaration; ok is false for unspecified
// or unknown values.
func FromJokerAction(a tablev1.JokerAction) (j classic.JokerMode, ok bool) {
	switch a {
	case tablev1.JokerAction_JOKER_ACTION_TAKE:
		return classic.JokerTake, true
	case tablev1.JokerAction_JOKER_ACTION_DISCARD:
		return classic.JokerDiscard, true
	case tablev1.JokerAction_JOKER_ACTION_HIGHEST:
		return classic.JokerHighest, true
	case tablev1.JokerAction_JOKER_ACTION_GIVE:
		return classic.JokerGive, true
	}
	return classic.JokerNone, false
}

// Phase is p's enum value: a game waiting for its deal is PHASE_WAITING.
func Phase(p classic.Phase) tablev1.Phase {
	switch p {
	case classic.PhaseTrump:
		return tablev1.Phase_PHASE_CHOOSE_TRUMP
	case classic.PhaseBid:
		return tablev1.Phase_PHASE_BID
	case classic.PhasePlay:
		return tablev1.Phase_PHASE_PLAY
	case classic.PhaseOver:
		return tablev1.Phase_PHASE_GAME_OVER
	case classic.PhaseDeal:
		return tablev1.Phase_PHASE_WAITING
	}
	return tablev1.Phase_PHASE_UNSPECIFIED
}

// FromPhase reads an enum phase of a game in play (choose trump, bid,
// play); ok is false for any other.
func FromPhase(p tablev1.Phase) (ph classic.Phase, ok bool) {
	switch p {
	case tablev1.Phase_PHASE_CHOOSE_TRUMP:
		return classic.PhaseTrump, true
	case tablev1.Phase_PHASE_BID:
		return classic.PhaseBid, true
	case tablev1.Phase_PHASE_PLAY:
		return classic.PhasePlay, true
	}
	return 0, false
}
