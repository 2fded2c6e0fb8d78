package lobbyclient

import (
	"testing"
	"time"
)

// A loop's retry waits double from 50 ms up to 2 s, without jitter, and
// start again at 50 ms after a success.
func TestRetryWait_DoublesUpToTheMaxAndRestartsAfterReset(t *testing.T) {
	ms := time.Millisecond
	want := []time.Duration{50 * ms, 100 * ms, 200 * ms, 400 * ms, 800 * ms, 1600 * ms, 2000 * ms, 2000 * ms}
	w := newBackoff()
	for round := range 2 {
		for i, d := range want {
			if got := w.b.NextBackOff(); got != d {
				t.Fatalf("round %d, wait %d = %s, want %s", round, i, got, d)
			}
		}
		w.reset()
	}
}
