package server

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"golang.org/x/time/rate"

	"github.com/pulka/pulka/pkg/daemon"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/lobbyclient"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/walletclient"
	"github.com/pulka/pulka/services/gateway/internal/apierr"
	"github.com/pulka/pulka/services/gateway/internal/auth"
	"github.com/pulka/pulka/services/gateway/internal/coins"
	"github.com/pulka/pulka/services/gateway/internal/connlimit"
	"github.com/pulka/pulka/services/gateway/internal/httpapi"
	"github.com/pulka/pulka/services/gateway/internal/hub"
	"github.com/pulka/pulka/services/gateway/internal/ports"
	"github.com/pulka/pulka/services/gateway/internal/presence"
	"github.com/pulka/pulka/services/gateway/internal/webui"
	"github.com/pulka/pulka/services/gateway/internal/ws"
)

// Parts are what a Server is built on besides its Config. Run makes them
// from the daemon; tests pass fakes for the lobby and the sheets.
type Parts struct {
	Redis  redis.UniversalClient
	Lobby  ports.LobbyCommands
	View   ports.LobbyView
	Sheets ports.Sheets
	// Wallet sends wallet commands (Run: a walletclient.Client). Without
	// it the wallet endpoints answer 503 and sockets get no balance.
	Wallet coins.Commands
	Logger *slog.Logger
	Tracer trace.TracerProvider
	Meter  metric.MeterProvider
	Now    func() time.Time
	// Argon2 overrides the password-hash cost (tests); zero: the default.
	Argon2 auth.Argon2Params
	// Hub and WS tune the fan-out and the WebSocket endpoint beyond Config.
	Hub hub.Options
	WS  ws.Config
	// Overloaded, when set, sheds new WebSocket upgrades while true (Run:
	// the file-descriptor gauge).
	Overloaded func() bool
	// Probes, when set, serves /healthz and /readyz on the public port too
	// (Run: the daemon's).
	Probes http.Handler
}

// Server is one gateway instance.
type Server struct {
	handler http.Handler
	ws      *ws.Server
	hub     *hub.Hub
	coins   *coins.Follower // nil without a wallet
	log     *slog.Logger
	proxies connlimit.Networks // TrustedProxies, parsed once
}

