package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	"github.com/pulka/pulka/tools/wsclient"

	"github.com/coder/websocket"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/wire"
)

// frame is one frame a client received, with the fields of every type
// (docs/protocol.md) and the decoded event or sheet update.
type frame struct {
	// N is the frame's index among everything the client received; Conn
	// numbers the client's connections (0 for the first).
	N    int
	Conn int
	At   time.Time
	Raw  []byte

	Type           string
	Table          string
	ID             string
	Ref            string
	Cmd            string
	Code           string
	Message        string
	Seat           *uint32
	Replayed       int
	HistoryTrimmed bool

	wf    wsclient.Frame // as the Go client decodes it
	ev    *tablev1.Event
	sheet *scoringv1.SheetUpdate
	// packed marks the LegalMoves event that rode on the event frame before
	// it (EventFrame.legal), recorded as a frame of its own with that
	// frame's ID, as wsclient.Conn hands it on.
	packed bool
}

func (f *frame) String() string {
	s := fmt.Sprintf("%s table=%q id=%q ref=%q cmd=%q code=%q", f.Type, f.Table, f.ID, f.Ref, f.Cmd, f.Code)
	if f.ev != nil {
		s += " " + prototext.MarshalOptions{}.Format(f.ev)
	}
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// decode reads a binary ServerFrame into f, with the Go client's decoder.
func (f *frame) decode(data []byte) error {
	wf, err := wsclient.DecodeFrame(data, f.At)
	if err != nil {
		return err
	}
	f.wf, f.Type, f.Ref, f.Table, f.ID, f.Cmd = wf, wf.Type, wf.Ref, wf.Table, wf.ID, wf.Cmd
	f.Seat, f.Replayed, f.HistoryTrimmed, f.ev, f.sheet = wf.Seat, wf.Replayed, wf.HistoryTrimmed, wf.Event, wf.Sheet
	var we *wire.Error
	if errors.As(wf.Err, &we) {
		f.Code, f.Message = we.Code, we.Message
	}
	return nil
}

// conn is one WebSocket connection's state.
type wsConn struct {
	n      int
	ws     *websocket.Conn
	cancel context.CancelFunc
	done   chan struct{}
	joined map[string]string // table → last_event_id the join asked for
}

// client is one player's WebSocket client: it records every frame it gets
// (for the hidden-information checks), can wait for frames, and, when
// auto-play is on, answers its own turns with a legal move chosen from what
// it has seen.
type client struct {
	t    testing.TB
	name string
	s    *stack
	ses  session

	mu       sync.Mutex
	frames   []*frame
	changed  chan struct{}
	cur      *wsConn
	conns    int
	closeErr error
	// Auto-play: a model per table, fed by every event frame.
	auto   map[string]bool
	models map[string]*seatModel
	sent   []sentCommand
	seq    int
	joins  []joinRecord
	// dropAfter, when set, is the table whose next acknowledged move drops
	// the connection (the move is then queued at the table for sure).
	dropAfter string
	dropLead  bool // only after a move that leads a trick
	dropFrom  int
	dropped   chan struct{}
}

// joinRecord is one join the client sent.
type joinRecord struct {
	Conn        int
	Table       string
	LastEventID string
}

// sentCommand is a table command the client sent.
type sentCommand struct {
	Table string
	Key   string // the cmd field (idempotency key)
	Move  string // what it meant, for messages
	Lead  bool   // a card leading a trick
}

func (s *stack) newClient(t testing.TB, name string, ses session) *client {
	c := &client{t: t, name: name, s: s, ses: ses, changed: make(chan struct{}),
		auto: map[string]bool{}, models: map[string]*seatModel{}}
	t.Cleanup(func() { c.disconnect() })
	return c
}

// connect opens a WebSocket authenticated by the bearer token and waits
// for welcome.
func (c *client) connect() {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	defer dcancel()
	ws, resp, err := websocket.Dial(dctx, "ws"+strings.TrimPrefix(c.s.URL(), "http")+"/ws", &websocket.DialOptions{
		HTTPHeader:   http.Header{"Authorization": {"Bearer " + c.ses.Token}},
		Subprotocols: []string{wire.SubprotocolProto}, // as the shipped clients
	})
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		cancel()
		c.t.Fatalf("%s: dial: %v", c.name, err)
	}
	ws.SetReadLimit(8 << 20)
	c.mu.Lock()
	wc := &wsConn{n: c.conns, ws: ws, cancel: cancel, done: make(chan struct{}), joined: map[string]string{}}
	c.conns++
	c.cur = wc
	c.closeErr = nil
	from := len(c.frames)
	c.mu.Unlock()
	go c.read(ctx, wc)
	c.await(from, 10*time.Second, "welcome", func(f *frame) bool { return f.Type == "welcome" })
}

