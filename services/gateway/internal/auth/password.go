package auth

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/pulka/pulka/pkg/passhash"
)

// Argon2Params are the argon2id cost parameters (pkg/passhash, the one
// password hasher).
type Argon2Params = passhash.Params

// DefaultArgon2 is what production uses: OWASP's recommendation (19 MiB, 2
// passes, 1 lane).
func DefaultArgon2() Argon2Params { return passhash.DefaultParams() }

// Hasher hashes and checks passwords with argon2id, at most `slots` at a
// time: each hash takes MemoryKiB of memory, so an unbounded burst of logins
// could exhaust the process.
type Hasher struct {
	h     passhash.Hasher
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
	return &Hasher{h: passhash.NewHasher(p), slots: make(chan struct{}, concurrency)}
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

// Hash returns the PHC string of password (passhash.Hasher.Hash).
func (h *Hasher) Hash(ctx context.Context, password string) (string, error) {
	if err := h.acquire(ctx); err != nil {
		return "", err
	}
	defer h.release()
	phc, err := h.h.Hash(password)
	if err != nil {
		return "", fmt.Errorf("auth: %w", err)
	}
	return phc, nil
}

// Verify reports whether password matches the PHC string, using the
// parameters stored in it (so raising the defaults keeps old hashes valid).
// A malformed string takes no slot and counts as no check.
func (h *Hasher) Verify(ctx context.Context, phc, password string) (bool, error) {
	if err := passhash.Check(phc); err != nil {
		return false, fmt.Errorf("auth: %w", err)
	}
	if err := h.acquire(ctx); err != nil {
		return false, err
	}
	defer h.release()
	h.verified.Add(1)
	ok, err := passhash.Verify(phc, password)
	if err != nil {
		return false, fmt.Errorf("auth: %w", err)
	}
	return ok, nil
}