// New builds a gateway instance; Run its background loops and serve Handler.
func New(ctx context.Context, cfg *Config, p Parts) (*Server, error) {
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	if p.Tracer == nil {
		p.Tracer = tracenoop.NewTracerProvider()
	}
	if p.Meter == nil {
		p.Meter = metricnoop.NewMeterProvider()
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Argon2 == (auth.Argon2Params{}) {
		p.Argon2 = auth.DefaultArgon2()
	}
	proxies, err := connlimit.ParseNetworks(splitList(cfg.TrustedProxies))
	if err != nil {
		return nil, fmt.Errorf("gateway: trusted proxies: %w", err)
	}
	var previous [][]byte
	for _, s := range splitList(cfg.PreviousSecrets) {
		previous = append(previous, []byte(s))
	}
	signer, err := auth.NewSigner([]byte(cfg.SessionSecret), previous, cfg.SessionTTL, p.Now)
	if err != nil {
		return nil, err
	}
	hasher := auth.NewHasher(p.Argon2, cfg.HashConcurrency)
	accounts, err := auth.NewAccounts(ctx, p.Redis, hasher, p.Now)
	if err != nil {
		return nil, err
	}
	meter := p.Meter.Meter("github.com/pulka/pulka/services/gateway")
	if _, err := meter.Int64ObservableGauge("pulka_gateway_password_hashes_in_flight",
		metric.WithDescription("password hashes being computed now (at most hash-concurrency)"),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(int64(hasher.InFlight()))
			return nil
		})); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	if _, err := meter.Int64ObservableCounter("pulka_gateway_password_hash_busy",
		metric.WithDescription("logins and registrations refused 503 unavailable because every hash slot (hash-concurrency) stayed taken"),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(hasher.Busy())
			return nil
		})); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	signups, _ := meter.Int64Counter("pulka_gateway_signups",
		metric.WithDescription("guest sessions and registrations asked for, by result (allowed, or refused by signups-per-ip)"))
	loginRefused, _ := meter.Int64Counter("pulka_gateway_login_refused",
		metric.WithDescription("login attempts refused by a limit before any password check, by scope (ip, account_ip, account)"))
	login := auth.NewLoginGuard(accounts, p.Redis, auth.LoginLimits{PerIP: cfg.LoginPerIP, PerAccountIP: cfg.LoginPerAccountIP,
		PerAccount: cfg.LoginPerAccount, Window: cfg.LoginWindow, KnownFor: cfg.LoginKnownFor},
		func(scope string) { //nolint:contextcheck // a counter's callback: no caller's context to pass, the counter needs none
			loginRefused.Add(context.Background(), 1, metric.WithAttributes(attribute.String("scope", scope)))
		})
	if _, err := meter.Int64ObservableCounter("pulka_gateway_password_checks",
		metric.WithDescription("password hashes computed to check a login (what the login limits bound)"),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(accounts.PasswordChecks())
			return nil
		})); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	revocations := auth.NewRevocations(p.Redis, p.Now)
	tracer := p.Tracer.Tracer("github.com/pulka/pulka/services/gateway")

	ho := p.Hub
	ho.Logger, ho.Meter = p.Logger, meter
	ho.GoneCheck = cmp.Or(ho.GoneCheck, cfg.GoneCheckInterval)
	ho.TailerOptions = append(ho.TailerOptions, streams.WithLogger(p.Logger),
		streams.WithTracerProvider(p.Tracer), streams.WithMeterProvider(p.Meter))
	h := hub.New(p.Redis, ho)

	wc := p.WS
	wc.OriginPatterns = append(wc.OriginPatterns, splitList(cfg.AllowedOrigins)...)
	wc.ReadLimit = cmp.Or(wc.ReadLimit, int64(cfg.WSReadLimit))
	wc.SendQueueFrames = cmp.Or(wc.SendQueueFrames, cfg.WSSendQueue)
	wc.Rate = cmp.Or(wc.Rate, rate.Limit(cfg.WSRate))
	wc.Burst = cmp.Or(wc.Burst, cfg.WSBurst)
	wc.PingInterval = cmp.Or(wc.PingInterval, cfg.WSPingInterval)
	wc.MaxTables = cmp.Or(wc.MaxTables, cfg.WSMaxTables)
	wc.AckDelay = cmp.Or(wc.AckDelay, cfg.WSAckDelay)
	wc.PresenceBeat = cmp.Or(wc.PresenceBeat, cfg.PresenceBeat)
	wc.LobbyWindow = cmp.Or(wc.LobbyWindow, cfg.LobbyWindow)
	wc.LobbyInterval = cmp.Or(wc.LobbyInterval, cfg.LobbyInterval)
	wc.MaxPerPlayer = cmp.Or(wc.MaxPerPlayer, cfg.WSPerPlayer)
	wc.MaxPerIP = cmp.Or(wc.MaxPerIP, cfg.WSPerIP)
	wc.AuthTimeout = cmp.Or(wc.AuthTimeout, cfg.WSHelloTimeout)
	wc.SessionSweep = cmp.Or(wc.SessionSweep, cfg.SessionSweep)
	var (
		wallet   ports.Wallet
		follower *coins.Follower
		balances ws.Balances
	)
	if p.Wallet != nil {
		wallet = coins.New(p.Redis, p.Wallet, coins.Options{NewID: randomKey, Logger: p.Logger, Now: p.Now})
		follower = coins.NewFollower(p.Redis, p.Logger, meter, streams.WithLogger(p.Logger),
			streams.WithTracerProvider(p.Tracer), streams.WithMeterProvider(p.Meter))
		balances = follower
	}
	walletRequests, _ := meter.Int64Counter("pulka_gateway_wallet_requests",
		metric.WithDescription("wallet requests (open, balance, ledger, daily_bonus) by result (ok, refused, limited, error)"))
	view := p.View
	ping := wc.PingInterval
	if ping <= 0 {
		ping = 20 * time.Second
	}
	wsrv := ws.NewServer(wc, ws.Deps{
		Signer: signer, Hub: h,
		// Commands of many connections share pipelines: under load one
		// round trip carries many (a lone command still goes at once). The
		// batcher has no goroutine of its own, so it needs no stopping, and
		// it must outlive ctx: connections still draining at shutdown (after
		// ctx ends) may send a last command. The commands' bells carry the
		// command, so the table's runner need not read it back.
		Publisher: streams.NewPublisher(p.Redis, streams.WithEntryBells(), streams.WithTracerProvider(p.Tracer), streams.WithMeterProvider(p.Meter)).
			NewBatcher(context.WithoutCancel(ctx), 64, 4),
		// Entries outlive three missed refreshes (pings).
		Presence: presence.New(p.Redis, 3*ping, p.Now, presence.WithInstance(cfg.instanceName()), presence.WithRedisClock()),
		Lobby:    p.View, Logger: p.Logger, Tracer: tracer, Meter: meter, Now: p.Now,
		TableExists: func(ctx context.Context, id string) (bool, error) {
			if view == nil {
				return false, apierr.ErrUnavailable
			}
			if _, ok := view.Get(id); ok {
				return true, nil
			}
			_, err := view.Fetch(ctx, id) // private tables too: a read, it creates nothing
			var rej *apierr.LobbyRejection
			if errors.As(err, &rej) && rej.Reason == lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TABLE_NOT_FOUND {
				return false, nil
			}
			if err != nil {
				return false, errors.Join(apierr.ErrUnavailable, err) // Redis, not the client
			}
			return true, nil
		},
		Revocations: revocations,
		Overloaded:  p.Overloaded,
		Balances:    balances,
	})

	engine := gin.New()
	engine.Use(recovery(p.Logger), requestLog(p.Logger), traced(tracer)) //nolint:contextcheck // middleware use each request's context
	err = httpapi.Mount(engine, httpapi.Config{
		CookieName: wsrv.Config().CookieName, CookieSecure: cookieSecure(cfg.CookieSecure), CookieDomain: cfg.CookieDomain,
		AllowedOrigins: splitList(cfg.AllowedOrigins), TrustedProxies: proxies,
		LobbyTimeout: cfg.LobbyTimeout, WalletTimeout: cfg.WalletTimeout,
	}, httpapi.Deps{
		Signer: signer, Accounts: accounts, Login: login,
		Signups: auth.NewLimiter(p.Redis, "signup-ip", cfg.SignupsPerIP, cfg.SignupWindow),
		SignupCounted: func(result string) { //nolint:contextcheck // a counter's callback: no caller's context to pass, the counter needs none
			signups.Add(context.Background(), 1, metric.WithAttributes(attribute.String("result", result)))
		},
		Revocations: revocations,
		Lobby:       p.Lobby, View: p.View, Sheets: p.Sheets, Logger: p.Logger, Now: p.Now,
		NewID:  randomKey,
		Wallet: wallet, Bonuses: auth.NewLimiter(p.Redis, "bonus-account", cmp.Or(cfg.BonusPerAccount, 10), time.Hour),
		WalletCounted: func(op, result string) { //nolint:contextcheck // a counter's callback: no caller's context to pass, the counter needs none
			walletRequests.Add(context.Background(), 1, metric.WithAttributes(attribute.String("op", op), attribute.String("result", result)))
		},
	})
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	engine.GET("/ws", func(c *gin.Context) {
		// The client's address as gin found it (trusting only the
		// configured proxies), for the per-address socket limit.
		wsrv.ServeHTTP(c.Writer, ws.WithClientIP(c.Request, c.ClientIP()))
	})
	if p.Probes != nil {
		// Kubernetes probes the public port: the admin one is loopback
		// unless exposed on purpose.
		engine.GET("/healthz", gin.WrapH(p.Probes))
		engine.GET("/readyz", gin.WrapH(p.Probes))
	}
	engine.NoRoute(noRoute(cfg.StaticDir))
	engine.NoMethod(httpapi.NotFound)
	return &Server{handler: engine, ws: wsrv, hub: h, coins: follower, log: p.Logger, proxies: proxies}, nil
}

