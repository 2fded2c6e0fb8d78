package auth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/lobbyclient"
	"github.com/pulka/pulka/pkg/names"
)

// Username rules: 3..24 characters of letters, digits, '_', '-' and '.'.
const (
	MinUsernameLen = 3
	MaxUsernameLen = 24
)

// AccountKey is the Redis hash of one account, keyed by the lower-cased
// username so names are unique regardless of case.
func AccountKey(username string) string { return "pulka:account:" + strings.ToLower(username) }

// Account is a registered player.
type Account struct {
	ID        string
	Name      string
	CreatedAt time.Time
}

// Accounts stores accounts in Redis and checks passwords.
type Accounts struct {
	rdb       redis.UniversalClient
	hasher    *Hasher
	passwords *Passwords
	now       func() time.Time
	// dummy is a real hash to verify against when the account does not
	// exist, so a wrong username costs as much time as a wrong password.
	dummy string
}

// NewAccounts makes the account store.
func NewAccounts(ctx context.Context, rdb redis.UniversalClient, h *Hasher, now func() time.Time) (*Accounts, error) {
	dummy, err := h.Hash(ctx, "not a password anybody has")
	if err != nil {
		return nil, err
	}
	return &Accounts{rdb: rdb, hasher: h, passwords: NewPasswords(), now: now, dummy: dummy}, nil
}

// createScript creates the account hash only if the name is free, in one step.
var createScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'id', ARGV[1], 'name', ARGV[2], 'hash', ARGV[3], 'created', ARGV[4])
return 1`)

// Register creates an account. The returned account's ID is new and random.
func (a *Accounts) Register(ctx context.Context, username, password string) (Account, error) {
	if err := ValidUsername(username); err != nil {
		return Account{}, err
	}
	if err := a.passwords.Check(password); err != nil {
		return Account{}, err
	}
	phc, err := a.hasher.Hash(ctx, password)
	if err != nil {
		return Account{}, err
	}
	acc := Account{ID: "u-" + randomHex(8), Name: username, CreatedAt: a.now().UTC()}
	created, err := createScript.Run(ctx, a.rdb, []string{AccountKey(username)},
		acc.ID, acc.Name, phc, strconv.FormatInt(acc.CreatedAt.Unix(), 10)).Int()
	if err != nil {
		return Account{}, fmt.Errorf("auth: create account: %w", err)
	}
	if created == 0 {
		return Account{}, ErrUsernameTaken
	}
	return acc, nil
}

// Authenticate checks a username and password.
func (a *Accounts) Authenticate(ctx context.Context, username, password string) (Account, error) {
	if ValidUsername(username) != nil || utf8.RuneCountInString(password) > MaxPasswordLen || len(password) > maxPasswordBytes {
		return Account{}, ErrInvalidCredentials
	}
	vals, err := a.rdb.HGetAll(ctx, AccountKey(username)).Result()
	if err != nil {
		return Account{}, fmt.Errorf("auth: load account: %w", err)
	}
	phc, found := vals["hash"]
	if !found {
		phc = a.dummy
	}
	ok, err := a.hasher.Verify(ctx, phc, password)
	if err != nil {
		return Account{}, err
	}
	if !ok || !found {
		return Account{}, ErrInvalidCredentials
	}
	created, _ := strconv.ParseInt(vals["created"], 10, 64)
	return Account{ID: vals["id"], Name: vals["name"], CreatedAt: time.Unix(created, 0).UTC()}, nil
}

// ValidUsername checks the naming rules.
func ValidUsername(s string) error {
	if err := names.Check(s); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidUsername, err)
	}
	if len(s) < MinUsernameLen || len(s) > MaxUsernameLen {
		return fmt.Errorf("%w: %d..%d characters", ErrInvalidUsername, MinUsernameLen, MaxUsernameLen)
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.'
		if !ok {
			return fmt.Errorf("%w: only letters, digits, '_', '-' and '.'", ErrInvalidUsername)
		}
	}
	if strings.HasPrefix(strings.ToLower(s), "guest") {
		return fmt.Errorf("%w: names starting with \"guest\" are for guests", ErrInvalidUsername)
	}
	return nil
}

// NewGuest makes a guest identity: a random id and a generated name.
func NewGuest() (id, name string) {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	n := (uint(b[0])<<8 | uint(b[1])) % 10000
	return lobbyclient.GuestPrefix + hex.EncodeToString(b), fmt.Sprintf("Guest-%04d", n)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// PasswordChecks is how many password hashes were computed to check logins.
func (a *Accounts) PasswordChecks() int64 { return a.hasher.Verified() }
