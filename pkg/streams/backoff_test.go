package streams

import (
	"testing"
	"time"
)

// The loops' retry waits double from the minimum up to the maximum, each
// drawn from the upper half of its step, and start again at the minimum
// after a success.
func TestBackoff_DoublesFromMinToMaxJitteredAndRestartsAfterReset(t *testing.T) {
	for _, tc := range []struct {
		name     string
		opts     []Option
		min, max time.Duration
	}{
		{"defaults", nil, 50 * time.Millisecond, 2 * time.Second},
		{"set", []Option{WithBackoff(10*time.Millisecond, 100*time.Millisecond)}, 10 * time.Millisecond, 100 * time.Millisecond},
		// A minimum over the (default) maximum: every wait is capped.
		{"min over max", []Option{WithBackoff(3*time.Second, time.Second)}, 2 * time.Second, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSettings(tc.opts)
			b := s.newBackoff()
			for round := range 200 {
				step := tc.min
				for i := range 10 {
					d := b.NextBackOff()
					// The library's float arithmetic may round the lower
					// end a nanosecond down.
					if d < step/2-time.Nanosecond || d > step {
						t.Fatalf("round %d, wait %d = %s, want in [%s, %s]", round, i, d, step/2, step)
					}
					step = min(2*step, tc.max)
				}
				b.Reset()
			}
		})
	}
}
