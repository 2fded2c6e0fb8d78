// Package japanesepb maps pkg/japanese's joker moves to the contracts'
// declarations (pulka.table.v1.JokerDeclaration): the one place the
// Japanese rule is written, for the runner that emits it and the clients
// that send it (docs/protocol-contracts.md). Like classicpb for classic.
package japanesepb

import (
	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/cards/cardpb"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// Declare is the declaration of a Japanese joker move naming suit named
// (japanese.Move.Suit): a led joker names a suit and demands the highest,
// an answering one (no suit) always takes.
func Declare(named cards.Suit) (tablev1.JokerAction, commonv1.Suit) {
	if named.Valid() {
		return tablev1.JokerAction_JOKER_ACTION_HIGHEST, cardpb.Suit(named)
	}
	return tablev1.JokerAction_JOKER_ACTION_TAKE, commonv1.Suit_SUIT_UNSPECIFIED
}
