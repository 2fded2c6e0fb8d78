package auth

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/pulka/pulka/pkg/lobbyclient"
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
	return NewHasher(Argon2Params{MemoryKiB: 64, Time: 1, Threads: 1}, 4)
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
	h := NewHasher(Argon2Params{MemoryKiB: 64, Time: 1, Threads: 1}, 1)
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
	if _, err := a.Register(ctx, "Giorgi", "kartuli-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Register(ctx, "GIORGI", "kartuli-2"); !errors.Is(err, ErrUsernameTaken) {
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
	for _, pw := range []string{"", "seven77", strings.Repeat("p", MaxPasswordLen+1), "          ", "\t\n  \u00a0 \u2003  ",
		"password", "Password1", "iloveyou", "12345678", "qwertyuiop", "ნინო"} {
		if _, err := a.Register(ctx, "valid_name", pw); !errors.Is(err, ErrWeakPassword) {
			t.Errorf("Register(pw len %d) err = %v, want ErrWeakPassword", len(pw), err)
		}
	}
}

func limits(perIP, perAccountIP, perAccount int) LoginLimits {
	return LoginLimits{PerIP: perIP, PerAccountIP: perAccountIP, PerAccount: perAccount, Window: time.Minute, KnownFor: time.Hour}
}

// Changed on purpose (issue 17): failures used to block the account from
// every address, so five wrong tries by anyone locked its owner out. Now
// they block that account from that address only.
func TestLoginGuard_LimitsAttemptsPerAccountAndAddress(t *testing.T) {
	a, srv := newAccounts(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	if _, err := a.Register(ctx, "Tamar", "right-password"); err != nil {
		t.Fatal(err)
	}
	g := NewLoginGuard(a, rdb, limits(100, 3, 100), nil)
	for i := 0; i < 3; i++ {
		if _, err := g.Login(ctx, "Tamar", "wrong", "10.0.0.1"); !errors.Is(err, ErrInvalidCredentials) {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	// Even the right password is refused now from that address…
	_, err := g.Login(ctx, "tamar", "right-password", "10.0.0.1")
	var rl *RateLimitedError
	if !errors.As(err, &rl) || rl.Scope != ScopeAccountIP || rl.RetryAfter <= 0 || rl.RetryAfter > time.Minute {
		t.Fatalf("after 3 failures: %v, want an account_ip rate limit", err)
	}
	// …but the owner, elsewhere, is not locked out.
	if _, err := g.Login(ctx, "Tamar", "right-password", "10.0.0.2"); err != nil {
		t.Fatalf("the owner from another address: %v", err)
	}
}

func TestLoginGuard_LimitsAttemptsPerIP(t *testing.T) {
	a, srv := newAccounts(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	if _, err := a.Register(ctx, "Tamar", "right-password"); err != nil {
		t.Fatal(err)
	}
	g := NewLoginGuard(a, rdb, limits(2, 100, 100), nil)
	for i := 0; i < 2; i++ {
		if _, err := g.Login(ctx, "Tamar", "right-password", "10.0.0.1"); err != nil {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	var rl *RateLimitedError
	if _, err := g.Login(ctx, "Tamar", "right-password", "10.0.0.1"); !errors.As(err, &rl) || rl.Scope != ScopeIP {
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
	g := NewLoginGuard(a, rdb, limits(100, 2, 100), nil)
	_, _ = g.Login(ctx, "Tamar", "wrong", "ip")
	if _, err := g.Login(ctx, "Tamar", "right-password", "ip"); err != nil {
		t.Fatal(err)
	}
	_, _ = g.Login(ctx, "Tamar", "wrong", "ip")
	if _, err := g.Login(ctx, "Tamar", "right-password", "ip"); err != nil {
		t.Fatalf("one failure after a success blocked the account: %v", err)
	}
}

// The account-wide limit stops a guesser with many addresses, and spares
// the addresses the owner has logged in from.
func TestLoginGuard_AccountLimitSparesKnownAddresses(t *testing.T) {
	a, srv := newAccounts(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	_, _ = a.Register(ctx, "Tamar", "right-password")
	var refused []string
	g := NewLoginGuard(a, rdb, limits(100, 100, 3), func(s string) { refused = append(refused, s) })
	if _, err := g.Login(ctx, "Tamar", "right-password", "home"); err != nil {
		t.Fatal(err)
	}
	// The owner's first login from home counted too: it was not known yet.
	for i := range 2 {
		_, _ = g.Login(ctx, "Tamar", "wrong", "bot-"+strconv.Itoa(i))
	}
	var rl *RateLimitedError
	if _, err := g.Login(ctx, "Tamar", "right-password", "bot-x"); !errors.As(err, &rl) || rl.Scope != ScopeAccount {
		t.Fatalf("a new address after the account's limit: %v, want an account rate limit", err)
	}
	if _, err := g.Login(ctx, "Tamar", "right-password", "home"); err != nil {
		t.Fatalf("the owner's known address: %v", err)
	}
	if len(refused) != 1 || refused[0] != ScopeAccount {
		t.Fatalf("refusals reported: %v", refused)
	}
}

// The attempt is counted before the hash: 100 parallel wrong logins check
// at most the limit's number of passwords.
func TestLoginGuard_ParallelGuessesCheckAtMostTheLimit(t *testing.T) {
	a, srv := newAccounts(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	_, _ = a.Register(ctx, "Tamar", "right-password")
	before := a.hasher.Verified()
	g := NewLoginGuard(a, rdb, limits(1000, 5, 1000), nil)
	var wg sync.WaitGroup
	var limited atomic.Int64
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var rl *RateLimitedError
			if _, err := g.Login(ctx, "Tamar", "wrong-"+strconv.Itoa(i), "10.0.0.1"); errors.As(err, &rl) {
				limited.Add(1)
			}
		}()
	}
	wg.Wait()
	if checked := a.hasher.Verified() - before; checked > 5 {
		t.Fatalf("%d password hashes checked, limit 5", checked)
	}
	if limited.Load() != 95 {
		t.Fatalf("%d attempts refused by the limit, want 95", limited.Load())
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
		if !lobbyclient.IsGuest(id) || !strings.HasPrefix(name, "Guest-") || seen[id] {
			t.Fatalf("guest %d: %s %s", i, id, name)
		}
		seen[id] = true
	}
}

func TestPasswordsCheck_CountsCharactersNotBytes(t *testing.T) {
	for name, pw := range map[string]string{
		"eight Georgian letters":              "ნინოთამა",
		"the longest, in a three-byte script": strings.Repeat("ა", MaxPasswordLen),
		"spaces inside":                       "correct horse battery",
	} {
		if err := NewPasswords().Check(pw); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := NewPasswords().Check(strings.Repeat("ა", MaxPasswordLen+1)); !errors.Is(err, ErrWeakPassword) {
		t.Errorf("one character too many: %v", err)
	}
}

func TestToken_HasAnIDAndOldTokensGetOne(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	s, _ := NewSigner(testSecret, nil, time.Hour, c.now)
	t1, _, _ := s.Issue(Claims{PlayerID: "u-1"})
	t2, _, _ := s.Issue(Claims{PlayerID: "u-1"})
	c1, _ := s.Verify(t1)
	c2, _ := s.Verify(t2)
	if c1.ID == "" || c1.ID == c2.ID {
		t.Fatalf("ids %q %q: want distinct", c1.ID, c2.ID)
	}
	// A token signed before ids existed: same format, no jti.
	payload := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"u-1","name":"Old","iat":1700000000,"exp":1700003600}`))
	signed := tokenVersion + "." + payload
	old := signed + "." + base64.RawURLEncoding.EncodeToString(mac(testSecret, signed))
	o1, err := s.Verify(old)
	if err != nil {
		t.Fatalf("old token: %v", err)
	}
	o2, _ := s.Verify(old)
	if !strings.HasPrefix(o1.ID, "s-") || o1.ID != o2.ID {
		t.Fatalf("old token ids %q %q: want one stable derived id", o1.ID, o2.ID)
	}
}

func TestRevocations_RevokeCheckWatch(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r := NewRevocations(rdb, time.Now)
	got := make(chan string, 1)
	go r.Watch(ctx, func(id string) { got <- id })
	c := Claims{PlayerID: "u-1", ID: "tok-1", ExpiresAt: time.Now().Add(time.Hour).Unix()}
	if err := r.Check(ctx, c); err != nil {
		t.Fatalf("before revocation: %v", err)
	}
	// The subscription is confirmed asynchronously: revoke until announced.
	deadline := time.After(5 * time.Second)
	for announced := false; !announced; {
		if err := r.Revoke(ctx, c); err != nil {
			t.Fatal(err)
		}
		select {
		case id := <-got:
			if id != "tok-1" {
				t.Fatalf("announced %q", id)
			}
			announced = true
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			t.Fatal("revocation never announced")
		}
	}
	if err := r.Check(ctx, c); !errors.Is(err, ErrRevokedToken) {
		t.Fatalf("after revocation: %v", err)
	}
	if ttl := rdb.TTL(ctx, RevokedKey("tok-1")).Val(); ttl <= time.Hour || ttl > time.Hour+2*time.Minute {
		t.Fatalf("record TTL %v: want the token's remaining life (plus skew)", ttl)
	}
	among, err := r.RevokedAmong(ctx, []string{"x", "tok-1"})
	if err != nil || among[0] || !among[1] {
		t.Fatalf("RevokedAmong = %v, %v", among, err)
	}
}

// Whatever Passwords.Check accepts is within the length rules in characters
// and not blank. (The name rule and its fuzz target are in pkg/names.)
func FuzzNamesAndPasswords(f *testing.F) {
	for _, s := range []string{"Nino", "a\u202Eb", "ნინოთამარი", "        ", "password", "\xff\xfe"} {
		f.Add(s)
	}
	pw := NewPasswords()
	f.Fuzz(func(t *testing.T, s string) {
		if pw.Check(s) == nil {
			n := utf8.RuneCountInString(s)
			if n < MinPasswordLen || n > MaxPasswordLen || strings.TrimSpace(s) == "" || pw.IsCommon(s) {
				t.Fatalf("Passwords.Check accepted %q", s)
			}
		}
	})
}

// A hash that cannot get a slot before its caller's deadline is ErrBusy and
// counted; InFlight shows the slots taken.
func TestHasher_BusyIsCountedAndSlotsShow(t *testing.T) {
	h := NewHasher(Argon2Params{MemoryKiB: 64, Time: 1, Threads: 1}, 1)
	if err := h.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	if h.InFlight() != 1 {
		t.Fatalf("InFlight = %d, want 1", h.InFlight())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := h.Hash(ctx, "correct horse"); !errors.Is(err, ErrBusy) {
		t.Fatalf("hash with every slot taken: %v, want ErrBusy", err)
	}
	if h.Busy() != 1 {
		t.Fatalf("Busy = %d, want 1", h.Busy())
	}
	h.release()
	if h.InFlight() != 0 {
		t.Fatalf("InFlight = %d after release", h.InFlight())
	}
}

// On a real three-master Redis Cluster, registration and the login limits
// work: the limit script's keys share one slot.
func TestLoginGuard_WorksOnAMultiNodeCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	rdb := cl.Client(t)
	ctx := context.Background()
	a, err := NewAccounts(ctx, rdb, testHasher(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Register(ctx, "Tamar", "right-password"); err != nil {
		t.Fatal(err)
	}
	g := NewLoginGuard(a, rdb, limits(100, 2, 100), nil)
	for i := range 2 {
		if _, err := g.Login(ctx, "Tamar", "wrong", "10.0.0.1"); !errors.Is(err, ErrInvalidCredentials) {
			t.Fatalf("attempt %d: %v", i, err)
		}
	}
	var rl *RateLimitedError
	if _, err := g.Login(ctx, "Tamar", "right-password", "10.0.0.1"); !errors.As(err, &rl) {
		t.Fatalf("after 2 failures: %v, want a rate limit", err)
	}
	if _, err := g.Login(ctx, "Tamar", "right-password", "10.0.0.2"); err != nil {
		t.Fatalf("from another address: %v", err)
	}
}
