package assign

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/redis/go-redis/v9"
)

// watchQuiet is how long the bell's subscription may be silent before Watch
// pings it: a write to a dead connection fails, and go-redis connects and
// subscribes again (as streams.Tailer does with its bells).
const watchQuiet = 3 * time.Second

// Watch calls wake whenever runner's set of tables may have changed: its
// bell rang (RunnerBell: a table placed on it, moved to it or away from it),
// or the subscription was (re)made, since a bell rung while the connection
// was down reached nobody. wake must not block; the caller reads the set
// (TablesOf), which stays the one truth: Watch only saves the wait for the
// caller's next poll. It returns when ctx ends.
func (s *Store) Watch(ctx context.Context, runner string, wake func()) error {
	if err := checkID("runner", runner); err != nil {
		return err
	}
	ps := s.rdb.Subscribe(ctx, RunnerBell(runner))
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
		case <-done:
		}
		_ = ps.Close() // ends a receive in progress
	}()
	failures := 0
	for {
		msg, err := ps.ReceiveTimeout(ctx, watchQuiet)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			var ne net.Error
			switch {
			case errors.Is(err, redis.ErrClosed):
				return nil
			case errors.As(err, &ne) && ne.Timeout():
				pctx, cancel := context.WithTimeout(ctx, watchQuiet)
				_ = ps.Ping(pctx)
				cancel()
			default:
				// go-redis reconnects on the next receive; do not spin
				// while Redis is away.
				if failures > 0 {
					sleep(ctx, 100*time.Millisecond)
				}
				failures++
			}
			continue
		}
		failures = 0
		switch m := msg.(type) {
		case *redis.Message:
			wake()
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				wake()
			}
		}
	}
}
