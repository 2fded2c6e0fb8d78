package scoring

import (
	"errors"
	"fmt"
)

// Sentinel errors of the score sheet. Build wraps them, with the seat and the
// offending numbers, in an *InputError that names the hand; check them with
// errors.Is.
var (
	// ErrSeats: a hand does not have exactly one bid and one trick count per
	// seat. HandResult's arrays make this impossible inside Go, so it is
	// reported by decoders of external input (JSON, protobuf).
	ErrSeats = errors.New("wrong number of seats")
	// ErrBid: a bid outside 0..cards.
	ErrBid = errors.New("bid out of range")
	// ErrTricks: a trick count outside 0..cards.
	ErrTricks = errors.New("tricks out of range")
	// ErrTrickSum: the seats' tricks do not add up to the cards dealt.
	ErrTrickSum = errors.New("tricks do not add up to the cards dealt")
	// ErrTooManyHands: more hands than the variant has.
	ErrTooManyHands = errors.New("more hands than the variant has")
	// ErrSettings: an unknown variant or khishti type.
	ErrSettings = errors.New("invalid scoring settings")
)

// InputError is a problem with one hand of the input.
type InputError struct {
	// Hand is the 0-based index of the hand in play order; Error prints it
	// 1-based, the way players count hands.
	Hand int
	// Err wraps one of the sentinel errors with the details.
	Err error
}

// Error names the hand 1-based and the problem.
func (e *InputError) Error() string {
	return fmt.Sprintf("scoring: hand %d: %v", e.Hand+1, e.Err)
}

// Unwrap gives errors.Is the sentinel inside.
func (e *InputError) Unwrap() error { return e.Err }
