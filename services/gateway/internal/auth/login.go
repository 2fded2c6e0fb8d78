package auth

import (
	"context"
	"errors"
	"strings"
)

// LoginGuard rate-limits logins: every attempt counts against the client's
// IP, and failed attempts count against the account, so neither one address
// trying many accounts nor many addresses trying one account get far.
type LoginGuard struct {
	accounts  *Accounts
	perIP     *Limiter
	perAcount *Limiter
}

// NewLoginGuard guards accounts with the two limiters.
func NewLoginGuard(accounts *Accounts, perIP, perAccount *Limiter) *LoginGuard {
	return &LoginGuard{accounts: accounts, perIP: perIP, perAcount: perAccount}
}

// Login authenticates username/password for a client at ip. It returns a
// *RateLimitedError (before checking the password) when either limit is used
// up, ErrInvalidCredentials for a wrong name or password.
func (g *LoginGuard) Login(ctx context.Context, username, password, ip string) (Account, error) {
	ok, retry, err := g.perIP.Hit(ctx, ip)
	if err != nil {
		return Account{}, err
	}
	if !ok {
		return Account{}, &RateLimitedError{Scope: "ip", RetryAfter: retry}
	}
	acct := strings.ToLower(username)
	blocked, retry, err := g.perAcount.Blocked(ctx, acct)
	if err != nil {
		return Account{}, err
	}
	if blocked {
		return Account{}, &RateLimitedError{Scope: "account", RetryAfter: retry}
	}
	a, err := g.accounts.Authenticate(ctx, username, password)
	switch {
	case errors.Is(err, ErrInvalidCredentials):
		if _, _, herr := g.perAcount.Hit(ctx, acct); herr != nil {
			return Account{}, herr
		}
		return Account{}, err
	case err != nil:
		return Account{}, err
	}
	// A success forgives earlier typos; the IP count stays.
	_ = g.perAcount.Reset(ctx, acct)
	return a, nil
}
