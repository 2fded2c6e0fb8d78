package apierr

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/walletclient"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/auth"
	"github.com/pulka/pulka/services/gateway/internal/coins"
	"github.com/pulka/pulka/services/gateway/internal/connlimit"
	"github.com/pulka/pulka/services/gateway/internal/hub"
)

// Errors of the gateway's own requests.
var (
	// ErrNotFound means the thing asked for does not exist.
	ErrNotFound = errors.New("not found")
	// ErrUnavailable means a dependency (lobby, Redis) did not answer.
	ErrUnavailable = errors.New("service unavailable")
	// ErrAuthRequired means the request carries no session.
	ErrAuthRequired = errors.New("authentication required")
	// ErrAccountRequired means a guest tried something only accounts may do.
	ErrAccountRequired = errors.New("an account is required")
)

// BadRequest is a request the gateway could not read.
type BadRequest struct{ Message string }

func (e *BadRequest) Error() string { return "bad request: " + e.Message }

// BadRequestf makes a *BadRequest.
func BadRequestf(format string, args ...any) error {
	return &BadRequest{Message: fmt.Sprintf(format, args...)}
}

// LobbyRejection is a lobby command the lobby refused.
type LobbyRejection struct {
	Reason  lobbyv1.LobbyRejectReason
	Message string
	// RetryAfter is set when a limit refused (LobbyCommandResult.retry_after).
	RetryAfter time.Duration
}

func (e *LobbyRejection) Error() string { return "lobby refused: " + e.Message }

// Problem is how an error is reported to a client.
type Problem struct {
	Status  int    // HTTP status
	Code    string // stable, machine-readable
	Message string // English, for people
	// RetryAfter is set for rate limits (the Retry-After header).
	RetryAfter time.Duration
}

// Body is the JSON body of an error response.
type Body struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// Body returns the problem's JSON body.
func (p Problem) Body() Body {
	var b Body
	b.Error.Code, b.Error.Message = p.Code, p.Message
	return b
}

var lobbyReasons = map[lobbyv1.LobbyRejectReason]struct {
	status int
	code   string
}{
	lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INVALID_SETTINGS:   {http.StatusBadRequest, "invalid_settings"},
	lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TABLE_NOT_FOUND:    {http.StatusNotFound, "table_not_found"},
	lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_SEAT_UNAVAILABLE:   {http.StatusConflict, "seat_unavailable"},
	lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_WRONG_PASSWORD:     {http.StatusForbidden, "wrong_password"},
	lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_ALREADY_STARTED:    {http.StatusConflict, "already_started"},
	lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_NOT_SEATED:         {http.StatusConflict, "not_seated"},
	lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_NOT_HOST:           {http.StatusForbidden, "not_host"},
	lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_NOT_ALLOWED:        {http.StatusForbidden, "not_allowed"},
	lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INSUFFICIENT_FUNDS: {http.StatusPaymentRequired, "insufficient_funds"},
	lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_ACCOUNT_REQUIRED:   {http.StatusForbidden, "account_required"},
	lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_UNAVAILABLE:        {http.StatusServiceUnavailable, "unavailable"},
	// The lobby's limits (docs/limits.md, "Lobby").
	lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TOO_MANY_WAITING_TABLES:   {http.StatusConflict, "too_many_tables_waiting"},
	lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_RATE_LIMITED:              {http.StatusTooManyRequests, "too_many_requests"},
	lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TOO_MANY_PASSWORD_GUESSES: {http.StatusTooManyRequests, "too_many_password_guesses"},
}

