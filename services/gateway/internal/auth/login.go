package auth

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// LoginLimits are the login attempt limits, each per Window.
//
// Every attempt is counted before its password is checked (one Redis script
// increments and compares), so parallel guesses cannot slip past a limit:
// at most the limit's number of hashes is ever computed.
//
// A lock-out by strangers is what the limits are designed against: the
// tight limit is per (account, client IP), so five wrong tries from one
// address block that address for that account, not the account's owner
// elsewhere. The account-wide limit, much higher, bounds a guesser with
// many addresses; attempts from an address that has logged into the
// account successfully before (within KnownFor) do not count against it,
// so even a distributed guesser cannot lock the owner out from their usual
// addresses.
type LoginLimits struct {
	// PerIP bounds attempts from one client address (any account).
	PerIP int
	// PerAccountIP bounds attempts at one account from one address; a
	// success resets it.
	PerAccountIP int
	// PerAccount bounds attempts at one account from addresses that have
	// not logged into it before.
	PerAccount int
	Window     time.Duration
	// KnownFor is how long a successful login makes its address known to
	// the account.
	KnownFor time.Duration
}

// Login limit scopes, in RateLimitedError.Scope and in metrics.
const (
	ScopeIP        = "ip"
	ScopeAccountIP = "account_ip"
	ScopeAccount   = "account"
)

// LoginGuard rate-limits logins (see LoginLimits).
type LoginGuard struct {
	accounts *Accounts
	rdb      redis.UniversalClient
	limits   LoginLimits
	// refused, when set, is told the scope of every refused attempt.
	refused func(scope string)
}

// NewLoginGuard guards accounts with limits counted in rdb (shared by every
// gateway instance). refused may be nil.
func NewLoginGuard(accounts *Accounts, rdb redis.UniversalClient, limits LoginLimits, refused func(scope string)) *LoginGuard {
	if refused == nil {
		refused = func(string) {}
	}
	return &LoginGuard{accounts: accounts, rdb: rdb, limits: limits, refused: refused}
}

// attemptScript counts one attempt against each limit in turn, stopping at
// the first one used up: {0, 0} when allowed, else {scope index, ms left}.
// KEYS: per-IP, per-(account, IP), per-account counters, the known-address
// marker. ARGV: window ms, the three limits.
var attemptScript = redis.NewScript(`
local function hit(key, limit)
  local n = redis.call('INCR', key)
  local ttl = redis.call('PTTL', key)
  if n == 1 or ttl < 0 then
    redis.call('PEXPIRE', key, ARGV[1])
    ttl = tonumber(ARGV[1])
  end
  return n <= tonumber(limit), ttl
end
local ok, ttl = hit(KEYS[1], ARGV[2])
if not ok then return {1, ttl} end
ok, ttl = hit(KEYS[2], ARGV[3])
if not ok then return {2, ttl} end
if redis.call('EXISTS', KEYS[4]) == 0 then
  ok, ttl = hit(KEYS[3], ARGV[4])
  if not ok then return {3, ttl} end
end
return {0, 0}`)

var scopes = [...]string{1: ScopeIP, 2: ScopeAccountIP, 3: ScopeAccount}

// loginKeys are attemptScript's KEYS. They share the hash tag {login} so
// that on Redis Cluster the script finds them in one slot: an address and an
// account have nothing else in common. (Before the tag they were
// pulka:ratelimit:login:… and pulka:login:known:…; counters and known
// addresses of the old names are forgotten at the upgrade.)
func loginKeys(account, ip string) []string {
	const p = "pulka:ratelimit:{login}:"
	return []string{p + "ip:" + ip, p + "account-ip:" + account + ":" + ip, p + "account:" + account,
		"pulka:{login}:known:" + account + ":" + ip}
}

// Login authenticates username/password for a client at ip (its address
// or, for IPv6, its /64). It returns a *RateLimitedError, without checking
// the password, when a limit is used up; ErrInvalidCredentials for a wrong
// name or password.
func (g *LoginGuard) Login(ctx context.Context, username, password, ip string) (Account, error) {
	acct := strings.ToLower(username)
	if ValidUsername(username) != nil {
		// Not an account name: no hash, and no counter keyed by junk.
		acct = "-invalid-"
	}
	keys := loginKeys(acct, ip)
	res, err := attemptScript.Run(ctx, g.rdb, keys, g.limits.Window.Milliseconds(),
		g.limits.PerIP, g.limits.PerAccountIP, g.limits.PerAccount).Int64Slice()
	if err != nil || len(res) != 2 {
		return Account{}, fmt.Errorf("auth: login limits: %w", err)
	}
	if res[0] != 0 {
		scope := scopes[res[0]]
		g.refused(scope)
		return Account{}, &RateLimitedError{Scope: scope, RetryAfter: time.Duration(res[1]) * time.Millisecond}
	}
	a, err := g.accounts.Authenticate(ctx, username, password)
	if err != nil {
		return Account{}, err
	}
	// A success forgives this address's earlier typos and makes it known
	// to the account; the per-IP count stays.
	pipe := g.rdb.Pipeline()
	pipe.Del(ctx, keys[1])
	pipe.Set(ctx, keys[3], "1", g.limits.KnownFor)
	_, _ = pipe.Exec(ctx) // best effort: the login stands either way
	return a, nil
}
