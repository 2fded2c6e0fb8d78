package ws

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"golang.org/x/time/rate"

	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/apierr"
	"github.com/pulka/pulka/services/gateway/internal/auth"
	"github.com/pulka/pulka/services/gateway/internal/connlimit"
	"github.com/pulka/pulka/services/gateway/internal/hub"
	"github.com/pulka/pulka/services/gateway/internal/ports"
	"github.com/pulka/pulka/services/gateway/internal/presence"
)

// Close codes. 1001, 1008 and 1009 are RFC 6455's; the 4000s are Pulka's own.
const (
	CloseGoingAway     = websocket.StatusGoingAway       // server shutting down
	ClosePolicy        = websocket.StatusPolicyViolation // too many bad or too fast frames
	CloseTooBig        = websocket.StatusMessageTooBig   // frame over the hard limit
	CloseInternal      = websocket.StatusInternalError
	CloseUnauthorized  = websocket.StatusCode(4001) // no valid session
	CloseSlowConsumer  = websocket.StatusCode(4008) // the client did not read fast enough
	CloseAuthTimedOut  = websocket.StatusCode(4002) // no hello in time
	CloseSessionEnded  = websocket.StatusCode(4003) // the session expired or was revoked (logout)
	CloseTooManyConns  = websocket.StatusCode(4029) // the player holds too many connections already
	closeReasonSlow    = "too slow: send queue full"
	closeReasonRestart = "server shutting down"
)

// Config is the WebSocket endpoint's policy.
type Config struct {
	// OriginPatterns are the browser origins allowed besides the request's
	// own host (coder/websocket's AcceptOptions.OriginPatterns).
	OriginPatterns []string
	// ReadLimit is the largest frame handled; a larger one gets an error
	// frame. HardReadLimit closes the connection (1009).
	ReadLimit     int64
	HardReadLimit int64
	// SendQueueFrames and SendQueueBytes bound a connection's outbound
	// queue; a client that lets it fill up is disconnected (4008).
	SendQueueFrames int
	SendQueueBytes  int
	// Rate and Burst are the token bucket of frames a client may send.
	Rate  rate.Limit
	Burst int
	// MaxStrikes is how many refused frames in a row (bad, too big, too
	// fast) close the connection (1008).
	MaxStrikes int
	// PingInterval is how often the server pings; PingTimeout how long it
	// waits for the pong.
	PingInterval time.Duration
	PingTimeout  time.Duration
	// WriteTimeout bounds one frame write.
	WriteTimeout time.Duration
	// AckDelay is how long a command's ack may wait to leave in one write
	// with the next frame to the client (usually the table's answer); zero
	// writes it at once.
	AckDelay time.Duration
	// AuthTimeout is how long a connection without a cookie has to send
	// hello: an unauthenticated socket costs a descriptor, so not long.
	AuthTimeout time.Duration
	// MaxPerPlayer and MaxPerIP bound the connections one player, and one
	// client address (connlimit.Group), hold on this instance; a socket
	// counts against its address from the upgrade, authenticated or not.
	MaxPerPlayer int
	MaxPerIP     int
	// SessionSweep is how often the open connections' sessions are
	// checked against Redis's revocations (WatchSessions), for
	// announcements missed while the subscription was down.
	SessionSweep time.Duration
	// MaxTables is how many tables one connection may follow.
	MaxTables int
	// CookieName is the session cookie.
	CookieName string
	// PresenceBeat is how often this gateway says it is alive and sweeps
	// the connections of gateways silent for three beats (KeepPresence).
	PresenceBeat time.Duration
	// LobbyWindow is the most tables a lobby watch shows (the newest that
	// match the client's filter); a client may ask for fewer.
	LobbyWindow int
	// LobbyInterval gathers the lobby's changes for this long before a
	// watcher's window is brought up to date: a flood of changes costs a
	// watcher a few frames per second, not one per change.
	LobbyInterval time.Duration
	// AwayBurst and AwayEvery bound the away reports for one player at one
	// table (awayLimit): AwayBurst at once, then one an AwayEvery; the
	// others wait for their token, and a return cancels them.
	AwayBurst int
	AwayEvery time.Duration
}

