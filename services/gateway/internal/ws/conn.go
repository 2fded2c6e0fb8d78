package ws

import (
	"context"
	"errors"
	"io"
	"runtime/debug"
	"sync"
	"time"

	"github.com/coder/websocket"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/time/rate"
	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/telemetry"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/apierr"
	"github.com/pulka/pulka/services/gateway/internal/auth"
	"github.com/pulka/pulka/services/gateway/internal/connlimit"
	"github.com/pulka/pulka/services/gateway/internal/hub"
	"github.com/pulka/pulka/services/gateway/internal/ports"
	"github.com/pulka/pulka/services/gateway/internal/presence"
	"github.com/pulka/pulka/services/gateway/internal/visibility"
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

// authenticate waits for the hello of a connection that had no session.
func (c *conn) authenticate() bool {
	// Not a context deadline on the read: coder/websocket closes the
	// connection itself when a read's context expires, and the client
	// should see our close code.
	timer := time.AfterFunc(c.s.cfg.AuthTimeout, func() { c.fail(CloseAuthTimedOut, "no hello in time", true) })
	data, err := c.readFrame(c.ctx)
	if !timer.Stop() {
		return false // timed out just now
	}
	switch {
	case errors.Is(err, errTooBig):
		c.sendError(wire.CodeTooBig, "frame too big", "")
		c.fail(CloseUnauthorized, "hello expected", true)
		return false
	case err != nil:
		return false
	}
	m, err := wire.Parse(data)
	if err == nil && m.Type != wire.TypeHello {
		err = wire.Errorf(wire.CodeAuthRequired, "send hello with a session token first")
	}
	if err != nil {
		c.refused(err, m.Ref)
		c.fail(CloseUnauthorized, "hello expected", true)
		return false
	}
	claims, err := auth.VerifySession(c.ctx, c.s.deps.Signer, c.s.deps.Revocations, m.Token)
	if err != nil {
		p := apierr.From(err)
		c.sendError(p.Code, p.Message, m.Ref)
		code := CloseUnauthorized
		if errors.Is(err, auth.ErrRevokedToken) || errors.Is(err, auth.ErrExpiredToken) {
			code = CloseSessionEnded
		}
		c.fail(code, "invalid session", true)
		return false
	}
	if !c.s.perPlay.Acquire(claims.PlayerID) {
		p := apierr.From(&connlimit.TooManyError{Scope: connlimit.ScopePlayer, Limit: c.s.cfg.MaxPerPlayer})
		c.s.m.shed.Add(c.ctx, 1, metric.WithAttributes(attribute.String("reason", p.Code), attribute.String("scope", connlimit.ScopePlayer)))
		c.sendError(p.Code, p.Message, m.Ref)
		c.fail(CloseTooManyConns, "too many connections", true)
		return false
	}
	c.s.mu.Lock()
	c.claims, c.playerCounted = &claims, true
	c.s.rememberToken(c)
	c.s.mu.Unlock()
	return true
}

var errTooBig = errors.New("ws: frame over the read limit")

// readFrame reads one data frame. A frame over the soft limit is drained
// and reported as errTooBig; over the hard limit the library closes the
// connection with 1009.
func (c *conn) readFrame(ctx context.Context) ([]byte, error) {
	_, r, err := c.ws.Reader(ctx)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 0, 256)
	lr := io.LimitReader(r, c.s.cfg.ReadLimit+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(len(buf)) > c.s.cfg.ReadLimit {
		if _, err := io.Copy(io.Discard, r); err != nil {
			return nil, err
		}
		return nil, errTooBig
	}
	return buf, nil
}

func (c *conn) readLoop() {
	for {
		data, err := c.readFrame(c.steady)
		if errors.Is(err, errTooBig) {
			c.strike(wire.Errorf(wire.CodeTooBig, "frame larger than %d bytes", c.s.cfg.ReadLimit), "")
			continue
		}
		if err != nil {
			if code := websocket.CloseStatus(err); code != -1 {
				c.setCode(code)
			} else if errors.Is(err, websocket.ErrMessageTooBig) {
				c.setCode(CloseTooBig)
			}
			return
		}
		if !c.limit.Allow() {
			c.strike(wire.Errorf(wire.CodeRateLimited, "too many frames: at most %.0f per second", float64(c.s.cfg.Rate)), "")
			continue
		}
		m, err := wire.Parse(data)
		if err != nil {
			c.strike(err, m.Ref)
			continue
		}
		typ, ok := c.s.m.frameType[m.Type]
		if !ok {
			typ = metric.WithAttributes(attribute.String("type", m.Type))
		}
		c.s.m.frames.Add(c.ctx, 1, typ)
		if err := c.handle(m); err != nil {
			c.strike(err, m.Ref)
			continue
		}
		c.strikes = 0
	}
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

// strike answers a refused frame with an error frame; too many in a row
// close the connection.
func (c *conn) strike(err error, ref string) {
	c.refused(err, ref)
	c.strikes++
	if c.strikes >= c.s.cfg.MaxStrikes {
		c.fail(ClosePolicy, "too many refused frames", true)
	}
}

func (c *conn) refused(err error, ref string) {
	code, msg := wire.CodeOf(err), ""
	if code != "" {
		var we *wire.Error
		errors.As(err, &we)
		msg = we.Message
	} else {
		p := apierr.From(err)
		code, msg = p.Code, p.Message
		if p.Status >= 500 {
			c.s.deps.Logger.Error("ws: frame failed", "conn", c.id, "err", err)
		}
	}
	c.s.m.refused.Add(c.ctx, 1, metric.WithAttributes(attribute.String("code", code)))
	c.sendError(code, msg, ref)
}

func (c *conn) sendError(code, msg, ref string) { c.Send(wire.ErrorFrame(code, msg, ref)) }

// handle runs one valid frame.
func (c *conn) handle(m wire.ClientMsg) error {
	switch m.Type {
	case wire.TypeHello:
		return wire.Errorf(wire.CodeInvalid, "already authenticated")
	case wire.TypePing:
		c.Send(wire.Pong(m.Ref, c.s.deps.Now()))
		return nil
	case wire.TypeJoin:
		return c.join(m)
	case wire.TypeUnjoin:
		if !c.unjoin(m.Table) {
			return wire.Errorf(wire.CodeNotJoined, "not following table %s", m.Table)
		}
		c.Send(wire.Unjoined(m.Table, m.Ref))
		return nil
	case wire.TypeLobby:
		return c.watchLobby(m)
	}
	return c.command(m)
}

// join follows a table, replaying what the client missed.
func (c *conn) join(m wire.ClientMsg) error {
	c.tablesMu.Lock()
	old, rejoin := c.tables[m.Table]
	delete(c.tables, m.Table)
	n := len(c.tables)
	c.tablesMu.Unlock()
	wasMember := false
	if rejoin {
		// A second join resumes afresh: drop the old subscription first so
		// that no event is delivered twice. The connection's presence at
		// the table stays (it still follows the table).
		wasMember = old.Member()
		old.Close()
	} else if n >= c.s.cfg.MaxTables {
		return wire.Errorf(wire.CodeTooMany, "at most %d tables per connection", c.s.cfg.MaxTables)
	}
	ctx, span := c.s.deps.Tracer.Start(c.ctx, "ws join", trace.WithAttributes(attribute.String("table", m.Table)))
	defer span.End()
	// A made-up table id gets nothing: no feed, no presence entry, no
	// reconnect command (each would be a Redis key nobody reads).
	if !rejoin {
		if err := c.s.tables.check(ctx, m.Table); err != nil {
			return err
		}
	}
	pid := c.claims.PlayerID
	sub, res, err := c.s.deps.Hub.Join(ctx, m.Table, pid, m.LastEventID, c)
	if err != nil && rejoin {
		c.gone(m.Table, wasMember)
	}
	if errors.Is(err, hub.ErrSlow) {
		c.fail(CloseSlowConsumer, closeReasonSlow, false)
		return nil
	}
	if err != nil {
		if c.ctx.Err() != nil {
			return nil
		}
		return err
	}
	// presenceMu from before the subscription is listed until its presence
	// is recorded: the pinger's refresh must not find it in between (and
	// record it twice).
	c.presenceMu.Lock()
	c.tablesMu.Lock()
	c.tables[m.Table] = sub
	c.tablesMu.Unlock()
	if !rejoin {
		c.arrived(ctx, sub)
	}
	c.presenceMu.Unlock()
	var seat *uint32
	if res.Seat != visibility.NoSeat {
		v := uint32(res.Seat)
		seat = &v
	}
	// When the history the client needed is gone, the table resynchronises
	// it: it answers a Reconnect with a ViewSynced for the player.
	if res.Trimmed {
		cmd := wire.ReconnectCommand(m.Table, pid, wire.CommandID(pid, "reconnect-"+randomID()), m.LastEventID)
		if _, err := c.publish(ctx, cmd); err != nil {
			c.s.deps.Logger.Warn("ws: reconnect command failed", "table", m.Table, "err", err)
		}
	}
	// Last, so that a client told it joined is also counted as present.
	c.Send(wire.Joined(m.Table, m.Ref, seat, res.Replayed, res.Trimmed))
	return nil
}

// arrived records the connection's presence at the subscription's table.
func (c *conn) arrived(ctx context.Context, sub *hub.Subscription) {
	first, err := c.s.deps.Presence.Connect(ctx, sub.Table(), c.claims.PlayerID, c.id)
	if err != nil {
		c.s.deps.Logger.Warn("ws: presence connect failed", "table", sub.Table(), "err", err)
	}
	// A player of the table whose first connection arrives is back: that
	// ends their reconnect grace (or gives back a seat a bot took when it
	// ran out).
	if first && sub.Member() {
		c.reportPresence(ctx, sub.Table(), PresenceBack)
	}
}

// reportPresence tells the table-runner that this player came back to the
// table or went away (streams.PresenceEntry is the format both sides share).
func (c *conn) reportPresence(ctx context.Context, table, what string) {
	if err := c.s.reportPresence(ctx, table, c.claims.PlayerID, what); err != nil {
		c.s.deps.Logger.Warn("ws: presence report failed", "table", table, "presence", what, "err", err)
	}
}

// PresenceAway and PresenceBack name a presence report in logs and metrics.
const (
	PresenceAway = "away"
	PresenceBack = "back"
)

// unjoin stops following a table and reports presence.
func (c *conn) unjoin(table string) bool {
	c.tablesMu.Lock()
	sub, ok := c.tables[table]
	delete(c.tables, table)
	c.tablesMu.Unlock()
	if !ok {
		return false
	}
	member := sub.Member()
	sub.Close()
	c.gone(table, member)
	return true
}

// gone removes the connection's presence at table; member says whether the
// player has held a seat there.
func (c *conn) gone(table string, member bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), 5*time.Second)
	defer cancel()
	c.presenceMu.Lock()
	defer c.presenceMu.Unlock()
	last, err := c.s.deps.Presence.Disconnect(ctx, table, c.claims.PlayerID, c.id)
	if err != nil {
		c.s.deps.Logger.Warn("ws: presence disconnect failed", "table", table, "err", err)
	}
	if last && member {
		// The table starts the player's reconnect grace.
		c.reportPresence(ctx, table, PresenceAway)
	}
}

