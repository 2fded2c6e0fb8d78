package classic

import (
	"fmt"
	"strings"
)

// Variant is the shape of a classic game: how many hands, of how many cards,
// in which pulkas.
type Variant uint8

const (
	// Standard is 24 hands: I = 1..8 cards, II = 9×4, III = 8..1, IV = 9×4.
	Standard Variant = iota
	// Nines (tskhrianebi) is 16 hands: four pulkas of four nine-card hands.
	Nines
)

// Seats is the number of players in a classic game.
const Seats = 4

// Pulkas is the number of pulkas in every classic game.
const Pulkas = 4

// MaxCards is the most cards a hand deals each seat.
const MaxCards = 9

var (
	standardSchedule = [...]uint8{
		1, 2, 3, 4, 5, 6, 7, 8,
		9, 9, 9, 9,
		8, 7, 6, 5, 4, 3, 2, 1,
		9, 9, 9, 9,
	}
	standardPulkaStart = [Pulkas + 1]int{0, 8, 12, 20, 24}
	ninesSchedule      = [...]uint8{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}
	ninesPulkaStart    = [Pulkas + 1]int{0, 4, 8, 12, 16}
)

// String returns "standard" or "nines".
func (v Variant) String() string {
	switch v {
	case Standard:
		return "standard"
	case Nines:
		return "nines"
	}
	return fmt.Sprintf("Variant(%d)", uint8(v))
}

// Valid reports whether v is a known variant.
func (v Variant) Valid() bool { return v == Standard || v == Nines }

// ParseVariant reads "standard" or "nines" (case-insensitive).
func ParseVariant(s string) (Variant, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "standard", "":
		return Standard, nil
	case "nines", "tskhrianebi":
		return Nines, nil
	}
	return 0, fmt.Errorf("classic: unknown variant %q (want standard or nines)", s)
}

// MarshalText writes the variant's name.
func (v Variant) MarshalText() ([]byte, error) {
	if !v.Valid() {
		return nil, fmt.Errorf("classic: invalid variant %d", uint8(v))
	}
	return []byte(v.String()), nil
}

// UnmarshalText reads a variant's name.
func (v *Variant) UnmarshalText(b []byte) error {
	p, err := ParseVariant(string(b))
	if err != nil {
		return err
	}
	*v = p
	return nil
}

// Hands returns the number of hands in a game of this variant.
func (v Variant) Hands() int {
	if v == Nines {
		return len(ninesSchedule)
	}
	return len(standardSchedule)
}

// CardsInHand returns how many cards each seat is dealt in hand h (0-based).
func (v Variant) CardsInHand(h int) int {
	if h < 0 || h >= v.Hands() {
		return 0
	}
	if v == Nines {
		return int(ninesSchedule[h])
	}
	return int(standardSchedule[h])
}

// PulkaOf returns the pulka (0..3) that hand h belongs to.
func (v Variant) PulkaOf(h int) int {
	starts := v.pulkaStarts()
	for p := Pulkas - 1; p >= 0; p-- {
		if h >= starts[p] {
			return p
		}
	}
	return 0
}

// PulkaHands returns the half-open range [first, end) of hand indexes in pulka p.
func (v Variant) PulkaHands(p int) (first, end int) {
	starts := v.pulkaStarts()
	return starts[p], starts[p+1]
}

func (v Variant) pulkaStarts() *[Pulkas + 1]int {
	if v == Nines {
		return &ninesPulkaStart
	}
	return &standardPulkaStart
}