// Defaults fills unset fields.
func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defd := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	if c.ReadLimit <= 0 {
		c.ReadLimit = 4 << 10
	}
	if c.HardReadLimit < c.ReadLimit {
		c.HardReadLimit = 16 * c.ReadLimit
	}
	def(&c.AwayBurst, DefaultAwayBurst)
	defd(&c.AwayEvery, DefaultAwayEvery)
	def(&c.SendQueueFrames, 1024)
	def(&c.SendQueueBytes, 1<<20)
	if c.Rate <= 0 {
		c.Rate = 20
	}
	def(&c.Burst, 40)
	def(&c.MaxStrikes, 20)
	defd(&c.PingInterval, 20*time.Second)
	defd(&c.PingTimeout, 10*time.Second)
	defd(&c.WriteTimeout, 10*time.Second)
	defd(&c.AuthTimeout, 5*time.Second)
	def(&c.MaxPerPlayer, 8)
	def(&c.MaxPerIP, 64)
	defd(&c.SessionSweep, 30*time.Second)
	defd(&c.PresenceBeat, 5*time.Second)
	def(&c.MaxTables, 8)
	def(&c.LobbyWindow, 100)
	defd(&c.LobbyInterval, 250*time.Millisecond)
	if c.CookieName == "" {
		c.CookieName = "pulka_session"
	}
	return c
}

// Publisher appends entries to streams: a *streams.Publisher, or a
// *streams.Batcher, which sends the connections' concurrent commands
// together in one pipeline.
type Publisher interface {
	Publish(ctx context.Context, e streams.Entry) (string, error)
}

// Balances follows accounts' balances for their connections.
type Balances interface {
	// Watch sends sink balance frames from now until stop is called.
	Watch(ctx context.Context, account string, sink hub.Sink) (stop func(), err error)
}

// Deps is what the endpoint talks to.
type Deps struct {
	Signer    *auth.Signer
	Hub       *hub.Hub
	Publisher Publisher
	Presence  *presence.Tracker
	// Lobby is optional: without it, lobby watching is refused.
	Lobby ports.LobbyView
	// TableExists says whether a table exists (the lobby's record): a join
	// of any other id is refused and touches nothing in Redis. Nil (unit
	// tests of the endpoint alone) lets every join through.
	TableExists func(ctx context.Context, tableID string) (bool, error)
	// Revocations, when set, refuses revoked sessions and closes their
	// sockets (WatchSessions).
	Revocations *auth.Revocations
	// Overloaded, when set and true, sheds new upgrades with 503 (the
	// process is near its file-descriptor limit: connlimit.FDGauge).
	Overloaded func() bool
	// Balances, when set, sends an account's connections its Domino Coin
	// balance after the welcome and on every change (coins.Follower).
	Balances Balances
	Logger   *slog.Logger
	Tracer   trace.Tracer
	Meter    metric.Meter
	Now      func() time.Time
}

// Server accepts and runs WebSocket connections.
type Server struct {
	cfg  Config
	deps Deps

	mu       sync.Mutex
	conns    map[*conn]struct{}
	byToken  map[string]map[*conn]struct{} // authenticated connections by token id
	perIP    *connlimit.Counter
	perPlay  *connlimit.Counter
	tables   *tableGate
	away     *awayLimit
	closing  bool
	closedBy map[websocket.StatusCode]int
	wg       sync.WaitGroup

	m metrics
}

type metrics struct {
	open   metric.Int64UpDownCounter
	closed metric.Int64Counter
	frames metric.Int64Counter
	// frameType holds frames' type attribute per client frame type, made
	// once: building it per frame was garbage on the hot path.
	frameType map[string]metric.AddOption
	refused   metric.Int64Counter
	presence  metric.Int64Counter
	// awayLimited counts the away reports awayLimit did not send at once,
	// by outcome (held, coalesced, cancelled).
	awayLimited metric.Int64Counter
	swept       metric.Int64Counter
	// lobbyFrames counts lobby_view and lobby_update frames sent, by type
	// and (views) why: watch, resync (the history ran out), batch (a window
	// changed too much for updates).
	lobbyFrames metric.Int64Counter
	// shed counts upgrades refused before they happened, by reason
	// (too_many_connections per ip or player, overloaded).
	shed metric.Int64Counter
	// sessionsEnded counts sockets closed because their session expired or
	// was revoked.
	sessionsEnded metric.Int64Counter
}