// command writes a table command to the table's command stream.
func (c *conn) command(m wire.ClientMsg) error {
	c.tablesMu.Lock()
	sub, joined := c.tables[m.Table]
	c.tablesMu.Unlock()
	if !joined {
		return wire.Errorf(wire.CodeNotJoined, "join table %s before sending it commands", m.Table)
	}
	if err := mayCommand(m.Type, sub); err != nil {
		return err
	}
	key := m.Cmd
	if key == "" {
		key = randomID()
	}
	pid := c.claims.PlayerID
	cmd, err := wire.Command(m, pid, wire.CommandID(pid, key))
	if err != nil {
		return err
	}
	ctx, span := c.s.deps.Tracer.Start(c.ctx, "ws "+m.Type, trace.WithSpanKind(trace.SpanKindProducer))
	defer span.End()
	if span.IsRecording() { // most spans are not sampled: spare them the attributes
		span.SetAttributes(attribute.String("table", m.Table), attribute.String("command_id", cmd.CommandId))
	}
	if _, err := c.publish(ctx, cmd); err != nil {
		return err
	}
	// The table's events usually follow within milliseconds: the ack
	// waits for them (at most AckDelay) and leaves with them.
	c.sendLazy(wire.Ack(m.Ref, cmd.CommandId))
	return nil
}

