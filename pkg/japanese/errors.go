package japanese

import (
	"errors"
	"fmt"
)

// Sentinel errors. A rejected move returns a *MoveError whose Err is one of
// these, so callers test them with errors.Is. The messages are written for the
// player who made the move.
var (
	ErrGameOver            = errors.New("the match is over")
	ErrNotYourTurn         = errors.New("it is not your turn")
	ErrWrongPhase          = errors.New("that move does not fit this moment of the hand")
	ErrBadSeat             = errors.New("there is no such seat")
	ErrBadMove             = errors.New("malformed move")
	ErrBadTrump            = errors.New("trump must be a suit or bezi")
	ErrNotInHand           = errors.New("that card is neither in your hand nor face up in your columns")
	ErrFirstCardFromHand   = errors.New("your first card of the hand must come from your hand")
	ErrMustFollowSuit      = errors.New("you must follow suit")
	ErrMustTrump           = errors.New("you cannot follow suit, so you must play a trump")
	ErrMustPlayHighest     = errors.New("the joker named a suit: you must give your highest card of it")
	ErrBadJokerDeclaration = errors.New("a joker you lead must name a suit, and only a led joker names one")
	// ErrBadTarget is returned by New for a target other than 11, 15, 21 or 31.
	ErrBadTarget = errors.New("the target score must be 11, 15, 21 or 31")
	// ErrBadState is returned by UnmarshalBinary/UnmarshalJSON for data that is
	// not a valid game state.
	ErrBadState = errors.New("japanese: invalid game state")
)

// MoveError is the error of a rejected move: where it happened, the move, and
// the rule it broke (Err, one of the sentinel errors above).
type MoveError struct {
	Hand, Trick, Seat int
	Move              Move
	Err               error
}

// Error names the hand, trick and seat (counting from 1 and 0 as players
// see them) and the rule.
func (e *MoveError) Error() string {
	return fmt.Sprintf("japanese: hand %d, trick %d, seat %d: %v: %v", e.Hand+1, e.Trick+1, e.Seat, e.Move, e.Err)
}

// Unwrap returns the broken rule, so errors.Is(err, ErrMustFollowSuit) works.
func (e *MoveError) Unwrap() error { return e.Err }
