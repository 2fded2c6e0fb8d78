package ws

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
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

// countingListener counts the Write calls on the connections it accepts.
type countingListener struct {
	net.Listener
	writes atomic.Int64
}

type countingConn struct {
	net.Conn
	writes *atomic.Int64
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: c, writes: &l.writes}, nil
}

// The WebSocket library writes through the small buffers corkingWriter gives
// it: a corked batch of frames longer than the buffer still leaves in one
// system call, and a control frame the library sends on its own in one.
func TestCork_SmallLibraryBuffersStillWriteABatchAndAControlFrameInOneCallEach(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: ln}
	big := bytes.Repeat([]byte("x"), 3*libraryReadBuffer)
	payloads := [][]byte{big, []byte("small"), bytes.Repeat([]byte("y"), libraryWriteBuffer+1)}
	type counts struct{ batch, ping int64 }
	got := make(chan counts, 1)
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &corkingWriter{ResponseWriter: w}
		c, err := websocket.Accept(cw, r, nil)
		if err != nil {
			t.Error(err)
			return
		}
		defer func() { _ = c.CloseNow() }()
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		ctx = c.CloseRead(ctx) // reads the pong
		before := cl.writes.Load()
		cw.conn.cork()
		for _, p := range payloads {
			if err := c.Write(ctx, websocket.MessageBinary, p); err != nil {
				t.Error(err)
				return
			}
		}
		if err := cw.conn.uncork(time.Now().Add(5*time.Second), 0); err != nil {
			t.Error(err)
			return
		}
		batch := cl.writes.Load() - before
		before = cl.writes.Load()
		if err := c.Ping(ctx); err != nil {
			t.Error(err)
			return
		}
		got <- counts{batch, cl.writes.Load() - before}
	})}
	go func() { _ = srv.Serve(cl) }()
	t.Cleanup(func() { _ = srv.Close() })

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, "ws://"+ln.Addr().String(), nil)
	closeBody(resp)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.CloseNow() }()
	c.SetReadLimit(1 << 20)
	for i, want := range payloads {
		_, p, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p, want) {
			t.Fatalf("message %d: %d bytes, not the %d written", i, len(p), len(want))
		}
	}
	go func() { _, _, _ = c.Read(ctx) }() // answers the ping
	select {
	case n := <-got:
		if n.batch != 1 || n.ping != 1 {
			t.Fatalf("system calls: %d for the corked batch, %d for the ping; want 1 each", n.batch, n.ping)
		}
	case <-ctx.Done():
		t.Fatal("the server never finished")
	}
}

// What net/http's reader already held when the connection was hijacked (a
// client's first frame, sent right behind its handshake) is in the smaller
// reader's buffer, where the WebSocket library looks for it, and is read
// before the connection's bytes.
func TestCork_TheSmallerReaderKeepsWhatTheOldOneHeld(t *testing.T) {
	a, b := net.Pipe()
	t.Cleanup(func() { _ = a.Close(); _ = b.Close() })
	old := bufio.NewReader(io.MultiReader(strings.NewReader("first "), a))
	if _, err := old.Peek(len("first ")); err != nil {
		t.Fatal(err)
	}
	r := smallerReader(old, a)
	if r.Size() != libraryReadBuffer || r.Buffered() != len("first ") {
		t.Fatalf("reader of %d bytes holding %d, want %d holding %d", r.Size(), r.Buffered(), libraryReadBuffer, len("first "))
	}
	go func() { _, _ = b.Write([]byte("second")) }()
	buf := make([]byte, len("first second"))
	if _, err := io.ReadFull(r, buf); err != nil {
		t.Fatal(err)
	}
	if string(buf) != "first second" {
		t.Fatalf("read %q", buf)
	}
}
