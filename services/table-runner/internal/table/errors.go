package table

import (
	"errors"
	"fmt"

	"github.com/pulka/pulka/pkg/classic"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/japanese"
)

// Errors of the table itself. Engine rules (must follow suit, ...) come
// through unchanged inside a *RejectError.
var (
	// ErrBadSettings: settings New cannot play by.
	ErrBadSettings = errors.New("table: invalid settings")
	// ErrBadSeats: the seats do not fit the game (count, missing player ids,
	// one player in two seats, bots at a Japanese table).
	ErrBadSeats = errors.New("table: invalid seats")
	// ErrBadInput: an input Apply cannot read (unknown kind, no command,
	// no player, malformed stream entry id). Nothing changes.
	ErrBadInput = errors.New("table: invalid input")
	// ErrBadSnapshot: UnmarshalBinary met data that is not a valid table.
	ErrBadSnapshot = errors.New("table: invalid snapshot")

	// ErrDuplicate: the command id was applied already (see Ignored).
	ErrDuplicate = errors.New("table: command already applied")
	// ErrStale: the command stream entry is not after the last applied one
	// (see Ignored).
	ErrStale = errors.New("table: command stream entry already passed")

	// ErrMalformed: the command is incomplete (no command id, no command, a
	// missing card) or for another table.
	ErrMalformed = errors.New("the command is malformed")
	// ErrNotSeated: the sender holds no seat, or a bot plays it now.
	ErrNotSeated = errors.New("you do not play a seat at this table")
	// ErrSeatUnavailable: the seat does not exist, is somebody else's, or is
	// already the sender's.
	ErrSeatUnavailable = errors.New("that seat is not available to you")
	// ErrRetakesUsed: the player took their seat back from a bot
	// maxRetakes times this game already: the bot plays it to the end.
	ErrRetakesUsed = errors.New("you took this seat back too often this game: the bot plays it to the end")
	// ErrNotAllowed: the table does not allow this (e.g. taking a seat back
	// from a bot in a Japanese match, which has no bots).
	ErrNotAllowed = errors.New("that is not allowed at this table")
	// ErrGameOver: the game has ended.
	ErrGameOver = errors.New("the game is over")
	// ErrNotSeeding: a client seed for a hand that is not being seeded (it
	// was dealt already, or is not committed yet).
	ErrNotSeeding = errors.New("that hand is not waiting for client seeds")
	// ErrSeedRefused: a client seed from a seat the hand does not await, or
	// a second one from the same seat.
	ErrSeedRefused = errors.New("your client seed for this hand is not wanted")
	// ErrNoEntropy: a step had to commit a hand and its input carried no
	// entropy (a runner bug: a hand's server seed must never be predictable).
	ErrNoEntropy = errors.New("table: a hand to commit and no entropy")
	// ErrRunaway: the server kept moving without end; a bug guard, never
	// expected.
	ErrRunaway = errors.New("table: too many server moves in one input")
)

// RejectError is a refused command: the table did not change. Event is the
// answer for the sender, a MoveRejected (audience: the sending player,
// caused_by and command_entry_id set) with seq 0, because it is not part of
// the table's history: the runner delivers it to the sender without logging
// it. Err is one of this package's errors above or the engine's *MoveError
// (which unwraps to the broken rule).
type RejectError struct {
	Reason    tablev1.RejectReason
	PlayerID  string
	CommandID string
	Err       error
	Event     *tablev1.Event
}

func (e *RejectError) Error() string {
	return fmt.Sprintf("table: command %q of player %q rejected (%v): %v", e.CommandID, e.PlayerID, e.Reason, e.Err)
}

// Unwrap returns the rule that refused the command.
func (e *RejectError) Unwrap() error { return e.Err }

// rejection maps an error to its reject reason and the player-facing message:
// the broken rule's own text, not the wrapped detail.
type rejection struct {
	err    error
	reason tablev1.RejectReason
}