// read records every frame of one connection until it ends.
func (c *client) read(ctx context.Context, wc *wsConn) {
	defer close(wc.done)
	for {
		_, data, err := wc.ws.Read(ctx)
		if err != nil {
			c.mu.Lock()
			if c.cur == wc {
				c.closeErr = err
				c.cur = nil
			}
			c.signal()
			c.mu.Unlock()
			return
		}
		f := &frame{Conn: wc.n, At: time.Now(), Raw: data}
		decodeErr := f.decode(data)
		c.mu.Lock()
		f.N = len(c.frames)
		c.frames = append(c.frames, f)
		if decodeErr != nil {
			c.t.Errorf("%s: undecodable frame %s: %v", c.name, f, decodeErr)
		}
		var move *gatewayv1.ClientFrame
		if f.ev != nil {
			move = c.observe(wc, f)
		}
		if f.wf.Legal != nil {
			lf := f.wf.LegalFrame()
			g := &frame{N: len(c.frames), Conn: wc.n, At: f.At, Type: lf.Type, Table: lf.Table, ID: f.ID, wf: lf, ev: lf.Event, packed: true}
			c.frames = append(c.frames, g)
			if m := c.observe(wc, g); m != nil {
				move = m
			}
		}
		if f.Type == "joined" {
			move = c.wake(wc, f.Table)
		}
		drop := f.Type == "ack" && c.dropAfter != "" && c.ackIsMove(f.Cmd)
		if drop {
			c.auto[c.dropAfter] = false
			c.dropAfter = ""
			move = nil
		}
		c.signal()
		c.mu.Unlock()
		if drop {
			// As a network failure: no close handshake.
			_ = wc.ws.CloseNow()
			close(c.dropped)
			continue
		}
		c.write(ctx, wc, move)
	}
}

// ackIsMove says whether an acknowledged command id is one of the moves
// auto-play sent to the table being dropped; c.mu is held.
func (c *client) ackIsMove(cmd string) bool {
	for _, s := range c.sent[c.dropFrom:] {
		if s.Table == c.dropAfter && c.ses.Player.ID+"/"+s.Key == cmd && (s.Lead || !c.dropLead) {
			return true
		}
	}
	return false
}

// dropAfterNextMove makes the connection fail, without a close handshake,
// as soon as the gateway acknowledges the client's next auto-played move
// to table (with leadOnly, the next card that leads a trick); the returned
// channel is closed then.
func (c *client) dropAfterNextMove(table string, leadOnly bool) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropAfter, c.dropLead = table, leadOnly
	c.dropFrom = len(c.sent) // only moves sent from now on count
	c.dropped = make(chan struct{})
	return c.dropped
}

// signal wakes the waiters; c.mu is held.
func (c *client) signal() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// send writes one client frame on the current connection, binary: a
// ClientFrame, or the tests' shorthand of one (clientFrame).
func (c *client) send(msg any) {
	c.t.Helper()
	if m, ok := msg.(map[string]any); ok {
		msg = clientFrame(m)
	}
	b, err := proto.Marshal(msg.(proto.Message))
	if err != nil {
		c.t.Fatal(err)
	}
	c.write1(websocket.MessageBinary, b)
}

// sendRaw writes bytes as one text frame (protobuf JSON, or not).
func (c *client) sendRaw(b []byte) {
	c.t.Helper()
	c.write1(websocket.MessageText, b)
}

func (c *client) write1(typ websocket.MessageType, b []byte) {
	c.t.Helper()
	c.mu.Lock()
	wc := c.cur
	c.mu.Unlock()
	if wc == nil {
		c.t.Fatalf("%s: send on a closed connection", c.name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := wc.ws.Write(ctx, typ, b); err != nil {
		c.t.Fatalf("%s: write: %v", c.name, err)
	}
}

// join follows table (resuming after lastEventID when set) and waits for
// joined; it returns that frame.
func (c *client) join(table, lastEventID string) *frame {
	c.t.Helper()
	c.mu.Lock()
	from := len(c.frames)
	c.seq++
	ref := fmt.Sprintf("join-%d", c.seq)
	if c.cur != nil {
		c.cur.joined[table] = lastEventID
		c.joins = append(c.joins, joinRecord{Conn: c.cur.n, Table: table, LastEventID: lastEventID})
	}
	if sm := c.models[table]; sm != nil {
		sm.joined = false // until this join's replay is over
	}
	c.mu.Unlock()
	msg := map[string]any{"type": "join", "table": table, "ref": ref}
	if lastEventID != "" {
		msg["last_event_id"] = lastEventID
	}
	c.send(msg)
	return c.await(from, 15*time.Second, "joined "+table, func(f *frame) bool {
		return f.Type == "joined" && f.Ref == ref
	})
}

// disconnect closes the connection as a browser tab being closed would
// (a normal close), and waits for the reader to stop.
func (c *client) disconnect() {
	c.mu.Lock()
	wc := c.cur
	c.cur = nil
	c.mu.Unlock()
	if wc == nil {
		return
	}
	_ = wc.ws.Close(websocket.StatusNormalClosure, "bye")
	select {
	case <-wc.done:
	case <-time.After(5 * time.Second):
	}
	wc.cancel()
	<-wc.done
}

// snapshot returns the frames received so far.
func (c *client) snapshot() []*frame {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*frame(nil), c.frames...)
}

// len is how many frames the client has received.
func (c *client) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.frames)
}