// NewServer makes the endpoint.
func NewServer(cfg Config, d Deps) *Server {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Tracer == nil {
		d.Tracer = tracenoop.NewTracerProvider().Tracer("")
	}
	if d.Meter == nil {
		d.Meter = noop.NewMeterProvider().Meter("")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	s := &Server{cfg: cfg.withDefaults(), deps: d, conns: map[*conn]struct{}{}, closedBy: map[websocket.StatusCode]int{},
		byToken: map[string]map[*conn]struct{}{}}
	s.perIP, s.perPlay = connlimit.NewCounter(s.cfg.MaxPerIP), connlimit.NewCounter(s.cfg.MaxPerPlayer)
	s.tables = newTableGate(d.TableExists, d.Now)
	s.away = newAwayLimit(s.cfg.AwayEvery, s.cfg.AwayBurst, func(ctx context.Context, table, player string) {
		if err := s.reportPresence(ctx, table, player, PresenceAway); err != nil {
			s.deps.Logger.Warn("ws: presence report failed", "table", table, "presence", PresenceAway, "err", err)
		}
	})
	s.m.open, _ = d.Meter.Int64UpDownCounter("pulka_gateway_ws_connections", metric.WithDescription("open WebSocket connections"))
	s.m.closed, _ = d.Meter.Int64Counter("pulka_gateway_ws_closed", metric.WithDescription("WebSocket connections closed, by close code"))
	s.m.frames, _ = d.Meter.Int64Counter("pulka_gateway_ws_frames", metric.WithDescription("client frames handled, by type"))
	s.m.frameType = map[string]metric.AddOption{}
	for _, t := range []string{wire.TypeHello, wire.TypeJoin, wire.TypeUnjoin, wire.TypeBid, wire.TypeTrump, wire.TypePlay,
		wire.TypeResign, wire.TypeLeave, wire.TypeSit, wire.TypePing, wire.TypeLobby, wire.TypeSeed} {
		s.m.frameType[t] = metric.WithAttributeSet(attribute.NewSet(attribute.String("type", t)))
	}
	s.m.refused, _ = d.Meter.Int64Counter("pulka_gateway_ws_refused", metric.WithDescription("client frames refused, by error code"))
	s.m.presence, _ = d.Meter.Int64Counter("pulka_gateway_presence_reports",
		metric.WithDescription("presence reports (away: a player's last connection to a table closed; back: the first came)"))
	s.m.awayLimited, _ = d.Meter.Int64Counter("pulka_gateway_presence_limited",
		metric.WithDescription("away reports not sent at once for a player who keeps leaving a table, by outcome (held until its token, coalesced with one held, cancelled by a return)"))
	s.m.lobbyFrames, _ = d.Meter.Int64Counter("pulka_gateway_lobby_frames",
		metric.WithDescription("lobby frames sent to watchers, by type (lobby_view, lobby_update) and reason (watch, resync, batch, change)"))
	s.m.swept, _ = d.Meter.Int64Counter("pulka_gateway_presence_swept",
		metric.WithDescription("connections of gateways that stopped beating, removed by this one"))
	s.m.shed, _ = d.Meter.Int64Counter("pulka_gateway_ws_shed",
		metric.WithDescription("WebSocket connections refused by a limit, by reason (too_many_connections with scope ip or player, overloaded)"))
	s.m.sessionsEnded, _ = d.Meter.Int64Counter("pulka_gateway_ws_sessions_ended",
		metric.WithDescription("WebSocket connections closed because their session expired or was revoked, by reason"))
	return s
}

// Config is the effective configuration (defaults filled).
func (s *Server) Config() Config { return s.cfg }

// Open is the number of open connections.
func (s *Server) Open() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Closed is how many connections were closed with code (the server's
// choice, or the client's when it closed first).
func (s *Server) Closed(code websocket.StatusCode) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closedBy[code]
}

// ServeHTTP upgrades the request and runs the connection until it closes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	closing := s.closing
	s.mu.Unlock()
	if closing {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	// Shed before anything else costs: near the descriptor limit every new
	// socket is one an existing player, the API or a probe may lack.
	if s.deps.Overloaded != nil && s.deps.Overloaded() {
		s.refuseUpgrade(r.Context(), w, connlimit.ErrOverloaded, "overloaded")
		return
	}
	ipKey := connlimit.Group(ClientIP(r))
	if !s.perIP.Acquire(ipKey) {
		s.refuseUpgrade(r.Context(), w, &connlimit.TooManyError{Scope: connlimit.ScopeIP, Limit: s.cfg.MaxPerIP}, "ip")
		return
	}
	// A session from the cookie or an Authorization header authenticates at
	// once; otherwise the first frame must be a hello. A bad (or revoked)
	// cookie is not fatal: the client may still send a good token.
	var claims *auth.Claims
	if tok := s.requestToken(r); tok != "" {
		if c, err := auth.VerifySession(r.Context(), s.deps.Signer, s.deps.Revocations, tok); err == nil {
			claims = &c
		}
	}
	if claims != nil && !s.perPlay.Acquire(claims.PlayerID) {
		s.perIP.Release(ipKey)
		s.refuseUpgrade(r.Context(), w, &connlimit.TooManyError{Scope: connlimit.ScopePlayer, Limit: s.cfg.MaxPerPlayer}, "player")
		return
	}
	release := func() {
		s.perIP.Release(ipKey)
		if claims != nil {
			s.perPlay.Release(claims.PlayerID)
		}
	}
	s.mu.Lock()
	closing = s.closing
	if !closing {
		s.wg.Add(1)
	}
	s.mu.Unlock()
	if closing {
		release()
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	cw := &corkingWriter{ResponseWriter: w}
	// The subprotocol chooses the connection's encoding (wire.EncodingOf):
	// binary protobuf for the clients that ask for it, JSON otherwise.
	ws, err := websocket.Accept(cw, r, &websocket.AcceptOptions{OriginPatterns: s.cfg.OriginPatterns, Subprotocols: wire.Subprotocols()})
	if err != nil {
		release()
		s.wg.Done()
		// Accept has answered (403 for a foreign origin, 400/426 otherwise).
		s.deps.Logger.Debug("ws: handshake refused", "err", err, "origin", r.Header.Get("Origin"))
		return
	}
	ws.SetReadLimit(s.cfg.HardReadLimit)
	c := newConn(s, ws, claims)
	c.ipKey, c.playerCounted = ipKey, claims != nil
	c.cork = cw.conn
	if !s.register(r.Context(), c) {
		release()
		s.wg.Done()
		_ = ws.Close(CloseGoingAway, closeReasonRestart)
		return
	}
	// The connection is served by a goroutine of its own and this handler
	// returns, which ends net/http's goroutine for the hijacked connection:
	// an idle connection then keeps a stack as deep as its read loop, not
	// one that also holds the HTTP server's and the middleware's frames.
	// After the hijack the request's context must not be used
	// (coder/websocket's Accept documentation), nor kept alive: the
	// connection has its own.
	go func() { //nolint:contextcheck // the connection's own context, as said above
		defer s.wg.Done()
		defer s.unregister(c.ctx, c)
		c.run()
	}()
}

// refuseUpgrade answers a request refused before its upgrade with the
// error's status and JSON body (apierr), counting it under reason.
func (s *Server) refuseUpgrade(ctx context.Context, w http.ResponseWriter, err error, reason string) {
	p := apierr.From(err)
	s.m.shed.Add(ctx, 1, metric.WithAttributes(attribute.String("reason", p.Code), attribute.String("scope", reason)))
	if p.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((p.RetryAfter+time.Second-1)/time.Second)))
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p.Body())
}

