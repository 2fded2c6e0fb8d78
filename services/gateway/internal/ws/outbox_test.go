package ws

import (
	"errors"
	"testing"
	"time"
)

// testOutbox is an outbox whose writers are started on a channel: the test
// plays the writer.
func testOutbox(maxFrames, maxBytes int, lazyWait time.Duration) (*outbox, chan struct{}) {
	starts := make(chan struct{}, 16)
	return newOutbox(maxFrames, maxBytes, lazyWait, func() { starts <- struct{}{} }), starts
}

// readySoon reports whether the outbox starts a writer within d.
func readySoon(starts chan struct{}, d time.Duration) bool {
	select {
	case <-starts:
		return true
	case <-time.After(d):
		return false
	}
}

// takeStrings is what a writer started by the outbox writes before it
// ends: every batch next gives it until nothing is due.
func takeStrings(o *outbox) []string {
	var out []string
	for {
		frames, _, closed, ok := o.next()
		if !ok {
			return out
		}
		for _, f := range frames {
			out = append(out, string(f))
		}
		if closed {
			return out
		}
	}
}

func TestOutbox_LazyFrameAloneLeavesAfterItsWait(t *testing.T) {
	const wait = 50 * time.Millisecond
	o, starts := testOutbox(8, 1<<10, wait)
	start := time.Now()
	if err := o.pushLazy([]byte("ack")); err != nil {
		t.Fatal(err)
	}
	if readySoon(starts, wait/2) {
		t.Fatalf("the writer was woken %s after a lazy push; it should wait %s", time.Since(start), wait)
	}
	if !readySoon(starts, 5*time.Second) {
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
	o, starts := testOutbox(8, 1<<10, time.Hour)
	if err := o.pushLazy([]byte("ack")); err != nil {
		t.Fatal(err)
	}
	if err := o.push([]byte("event")); err != nil {
		t.Fatal(err)
	}
	if !readySoon(starts, time.Second) {
		t.Fatal("an eager push did not wake the writer")
	}
	got := takeStrings(o)
	if len(got) != 2 || got[0] != "ack" || got[1] != "event" {
		t.Fatalf("took %q, want [ack event]: one batch, in the order queued", got)
	}
	// The lazy wait was for that batch: nothing wakes the writer later.
	if readySoon(starts, 20*time.Millisecond) {
		t.Fatal("the writer was woken again for a batch already taken")
	}
}

func TestOutbox_LazyFrameBehindAnEagerOneGoesWithIt(t *testing.T) {
	o, starts := testOutbox(8, 1<<10, time.Hour)
	_ = o.push([]byte("event"))
	_ = o.pushLazy([]byte("ack"))
	if !readySoon(starts, time.Second) {
		t.Fatal("the eager push did not wake the writer")
	}
	if got := takeStrings(o); len(got) != 2 || got[0] != "event" || got[1] != "ack" {
		t.Fatalf("took %q, want [event ack]", got)
	}
	// After the batch, a new lazy frame waits again rather than riding on
	// the old signal.
	_ = o.pushLazy([]byte("ack2"))
	if readySoon(starts, 20*time.Millisecond) {
		t.Fatal("a lazy frame pushed after a take woke the writer at once")
	}
}

// The writer woke for one frame, a second was pushed before its take, and
// the take had both: the second push's signal is for a batch that is gone,
// and must not send the next lazy frame off at once (it did: a gateway
// test saw an ack leave 0.5 ms after its command, with AckDelay 80 ms).
func TestOutbox_ASignalForFramesAlreadyTakenDoesNotHurryTheNextLazyFrame(t *testing.T) {
	o, starts := testOutbox(8, 1<<10, time.Hour)
	_ = o.push([]byte("joined"))
	if !readySoon(starts, time.Second) {
		t.Fatal("an eager push did not wake the writer")
	}
	_ = o.push([]byte("event")) // between the wake-up and the take
	if got := takeStrings(o); len(got) != 2 {
		t.Fatalf("took %q, want both frames", got)
	}
	_ = o.pushLazy([]byte("ack"))
	if readySoon(starts, 20*time.Millisecond) {
		t.Fatal("a lazy frame was sent off at once by a signal for frames already taken")
	}
}

func TestOutbox_WithoutALazyWaitEveryFrameLeavesAtOnce(t *testing.T) {
	o, starts := testOutbox(8, 1<<10, 0)
	_ = o.pushLazy([]byte("ack"))
	if !readySoon(starts, time.Second) {
		t.Fatal("with no lazy wait, a lazy push must wake the writer at once")
	}
}

func TestOutbox_LazyPushKeepsTheBoundsAndTheClose(t *testing.T) {
	o, _ := testOutbox(1, 1<<10, time.Hour)
	if err := o.pushLazy([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := o.pushLazy([]byte("b")); !errors.Is(err, errOutboxFull) {
		t.Fatalf("second lazy push into a one-frame queue: %v, want errOutboxFull", err)
	}
	o.close(false)
	if err := o.pushLazy([]byte("c")); !errors.Is(err, errOutboxClosed) {
		t.Fatalf("lazy push after close: %v, want errOutboxClosed", err)
	}
}

// An idle connection holds no writer: the one a push starts ends when
// nothing is due, pushes while it runs start no other, and the next push
// after it ended starts one again.
func TestOutbox_AWriterRunsOnlyWhileFramesAreDue(t *testing.T) {
	o, starts := testOutbox(8, 1<<10, time.Hour)
	_ = o.push([]byte("a"))
	_ = o.push([]byte("b"))
	if !readySoon(starts, time.Second) {
		t.Fatal("a push to an idle outbox started no writer")
	}
	if readySoon(starts, 20*time.Millisecond) {
		t.Fatal("a push while a writer runs started a second one")
	}
	frames, _, closed, ok := o.next()
	if !ok || closed || len(frames) != 2 {
		t.Fatalf("next: %d frames, closed %v, ok %v; want both frames", len(frames), closed, ok)
	}
	if _, _, _, ok := o.next(); ok {
		t.Fatal("next with nothing due kept the writer")
	}
	_ = o.pushLazy([]byte("ack")) // waits for company: no writer yet
	if readySoon(starts, 20*time.Millisecond) {
		t.Fatal("a lazy push started a writer before its wait")
	}
	_ = o.push([]byte("event"))
	if !readySoon(starts, time.Second) {
		t.Fatal("a push after the writer ended started none")
	}
	if got := takeStrings(o); len(got) != 2 || got[0] != "ack" || got[1] != "event" {
		t.Fatalf("took %q, want [ack event]", got)
	}
}

// Closing with flush hands what is left to a writer, which learns the
// outbox is closed (to send the close frame after it); without flush no
// writer is started, and a lazy wait ending after the close starts none.
func TestOutbox_CloseHandsWhatIsLeftToAWriterOnlyWhenFlushing(t *testing.T) {
	o, starts := testOutbox(8, 1<<10, 10*time.Millisecond)
	_ = o.pushLazy([]byte("ack"))
	o.close(false)
	if readySoon(starts, 50*time.Millisecond) {
		t.Fatal("a close without flush (or the lazy wait after it) started a writer")
	}

	o, starts = testOutbox(8, 1<<10, time.Hour)
	_ = o.pushLazy([]byte("ack"))
	o.close(true)
	if !readySoon(starts, time.Second) {
		t.Fatal("a flushing close started no writer")
	}
	frames, _, closed, ok := o.next()
	if !ok || !closed || len(frames) != 1 || string(frames[0]) != "ack" {
		t.Fatalf("next after a flushing close: %q, closed %v, ok %v; want [ack], closed", frames, closed, ok)
	}
	if err := o.push([]byte("late")); !errors.Is(err, errOutboxClosed) {
		t.Fatalf("push after close: %v, want errOutboxClosed", err)
	}
}

// A flushing close while a writer runs leaves the rest to that writer.
func TestOutbox_AFlushingCloseLeavesTheRestToTheRunningWriter(t *testing.T) {
	o, starts := testOutbox(8, 1<<10, time.Hour)
	_ = o.push([]byte("a"))
	if !readySoon(starts, time.Second) {
		t.Fatal("no writer")
	}
	_, _, _, _ = o.next() // writing "a"
	_ = o.push([]byte("b"))
	o.close(true)
	if readySoon(starts, 20*time.Millisecond) {
		t.Fatal("a flushing close started a second writer beside the running one")
	}
	frames, _, closed, ok := o.next()
	if !ok || !closed || len(frames) != 1 || string(frames[0]) != "b" {
		t.Fatalf("next: %q, closed %v, ok %v; want [b], closed", frames, closed, ok)
	}
}

// A lazy timer that fired as a batch was taken, and got the lock only after
// a new lazy frame was pushed, must not send that frame off early: it waits
// for the timer its own push reset.
func TestOutbox_AStaleLazyTimerDoesNotHurryANewLazyFrame(t *testing.T) {
	o, starts := testOutbox(8, 1<<10, time.Hour)
	_ = o.pushLazy([]byte("ack"))
	o.lazyDue() // the old timer's callback, running late
	if readySoon(starts, 20*time.Millisecond) {
		t.Fatal("a stale timer made a lazy frame due before its wait")
	}
}