// Handler serves the API, the WebSocket and the web client.
func (s *Server) Handler() http.Handler { return s.handler }

// Run runs the hub, the balance follower and the presence beat
// (ws.Server.KeepPresence) until ctx is cancelled.
func (s *Server) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	presence := make(chan error, 1)
	go func() { presence <- s.ws.KeepPresence(ctx) }()
	balances := make(chan error, 1)
	go func() {
		if s.coins == nil {
			balances <- nil
			return
		}
		balances <- s.coins.Run(ctx)
	}()
	sessions := make(chan struct{})
	go func() { s.ws.WatchSessions(ctx); close(sessions) }()
	err := s.hub.Run(ctx)
	cancel()
	<-sessions
	return errors.Join(err, <-presence, <-balances)
}

// Shutdown closes every WebSocket with 1001 and waits for them.
func (s *Server) Shutdown(ctx context.Context) error { return s.ws.Shutdown(ctx) }

// Connections is the number of open WebSockets.
func (s *Server) Connections() int { return s.ws.Open() }

// noRoute answers unknown paths: JSON 404 under /api, the web client
// elsewhere (webui: index.html for client-side routes) — the one embedded in
// the binary, or the build in staticDir when one is set.
func noRoute(staticDir string) gin.HandlerFunc {
	web := webui.Handler()
	if staticDir != "" {
		web = webui.NewHandler(os.DirFS(staticDir))
	}
	return func(c *gin.Context) {
		if strings.HasPrefix(c.Request.URL.Path, "/api/") || (c.Request.Method != http.MethodGet && c.Request.Method != http.MethodHead) {
			httpapi.NotFound(c)
			return
		}
		web.ServeHTTP(c.Writer, c.Request)
	}
}