// From classifies err. Unknown errors are internal errors whose message is
// not shown (it may hold details that are nobody's business).
func From(err error) Problem {
	var (
		rl *auth.RateLimitedError
		lr *LobbyRejection
		br *BadRequest
		we *wire.Error
		tm *connlimit.TooManyError
		wr *coins.Rejection
	)
	switch {
	case err == nil:
		return Problem{Status: http.StatusOK}
	case errors.As(err, &rl):
		return Problem{Status: http.StatusTooManyRequests, Code: "too_many_attempts",
			Message:    fmt.Sprintf("too many attempts from this %s: try again in %d s", rl.Scope, int(rl.RetryAfter.Round(time.Second)/time.Second)),
			RetryAfter: rl.RetryAfter}
	case errors.As(err, &tm):
		return Problem{Status: http.StatusTooManyRequests, Code: wire.CodeTooManyConns,
			Message: fmt.Sprintf("too many connections: at most %d per %s", tm.Limit, tm.Scope), RetryAfter: 10 * time.Second}
	case errors.Is(err, connlimit.ErrOverloaded):
		return Problem{Status: http.StatusServiceUnavailable, Code: "overloaded",
			Message: "the server takes no new connections right now: try again shortly", RetryAfter: 5 * time.Second}
	case errors.As(err, &lr):
		m := lr.Message
		if m == "" {
			m = "the lobby refused the command"
		}
		if r, ok := lobbyReasons[lr.Reason]; ok {
			return Problem{Status: r.status, Code: r.code, Message: m, RetryAfter: lr.RetryAfter}
		}
		return Problem{Status: http.StatusUnprocessableEntity, Code: "rejected", Message: m}
	case errors.Is(err, coins.ErrGuest):
		return Problem{Status: http.StatusForbidden, Code: "account_required",
			Message: "guests have no wallet: register an account to play for Domino Coin (a virtual coin, never money)"}
	case errors.Is(err, coins.ErrOpening):
		return Problem{Status: http.StatusServiceUnavailable, Code: "wallet_opening",
			Message: "your wallet is being opened: try again in a moment", RetryAfter: 5 * time.Second}
	case errors.As(err, &wr):
		if wr.Reason == walletv1.WalletRejectReason_WALLET_REJECT_REASON_BONUS_CLAIMED {
			return Problem{Status: http.StatusConflict, Code: "bonus_claimed",
				Message: "today's daily bonus was claimed already: come back tomorrow"}
		}
		m := wr.Message
		if m == "" {
			m = "the wallet refused"
		}
		return Problem{Status: http.StatusUnprocessableEntity, Code: "wallet_refused", Message: m}
	case errors.As(err, &br):
		return Problem{Status: http.StatusBadRequest, Code: "bad_request", Message: br.Message}
	case errors.As(err, &we):
		return Problem{Status: http.StatusBadRequest, Code: we.Code, Message: we.Message}
	case errors.Is(err, auth.ErrInvalidCredentials):
		return Problem{Status: http.StatusUnauthorized, Code: "invalid_credentials", Message: "wrong username or password"}
	case errors.Is(err, auth.ErrRevokedToken):
		return Problem{Status: http.StatusUnauthorized, Code: wire.CodeSessionRevoked, Message: "the session was ended (logged out): log in again"}
	case errors.Is(err, auth.ErrExpiredToken):
		return Problem{Status: http.StatusUnauthorized, Code: "session_expired", Message: "the session has expired: log in again"}
	case errors.Is(err, auth.ErrInvalidToken):
		return Problem{Status: http.StatusUnauthorized, Code: "unauthorized", Message: "invalid session"}
	case errors.Is(err, ErrAuthRequired):
		return Problem{Status: http.StatusUnauthorized, Code: "auth_required", Message: "log in or start a guest session first"}
	case errors.Is(err, ErrAccountRequired):
		return Problem{Status: http.StatusForbidden, Code: "account_required", Message: "guests cannot do this: register an account"}
	case errors.Is(err, auth.ErrUsernameTaken):
		return Problem{Status: http.StatusConflict, Code: "username_taken", Message: "that username is taken"}
	case errors.Is(err, auth.ErrInvalidUsername):
		return Problem{Status: http.StatusBadRequest, Code: "invalid_username", Message: unwrapMessage(err)}
	case errors.Is(err, auth.ErrWeakPassword):
		return Problem{Status: http.StatusBadRequest, Code: "weak_password", Message: unwrapMessage(err)}
	case errors.Is(err, auth.ErrBusy), errors.Is(err, auth.ErrSessionUnchecked), errors.Is(err, hub.ErrClosed), errors.Is(err, ErrUnavailable),
		errors.Is(err, walletclient.ErrTimeout):
		return Problem{Status: http.StatusServiceUnavailable, Code: "unavailable", Message: "the service is busy or shutting down: try again"}
	case errors.Is(err, ErrNotFound):
		return Problem{Status: http.StatusNotFound, Code: "not_found", Message: "not found"}
	case errors.Is(err, context.DeadlineExceeded):
		return Problem{Status: http.StatusGatewayTimeout, Code: "timeout", Message: "no answer in time: try again"}
	case errors.Is(err, context.Canceled):
		return Problem{Status: 499, Code: "canceled", Message: "request canceled"}
	default:
		return Problem{Status: http.StatusInternalServerError, Code: "internal", Message: "internal error"}
	}
}

// unwrapMessage strips the package prefix of a validation error
// ("auth: invalid username: 3..24 characters" → "invalid username: 3..24 characters").
func unwrapMessage(err error) string {
	s := err.Error()
	if len(s) > 6 && s[:6] == "auth: " {
		return s[6:]
	}
	return s
}
