package scoring

import (
	"fmt"

	"github.com/pulka/pulka/pkg/classic"
)

// HandResult is what one hand leaves behind for the sheet: each seat's bid and
// the tricks it took. The number of cards dealt follows from the hand's place
// in the game (classic.Variant.CardsInHand).
type HandResult struct {
	Bids   [classic.Seats]int `json:"bids"`
	Tricks [classic.Seats]int `json:"tricks"`
}

// Result is how a seat's hand went.
type Result uint8

// The results of a hand.
const (
	// ResultMade: took exactly the bid (a made pass included).
	ResultMade Result = iota
	// ResultMissed: took more or fewer than the bid, but not a khishti.
	ResultMissed
	// ResultKhishti: bid at least one trick and took none.
	ResultKhishti
)

var resultNames = [...]string{"made", "missed", "khishti"}

// String returns "made", "missed" or "khishti".
func (r Result) String() string {
	if int(r) >= len(resultNames) {
		return fmt.Sprintf("Result(%d)", uint8(r))
	}
	return resultNames[r]
}

// MarshalText writes the result's name.
func (r Result) MarshalText() ([]byte, error) {
	if int(r) >= len(resultNames) {
		return nil, fmt.Errorf("scoring: invalid result %d", uint8(r))
	}
	return []byte(resultNames[r]), nil
}

// UnmarshalText reads a result's name, so that a sheet read back from JSON
// compares equal to the one written.
func (r *Result) UnmarshalText(b []byte) error {
	for i, name := range resultNames {
		if string(b) == name {
			*r = Result(i)
			return nil
		}
	}
	return fmt.Errorf("scoring: unknown result %q", b)
}

// HandScore returns the number written in a seat's score cell for a hand of
// the given number of cards, and how the hand went. A khishti writes minus its
// penalty; every other hand writes what it scored. The inputs are assumed to be
// in range (Build validates them).
func HandScore(cards, bid, tricks int, k Khishti) (int, Result) {
	switch {
	case tricks == bid && bid == cards && cards >= 1:
		return 100 * cards, ResultMade
	case tricks == bid:
		return 50 * (bid + 1), ResultMade
	case bid >= 1 && tricks == 0:
		return -k.Penalty(cards), ResultKhishti
	default:
		return 10 * tricks, ResultMissed
	}
}
