package cards

import (
	"math/bits"
	"strings"
)

// Set is a set of cards as a bitset: bit c is card c. It is a value; every
// operation is a few machine instructions and never allocates.
type Set uint64

const (
	// Jokers is the set of both jokers.
	Jokers Set = Set(1)<<Joker1 | Set(1)<<Joker2
	// FullDeck is all 36 cards.
	FullDeck Set = (Set(1) << DeckSize) - 1
	suitBits Set = 0x1FF
)

// SuitMask returns the ordinary cards of suit s (never a joker). It returns
// the empty set for NoSuit.
func SuitMask(s Suit) Set {
	if !s.Valid() {
		return 0
	}
	return (suitBits << (9 * uint(s))) &^ Jokers
}

// SetOf builds a set from cards.
func SetOf(cs ...Card) Set {
	var s Set
	for _, c := range cs {
		s |= c.Bit()
	}
	return s
}

// Has reports whether c is in the set.
func (s Set) Has(c Card) bool { return c.Valid() && s&c.Bit() != 0 }

// With returns the set with c added.
func (s Set) With(c Card) Set { return s | c.Bit() }

// Without returns the set with c removed.
func (s Set) Without(c Card) Set { return s &^ c.Bit() }

// Len returns the number of cards in the set.
func (s Set) Len() int { return bits.OnesCount64(uint64(s)) }

// Empty reports whether the set has no cards.
func (s Set) Empty() bool { return s == 0 }

// OfSuit returns the ordinary cards of suit s in the set.
func (s Set) OfSuit(su Suit) Set { return s & SuitMask(su) }

// Jokers returns the jokers in the set.
func (s Set) Jokers() Set { return s & Jokers }

// Lowest returns the lowest card of the set by index (for a one-suit set, its
// lowest rank), or NoCard when empty.
func (s Set) Lowest() Card {
	if s == 0 {
		return NoCard
	}
	return Card(bits.TrailingZeros64(uint64(s)))
}

// Highest returns the highest card of the set by index (for a one-suit set,
// its highest rank), or NoCard when empty.
func (s Set) Highest() Card {
	if s == 0 {
		return NoCard
	}
	return Card(63 - bits.LeadingZeros64(uint64(s)))
}

// AppendCards appends the set's cards in ascending order to buf.
func (s Set) AppendCards(buf []Card) []Card {
	for s != 0 {
		c := Card(bits.TrailingZeros64(uint64(s)))
		buf = append(buf, c)
		s &= s - 1
	}
	return buf
}

// Cards returns the set's cards in ascending order.
func (s Set) Cards() []Card { return s.AppendCards(make([]Card, 0, s.Len())) }

// String lists the cards, e.g. "[6H AH JK1]".
func (s Set) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for i, c := range s.Cards() {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(c.String())
	}
	b.WriteByte(']')
	return b.String()
}

// LongestSuit returns the suit with the most cards in the set, the higher top
// card breaking ties (and then the suit order), with its length and top rank.
// For a set without ordinary cards it returns NoSuit and 0.
func (s Set) LongestSuit() (suit Suit, n int, top Rank) {
	suit, bestScore := NoSuit, 0
	for _, su := range Suits {
		in := s.OfSuit(su)
		l := in.Len()
		if l == 0 {
			continue
		}
		t := in.Highest().Rank()
		if score := l*16 + int(t); score > bestScore {
			suit, bestScore, n, top = su, score, l, t
		}
	}
	return suit, n, top
}