func recovery(log *slog.Logger) gin.HandlerFunc {
	return gin.CustomRecoveryWithWriter(io.Discard, func(c *gin.Context, err any) {
		log.ErrorContext(c.Request.Context(), "http: handler panicked", "err", fmt.Sprint(err), "path", c.Request.URL.Path)
		httpapi.Fail(c, errors.New("panic"))
	})
}

func requestLog(log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		level := slog.LevelDebug
		if c.Writer.Status() >= 500 {
			level = slog.LevelWarn
		}
		log.Log(c.Request.Context(), level, "http request", "method", c.Request.Method, "route", c.FullPath(),
			"status", c.Writer.Status(), "duration", time.Since(start), "ip", c.ClientIP())
	}
}

// traced starts a span per request, so lobby commands carry its context.
// It is named by the route ("POST /api/v1/tables/:id/sit"), not the path: a
// span name with table ids in it would be one name per table. Requests no
// route matched (the web client's files) are named by their method alone.
func traced(tr trace.Tracer) gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.URL.Path == "/ws" {
			c.Next() // a connection is not one operation: frames get spans
			return
		}
		name := c.Request.Method
		if route := c.FullPath(); route != "" {
			name += " " + route
		}
		ctx, span := tr.Start(c.Request.Context(), name, trace.WithSpanKind(trace.SpanKindServer))
		c.Request = c.Request.WithContext(ctx)
		c.Next()
		span.SetAttributes(attribute.Int("http.status_code", c.Writer.Status()))
		span.End()
	}
}

