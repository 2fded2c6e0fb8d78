package cards

import (
	"errors"
	"testing"
)

func TestDeck_JokersReplaceTheBlackSixes(t *testing.T) {
	if Joker1 != New(Spades, Six) || Joker2 != New(Clubs, Six) {
		t.Fatalf("jokers must take the slots of 6S and 6C")
	}
	ordinary := 0
	for c := Card(0); c < DeckSize; c++ {
		if !c.IsJoker() {
			ordinary++
			if c.Suit() == NoSuit {
				t.Errorf("%v: ordinary card without a suit", c)
			}
		} else if c.Suit() != NoSuit {
			t.Errorf("%v: a joker has no suit", c)
		}
	}
	if ordinary != 34 {
		t.Fatalf("ordinary cards = %d, want 34", ordinary)
	}
	total := 0
	for _, s := range Suits {
		total += SuitMask(s).Len()
		if SuitMask(s)&Jokers != 0 {
			t.Errorf("suit %v contains a joker", s)
		}
	}
	if total != 34 || FullDeck.Len() != 36 {
		t.Fatalf("suit masks cover %d cards, deck %d", total, FullDeck.Len())
	}
}

func TestDeck_RankOrderWithinASuit(t *testing.T) {
	h := SetOf(New(Hearts, Ace), New(Hearts, Ten), New(Hearts, Six), New(Spades, King))
	if got := h.OfSuit(Hearts).Highest(); got != New(Hearts, Ace) {
		t.Errorf("highest heart = %v, want AH", got)
	}
	if got := h.OfSuit(Hearts).Lowest(); got != New(Hearts, Six) {
		t.Errorf("lowest heart = %v, want 6H", got)
	}
	if got := h.OfSuit(Clubs).Highest(); got != NoCard {
		t.Errorf("empty suit highest = %v, want NoCard", got)
	}
}

func TestCard_ParseRoundTrip(t *testing.T) {
	for c := Card(0); c < DeckSize; c++ {
		got, err := Parse(c.String())
		if err != nil || got != c {
			t.Errorf("Parse(%q) = %v, %v; want %v", c.String(), got, err, c)
		}
	}
	for _, bad := range []string{"", "6S", "6C", "1H", "AX", "JK3", "10"} {
		if _, err := Parse(bad); !errors.Is(err, ErrParse) {
			t.Errorf("Parse(%q) error = %v, want ErrParse", bad, err)
		}
	}
	if c, err := Parse("th"); err != nil || c != New(Hearts, Ten) {
		t.Errorf("Parse(th) = %v, %v", c, err)
	}
}

func mustParseAll(t *testing.T, s string) []Card {
	t.Helper()
	var out []Card
	for _, f := range splitFields(s) {
		c, err := Parse(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

func splitFields(s string) []string {
	s = s[1 : len(s)-1]
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ' ' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}

func TestRNG_IntNUniformEnough(t *testing.T) {
	r := NewRNG(1, 1)
	var counts [6]int
	for range 60000 {
		counts[r.IntN(6)]++
	}
	for i, n := range counts {
		if n < 9000 || n > 11000 {
			t.Errorf("IntN(6) bucket %d = %d, far from 10000", i, n)
		}
	}
}

func TestSet_LongestSuitTopCardBreaksTies(t *testing.T) {
	cases := []struct {
		set     string
		suit    Suit
		n       int
		topRank Rank
	}{
		{"[7H 8H AS]", Hearts, 2, Eight},
		{"[7H AS]", Spades, 1, Ace},
		{"[KD KC QS]", Diamonds, 1, King},
		{"[JK1 JK2]", NoSuit, 0, 0},
		{"[]", NoSuit, 0, 0},
	}
	for _, c := range cases {
		var s Set
		if c.set != "[]" {
			s = SetOf(mustParseAll(t, c.set)...)
		}
		suit, n, top := s.LongestSuit()
		if suit != c.suit || n != c.n || (n > 0 && top != c.topRank) {
			t.Errorf("%s.LongestSuit() = %v %d %v, want %v %d %v", c.set, suit, n, top, c.suit, c.n, c.topRank)
		}
	}
}