var rejections = [...]rejection{
	{ErrMalformed, tablev1.RejectReason_REJECT_REASON_MALFORMED},
	{ErrNotSeated, tablev1.RejectReason_REJECT_REASON_NOT_SEATED},
	{ErrSeatUnavailable, tablev1.RejectReason_REJECT_REASON_SEAT_UNAVAILABLE},
	{ErrRetakesUsed, tablev1.RejectReason_REJECT_REASON_NOT_ALLOWED},
	{ErrNotAllowed, tablev1.RejectReason_REJECT_REASON_NOT_ALLOWED},
	{ErrGameOver, tablev1.RejectReason_REJECT_REASON_GAME_OVER},
	{ErrNotSeeding, tablev1.RejectReason_REJECT_REASON_WRONG_PHASE},
	{ErrSeedRefused, tablev1.RejectReason_REJECT_REASON_NOT_ALLOWED},

	{classic.ErrGameOver, tablev1.RejectReason_REJECT_REASON_GAME_OVER},
	{classic.ErrNotYourTurn, tablev1.RejectReason_REJECT_REASON_NOT_YOUR_TURN},
	{classic.ErrWrongPhase, tablev1.RejectReason_REJECT_REASON_WRONG_PHASE},
	{classic.ErrUnknownMove, tablev1.RejectReason_REJECT_REASON_MALFORMED},
	{classic.ErrNotInHand, tablev1.RejectReason_REJECT_REASON_CARD_NOT_AVAILABLE},
	{classic.ErrMustFollowSuit, tablev1.RejectReason_REJECT_REASON_MUST_FOLLOW_SUIT},
	{classic.ErrMustTrump, tablev1.RejectReason_REJECT_REASON_MUST_TRUMP},
	{classic.ErrMustPlayHighest, tablev1.RejectReason_REJECT_REASON_MUST_PLAY_HIGHEST},
	{classic.ErrBadJokerDeclaration, tablev1.RejectReason_REJECT_REASON_INVALID_DECLARATION},
	{classic.ErrBadBid, tablev1.RejectReason_REJECT_REASON_INVALID_BID},
	{classic.ErrDealerBid, tablev1.RejectReason_REJECT_REASON_DEALER_BID_FORBIDDEN},
	{classic.ErrBadTrump, tablev1.RejectReason_REJECT_REASON_INVALID_TRUMP},

	{japanese.ErrGameOver, tablev1.RejectReason_REJECT_REASON_GAME_OVER},
	{japanese.ErrNotYourTurn, tablev1.RejectReason_REJECT_REASON_NOT_YOUR_TURN},
	{japanese.ErrWrongPhase, tablev1.RejectReason_REJECT_REASON_WRONG_PHASE},
	{japanese.ErrBadSeat, tablev1.RejectReason_REJECT_REASON_NOT_SEATED},
	{japanese.ErrBadMove, tablev1.RejectReason_REJECT_REASON_MALFORMED},
	{japanese.ErrBadTrump, tablev1.RejectReason_REJECT_REASON_INVALID_TRUMP},
	{japanese.ErrNotInHand, tablev1.RejectReason_REJECT_REASON_CARD_NOT_AVAILABLE},
	{japanese.ErrFirstCardFromHand, tablev1.RejectReason_REJECT_REASON_FIRST_CARD_FROM_HAND},
	{japanese.ErrMustFollowSuit, tablev1.RejectReason_REJECT_REASON_MUST_FOLLOW_SUIT},
	{japanese.ErrMustTrump, tablev1.RejectReason_REJECT_REASON_MUST_TRUMP},
	{japanese.ErrMustPlayHighest, tablev1.RejectReason_REJECT_REASON_MUST_PLAY_HIGHEST},
	{japanese.ErrBadJokerDeclaration, tablev1.RejectReason_REJECT_REASON_INVALID_DECLARATION},
}

// rejectReason returns the reason and the player-facing message of err.
func rejectReason(err error) (tablev1.RejectReason, string) {
	for _, r := range rejections {
		if errors.Is(err, r.err) {
			return r.reason, r.err.Error()
		}
	}
	return tablev1.RejectReason_REJECT_REASON_MALFORMED, ErrMalformed.Error()
}
