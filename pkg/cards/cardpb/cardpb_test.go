package cardpb

import (
	"testing"

	"github.com/pulka/pulka/pkg/cards"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
)

// Every card of the deck and every suit (no suit included) goes to its
// enum value and back; the contract names them in pkg/cards' order plus one.
func TestEveryCardAndSuitRoundTrips(t *testing.T) {
	var deck cards.Set
	for c := cards.Card(0); c < cards.DeckSize; c++ {
		if !c.Valid() {
			continue
		}
		deck = deck.With(c)
		e := Card(c)
		if int(e) != int(c)+1 || FromCard(e) != c {
			t.Fatalf("%v → %v → %v", c, e, FromCard(e))
		}
	}
	if Card(cards.Joker1) != commonv1.Card_CARD_JOKER_1 || Card(cards.Joker2) != commonv1.Card_CARD_JOKER_2 {
		t.Fatal("jokers map to the wrong enum values")
	}
	if got := Set(Cards(deck)); got != deck {
		t.Fatalf("the deck came back as %v", got)
	}
	for s := cards.Suit(0); s <= cards.NoSuit; s++ {
		e := Suit(s)
		if back, ok := FromSuit(e); !ok || back != s || e == commonv1.Suit_SUIT_UNSPECIFIED {
			t.Fatalf("suit %v → %v → %v, %v", s, e, back, ok)
		}
	}
	if Suit(cards.NoSuit) != commonv1.Suit_SUIT_NONE {
		t.Fatal("no suit is not SUIT_NONE")
	}
}

// Unspecified and unknown enum values read as nothing: a hostile client's
// number names no card.
func TestUnknownValuesReadAsNothing(t *testing.T) {
	for _, e := range []commonv1.Card{commonv1.Card_CARD_UNSPECIFIED, commonv1.Card_CARD_ACE_OF_CLUBS + 1, -1, 1 << 20} {
		if c := FromCard(e); c.Valid() {
			t.Errorf("FromCard(%d) = %v", e, c)
		}
	}
	for _, e := range []commonv1.Suit{commonv1.Suit_SUIT_UNSPECIFIED, commonv1.Suit_SUIT_NONE + 1, -1} {
		if _, ok := FromSuit(e); ok {
			t.Errorf("FromSuit(%d) ok", e)
		}
	}
	if Card(cards.NoCard) != commonv1.Card_CARD_UNSPECIFIED || Suit(cards.NoSuit+1) != commonv1.Suit_SUIT_UNSPECIFIED {
		t.Fatal("no card / a bad suit did not map to unspecified")
	}
	if Set([]commonv1.Card{0, 99, commonv1.Card_CARD_JOKER_1}) != cards.SetOf(cards.Joker1) {
		t.Fatal("Set kept an unknown value")
	}
}
