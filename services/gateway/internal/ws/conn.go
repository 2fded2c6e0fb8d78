package ws

import (
	"context"
	"errors"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/time/rate"

	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/auth"
	"github.com/pulka/pulka/services/gateway/internal/hub"
)

// conn is one client connection.
type conn struct {
	s      *Server
	ws     *websocket.Conn
	cork   *corkConn // nil when the connection could not be wrapped
	id     string
	out    *outbox
	limit  *rate.Limiter
	claims *auth.Claims // nil until authenticated
	// enc is how the connection's frames are written, chosen by the
	// WebSocket subprotocol at the handshake.
	enc wire.Encoding
	// msgType is the WebSocket message type of enc's frames.
	msgType websocket.MessageType

	// ipKey is the address group the connection counts against;
	// playerCounted says whether it counts against its player too.
	ipKey         string
	playerCounted bool
	// expiry closes the connection when its session expires.
	expiry *time.Timer

	// ctx lives as long as the connection; cancelled by fail.
	ctx    context.Context
	cancel context.CancelCauseFunc
	// steady is ctx without its end, for the library's reads and corked
	// writes: coder/websocket arms and disarms a timer for every read or
	// write whose context can end, which under load was a tenth of the
	// gateway's CPU. Reads end when ctx's end closes the connection; a
	// corked batch's deadline is on its one network write (uncork).
	steady context.Context

	closeOnce   sync.Once
	closeReason string // set by fail, before the outbox is closed
	flush       bool   // set by fail, before the outbox is closed
	codeMu      sync.Mutex
	code        websocket.StatusCode
	codeWeak    bool // code is only cleanup's default; a real reason replaces it

	// Owned by the reading goroutine.
	tables    map[string]*hub.Subscription
	strikes   int
	lobbyStop context.CancelFunc
	lobbyDone chan struct{}
	// lobbyViewAt is when the last whole lobby_view went out (Unix ns;
	// written by the watch's loop): a new watch's first view waits until
	// an interval after it (watchLobby).
	lobbyViewAt atomic.Int64
	tablesMu    sync.Mutex // guards tables
	// presenceMu orders the connection's presence changes (join, refresh,
	// unjoin), which take Redis round trips, without holding up tablesMu.
	presenceMu sync.Mutex
	background sync.WaitGroup
	// pinger is the keep-alive's timer (startKeepalive); pingMu orders its
	// reset by a ping against its stop by the connection's end.
	pingMu sync.Mutex
	pinger *time.Timer
	// heard is set by the reader for every frame the peer sends: proof it
	// was alive since the last ping, which then need not ask (ping).
	heard atomic.Bool
}

func newConn(s *Server, ws *websocket.Conn, claims *auth.Claims) *conn {
	ctx, cancel := context.WithCancelCause(context.Background())
	enc, msgType := wire.EncodingOf(ws.Subprotocol()), websocket.MessageBinary
	if enc == wire.JSON {
		msgType = websocket.MessageText
	}
	c := &conn{s: s, ws: ws, id: randomID(), claims: claims, enc: enc, msgType: msgType,
		ctx: ctx, cancel: cancel, steady: context.WithoutCancel(ctx),
		limit:  rate.NewLimiter(s.cfg.Rate, s.cfg.Burst),
		tables: map[string]*hub.Subscription{}}
	c.out = newOutbox(s.cfg.SendQueueFrames, s.cfg.SendQueueBytes, s.cfg.AckDelay, c.startWriter)
	return c
}

// Send queues a frame without blocking (hub.Sink), in the connection's
// encoding. A full queue means the client is not reading fast enough: it is
// disconnected, nobody waits for it.
func (c *conn) Send(f *wire.Frame) bool {
	b, ok := c.encoded(f)
	return ok && c.queued(c.out.push(b))
}

// SendTraced queues a frame whose write belongs to the span sc
// (hub.TracedSink): the write gets a span of its own, a child of sc.
func (c *conn) SendTraced(f *wire.Frame, sc trace.SpanContext) bool {
	b, ok := c.encoded(f)
	return ok && c.queued(c.out.pushTraced(b, sc))
}

// send queues a frame of this connection alone (an answer, an error).
func (c *conn) send(m *gatewayv1.ServerFrame) bool { return c.Send(wire.NewFrame(m)) }

// sendLazy queues a frame that may wait AckDelay for the next one (an ack).
func (c *conn) sendLazy(m *gatewayv1.ServerFrame) bool {
	b, ok := c.encoded(wire.NewFrame(m))
	return ok && c.queued(c.out.pushLazy(b))
}

