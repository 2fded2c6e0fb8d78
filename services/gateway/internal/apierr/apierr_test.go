package apierr

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
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

func TestFrom_MapsEveryDomainErrorToItsStatusAndCode(t *testing.T) {
	wrap := func(err error) error { return fmt.Errorf("handler: %w", err) }
	tests := []struct {
		err    error
		status int
		code   string
	}{
		{auth.ErrInvalidCredentials, http.StatusUnauthorized, "invalid_credentials"},
		{wrap(auth.ErrExpiredToken), http.StatusUnauthorized, "session_expired"},
		{auth.ErrInvalidToken, http.StatusUnauthorized, "unauthorized"},
		{wrap(auth.ErrRevokedToken), http.StatusUnauthorized, "session_revoked"},
		{wrap(&connlimit.TooManyError{Scope: connlimit.ScopeIP, Limit: 64}), http.StatusTooManyRequests, "too_many_connections"},
		{wrap(connlimit.ErrOverloaded), http.StatusServiceUnavailable, "overloaded"},
		{ErrAuthRequired, http.StatusUnauthorized, "auth_required"},
		{ErrAccountRequired, http.StatusForbidden, "account_required"},
		{wrap(coins.ErrGuest), http.StatusForbidden, "account_required"},
		{errors.Join(coins.ErrOpening, walletclient.ErrTimeout), http.StatusServiceUnavailable, "wallet_opening"},
		{wrap(walletclient.ErrTimeout), http.StatusServiceUnavailable, "unavailable"},
		{wrap(&coins.Rejection{Reason: walletv1.WalletRejectReason_WALLET_REJECT_REASON_BONUS_CLAIMED}), http.StatusConflict, "bonus_claimed"},
		{&coins.Rejection{Reason: walletv1.WalletRejectReason_WALLET_REJECT_REASON_UNKNOWN_ACCOUNT, Message: "no such account"}, http.StatusUnprocessableEntity, "wallet_refused"},
		{wrap(auth.ErrUsernameTaken), http.StatusConflict, "username_taken"},
		{fmt.Errorf("%w: too short", auth.ErrInvalidUsername), http.StatusBadRequest, "invalid_username"},
		{auth.ErrWeakPassword, http.StatusBadRequest, "weak_password"},
		{&auth.RateLimitedError{Scope: "ip", RetryAfter: 30 * time.Second}, http.StatusTooManyRequests, "too_many_attempts"},
		{wrap(&LobbyRejection{Reason: lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_WRONG_PASSWORD}), http.StatusForbidden, "wrong_password"},
		{&LobbyRejection{Reason: lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TABLE_NOT_FOUND}, http.StatusNotFound, "table_not_found"},
		{&LobbyRejection{Reason: lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_SEAT_UNAVAILABLE}, http.StatusConflict, "seat_unavailable"},
		{&LobbyRejection{Reason: lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INSUFFICIENT_FUNDS}, http.StatusPaymentRequired, "insufficient_funds"},
		{&LobbyRejection{Reason: lobbyv1.LobbyRejectReason(99)}, http.StatusUnprocessableEntity, "rejected"},
		{&LobbyRejection{Reason: lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_UNAVAILABLE}, http.StatusServiceUnavailable, "unavailable"},
		{&LobbyRejection{Reason: lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TOO_MANY_WAITING_TABLES}, http.StatusConflict, "too_many_tables_waiting"},
		{&LobbyRejection{Reason: lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_RATE_LIMITED}, http.StatusTooManyRequests, "too_many_requests"},
		{&LobbyRejection{Reason: lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TOO_MANY_PASSWORD_GUESSES}, http.StatusTooManyRequests, "too_many_password_guesses"},
		{BadRequestf("seat %d", 9), http.StatusBadRequest, "bad_request"},
		{wire.Errorf(wire.CodeInvalidCard, "x"), http.StatusBadRequest, wire.CodeInvalidCard},
		{wrap(hub.ErrClosed), http.StatusServiceUnavailable, "unavailable"},
		{auth.ErrBusy, http.StatusServiceUnavailable, "unavailable"},
		{ErrNotFound, http.StatusNotFound, "not_found"},
		{wrap(context.DeadlineExceeded), http.StatusGatewayTimeout, "timeout"},
		{errors.New("redis: connection refused at 10.0.0.3"), http.StatusInternalServerError, "internal"},
	}
	for _, tt := range tests {
		p := From(tt.err)
		if p.Status != tt.status || p.Code != tt.code {
			t.Errorf("From(%v) = %d %s, want %d %s", tt.err, p.Status, p.Code, tt.status, tt.code)
		}
		if p.Message == "" {
			t.Errorf("From(%v) has no message", tt.err)
		}
	}
}

func TestFrom_HidesInternalDetails(t *testing.T) {
	p := From(errors.New("redis: connection refused at 10.0.0.3"))
	if p.Message != "internal error" {
		t.Fatalf("message = %q", p.Message)
	}
}

func TestFrom_LobbyLimitCarriesRetryAfter(t *testing.T) {
	p := From(&LobbyRejection{Reason: lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_RATE_LIMITED, Message: "slow down", RetryAfter: 7 * time.Second})
	if p.RetryAfter != 7*time.Second || p.Message != "slow down" {
		t.Fatalf("problem %+v", p)
	}
}

func TestFrom_RateLimitCarriesRetryAfter(t *testing.T) {
	p := From(&auth.RateLimitedError{Scope: "account", RetryAfter: 42 * time.Second})
	if p.RetryAfter != 42*time.Second {
		t.Fatalf("RetryAfter = %v", p.RetryAfter)
	}
}
