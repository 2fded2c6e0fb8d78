// Package cardpb maps pkg/cards' cards and suits to and from the contracts'
// enums (pulka.common.v1 Card and Suit): the one place the mapping is
// written. Both enums are pkg/cards' number plus one, so that zero stays
// "unspecified" (docs/protocol-contracts.md).
package cardpb

import (
	"github.com/pulka/pulka/pkg/cards"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
)

// Card is c's enum value; CARD_UNSPECIFIED for no card.
func Card(c cards.Card) commonv1.Card {
	if !c.Valid() {
		return commonv1.Card_CARD_UNSPECIFIED
	}
	return commonv1.Card(c + 1)
}

// Cards is the set's cards' enum values, lowest first.
func Cards(s cards.Set) []commonv1.Card {
	out := make([]commonv1.Card, 0, s.Len())
	for ; s != 0; s &= s - 1 {
		out = append(out, Card(s.Lowest()))
	}
	return out
}

// Suit is s's enum value (NoSuit is SUIT_NONE); SUIT_UNSPECIFIED for a
// value that names no suit.
func Suit(s cards.Suit) commonv1.Suit {
	if s > cards.NoSuit {
		return commonv1.Suit_SUIT_UNSPECIFIED
	}
	return commonv1.Suit(s + 1)
}

// FromCard reads an enum card: NoCard (not Valid) for unspecified or
// unknown values.
func FromCard(c commonv1.Card) cards.Card {
	if c < commonv1.Card_CARD_JOKER_1 || c > commonv1.Card_CARD_ACE_OF_CLUBS {
		return cards.NoCard
	}
	return cards.Card(c - 1)
}

// Set reads enum cards as a set, leaving out unspecified or unknown values
// (a reader that must refuse them checks each with FromCard).
func Set(cs []commonv1.Card) cards.Set {
	var s cards.Set
	for _, c := range cs {
		if d := FromCard(c); d.Valid() {
			s = s.With(d)
		}
	}
	return s
}

// FromSuit reads an enum suit, SUIT_NONE included; ok is false for
// unspecified or unknown values.
func FromSuit(s commonv1.Suit) (_ cards.Suit, ok bool) {
	if s < commonv1.Suit_SUIT_SPADES || s > commonv1.Suit_SUIT_NONE {
		return cards.NoSuit, false
	}
	return cards.Suit(s - 1), true
}
