package domain

import (
	"errors"

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
	// table, a Domino Coin stake while only free tables exist).
	ErrNotAllowed = errors.New("not allowed")
)

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
	} {
		if errors.Is(err, m.err) {
			return m.reason
		}
	}
	return lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_UNSPECIFIED
}
