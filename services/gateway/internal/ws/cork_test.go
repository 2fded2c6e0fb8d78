package ws

import (
	"bytes"
	"net"
	"sync"
	"testing"
	"time"
)

// recordingConn is a net.Conn that records each Write call.
type recordingConn struct {
	net.Conn
	mu     sync.Mutex
	writes [][]byte
}

func (r *recordingConn) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, bytes.Clone(p))
	return len(p), nil
}

func (r *recordingConn) SetWriteDeadline(time.Time) error { return nil }

func TestCork_BatchLeavesInOneWriteInOrder(t *testing.T) {
	raw := &recordingConn{}
	c := &corkConn{Conn: raw}
	_, _ = c.Write([]byte("a"))
	c.cork()
	for _, s := range []string{"b", "c", "d"} {
		_, _ = c.Write([]byte(s))
	}
	if len(raw.writes) != 1 {
		t.Fatalf("corked writes reached the connection: %q", raw.writes)
	}
	if err := c.uncork(time.Now().Add(time.Second), 0); err != nil {
		t.Fatal(err)
	}
	_, _ = c.Write([]byte("e"))
	want := []string{"a", "bcd", "e"}
	if len(raw.writes) != len(want) {
		t.Fatalf("writes %q, want %q", raw.writes, want)
	}
	for i, w := range want {
		if string(raw.writes[i]) != w {
			t.Fatalf("writes %q, want %q", raw.writes, want)
		}
	}
}

func TestCork_UncorkWithNothingHeldWritesNothing(t *testing.T) {
	raw := &recordingConn{}
	c := &corkConn{Conn: raw}
	c.cork()
	if err := c.uncork(time.Now().Add(time.Second), 0); err != nil {
		t.Fatal(err)
	}
	if len(raw.writes) != 0 {
		t.Fatalf("writes %q, want none", raw.writes)
	}
}

// deadlineConn records the write deadlines set on it.
type deadlineConn struct {
	recordingConn
	set []time.Time
}

func (d *deadlineConn) SetWriteDeadline(t time.Time) error {
	d.set = append(d.set, t)
	return nil
}

// A batch's write deadline stays set while it still fits the next batch's
// (no later than its deadline, at most slack earlier), is moved when it
// does not, and never reaches a write the library makes uncorked.
func TestCork_WriteDeadlineIsKeptWhileItFitsAndClearedForUncorkedWrites(t *testing.T) {
	raw := &deadlineConn{}
	c := &corkConn{Conn: raw}
	batch := func(deadline time.Time, slack time.Duration) {
		t.Helper()
		c.cork()
		_, _ = c.Write([]byte("x"))
		if err := c.uncork(deadline, slack); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Unix(1000, 0)
	const slack = 5 * time.Second
	batch(t0.Add(10*time.Second), slack)
	batch(t0.Add(11*time.Second), slack) // kept: 10 s is within 5 s of 11 s
	batch(t0.Add(15*time.Second), slack) // kept: exactly slack earlier
	if len(raw.set) != 1 || !raw.set[0].Equal(t0.Add(10*time.Second)) {
		t.Fatalf("deadlines set %v, want only t0+10s", raw.set)
	}
	batch(t0.Add(16*time.Second), slack) // too early now: moved
	batch(t0.Add(12*time.Second), slack) // a closing flush's shorter bound: moved back
	want := []time.Time{t0.Add(10 * time.Second), t0.Add(16 * time.Second), t0.Add(12 * time.Second)}
	if len(raw.set) != len(want) {
		t.Fatalf("deadlines set %v, want %v", raw.set, want)
	}
	for i := range want {
		if !raw.set[i].Equal(want[i]) {
			t.Fatalf("deadlines set %v, want %v", raw.set, want)
		}
	}
	_, _ = c.Write([]byte("pong")) // uncorked: the library's own write
	if last := raw.set[len(raw.set)-1]; !last.IsZero() {
		t.Fatalf("an uncorked write met the deadline %v, want none", last)
	}
	n := len(raw.set)
	_, _ = c.Write([]byte("pong"))
	batch(t0.Add(20*time.Second), slack) // nothing armed: set again
	if len(raw.set) != n+1 || !raw.set[n].Equal(t0.Add(20*time.Second)) {
		t.Fatalf("deadlines set %v, want one more at t0+20s", raw.set)
	}
	if got := len(raw.writes); got != 8 { // six batches, two pongs
		t.Fatalf("%d writes, want 8", got)
	}
}
