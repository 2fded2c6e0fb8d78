// Package cards is the 36-card Joker deck: cards, suits, ranks, card sets as
// bitsets, the deck type every deal fills (pkg/fairdeal shuffles it) and the
// seeded generator of bots and tests.
//
// A card is a number 0..35: suit*9 + rank, rank 0 being the six and 8 the ace.
// The two jokers take the slots of the six of spades (Joker1) and the six of
// clubs (Joker2), the cards they replace, so a whole deck is exactly the 36
// low bits of a Set and the suit masks simply leave those two bits out.
package cards

import (
	"errors"
	"fmt"
	"strings"
)

// Suit is one of the four suits. NoSuit stands for "no suit": a joker's suit,
// or "no trump" where a trump is expected.
type Suit uint8

// The suits, in the order of the bit layout.
const (
	Spades Suit = iota
	Hearts
	Diamonds
	Clubs
	NoSuit Suit = 4
)

// Suits lists the four real suits in layout order.
var Suits = [4]Suit{Spades, Hearts, Diamonds, Clubs}

var suitLetters = [5]byte{'S', 'H', 'D', 'C', '-'}

// String returns the suit's letter: S, H, D, C, or "-" for NoSuit.
func (s Suit) String() string {
	if s > NoSuit {
		return fmt.Sprintf("Suit(%d)", uint8(s))
	}
	return string(suitLetters[s])
}

// Valid reports whether s is one of the four real suits.
func (s Suit) Valid() bool { return s < NoSuit }

// ParseSuit reads S, H, D or C (either case); "-" or "" is NoSuit.
func ParseSuit(s string) (Suit, error) {
	switch strings.ToUpper(s) {
	case "S":
		return Spades, nil
	case "H":
		return Hearts, nil
	case "D":
		return Diamonds, nil
	case "C":
		return Clubs, nil
	case "-", "", "N", "NT":
		return NoSuit, nil
	}
	return NoSuit, fmt.Errorf("%w: suit %q", ErrParse, s)
}

// Rank is a card's rank within its suit: Six (0) up to Ace (8).
type Rank uint8

// The ranks, low to high.
const (
	Six Rank = iota
	Seven
	Eight
	Nine
	Ten
	Jack
	Queen
	King
	Ace
)

var rankNames = [9]string{"6", "7", "8", "9", "10", "J", "Q", "K", "A"}

// String returns the rank as printed on a card: 6..10, J, Q, K, A.
func (r Rank) String() string {
	if r > Ace {
		return fmt.Sprintf("Rank(%d)", uint8(r))
	}
	return rankNames[r]
}

// Card is one of the 36 cards, 0..35. See the package comment for the layout.
type Card uint8

// The jokers occupy the slots of the six of spades and the six of clubs.
const (
	Joker1 Card = Card(Spades)*9 + Card(Six)
	Joker2 Card = Card(Clubs)*9 + Card(Six)
	// NoCard marks an empty slot (no card played yet, no turned card).
	NoCard Card = 255
	// DeckSize is the number of cards in the deck.
	DeckSize = 36
)

// ErrParse is returned for text that is not a card, suit or set.
var ErrParse = errors.New("cards: cannot parse")

// New returns the ordinary card of suit s and rank r. It does not check that
// the card exists in the Joker deck (the black sixes are jokers).
func New(s Suit, r Rank) Card { return Card(s)*9 + Card(r) }

// IsJoker reports whether c is one of the two jokers.
func (c Card) IsJoker() bool { return c == Joker1 || c == Joker2 }

// Valid reports whether c is one of the 36 cards.
func (c Card) Valid() bool { return c < DeckSize }

// Suit returns the card's suit, or NoSuit for a joker.
func (c Card) Suit() Suit {
	if c.IsJoker() || !c.Valid() {
		return NoSuit
	}
	return Suit(c / 9)
}

// Rank returns the card's rank. It is meaningless for a joker.
func (c Card) Rank() Rank { return Rank(c % 9) }

// Bit returns the card as a one-card Set.
func (c Card) Bit() Set { return Set(1) << c }

// String returns "AS", "10H", "6D", or "JK1"/"JK2" for the jokers.
func (c Card) String() string {
	switch {
	case c == Joker1:
		return "JK1"
	case c == Joker2:
		return "JK2"
	case c == NoCard:
		return "--"
	case !c.Valid():
		return fmt.Sprintf("Card(%d)", uint8(c))
	}
	return c.Rank().String() + c.Suit().String()
}

// Parse reads a card as written by String (case-insensitive; "T" is accepted
// for ten).
func Parse(s string) (Card, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	switch u {
	case "JK1":
		return Joker1, nil
	case "JK2":
		return Joker2, nil
	}
	if len(u) < 2 {
		return NoCard, fmt.Errorf("%w: card %q", ErrParse, s)
	}
	suit, err := ParseSuit(u[len(u)-1:])
	if err != nil || suit == NoSuit {
		return NoCard, fmt.Errorf("%w: card %q", ErrParse, s)
	}
	rs := u[:len(u)-1]
	if rs == "T" {
		rs = "10"
	}
	for r, name := range rankNames {
		if name == rs {
			c := New(suit, Rank(r))
			if c.IsJoker() {
				return NoCard, fmt.Errorf("%w: %q is a joker in this deck", ErrParse, s)
			}
			return c, nil
		}
	}
	return NoCard, fmt.Errorf("%w: card %q", ErrParse, s)
}

// MarshalText writes the card as String does.
func (c Card) MarshalText() ([]byte, error) {
	if !c.Valid() {
		return nil, fmt.Errorf("cards: marshal invalid card %d", uint8(c))
	}
	return []byte(c.String()), nil
}

// UnmarshalText reads a card as Parse does.
func (c *Card) UnmarshalText(b []byte) error {
	v, err := Parse(string(b))
	if err != nil {
		return err
	}
	*c = v
	return nil
}
