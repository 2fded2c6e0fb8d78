package daemon

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/pulka/pulka/pkg/streams"
)

var errNotConsuming = errors.New("not consuming yet")

// Consume joins c's consumer group on the streams and runs c until ctx is
// cancelled. Redis may still be starting (docker-compose, a rolling
// restart), so joining is retried (100 ms doubling to 5 s) instead of
// crash-looping; the daemon reports not ready (check "consumer") until c
// consumes and again once it stops. A cancelled ctx returns nil.
func (d *Daemon) Consume(ctx context.Context, c *streams.Consumer, in ...string) error {
	var consuming atomic.Bool
	d.AddReadyCheck("consumer", func(context.Context) error {
		if !consuming.Load() {
			return errNotConsuming
		}
		return nil
	})
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		err := c.Add(ctx, in...)
		if err == nil {
			break
		}
		d.Logger.WarnContext(ctx, "cannot join the consumer group yet", "group", c.Group(), "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
	d.Logger.InfoContext(ctx, "consuming", "streams", len(in), "group", c.Group(), "consumer", c.Name())
	consuming.Store(true)
	defer consuming.Store(false)
	if err := c.Run(ctx); err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	return nil
}