// encoded is f in the connection's encoding. A frame that cannot be
// encoded is a bug (every frame is a generated message the gateway built):
// it is logged and skipped, and the connection lives on.
func (c *conn) encoded(f *wire.Frame) ([]byte, bool) {
	b, err := f.Bytes(c.enc)
	if err != nil {
		c.s.deps.Logger.Error("ws: frame not encoded", "conn", c.id, "encoding", c.enc.String(), "err", err)
		return nil, false
	}
	return b, true
}

// queued reports whether a push succeeded; a full queue drops the client.
func (c *conn) queued(err error) bool {
	if err != nil {
		if errors.Is(err, errOutboxFull) {
			c.fail(CloseSlowConsumer, closeReasonSlow, false)
		}
		return false
	}
	return true
}

// SendWait queues a frame, waiting for room (hub.WaitSink, for replays).
func (c *conn) SendWait(ctx context.Context, f *wire.Frame) bool {
	b, ok := c.encoded(f)
	return ok && c.out.pushWait(ctx, b) == nil
}

// fail closes the connection with code. With flush, the frames already
// queued (an error frame, the last events) are written before the close
// frame, within a short deadline; without (a slow client), the close starts
// at once in the background: whoever noticed must not wait for the client.
func (c *conn) fail(code websocket.StatusCode, reason string, flush bool) {
	c.codeMu.Lock()
	if c.code == 0 || c.codeWeak {
		// A reason found late (the writer timing out while the reader had
		// already seen the connection die) still names the close.
		c.code, c.codeWeak = code, false
	}
	c.codeMu.Unlock()
	c.closeOnce.Do(func() {
		c.closeReason, c.flush = reason, flush
		c.out.close(flush)
		if !flush {
			go c.closeNow(code, reason)
		}
	})
}

func (c *conn) closeNow(code websocket.StatusCode, reason string) {
	_ = c.ws.Close(code, reason)
	c.cancel(errClosing)
}

func (c *conn) closeCode() websocket.StatusCode {
	c.codeMu.Lock()
	defer c.codeMu.Unlock()
	return c.code
}

// run serves the connection until it closes.
func (c *conn) run() {
	defer c.cleanup()
	// net/http recovered a panic of the handler's goroutine; run has a
	// goroutine of its own (ServeHTTP), so it recovers itself, or one
	// connection's bug would end every player's game. Before cleanup, so
	// that the client is told why.
	defer func() {
		if v := recover(); v != nil {
			c.s.deps.Logger.Error("ws: connection failed with a panic", "conn", c.id, "panic", v, "stack", string(debug.Stack()))
			c.fail(CloseInternal, "internal error", true)
		}
	}()
	c.startKeepalive()
	if c.claims == nil && !c.authenticate() {
		return
	}
	c.send(wire.Welcome(c.player(), c.s.deps.Now()))
	if stop := c.watchBalance(); stop != nil {
		defer stop()
	}
	// Reads use c.steady; the end of c.ctx closes the connection, which
	// ends a read as surely.
	stop := context.AfterFunc(c.ctx, func() { _ = c.ws.CloseNow() })
	defer stop()
	c.readLoop()
}

// watchBalance follows an account's balance for this connection (guests
// have no wallet); the connection works without it if Redis fails here.
func (c *conn) watchBalance() (stop func()) {
	if c.s.deps.Balances == nil || c.claims.Guest {
		return nil
	}
	stop, err := c.s.deps.Balances.Watch(c.ctx, c.claims.PlayerID, c)
	if err != nil {
		c.s.deps.Logger.WarnContext(c.ctx, "ws: not following the balance", "conn", c.id, "err", err)
		return nil
	}
	return stop
}

func (c *conn) player() wire.Player {
	return wire.Player{ID: c.claims.PlayerID, Name: c.claims.Name, Guest: c.claims.Guest}
}

// setCode records the close code the peer (or the library) used, if fail
// has not chosen one.
func (c *conn) setCode(code websocket.StatusCode) {
	c.codeMu.Lock()
	if c.code == 0 {
		c.code = code
	}
	c.codeMu.Unlock()
}

// cleanup runs when the reading stops: every subscription and presence
// entry of the connection goes, and its goroutines end.
func (c *conn) cleanup() {
	c.codeMu.Lock()
	if c.code == 0 {
		c.code, c.codeWeak = websocket.StatusNormalClosure, true
	}
	c.codeMu.Unlock()
	c.closeOnce.Do(func() { // as fail(1000, flush), keeping the code weak
		c.closeReason, c.flush = "", true
		c.out.close(true)
	})
	if c.lobbyStop != nil {
		c.lobbyStop()
		<-c.lobbyDone
	}
	c.tablesMu.Lock()
	tables := make([]string, 0, len(c.tables))
	for t := range c.tables {
		tables = append(tables, t)
	}
	c.tablesMu.Unlock()
	for _, t := range tables {
		c.unjoin(t)
	}
	<-c.ctx.Done()
	c.background.Wait()
}
