package ws

import (
	"errors"
	"testing"
	"time"
)

// readySoon reports whether the outbox signals its writer within d.
func readySoon(o *outbox, d time.Duration) bool {
	select {
	case <-o.ready:
		return true
	case <-time.After(d):
		return false
	}
}

func takeStrings(o *outbox) []string {
	var out []string
	frames, _ := o.take()
	for _, f := range frames {
		out = append(out, string(f))
	}
	return out
}

func TestOutbox_LazyFrameAloneLeavesAfterItsWait(t *testing.T) {
	const wait = 50 * time.Millisecond
	o := newOutbox(8, 1<<10, wait)
	start := time.Now()
	if err := o.pushLazy([]byte("ack")); err != nil {
		t.Fatal(err)
	}
	if readySoon(o, wait/2) {
		t.Fatalf("the writer was woken %s after a lazy push; it should wait %s", time.Since(start), wait)
	}
	if !readySoon(o, 5*time.Second) {
		t.Fatal("a lazy frame alone was never handed to the writer")
	}
	if got := time.Since(start); got < wait {
		t.Fatalf("woken after %s, before the lazy wait %s", got, wait)
	}
	if got := takeStrings(o); len(got) != 1 || got[0] != "ack" {
		t.Fatalf("took %q", got)
	}
}

func TestOutbox_LazyFrameLeavesWithTheNextFrameInOrder(t *testing.T) {
	o := newOutbox(8, 1<<10, time.Hour)
	if err := o.pushLazy([]byte("ack")); err != nil {
		t.Fatal(err)
	}
	if err := o.push([]byte("event")); err != nil {
		t.Fatal(err)
	}
	if !readySoon(o, time.Second) {
		t.Fatal("an eager push did not wake the writer")
	}
	got := takeStrings(o)
	if len(got) != 2 || got[0] != "ack" || got[1] != "event" {
		t.Fatalf("took %q, want [ack event]: one batch, in the order queued", got)
	}
	// The lazy wait was for that batch: nothing wakes the writer later.
	if readySoon(o, 20*time.Millisecond) {
		t.Fatal("the writer was woken again for a batch already taken")
	}
}

func TestOutbox_LazyFrameBehindAnEagerOneGoesWithIt(t *testing.T) {
	o := newOutbox(8, 1<<10, time.Hour)
	_ = o.push([]byte("event"))
	_ = o.pushLazy([]byte("ack"))
	if !readySoon(o, time.Second) {
		t.Fatal("the eager push did not wake the writer")
	}
	if got := takeStrings(o); len(got) != 2 || got[0] != "event" || got[1] != "ack" {
		t.Fatalf("took %q, want [event ack]", got)
	}
	// After the batch, a new lazy frame waits again rather than riding on
	// the old signal.
	_ = o.pushLazy([]byte("ack2"))
	if readySoon(o, 20*time.Millisecond) {
		t.Fatal("a lazy frame pushed after a take woke the writer at once")
	}
}

// The writer woke for one frame, a second was pushed before its take, and
// the take had both: the second push's signal is for a batch that is gone,
// and must not send the next lazy frame off at once (it did: a gateway
// test saw an ack leave 0.5 ms after its command, with AckDelay 80 ms).
func TestOutbox_ASignalForFramesAlreadyTakenDoesNotHurryTheNextLazyFrame(t *testing.T) {
	o := newOutbox(8, 1<<10, time.Hour)
	_ = o.push([]byte("joined"))
	if !readySoon(o, time.Second) {
		t.Fatal("an eager push did not wake the writer")
	}
	_ = o.push([]byte("event")) // between the wake-up and the take
	if got := takeStrings(o); len(got) != 2 {
		t.Fatalf("took %q, want both frames", got)
	}
	_ = o.pushLazy([]byte("ack"))
	if readySoon(o, 20*time.Millisecond) {
		t.Fatal("a lazy frame was sent off at once by a signal for frames already taken")
	}
}

func TestOutbox_WithoutALazyWaitEveryFrameLeavesAtOnce(t *testing.T) {
	o := newOutbox(8, 1<<10, 0)
	_ = o.pushLazy([]byte("ack"))
	if !readySoon(o, time.Second) {
		t.Fatal("with no lazy wait, a lazy push must wake the writer at once")
	}
}

func TestOutbox_LazyPushKeepsTheBoundsAndTheClose(t *testing.T) {
	o := newOutbox(1, 1<<10, time.Hour)
	if err := o.pushLazy([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := o.pushLazy([]byte("b")); !errors.Is(err, errOutboxFull) {
		t.Fatalf("second lazy push into a one-frame queue: %v, want errOutboxFull", err)
	}
	o.close()
	if err := o.pushLazy([]byte("c")); !errors.Is(err, errOutboxClosed) {
		t.Fatalf("lazy push after close: %v, want errOutboxClosed", err)
	}
}
