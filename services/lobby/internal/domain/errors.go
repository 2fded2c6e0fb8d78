package domain

import (
	"errors"
	"fmt"
	"time"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
)

// Refusals. Each maps to one LobbyRejectReason (see Reason).
var (
	// ErrInvalidSettings: the table settings (or name) are incomplete or
	// invalid. Returned as a *SettingsError naming the field.
	ErrInvalidSettings = errors.New("invalid table settings")
	// ErrInvalidCommand: the command is malformed (no command, no player).
	ErrInvalidCommand = errors.New("invalid command")
	// ErrTableNotFound: no such table (or it is gone).
	ErrTableNotFound = errors.New("table not found")
	// ErrSeatUnavailable: the seat is taken or out of range.
	ErrSeatUnavailable = errors.New("seat unavailable")
	// ErrWrongPassword: the table's password is wrong or missing.
	ErrWrongPassword = errors.New("wrong password")
	// ErrAlreadyStarted: the table's game has started (or is over).
	ErrAlreadyStarted = errors.New("table already started")
	// ErrNotSeated: the sender holds no seat at the table.
	ErrNotSeated = errors.New("not seated at this table")
	// ErrNotHost: only the table's host may do this.
	ErrNotHost = errors.New("only the host may do this")
	// ErrNotAllowed: the command does not apply here (bots at a Japanese
	// table, a Domino Coin table on a lobby without a wallet).
	ErrNotAllowed = errors.New("not allowed")
	// ErrAccountRequired: guests may not do this (sit at or create a Domino
	// Coin table), or the player has no Domino Coin account.
	ErrAccountRequired = errors.New("an account is required")
	// ErrInsufficientFunds: the player's Domino Coin balance cannot cover
	// the table's stake; the seat stays free.
	ErrInsufficientFunds = errors.New("balance too small for the stake")
	// ErrTooManyWaiting: the player already hosts or sits at the most
	// waiting tables one player may (Limits.WaitingPerPlayer).
	ErrTooManyWaiting = errors.New("too many waiting tables")
	// ErrTooManyCreations: the player created tables too fast. Returned as
	// a *LimitError saying when to retry.
	ErrTooManyCreations = errors.New("too many tables created")
	// ErrTooManyGuesses: too many password guesses at a table, by the
	// player or by everybody. Returned as a *LimitError.
	ErrTooManyGuesses = errors.New("too many password guesses")
	// ErrTooManyCommands: the player sent lobby commands (of any kind) too
	// fast. Returned as a *LimitError.
	ErrTooManyCommands = errors.New("too many lobby commands")
	// ErrTooManyCoinSits: the player sat down at Domino Coin tables (each
	// sit-down holds a stake in the wallet) too fast. Returned as a
	// *LimitError.
	ErrTooManyCoinSits = errors.New("too many sit-downs at Domino Coin tables")
)

// LimitError is a refusal by a rate limit: which one, and when the same
// request may succeed.
type LimitError struct {
	// Err is ErrTooManyCreations, ErrTooManyGuesses, ErrTooManyCommands or
	// ErrTooManyCoinSits.
	Err error
	// Scope says whose limit it is ("player", "table"), for the message.
	Scope string
	// RetryAfter is how long until the limit lets the request through.
	RetryAfter time.Duration
}

func (e *LimitError) Error() string {
	secs := int64((e.RetryAfter + time.Second - 1) / time.Second)
	return fmt.Sprintf("%v (limit per %s): try again in %d s", e.Err, e.Scope, secs)
}

func (e *LimitError) Unwrap() error { return e.Err }

// SettingsError says which setting is wrong and why.
type SettingsError struct {
	// Field is the settings field (proto name), or "name" / "password".
	Field string
	// Problem explains what is wrong, in English.
	Problem string
}

func (e *SettingsError) Error() string {
	return "invalid table settings: " + e.Field + ": " + e.Problem
}

// Is makes errors.Is(err, ErrInvalidSettings) true.
func (e *SettingsError) Is(target error) bool { return target == ErrInvalidSettings }

func invalid(field, problem string) error { return &SettingsError{Field: field, Problem: problem} }

// RetryAfter is how long a refusal by a rate limit asks to wait (0 for any
// other error).
func RetryAfter(err error) time.Duration {
	var le *LimitError
	if errors.As(err, &le) {
		return le.RetryAfter
	}
	return 0
}

// Reason maps a refusal to the wire reason; UNSPECIFIED for an error that is
// not a refusal of this package (an infrastructure failure).
func Reason(err error) lobbyv1.LobbyRejectReason {
	for _, m := range []struct {
		err    error
		reason lobbyv1.LobbyRejectReason
	}{
		{ErrInvalidSettings, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INVALID_SETTINGS},
		{ErrInvalidCommand, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INVALID_COMMAND},
		{ErrTableNotFound, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TABLE_NOT_FOUND},
		{ErrSeatUnavailable, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_SEAT_UNAVAILABLE},
		{ErrWrongPassword, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_WRONG_PASSWORD},
		{ErrAlreadyStarted, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_ALREADY_STARTED},
		{ErrNotSeated, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_NOT_SEATED},
		{ErrNotHost, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_NOT_HOST},
		{ErrNotAllowed, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_NOT_ALLOWED},
		{ErrAccountRequired, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_ACCOUNT_REQUIRED},
		{ErrInsufficientFunds, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INSUFFICIENT_FUNDS},
		{ErrTooManyWaiting, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TOO_MANY_WAITING_TABLES},
		{ErrTooManyCreations, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_RATE_LIMITED},
		{ErrTooManyCommands, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_RATE_LIMITED},
		{ErrTooManyCoinSits, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_RATE_LIMITED},
		{ErrTooManyGuesses, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TOO_MANY_PASSWORD_GUESSES},
	} {
		if errors.Is(err, m.err) {
			return m.reason
		}
	}
	return lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_UNSPECIFIED
}
