package cards

import (
	"slices"
	"testing"
)

// The second joker's moves go only when the first joker can be played too;
// every other move stays, in order.
func TestOneJoker_KeepsOneJokersMoves(t *testing.T) {
	id := func(c Card) Card { return c }
	as, kh := New(Spades, Ace), New(Hearts, King)
	for _, tc := range []struct {
		name     string
		in, want []Card
	}{
		{"both jokers", []Card{as, Joker1, Joker2, kh, Joker2}, []Card{as, Joker1, kh}},
		{"only the second", []Card{as, Joker2}, []Card{as, Joker2}},
		{"no joker", []Card{as, kh}, []Card{as, kh}},
		{"none", nil, nil},
	} {
		if got := OneJoker(slices.Clone(tc.in), id); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
