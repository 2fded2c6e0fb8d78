package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/apierr"
	"github.com/pulka/pulka/services/gateway/internal/auth"
	"github.com/pulka/pulka/services/gateway/internal/coins"
)

// Page sizes of the ledger.
const (
	DefaultLedgerPage = 50
	MaxLedgerPage     = coins.MaxLedgerPage
)

// Results of the wallet requests, for Deps.WalletCounted.
const (
	WalletOK      = "ok"
	WalletRefused = "refused"
	WalletError   = "error"
	WalletLimited = "limited"
)

// LedgerPage is a page of an account's ledger, newest first. NextBefore
// is the `before` of the next (older) page; empty on the last one.
type LedgerPage struct {
	Entries    []json.RawMessage `json:"entries"` // pulka.wallet.v1.LedgerEntry
	NextBefore string            `json:"next_before,omitempty"`
}

// BonusResult answers a daily bonus claim: the balance after it and the
// ledger entry it wrote.
type BonusResult struct {
	Balance json.RawMessage `json:"balance"` // pulka.wallet.v1.Balance
	Entry   json.RawMessage `json:"entry"`   // pulka.wallet.v1.LedgerEntry
}

// count reports a wallet request's result to Deps.WalletCounted.
func (a *API) count(op string, err error) {
	if a.deps.WalletCounted == nil {
		return
	}
	var rej *coins.Rejection
	var bad *apierr.BadRequest
	switch {
	case err == nil:
		a.deps.WalletCounted(op, WalletOK)
	case errors.As(err, &rej), errors.As(err, &bad), errors.Is(err, coins.ErrGuest):
		a.deps.WalletCounted(op, WalletRefused)
	default:
		a.deps.WalletCounted(op, WalletError)
	}
}

// refuse answers a wallet request refused before it reached the wallet,
// counting it as refused (docs/limits.md names the counter of each).
func (a *API) refuse(c *gin.Context, op string, err error) {
	a.count(op, err)
	Fail(c, err)
}

// walletAccount is the account of the request, or false (answered) for a
// guest or a gateway without a wallet.
func (a *API) walletAccount(c *gin.Context, op string) (string, bool) {
	if a.deps.Wallet == nil {
		Fail(c, apierr.ErrUnavailable)
		return "", false
	}
	cl := claimsOf(c)
	if cl.Guest {
		a.refuse(c, op, coins.ErrGuest)
		return "", false
	}
	return cl.PlayerID, true
}

// walletCtx bounds a wait for the wallet.
func (a *API) walletCtx(c *gin.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.Request.Context(), a.cfg.WalletTimeout)
}

// openWallet opens a new account's wallet. Registration succeeds whatever
// happens here: if the wallet does not answer, the command waits in its
// stream, and the next login, balance read or bonus claim opens it again
// (the command id is the account's, so it is applied once).
func (a *API) openWallet(c *gin.Context, account string) {
	if a.deps.Wallet == nil {
		return
	}
	ctx, cancel := a.walletCtx(c)
	defer cancel()
	err := a.deps.Wallet.Open(ctx, account)
	a.count("open", err)
	if err != nil {
		a.deps.Logger.WarnContext(c.Request.Context(), "wallet: account not opened at registration (opened later)", "account", account, "err", err)
	}
}

// ensureWallet makes sure a logging-in account has a wallet (its
// registration may have found the wallet down).
func (a *API) ensureWallet(c *gin.Context, account string) {
	if a.deps.Wallet == nil {
		return
	}
	ctx, cancel := a.walletCtx(c)
	defer cancel()
	if _, err := a.deps.Wallet.Balance(ctx, account); err != nil {
		a.count("open", err)
		a.deps.Logger.InfoContext(c.Request.Context(), "wallet: account not open at login", "account", account, "err", err)
	}
}

// balance answers the account's pulka.wallet.v1.Balance.
func (a *API) balance(c *gin.Context) {
	account, ok := a.walletAccount(c, "balance")
	if !ok {
		return
	}
	ctx, cancel := a.walletCtx(c)
	defer cancel()
	b, err := a.deps.Wallet.Balance(ctx, account)
	a.count("balance", err)
	if err != nil {
		Fail(c, err)
		return
	}
	protoJSON(c, http.StatusOK, b)
}

// ledger answers a LedgerPage: ?before=<stream id>&limit=1..100.
func (a *API) ledger(c *gin.Context) {
	account, ok := a.walletAccount(c, "ledger")
	if !ok {
		return
	}
	limit := DefaultLedgerPage
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxLedgerPage {
			a.refuse(c, "ledger", apierr.BadRequestf("limit=%q is not 1..%d", v, MaxLedgerPage))
			return
		}
		limit = n
	}
	before := c.Query("before")
	if before != "" && !validStreamID(before) {
		a.refuse(c, "ledger", apierr.BadRequestf("before=%q is not a ledger position (<ms>-<seq>)", before))
		return
	}
	entries, next, err := a.deps.Wallet.Ledger(c.Request.Context(), account, before, limit)
	a.count("ledger", err)
	if err != nil {
		Fail(c, err)
		return
	}
	page := LedgerPage{Entries: make([]json.RawMessage, 0, len(entries)), NextBefore: next}
	for _, e := range entries {
		b, err := wire.ProtoJSON(e)
		if err != nil {
			Fail(c, err)
			return
		}
		page.Entries = append(page.Entries, b)
	}
	c.JSON(http.StatusOK, page)
}

// dailyBonus claims today's bonus: 200 BonusResult, or 409 bonus_claimed.
// Each claim is a command in the wallet's stream, so claims are limited
// per account (Deps.Bonuses) besides the wallet's once a day.
func (a *API) dailyBonus(c *gin.Context) {
	account, ok := a.walletAccount(c, "daily_bonus")
	if !ok {
		return
	}
	if a.deps.Bonuses != nil {
		allowed, retry, err := a.deps.Bonuses.Hit(c.Request.Context(), account)
		if err != nil {
			Fail(c, errors.Join(apierr.ErrUnavailable, err))
			return
		}
		if !allowed {
			if a.deps.WalletCounted != nil {
				a.deps.WalletCounted("daily_bonus", WalletLimited)
			}
			Fail(c, &auth.RateLimitedError{Scope: "account", RetryAfter: retry})
			return
		}
	}
	ctx, cancel := a.walletCtx(c)
	defer cancel()
	res, err := a.deps.Wallet.ClaimDailyBonus(ctx, account)
	a.count("daily_bonus", err)
	if err != nil {
		Fail(c, err)
		return
	}
	var out BonusResult
	var bal *walletv1.Balance
	for _, b := range res.GetBalances() {
		if b.GetAccountId() == account {
			bal = b
		}
	}
	var entry *walletv1.LedgerEntry
	if es := res.GetEntries(); len(es) > 0 {
		entry = es[0]
	}
	if out.Balance, err = wire.ProtoJSON(bal); err == nil {
		out.Entry, err = wire.ProtoJSON(entry)
	}
	if err != nil {
		Fail(c, err)
		return
	}
	c.JSON(http.StatusOK, out)
}

// validStreamID reports whether s looks like a stream id: <ms>-<seq>.
func validStreamID(s string) bool {
	ms, seq, ok := strings.Cut(s, "-")
	if !ok {
		return false
	}
	_, err1 := strconv.ParseUint(ms, 10, 64)
	_, err2 := strconv.ParseUint(seq, 10, 64)
	return err1 == nil && err2 == nil
}