// await waits for a frame at index from or later that pred accepts.
func (c *client) await(from int, timeout time.Duration, what string, pred func(*frame) bool) *frame {
	c.t.Helper()
	f, err := c.tryAwait(from, timeout, pred)
	if err != nil {
		c.t.Fatalf("%s: waiting for %s: %v; last frames:\n%s", c.name, what, err, c.tail(8))
	}
	return f
}

func (c *client) tryAwait(from int, timeout time.Duration, pred func(*frame) bool) (*frame, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		for i := from; i < len(c.frames); i++ {
			if pred(c.frames[i]) {
				f := c.frames[i]
				c.mu.Unlock()
				return f, nil
			}
		}
		from = len(c.frames)
		ch := c.changed
		closed := c.cur == nil && c.closeErr != nil
		cerr := c.closeErr
		c.mu.Unlock()
		if closed {
			return nil, fmt.Errorf("connection closed: %w", cerr)
		}
		select {
		case <-ch:
		case <-deadline.C:
			return nil, errTimeout
		}
	}
}

// find returns the first frame received so far that pred accepts, nil if none.
func (c *client) find(pred func(*frame) bool) *frame {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, f := range c.frames {
		if pred(f) {
			return f
		}
	}
	return nil
}

// awaitHand waits for the start of table's hand of that index (from 0).
func (c *client) awaitHand(timeout time.Duration, table string, index uint32, what string) *frame {
	c.t.Helper()
	return c.awaitEvent(0, timeout, table, what, func(ev *tablev1.Event) bool {
		return ev.GetHandStarted() != nil && ev.GetHandStarted().GetHandIndex() == index
	})
}

// awaitCards waits until n cards of table have been played after the
// event of index from: mid-hand, for a fault that must hit a hand in play.
func (c *client) awaitCards(from int, timeout time.Duration, table string, n int, what string) *frame {
	c.t.Helper()
	played := 0
	return c.awaitEvent(from, timeout, table, what, func(ev *tablev1.Event) bool {
		if ev.GetCardPlayed() != nil {
			played++
		}
		return played == n
	})
}

// awaitEvent waits for an event of table from index from on that pred
// accepts.
func (c *client) awaitEvent(from int, timeout time.Duration, table, what string, pred func(*tablev1.Event) bool) *frame {
	c.t.Helper()
	return c.await(from, timeout, what, func(f *frame) bool {
		return f.ev != nil && f.Table == table && pred(f.ev)
	})
}

// tail formats the last n frames.
func (c *client) tail(n int) string {
	fs := c.snapshot()
	if len(fs) > n {
		fs = fs[len(fs)-n:]
	}
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "  #%d conn %d: %s\n", f.N, f.Conn, f)
	}
	return b.String()
}

// lastEventID is the id of the last event of table the client received.
func (c *client) lastEventID(table string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.frames) - 1; i >= 0; i-- {
		if f := c.frames[i]; f.ev != nil && f.Table == table && f.ID != "" { // a refusal has no id
			return f.ID
		}
	}
	return ""
}

// errorFrame waits for an error frame (with ref, when not empty) after from.
func (c *client) errorFrame(from int, ref string) *frame {
	c.t.Helper()
	return c.await(from, 10*time.Second, "an error frame", func(f *frame) bool {
		return f.Type == "error" && (ref == "" || f.Ref == ref)
	})
}

// isClosed reports whether the current connection has ended and how.
func (c *client) isClosed() (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur == nil, c.closeErr
}

// closeStatus is the close code of a connection that ended, -1 if none.
func closeStatus(err error) websocket.StatusCode {
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return -1
}