func (c *conn) publish(ctx context.Context, cmd *tablev1.Command) (string, error) {
	cmd.Trace = telemetry.TraceContextFrom(ctx)
	data, err := proto.Marshal(cmd)
	if err != nil {
		return "", err
	}
	// No timeout of its own: the Redis client's timeouts bound the write,
	// and the connection's end bounds the wait for a place in a batch.
	id, err := c.s.deps.Publisher.Publish(ctx, streams.Entry{Stream: streams.TableCommands(cmd.TableId), Data: data})
	if err != nil {
		return "", errors.Join(apierr.ErrUnavailable, err)
	}
	return id, nil
}

// watchLobby starts or stops pushing the lobby list: a window of the
// newest listed tables that pass the client's filter.
func (c *conn) watchLobby(m wire.ClientMsg) error {
	if c.lobbyStop != nil {
		c.lobbyStop()
		<-c.lobbyDone
		c.lobbyStop, c.lobbyDone = nil, nil
	}
	if !*m.Watch {
		return nil
	}
	if c.s.deps.Lobby == nil {
		return apierr.ErrUnavailable
	}
	var filter *lobbyv1.TableFilter
	if m.Filter != nil {
		var err error
		if filter, err = m.Filter.Proto(); err != nil {
			return err
		}
	}
	limit := c.s.cfg.LobbyWindow
	if m.Limit > 0 && int(m.Limit) < limit {
		limit = int(m.Limit)
	}
	ctx, cancel := context.WithCancel(c.ctx)
	c.lobbyStop, c.lobbyDone = cancel, make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		c.lobbyLoop(ctx, c.s.deps.Lobby, filter, limit)
	}(c.lobbyDone)
	return nil
}

