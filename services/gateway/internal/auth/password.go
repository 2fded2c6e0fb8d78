package auth

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
	"sync/atomic"

	"golang.org/x/crypto/argon2"
)

// Argon2Params are the argon2id cost parameters. The defaults follow the
// OWASP password storage recommendation (19 MiB, 2 passes, 1 lane).
type Argon2Params struct {
	MemoryKiB uint32
	Time      uint32
	Threads   uint8
	KeyLen    uint32
	SaltLen   uint32
}

// DefaultArgon2 is what production uses.
func DefaultArgon2() Argon2Params {
	return Argon2Params{MemoryKiB: 19 * 1024, Time: 2, Threads: 1, KeyLen: 32, SaltLen: 16}
}

// Hasher hashes and checks passwords with argon2id, at most `slots` at a
// time: each hash takes MemoryKiB of memory, so an unbounded burst of logins
// could exhaust the process.
type Hasher struct {
	p     Argon2Params
	slots chan struct{}
	// verified counts the hashes computed to check a password: what a
	// password guesser costs us, and what the login limits bound.
	verified atomic.Int64
	// busy counts hashes given up (ErrBusy) because every slot stayed
	// taken until the caller's deadline.
	busy atomic.Int64
}

// InFlight is how many hashes are being computed now (at most the
// concurrency).
func (h *Hasher) InFlight() int { return len(h.slots) }

// Busy is how many hashes were given up with ErrBusy so far.
func (h *Hasher) Busy() int64 { return h.busy.Load() }

// Verified is how many password checks (hash computations) ran so far.
func (h *Hasher) Verified() int64 { return h.verified.Load() }

// NewHasher makes a hasher with the given parameters and concurrency.
func NewHasher(p Argon2Params, concurrency int) *Hasher {
	if concurrency < 1 {
		concurrency = 1
	}
	return &Hasher{p: p, slots: make(chan struct{}, concurrency)}
}

func (h *Hasher) acquire(ctx context.Context) error {
	select {
	case h.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		h.busy.Add(1)
		return fmt.Errorf("%w: %w", ErrBusy, ctx.Err())
	}
}

func (h *Hasher) release() { <-h.slots }

// Hash returns the PHC string of password:
// $argon2id$v=19$m=<KiB>,t=<time>,p=<threads>$<salt>$<key>.
func (h *Hasher) Hash(ctx context.Context, password string) (string, error) {
	if err := h.acquire(ctx); err != nil {
		return "", err
	}
	defer h.release()
	salt := make([]byte, h.p.SaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("auth: salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, h.p.Time, h.p.MemoryKiB, h.p.Threads, h.p.KeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, h.p.MemoryKiB, h.p.Time, h.p.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// Verify reports whether password matches the PHC string, using the
// parameters stored in it (so raising the defaults keeps old hashes valid).
func (h *Hasher) Verify(ctx context.Context, phc, password string) (bool, error) {
	p, salt, key, err := parsePHC(phc)
	if err != nil {
		return false, err
	}
	if err := h.acquire(ctx); err != nil {
		return false, err
	}
	defer h.release()
	h.verified.Add(1)
	got := argon2.IDKey([]byte(password), salt, p.Time, p.MemoryKiB, p.Threads, uint32(len(key)))
	return subtle.ConstantTimeCompare(got, key) == 1, nil
}

func parsePHC(phc string) (Argon2Params, []byte, []byte, error) {
	parts := strings.Split(phc, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return Argon2Params{}, nil, nil, fmt.Errorf("auth: not an argon2id hash")
	}
	var v int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &v); err != nil || v != argon2.Version {
		return Argon2Params{}, nil, nil, fmt.Errorf("auth: unsupported argon2 version %q", parts[2])
	}
	var p Argon2Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.MemoryKiB, &p.Time, &p.Threads); err != nil {
		return Argon2Params{}, nil, nil, fmt.Errorf("auth: bad argon2 parameters: %w", err)
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return Argon2Params{}, nil, nil, fmt.Errorf("auth: bad salt: %w", err)
	}
	key, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(key) == 0 {
		return Argon2Params{}, nil, nil, fmt.Errorf("auth: bad key")
	}
	return p, salt, key, nil
}
