// Package periodic runs a function on a fixed period until its context
// ends: the one ticker loop of Pulka's background jobs (sweeps, samples,
// checks), so that none gets its stop or its timer wrong.
package periodic

import (
	"context"
	"time"
)

// Every calls f every d until ctx ends, first after d (not at once). A call
// that runs longer than d delays the next one rather than piling up ticks.
// It returns when ctx ends; a call under way is not interrupted but gets
// the ended ctx.
func Every(ctx context.Context, d time.Duration, f func(context.Context)) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f(ctx)
		}
	}
}
