package auth

import (
	"errors"
	"fmt"
	"time"
)

// Domain errors. The HTTP API maps them to status codes in one place
// (internal/apierr); nothing here knows about HTTP.
var (
	// ErrInvalidCredentials means the username or the password is wrong.
	// Which one is deliberately not said.
	ErrInvalidCredentials = errors.New("auth: wrong username or password")
	// ErrUsernameTaken means an account with that name exists.
	ErrUsernameTaken = errors.New("auth: username taken")
	// ErrInvalidUsername means the name breaks the naming rules.
	ErrInvalidUsername = errors.New("auth: invalid username")
	// ErrWeakPassword means the password is too short (or too long).
	ErrWeakPassword = errors.New("auth: password too weak")
	// ErrInvalidToken means a session token is malformed or its signature
	// does not verify.
	ErrInvalidToken = errors.New("auth: invalid session token")
	// ErrExpiredToken means a session token verified but has expired.
	ErrExpiredToken = errors.New("auth: session expired")
	// ErrRevokedToken means a session token verified but was revoked
	// (logged out).
	ErrRevokedToken = errors.New("auth: session revoked")
	// ErrBusy means too many password hashes are being computed at once.
	ErrBusy = errors.New("auth: too many concurrent password checks")
	// ErrSessionUnchecked means a session could not be checked against the
	// revocations (Redis did not answer): the service's fault, not the
	// client's.
	ErrSessionUnchecked = errors.New("auth: session could not be checked")
)

// RateLimitedError means too many attempts; try again after RetryAfter.
type RateLimitedError struct {
	// Scope is what was limited: "ip" or "account".
	Scope      string
	RetryAfter time.Duration
}

func (e *RateLimitedError) Error() string {
	return fmt.Sprintf("auth: too many attempts for this %s, retry in %s", e.Scope, e.RetryAfter.Round(time.Second))
}
