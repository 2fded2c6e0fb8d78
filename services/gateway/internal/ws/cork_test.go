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
	if err := c.uncork(time.Now().Add(time.Second)); err != nil {
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
	if err := c.uncork(time.Now().Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if len(raw.writes) != 0 {
		t.Fatalf("writes %q, want none", raw.writes)
	}
}
