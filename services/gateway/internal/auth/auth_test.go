package auth

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/redistest"
)

var testSecret = []byte(strings.Repeat("s", MinSecretLen))

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// testHasher is cheap: the tests check behaviour, not cost.
func testHasher() *Hasher {
	return NewHasher(Argon2Params{MemoryKiB: 64, Time: 1, Threads: 1, KeyLen: 32, SaltLen: 16}, 4)
}

func TestToken_VerifiesWhatItIssued(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	s, err := NewSigner(testSecret, nil, time.Hour, c.now)
	if err != nil {
		t.Fatal(err)
	}
	tok, issued, err := s.Issue(Claims{PlayerID: "u-1", Name: "Nino"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Verify(tok)
	if err != nil || got != issued || got.ExpiresAt != c.now().Add(time.Hour).Unix() {
		t.Fatalf("Verify = %+v, %v; issued %+v", got, err, issued)
	}
}

func TestToken_RefusesTamperedForeignAndMalformed(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	s, _ := NewSigner(testSecret, nil, time.Hour, c.now)
	other, _ := NewSigner([]byte(strings.Repeat("o", MinSecretLen)), nil, time.Hour, c.now)
	tok, _, _ := s.Issue(Claims{PlayerID: "u-1", Name: "Nino"})
	foreign, _, _ := other.Issue(Claims{PlayerID: "u-1", Name: "Nino"})
	parts := strings.Split(tok, ".")
	forged, _, _ := other.Issue(Claims{PlayerID: "u-admin"})
	fp := strings.Split(forged, ".")
	for name, bad := range map[string]string{
		"other secret":         foreign,
		"payload swapped":      parts[0] + "." + fp[1] + "." + parts[2],
		"signature truncated":  tok[:len(tok)-2],
		"no dots":              "garbage",
		"wrong version":        "v0." + parts[1] + "." + parts[2],
		"empty":                "",
		"signature not base64": parts[0] + "." + parts[1] + ".!!!",
		"huge":                 strings.Repeat("a", 5000),
	} {
		if _, err := s.Verify(bad); !errors.Is(err, ErrInvalidToken) {
			t.Errorf("%s: Verify err = %v, want ErrInvalidToken", name, err)
		}
	}
}

func TestToken_ExpiresAfterItsLifetime(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	s, _ := NewSigner(testSecret, nil, time.Hour, c.now)
	tok, _, _ := s.Issue(Claims{PlayerID: "g-1", Guest: true})
	c.add(time.Hour - time.Second)
	if _, err := s.Verify(tok); err != nil {
		t.Fatalf("a second before expiry: %v", err)
	}
	c.add(time.Second)
	if _, err := s.Verify(tok); !errors.Is(err, ErrExpiredToken) {
		t.Fatalf("at expiry: %v, want ErrExpiredToken", err)
	}
}

func TestToken_PreviousSecretStillVerifies(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	old, _ := NewSigner(testSecret, nil, time.Hour, c.now)
	tok, _, _ := old.Issue(Claims{PlayerID: "u-1"})
	rotated, err := NewSigner([]byte(strings.Repeat("n", MinSecretLen)), [][]byte{testSecret}, time.Hour, c.now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rotated.Verify(tok); err != nil {
		t.Fatalf("token of the previous secret: %v", err)
	}
}

func TestNewSigner_RefusesShortSecrets(t *testing.T) {
	if _, err := NewSigner([]byte("short"), nil, time.Hour, time.Now); err == nil {
		t.Fatal("short secret accepted")
	}
	if _, err := NewSigner(testSecret, [][]byte{[]byte("x")}, time.Hour, time.Now); err == nil {
		t.Fatal("short previous secret accepted")
	}
}

func TestPassword_HashVerifies(t *testing.T) {
	h := testHasher()
	ctx := context.Background()
	phc, err := h.Hash(ctx, "correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(phc, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("PHC = %s", phc)
	}
	if ok, err := h.Verify(ctx, phc, "correct horse"); !ok || err != nil {
		t.Fatalf("right password: %v %v", ok, err)
	}
	if ok, _ := h.Verify(ctx, phc, "correct horsf"); ok {
		t.Fatal("wrong password verified")
	}
	again, _ := h.Hash(ctx, "correct horse")
	if again == phc {
		t.Fatal("two hashes of one password are equal: salt not random")
	}
	// A hash made with other parameters still verifies: they come from the string.
	strong := NewHasher(DefaultArgon2(), 1)
	phc2, _ := strong.Hash(ctx, "pw-pw-pw-pw")
	if ok, err := h.Verify(ctx, phc2, "pw-pw-pw-pw"); !ok || err != nil {
		t.Fatalf("default-parameter hash: %v %v", ok, err)
	}
	if _, err := h.Verify(ctx, "$bcrypt$xyz", "x"); err == nil {
		t.Fatal("non-argon2id hash accepted")
	}
}

func TestPassword_HasherBoundsConcurrency(t *testing.T) {
	h := NewHasher(Argon2Params{MemoryKiB: 64, Time: 1, Threads: 1, KeyLen: 32, SaltLen: 16}, 1)
	h.slots <- struct{}{} // the only slot is busy
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := h.Hash(ctx, "password1"); !errors.Is(err, ErrBusy) {
		t.Fatalf("err = %v, want ErrBusy", err)
	}
}

func newAccounts(t *testing.T) (*Accounts, *redistest.Server) {
	t.Helper()
	srv := redistest.Start(t)
	a, err := NewAccounts(context.Background(), srv.Client(t), testHasher(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	return a, srv
}

func TestAccounts_RegisterThenLogin(t *testing.T) {
	a, _ := newAccounts(t)
	ctx := context.Background()
	acc, err := a.Register(ctx, "Nino", "tamada-2024")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(acc.ID, "u-") || acc.Name != "Nino" {
		t.Fatalf("account = %+v", acc)
	}
	got, err := a.Authenticate(ctx, "nino", "tamada-2024")
	if err != nil || got.ID != acc.ID || got.Name != "Nino" {
		t.Fatalf("Authenticate = %+v, %v", got, err)
	}
	if _, err := a.Authenticate(ctx, "Nino", "tamada-2025"); !errors.Is(err, ErrInvalidCredentials) {
		t.Fatalf("wrong password: %v", err)
	}
	if _, err := a.Authenticate(ctx, "Nobody", "tamada-2024"); !errors.Is(err, ErrInvalidCredentials) {
		t.Fatalf("unknown user: %v", err)
	}
}

func TestAccounts_NamesAreUniqueIgnoringCase(t *testing.T) {
	a, _ := newAccounts(t)
	ctx := context.Background()
	if _, err := a.Register(ctx, "Giorgi", "password1"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Register(ctx, "GIORGI", "password2"); !errors.Is(err, ErrUsernameTaken) {
		t.Fatalf("err = %v, want ErrUsernameTaken", err)
	}
}

func TestAccounts_RefusesBadNamesAndWeakPasswords(t *testing.T) {
	a, _ := newAccounts(t)
	ctx := context.Background()
	for _, name := range []string{"ab", strings.Repeat("x", 25), "has space", "emoji😀", "guest-x", "a{b}"} {
		if _, err := a.Register(ctx, name, "password1"); !errors.Is(err, ErrInvalidUsername) {
			t.Errorf("Register(%q) err = %v, want ErrInvalidUsername", name, err)
		}
	}
	for _, pw := range []string{"", "seven77", strings.Repeat("p", MaxPasswordLen+1)} {
		if _, err := a.Register(ctx, "valid_name", pw); !errors.Is(err, ErrWeakPassword) {
			t.Errorf("Register(pw len %d) err = %v, want ErrWeakPassword", len(pw), err)
		}
	}
}

func TestLoginGuard_LimitsFailuresPerAccount(t *testing.T) {
	a, srv := newAccounts(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	if _, err := a.Register(ctx, "Tamar", "right-password"); err != nil {
		t.Fatal(err)
	}
	g := NewLoginGuard(a, NewLimiter(rdb, "ip", 100, time.Minute), NewLimiter(rdb, "acct", 3, time.Minute))
	for i := 0; i < 3; i++ {
		if _, err := g.Login(ctx, "Tamar", "wrong", "10.0.0.1"); !errors.Is(err, ErrInvalidCredentials) {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	// Even the right password is refused now, from any address.
	_, err := g.Login(ctx, "tamar", "right-password", "10.0.0.2")
	var rl *RateLimitedError
	if !errors.As(err, &rl) || rl.Scope != "account" || rl.RetryAfter <= 0 || rl.RetryAfter > time.Minute {
		t.Fatalf("after 3 failures: %v, want an account rate limit", err)
	}
}

func TestLoginGuard_LimitsAttemptsPerIP(t *testing.T) {
	a, srv := newAccounts(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	if _, err := a.Register(ctx, "Tamar", "right-password"); err != nil {
		t.Fatal(err)
	}
	g := NewLoginGuard(a, NewLimiter(rdb, "ip", 2, time.Minute), NewLimiter(rdb, "acct", 100, time.Minute))
	for i := 0; i < 2; i++ {
		if _, err := g.Login(ctx, "Tamar", "right-password", "10.0.0.1"); err != nil {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	var rl *RateLimitedError
	if _, err := g.Login(ctx, "Tamar", "right-password", "10.0.0.1"); !errors.As(err, &rl) || rl.Scope != "ip" {
		t.Fatalf("third attempt: %v, want an ip rate limit", err)
	}
	if _, err := g.Login(ctx, "Tamar", "right-password", "10.0.0.9"); err != nil {
		t.Fatalf("another address: %v", err)
	}
}

func TestLoginGuard_SuccessForgivesEarlierFailures(t *testing.T) {
	a, srv := newAccounts(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	_, _ = a.Register(ctx, "Tamar", "right-password")
	g := NewLoginGuard(a, NewLimiter(rdb, "ip", 100, time.Minute), NewLimiter(rdb, "acct", 2, time.Minute))
	_, _ = g.Login(ctx, "Tamar", "wrong", "ip")
	if _, err := g.Login(ctx, "Tamar", "right-password", "ip"); err != nil {
		t.Fatal(err)
	}
	_, _ = g.Login(ctx, "Tamar", "wrong", "ip")
	if _, err := g.Login(ctx, "Tamar", "right-password", "ip"); err != nil {
		t.Fatalf("one failure after a success blocked the account: %v", err)
	}
}

func TestLimiter_WindowExpires(t *testing.T) {
	srv := redistest.Start(t)
	l := NewLimiter(srv.Client(t), "t", 1, 150*time.Millisecond)
	ctx := context.Background()
	if ok, _, _ := l.Hit(ctx, "k"); !ok {
		t.Fatal("first hit refused")
	}
	if ok, retry, _ := l.Hit(ctx, "k"); ok || retry <= 0 {
		t.Fatalf("second hit: ok=%v retry=%v", ok, retry)
	}
	time.Sleep(200 * time.Millisecond)
	if ok, _, _ := l.Hit(ctx, "k"); !ok {
		t.Fatal("hit after the window refused")
	}
}

func TestNewGuest_IDsAreDistinctAndMarked(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < 1000; i++ {
		id, name := NewGuest()
		if !IsGuestID(id) || !strings.HasPrefix(name, "Guest-") || seen[id] {
			t.Fatalf("guest %d: %s %s", i, id, name)
		}
		seen[id] = true
	}
}
