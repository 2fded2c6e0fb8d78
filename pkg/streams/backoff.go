package streams

import (
	"context"
	"time"

	"github.com/cenkalti/backoff/v5"
)

// newBackoff is the wait of a loop between retries after Redis errors
// (Redis down, restarting), so that the loop retries instead of exiting,
// without hammering the server. The interval doubles from backoffMin up to
// backoffMax over consecutive failures and starts again at backoffMin after
// Reset (a success). Each wait is drawn from the upper half of the
// interval, [interval/2, interval]: jitter keeps many consumers from
// retrying in lockstep after a shared outage, and no wait exceeds
// backoffMax.
//
// ExponentialBackOff draws from interval·(1 ± RandomizationFactor) around
// its own interval, which it caps before the jitter. Keeping its intervals
// at ¾ of ours with a factor of ⅓ makes that range exactly
// [interval/2, interval].
func (s *settings) newBackoff() *backoff.ExponentialBackOff {
	b := &backoff.ExponentialBackOff{
		InitialInterval:     min(s.backoffMin, s.backoffMax) * 3 / 4,
		RandomizationFactor: 1.0 / 3,
		Multiplier:          2,
		MaxInterval:         s.backoffMax * 3 / 4,
	}
	b.Reset()
	return b
}

// sleepCtx waits d or until ctx ends; false means ctx ended.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// idleWait is the pause between two empty polls (Cluster mode, where reads
// cannot block across slots): it ends early when the stream set changes.
func idleWait(ctx context.Context, changed <-chan struct{}, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-changed:
	case <-t.C:
	}
}

// Retry paces a loop of this package's clients that retries after Redis
// errors (a reader of a read model, say) with the same waits as the
// package's own loops: see newBackoff; WithBackoff sets its bounds.
type Retry struct{ b *backoff.ExponentialBackOff }

// NewRetry makes a Retry. Relevant option: WithBackoff.
func NewRetry(opts ...Option) *Retry {
	s := newSettings(opts)
	return &Retry{b: s.newBackoff()}
}

// Wait sleeps the next wait, or until ctx ends; false means ctx ended.
func (r *Retry) Wait(ctx context.Context) bool { return sleepCtx(ctx, r.b.NextBackOff()) }

// Reset starts the waits again at the minimum (after a success).
func (r *Retry) Reset() { r.b.Reset() }
