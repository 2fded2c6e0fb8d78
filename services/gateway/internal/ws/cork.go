package ws

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// corkConn is the hijacked TCP connection of a WebSocket, able to hold
// writes back while the writer goroutine queues a batch of frames: the
// WebSocket library flushes (one write system call) after every message,
// and under load that system call was a third of the gateway's CPU (a move
// becomes about seven frames). Corked, the frames of a batch leave in one
// write. The bytes and their order are exactly those of unbatched writes:
// every write, corked or not, goes through mu, and a corked one only
// appends to buf.
type corkConn struct {
	net.Conn

	mu     sync.Mutex
	corked bool
	buf    []byte
	// armed is the write deadline set on Conn (zero: none). Setting one
	// modifies a runtime timer, and setting and clearing it around every
	// batch was a twentieth of the gateway's CPU, so uncork keeps it while
	// it still fits the batch's (see uncork).
	armed time.Time
}

// maxKeptCorkBuffer bounds the buffer an idle connection keeps between
// batches (memory per idle connection is a goal of its own).
const maxKeptCorkBuffer = 4 << 10

func (c *corkConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.corked {
		c.buf = append(c.buf, p...)
		return len(p), nil
	}
	// A write the library makes on its own (a pong, a close frame) had no
	// deadline before uncork kept one: it must not meet a batch's old one.
	if !c.armed.IsZero() {
		_ = c.SetWriteDeadline(time.Time{})
		c.armed = time.Time{}
	}
	return c.Conn.Write(p)
}

// cork holds writes back until uncork.
func (c *corkConn) cork() {
	c.mu.Lock()
	c.corked = true
	c.mu.Unlock()
}

// uncork writes what was held back, in one write that must finish by
// deadline, and lets later writes through. The write may be given up to
// slack less time than that: a deadline already set that is no later than
// deadline and no earlier than deadline-slack is kept as it is, so a busy
// connection sets one about every slack rather than two per batch.
func (c *corkConn) uncork(deadline time.Time, slack time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.corked = false
	if len(c.buf) == 0 {
		return nil
	}
	if c.armed.IsZero() || c.armed.After(deadline) || c.armed.Before(deadline.Add(-slack)) {
		_ = c.SetWriteDeadline(deadline)
		c.armed = deadline
	}
	_, err := c.Conn.Write(c.buf)
	if cap(c.buf) > maxKeptCorkBuffer {
		c.buf = nil
	} else {
		c.buf = c.buf[:0]
	}
	return err
}

// corkingWriter hands the WebSocket library a corkConn when it hijacks the
// connection.
type corkingWriter struct {
	http.ResponseWriter
	conn *corkConn // set by a successful Hijack
}

// The buffers the WebSocket library reads and writes frames through. net/http
// hands over 4 KB of each, a quarter of an idle connection's memory each
// (issue 24), where smaller ones do the same work:
//   - writes: a batch is gathered in the corkConn, so this buffer only has
//     to hold what the library writes on its own, uncorked: a control frame
//     (ping, pong, close), 2 bytes of header (a server's frames are not
//     masked) and at most 125 of payload, so that it still leaves in one
//     system call. A longer frame passes through in pieces, into the cork's
//     buffer, with no system call more. (Only a connection that could not
//     be corked, a fallback never taken with net/http, writes a frame over
//     256 bytes in two or three calls.)
//   - reads: clients send short frames (a command is a few hundred bytes); a
//     longer one takes one read more.
const (
	libraryWriteBuffer = 256
	libraryReadBuffer  = 1 << 10
)

// Hijack wraps the connection. The bufio.Writer net/http returns writes to
// the raw connection, so it is replaced by one writing to the corkConn
// (after flushing anything it holds, which goes first either way), and
// both buffers by smaller ones.
func (w *corkingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	nc, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	if err := brw.Flush(); err != nil {
		_ = nc.Close()
		return nil, nil, err
	}
	cc := &corkConn{Conn: nc}
	w.conn = cc
	return cc, bufio.NewReadWriter(smallerReader(brw.Reader, nc), bufio.NewWriterSize(cc, libraryWriteBuffer)), nil
}

// smallerReader is br with a libraryReadBuffer: what br holds already (what
// the client sent right after its handshake) is read from it first, and kept
// in the new reader's buffer, where the library looks for it.
func smallerReader(br *bufio.Reader, nc net.Conn) *bufio.Reader {
	n := br.Buffered()
	if n > libraryReadBuffer {
		return br
	}
	held, _ := br.Peek(n)
	r := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(held), nc), libraryReadBuffer)
	if n > 0 {
		// One read from the MultiReader returns held whole (it fits), and
		// never waits on nc.
		if _, err := r.Peek(n); err != nil {
			return br
		}
	}
	return r
}

// WriteHeaderNow passes on gin's way of sending the 101 before the hijack,
// which the WebSocket library looks for.
func (w *corkingWriter) WriteHeaderNow() {
	if g, ok := w.ResponseWriter.(interface{ WriteHeaderNow() }); ok {
		g.WriteHeaderNow()
	}
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (w *corkingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