// lobbyLoop keeps a watcher's window of the list current. The window is
// the newest `limit` tables that pass filter; the client gets it whole
// (lobby_view), then, at most every LobbyInterval, the difference: an
// upsert for each table that entered the window or changed in it, a
// removal for each that left it. However many tables are listed or change,
// a watcher is sent at most one window's worth per interval (a difference
// larger than half the window is sent as a new lobby_view), so a flood of
// tables cannot fill its send queue.
//
// The frames of one watch are numbered without gaps from the version of
// its first lobby_view (clients check that no frame was lost); they are
// not the lobby's versions, which count changes outside the window too.
func (c *conn) lobbyLoop(ctx context.Context, v ports.LobbyView, filter *lobbyv1.TableFilter, limit int) {
	changed := v.Changed()
	version := v.Version()
	seq := version
	shown := map[string]*lobbyv1.TableSummary{}
	count := func(typ, reason string) {
		c.s.m.lobbyFrames.Add(ctx, 1, metric.WithAttributes(attribute.String("type", typ), attribute.String("reason", reason)))
	}
	sendView := func(reason string) bool {
		tables, more := v.Page(filter, 0, limit)
		clear(shown)
		for _, t := range tables {
			shown[t.GetTableId()] = t
		}
		if reason != "watch" {
			seq++
		}
		frame, err := wire.LobbyView(&lobbyv1.LobbyView{Version: seq, Tables: tables, More: more})
		count(wire.TypeLobbyView, reason)
		return err == nil && c.Send(frame)
	}
	if !sendView("watch") {
		return
	}
	pause := time.NewTimer(0)
	defer pause.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
		// Let the changes of one interval gather into one difference.
		pause.Reset(c.s.cfg.LobbyInterval)
		select {
		case <-ctx.Done():
			return
		case <-pause.C:
		}
		changed = v.Changed()
		_, now, complete := v.Since(version)
		version = now
		if !complete {
			if !sendView("resync") {
				return
			}
			continue
		}
		tables, _ := v.Page(filter, 0, limit)
		var updates []*lobbyv1.LobbyUpdate
		in := make(map[string]bool, len(tables))
		for _, t := range tables {
			in[t.GetTableId()] = true
			// The view replaces a summary on every change: a new pointer
			// is a changed table.
			if shown[t.GetTableId()] != t {
				updates = append(updates, &lobbyv1.LobbyUpdate{Change: &lobbyv1.LobbyUpdate_TableUpserted{TableUpserted: t}})
			}
		}
		for id := range shown {
			if !in[id] {
				updates = append(updates, &lobbyv1.LobbyUpdate{Change: &lobbyv1.LobbyUpdate_TableRemoved{TableRemoved: id}})
			}
		}
		if len(updates) > max(limit/2, 1) {
			if !sendView("batch") {
				return
			}
			continue
		}
		for _, u := range updates {
			seq++
			u.Version = seq
			switch ch := u.GetChange().(type) {
			case *lobbyv1.LobbyUpdate_TableUpserted:
				shown[ch.TableUpserted.GetTableId()] = ch.TableUpserted
			case *lobbyv1.LobbyUpdate_TableRemoved:
				delete(shown, ch.TableRemoved)
			}
			frame, err := wire.LobbyUpdate(u)
			count(wire.TypeLobbyUpdate, "change")
			if err != nil || !c.Send(frame) {
				return
			}
		}
	}
}

