package table

import (
	"github.com/pulka/pulka/pkg/cards"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// Both wire enums are pkg/cards' number plus one, so that zero stays
// "unspecified" (docs/protocol-contracts.md).

func wireCard(c cards.Card) commonv1.Card {
	if !c.Valid() {
		return commonv1.Card_CARD_UNSPECIFIED
	}
	return commonv1.Card(c + 1)
}

func wireCards(s cards.Set) []commonv1.Card {
	out := make([]commonv1.Card, 0, s.Len())
	for ; s != 0; s &= s - 1 {
		out = append(out, wireCard(s.Lowest()))
	}
	return out
}

func wireSuit(s cards.Suit) commonv1.Suit {
	if s > cards.NoSuit {
		return commonv1.Suit_SUIT_UNSPECIFIED
	}
	return commonv1.Suit(s + 1)
}

// domainCard reads a wire card; ok is false for unspecified or unknown values.
func domainCard(c commonv1.Card) (cards.Card, bool) {
	if c < commonv1.Card_CARD_JOKER_1 || c > commonv1.Card_CARD_ACE_OF_CLUBS {
		return cards.NoCard, false
	}
	return cards.Card(c - 1), true
}

// domainSuit reads a wire suit, SUIT_NONE included; ok is false for
// unspecified or unknown values.
func domainSuit(s commonv1.Suit) (cards.Suit, bool) {
	if s < commonv1.Suit_SUIT_SPADES || s > commonv1.Suit_SUIT_NONE {
		return cards.NoSuit, false
	}
	return cards.Suit(s - 1), true
}

func public() *tablev1.Visibility {
	return &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_PUBLIC}
}

func toSeat(s int) *tablev1.Visibility {
	return &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_SEAT, Seat: uint32(s)}
}

func toPlayer(p string) *tablev1.Visibility {
	return &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_PLAYER, PlayerId: p}
}
