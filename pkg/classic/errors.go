package classic

import (
	"errors"
	"fmt"
)

// The rules a move can break. A rejected move comes back as a *MoveError whose
// Err is one of these, so callers test with errors.Is and show the message to
// the player.
var (
	ErrGameOver            = errors.New("the game is over")
	ErrNotYourTurn         = errors.New("it is not your turn")
	ErrWrongPhase          = errors.New("that move does not fit this moment of the hand")
	ErrUnknownMove         = errors.New("unknown kind of move")
	ErrNotInHand           = errors.New("you do not hold that card")
	ErrMustFollowSuit      = errors.New("you must follow the suit that was led")
	ErrMustTrump           = errors.New("you have none of the led suit, so you must play a trump")
	ErrMustPlayHighest     = errors.New("the joker asked for the highest card of its suit: you must play your highest")
	ErrBadJokerDeclaration = errors.New("a joker leading a trick names a suit and 'highest' or 'give'; a joker played later says 'take' or 'discard'")
	ErrBadBid              = errors.New("a bid is a number from 0 to the number of cards dealt")
	ErrDealerBid           = errors.New("the dealer may not bid the number that makes all bids add up to the cards dealt")
	ErrBadTrump            = errors.New("trump is one of the four suits or no trump")
	ErrBadSettings         = errors.New("classic: invalid settings")
	ErrBadState            = errors.New("classic: invalid saved game")
	ErrBadView             = errors.New("classic: a view no game in play can show")
)

// MoveError is why Apply rejected a move. Hand and Trick are 0-based indexes
// of the hand in the game and the trick in the hand; Seat is the seat the move
// claimed to come from.
type MoveError struct {
	Hand, Trick, Seat int
	Move              Move
	Err               error
}

func (e *MoveError) Error() string {
	return fmt.Sprintf("classic: hand %d, trick %d, seat %d, move %q: %v",
		e.Hand+1, e.Trick+1, e.Seat, e.Move.String(), e.Err)
}

// Unwrap returns the rule that was broken.
func (e *MoveError) Unwrap() error { return e.Err }