type clientIPKey struct{}

// WithClientIP records the client's address (as the HTTP layer found it,
// trusting only the configured proxies) for the per-address limits.
func WithClientIP(r *http.Request, ip string) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), clientIPKey{}, ip))
}

// ClientIP is the address WithClientIP recorded, else the peer's.
func ClientIP(r *http.Request) string {
	if ip, ok := r.Context().Value(clientIPKey{}).(string); ok && ip != "" {
		return ip
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func (s *Server) requestToken(r *http.Request) string {
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		return strings.TrimPrefix(h, "Bearer ")
	}
	if ck, err := r.Cookie(s.cfg.CookieName); err == nil {
		return ck.Value
	}
	return ""
}

func (s *Server) register(ctx context.Context, c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		return false
	}
	s.conns[c] = struct{}{}
	if c.claims != nil {
		s.rememberToken(c) //nolint:contextcheck // its expiry timer ends the session under the connection's own context
	}
	s.m.open.Add(ctx, 1)
	return true
}

func (s *Server) unregister(ctx context.Context, c *conn) {
	c.stopExpiry()
	s.mu.Lock()
	delete(s.conns, c)
	if c.claims != nil {
		s.forgetToken(c)
	}
	s.closedBy[c.closeCode()]++
	s.mu.Unlock()
	s.perIP.Release(c.ipKey)
	if c.playerCounted {
		s.perPlay.Release(c.claims.PlayerID)
	}
	ctx = context.WithoutCancel(ctx)
	s.m.open.Add(ctx, -1)
	s.m.closed.Add(ctx, 1, metric.WithAttributes(attribute.Int("code", int(c.closeCode()))))
}

// Shutdown closes every connection with 1001 (going away) and waits until
// they have finished, or ctx ends. New connections are refused from now on.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.fail(CloseGoingAway, closeReasonRestart, true)
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
		s.away.flush(context.WithoutCancel(ctx))
		return nil
	case <-ctx.Done():
		// Connections still closing report their players at once (the
		// limiter is closed): only the held ones are sent here.
		s.away.flush(context.WithoutCancel(ctx))
		return fmt.Errorf("ws: %d connections still open: %w", s.Open(), ctx.Err())
	}
}

func randomID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// errClosing is the cause of a connection context cancelled by fail.
var errClosing = errors.New("ws: connection closing")