// Run is the gateway as a daemon service: it connects the lobby client, the
// lobby view and the sheet reader to the daemon's Redis, serves HTTPAddr
// until ctx is cancelled, then closes the WebSockets (1001) and drains.
func (c *Config) Run(ctx context.Context, d *daemon.Daemon) error {
	instance := c.instanceName()
	lc := lobbyclient.NewClient(d.Redis, lobbyclient.ClientOptions{Instance: instance, Timeout: c.LobbyTimeout,
		Logger: d.Logger, TracerProvider: d.Telemetry.TracerProvider})
	view := lobbyclient.NewView(d.Redis, lobbyclient.ViewOptions{Logger: d.Logger})
	wc := walletclient.NewClient(d.Redis, walletclient.Options{Instance: "gw-" + instance, Timeout: c.WalletTimeout,
		Logger: d.Logger, TracerProvider: d.Telemetry.TracerProvider})
	inner, err := net.Listen("tcp", c.HTTPAddr)
	if err != nil {
		return fmt.Errorf("gateway: listen %s: %w", c.HTTPAddr, err)
	}
	// Exempt is set once New has parsed the proxies; nothing is accepted
	// before Serve.
	ln := &connlimit.Listener{Listener: inner, PerIP: connlimit.NewCounter(c.ConnPerIP)}
	defer ln.Close() // hs.Shutdown closes it too; this is for the early returns
	fds := connlimit.NewFDGauge(float64(c.FDShedPercent)/100, ln.Open)
	ln.Full = fds.Full
	refusedConns, _ := d.Telemetry.MeterProvider.Meter("github.com/pulka/pulka/services/gateway").Int64Counter("pulka_gateway_conn_refused",
		metric.WithDescription("TCP connections closed at accept, by reason (overloaded: past the hard descriptor line; ip: over conn-per-ip)"))
	ln.Refused = func(reason string) { //nolint:contextcheck // a counter's callback: no caller's context to pass, the counter needs none
		refusedConns.Add(context.Background(), 1, metric.WithAttributes(attribute.String("reason", reason)))
	}
	s, err := New(ctx, c, Parts{
		Redis: d.Redis, Lobby: lobbyCommands{lc}, View: lobbyView{v: view, rdb: d.Redis},
		Sheets: sheets{scoringclient.NewReader(d.Redis)}, Wallet: wc, Logger: d.Logger,
		Tracer: d.Telemetry.TracerProvider, Meter: d.Telemetry.MeterProvider,
		Overloaded: fds.Overloaded, Probes: d.PublicProbeHandler(time.Second),
	})
	if err != nil {
		return err
	}
	ln.Exempt = s.proxies.Contains
	d.Logger.Info("gateway: file descriptors", "in_use", fds.InUse(), "shed_from", fds.Threshold(), "close_from", fds.HardLine())
	d.AddReadyCheck("lobby-view", func(context.Context) error {
		if !view.Loaded() {
			return errors.New("lobby view not loaded yet")
		}
		return nil
	})
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute,
		ErrorLog: slog.NewLogLogger(d.Logger.Handler(), slog.LevelWarn)}
	d.Logger.Info("gateway listening", "addr", ln.Addr().String(), "instance", instance)
	d.Started() // the port is open: /readyz may now say so

	bg, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	go fds.Run(bg, 250*time.Millisecond)
	for name, run := range map[string]func(context.Context) error{"hub": s.Run, "lobby-client": lc.Run, "lobby-view": view.Run, "wallet-client": wc.Run} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := run(bg); err != nil {
				errs <- fmt.Errorf("%s: %w", name, err)
			}
		}()
	}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errs <- fmt.Errorf("http: %w", err)
		}
	}()

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errs:
	}
	// Shut down: no new requests, WebSockets told we are going away, then
	// the loops stop. The daemon bounds all of it.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.ShutdownTimeout)
	defer cancel()
	shutdownErr := errors.Join(hs.Shutdown(sctx), s.Shutdown(sctx))
	stop()
	wg.Wait()
	return errors.Join(runErr, shutdownErr)
}

// cookieSecure maps the setting to httpapi's (Validate accepted it).
func cookieSecure(v string) string {
	switch v {
	case CookieSecureAlways:
		return httpapi.SecureAlways
	case CookieSecureNever:
		return httpapi.SecureNever
	}
	return httpapi.SecureAuto
}

func randomKey() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
