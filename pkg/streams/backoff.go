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
