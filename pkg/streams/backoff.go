package streams

import (
	"context"
	"math/rand/v2"
	"time"
)

// backoff grows the wait after consecutive failures (Redis down, restarting)
// so a loop retries instead of exiting, without hammering the server.
type backoff struct {
	min, max, cur time.Duration
}

func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.min
	} else {
		b.cur *= 2
	}
	if b.cur > b.max {
		b.cur = b.max
	}
	// Full jitter over the upper half keeps many consumers from retrying in
	// lockstep after a shared outage.
	half := int64(b.cur / 2)
	return time.Duration(half + rand.Int64N(half+1))
}

func (b *backoff) reset() { b.cur = 0 }

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