// writeLoop writes queued frames until the connection closes; a flushing
// close is completed here, after the last queued frame.
func (c *conn) writeLoop() {
	for {
		select {
		case <-c.out.ready:
			frames, traces := c.out.take()
			if err := c.writeTraced(c.ctx, frames, traces); err != nil {
				// A client that cannot take its frames in WriteTimeout is
				// as good as gone.
				c.fail(CloseSlowConsumer, closeReasonSlow, false)
			}
		case <-c.closing:
			if !c.flush {
				return
			}
			ctx, cancel := context.WithTimeout(c.ctx, flushTimeout)
			frames, traces := c.out.take()
			_ = c.writeTraced(ctx, frames, traces)
			cancel()
			c.closeNow(c.closeCode(), c.closeReason)
			return
		}
	}
}

// flushTimeout bounds the writing of what is queued when a connection is
// closed on purpose.
const flushTimeout = 2 * time.Second

// writeTraced writes a batch of frames. When some of them belong to recorded
// spans (SendTraced: a sampled event's fan-out), the write is a span under
// each, so that their traces end at the write to the client; the frames of
// unsampled traces, nearly all of them, start no span.
func (c *conn) writeTraced(ctx context.Context, frames [][]byte, traces []trace.SpanContext) error {
	if len(traces) == 0 {
		return c.writeBatch(ctx, frames)
	}
	spans := make([]trace.Span, len(traces))
	for i, sc := range traces {
		_, spans[i] = c.s.deps.Tracer.Start(trace.ContextWithSpanContext(ctx, sc), "ws write",
			trace.WithAttributes(attribute.String("player", c.claims.PlayerID), attribute.Int("frames", len(frames))))
	}
	err := c.writeBatch(ctx, frames)
	for _, span := range spans {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
	return err
}

// writeBatch writes frames in order, within WriteTimeout for the whole
// batch, and with one system call when the connection is corkable.
func (c *conn) writeBatch(ctx context.Context, frames [][]byte) error {
	if len(frames) == 0 {
		return nil
	}
	deadline := time.Now().Add(c.s.cfg.WriteTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if c.cork == nil {
		ctx, cancel := context.WithDeadline(ctx, deadline)
		defer cancel()
		for _, f := range frames {
			if err := c.ws.Write(ctx, websocket.MessageText, f); err != nil {
				return err
			}
		}
		return nil
	}
	// Corked, the library's writes only fill memory (c.steady spares them
	// a timer each); the one network write is uncork's, under the deadline.
	c.cork.cork()
	var err error
	for _, f := range frames {
		if err = c.ws.Write(c.steady, websocket.MessageText, f); err != nil { //nolint:contextcheck // memory only; ctx's deadline is uncork's
			break
		}
	}
	if uerr := c.cork.uncork(deadline, c.s.cfg.WriteTimeout/2); err == nil {
		err = uerr
	}
	return err
}

// pingLoop checks the peer answers and keeps the presence entries alive.
func (c *conn) pingLoop() {
	t := time.NewTicker(c.s.cfg.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(c.ctx, c.s.cfg.PingTimeout)
		err := c.ws.Ping(ctx)
		cancel()
		if err != nil {
			c.fail(ClosePolicy, "no pong", false)
			return
		}
		c.refreshPresence()
	}
}

func (c *conn) refreshPresence() {
	if c.claims == nil {
		return
	}
	c.tablesMu.Lock()
	subs := make([]*hub.Subscription, 0, len(c.tables))
	for _, sub := range c.tables {
		subs = append(subs, sub)
	}
	c.tablesMu.Unlock()
	for _, sub := range subs {
		c.refreshAt(sub)
	}
}

// refreshAt keeps the connection's presence at sub's table alive, unless it
// stopped following the table meanwhile. Under presenceMu, an unjoin's
// Disconnect comes after this, never between the check and a Connect, so no
// entry outlives the subscription.
func (c *conn) refreshAt(sub *hub.Subscription) {
	c.presenceMu.Lock()
	defer c.presenceMu.Unlock()
	c.tablesMu.Lock()
	following := c.tables[sub.Table()] == sub
	c.tablesMu.Unlock()
	if !following || c.ctx.Err() != nil {
		return
	}
	err := c.s.deps.Presence.Refresh(c.ctx, sub.Table(), c.claims.PlayerID, c.id)
	switch {
	case errors.Is(err, presence.ErrNotPresent):
		// Swept while alive (this gateway stalled or lost Redis for longer
		// than its beats allow): the table may have been told the player
		// is away, so arrive again, which says back.
		c.arrived(c.ctx, sub)
	case err != nil:
		c.s.deps.Logger.Warn("ws: presence refresh failed", "table", sub.Table(), "err", err)
	}
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
