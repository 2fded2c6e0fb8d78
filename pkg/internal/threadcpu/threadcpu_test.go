package threadcpu

import "testing"

// Work on the thread shows in its clock; sleeping would not (not asserted:
// the fallback is wall time), so spin.
func TestNow_CountsTheThreadsWork(t *testing.T) {
	defer Lock()()
	before := Now()
	x := 0
	for i := range 20_000_000 {
		x += i & 3
	}
	if after := Now(); after <= before {
		t.Fatalf("%s did not move over a busy loop (%d → %d, x=%d)", Clock, before, after, x)
	}
}
