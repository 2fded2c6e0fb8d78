package japanesepb_test

import (
	"testing"

	"github.com/pulka/pulka/pkg/cards"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/japanese/japanesepb"
)

func TestDeclare(t *testing.T) {
	for _, c := range []struct {
		rule   string
		named  cards.Suit
		action tablev1.JokerAction
		suit   commonv1.Suit
	}{
		{"a led joker names its suit and demands the highest", cards.Hearts, tablev1.JokerAction_JOKER_ACTION_HIGHEST, commonv1.Suit_SUIT_HEARTS},
		{"a led joker may name the suit of spades", cards.Spades, tablev1.JokerAction_JOKER_ACTION_HIGHEST, commonv1.Suit_SUIT_SPADES},
		{"an answering joker names nothing and takes", cards.NoSuit, tablev1.JokerAction_JOKER_ACTION_TAKE, commonv1.Suit_SUIT_UNSPECIFIED},
	} {
		if a, s := japanesepb.Declare(c.named); a != c.action || s != c.suit {
			t.Errorf("%s: Declare(%v) = %v %v, want %v %v", c.rule, c.named, a, s, c.action, c.suit)
		}
	}
}
