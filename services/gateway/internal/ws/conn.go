package ws

import (
	"context"
	"errors"
	"runtime/debug"
	"sync"
	"time"

	"github.com/coder/websocket"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/time/rate"

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
	closing     chan struct{} // closed by fail
	closeReason string        // set by fail, before closing is closed
	flush       bool          // set by fail, before closing is closed
	codeMu      sync.Mutex
	code        websocket.StatusCode
	codeWeak    bool // code is only cleanup's default; a real reason replaces it

	// Owned by the reading goroutine.
	tables    map[string]*hub.Subscription
	strikes   int
	lobbyStop context.CancelFunc
	lobbyDone chan struct{}
	tablesMu  sync.Mutex // guards tables
	// presenceMu orders the connection's presence changes (join, refresh,
	// unjoin), which take Redis round trips, without holding up tablesMu.
	presenceMu sync.Mutex
	background sync.WaitGroup
}

func newConn(s *Server, ws *websocket.Conn, claims *auth.Claims) *conn {
	ctx, cancel := context.WithCancelCause(context.Background())
	return &conn{s: s, ws: ws, id: randomID(), claims: claims, ctx: ctx, cancel: cancel, steady: context.WithoutCancel(ctx),
		closing: make(chan struct{}),
		out:     newOutbox(s.cfg.SendQueueFrames, s.cfg.SendQueueBytes, s.cfg.AckDelay),
		limit:   rate.NewLimiter(s.cfg.Rate, s.cfg.Burst),
		tables:  map[string]*hub.Subscription{}}
}

// Send queues a frame without blocking (hub.Sink). A full queue means the
// client is not reading fast enough: it is disconnected, nobody waits for it.
func (c *conn) Send(frame []byte) bool { return c.queued(c.out.push(frame)) }

// SendTraced queues a frame whose write belongs to the span sc
// (hub.TracedSink): the write gets a span of its own, a child of sc.
func (c *conn) SendTraced(frame []byte, sc trace.SpanContext) bool {
	return c.queued(c.out.pushTraced(frame, sc))
}

// sendLazy queues a frame that may wait AckDelay for the next one (an ack).
func (c *conn) sendLazy(frame []byte) bool { return c.queued(c.out.pushLazy(frame)) }

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
func (c *conn) SendWait(ctx context.Context, frame []byte) bool {
	return c.out.pushWait(ctx, frame) == nil
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
		c.out.close()
		close(c.closing)
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
	c.background.Add(2)
	go func() { defer c.background.Done(); c.writeLoop() }()
	go func() { defer c.background.Done(); c.pingLoop() }()
	if c.claims == nil && !c.authenticate() {
		return
	}
	c.Send(wire.Welcome(c.player(), c.s.deps.Now()))
	// Reads use c.steady; the end of c.ctx closes the connection, which
	// ends a read as surely.
	stop := context.AfterFunc(c.ctx, func() { _ = c.ws.CloseNow() })
	defer stop()
	c.readLoop()
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
		c.out.close()
		close(c.closing)
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
