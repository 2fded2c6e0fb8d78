package daemon

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/telemetry"
)

// ErrShutdownTimeout means the service did not drain within the shutdown
// timeout; the rest of the shutdown went ahead without waiting for it.
var ErrShutdownTimeout = errors.New("daemon: shutdown timed out")

// RunFunc is a service: it works until ctx is cancelled, then drains what it
// started and returns. Returning early ends the daemon (an error as a
// failure, nil as a normal stop).
type RunFunc func(ctx context.Context, d *Daemon) error

// Options describe one daemon for Run.
type Options struct {
	// Name is the service name (service.name in telemetry, the log's
	// "service" attribute).
	Name string
	// Version is the service version; Main reads it from the build info.
	Version string
	// Config is the validated base configuration.
	Config Base
	// LogWriter receives the JSON logs; nil means stderr.
	LogWriter io.Writer
	// SetGlobal installs the telemetry providers and logger process-wide;
	// Main sets it, tests and the local mode (several daemons in one
	// process) do not.
	SetGlobal bool
}

// Daemon is what a running service gets from the shell: its configuration,
// telemetry, Redis client, and the hooks to add readiness checks and
// shutdown steps.
type Daemon struct {
	// Name is the service name.
	Name string
	// Config is the base configuration.
	Config Base
	// Telemetry holds the tracer and meter providers and the propagator.
	Telemetry *telemetry.Telemetry
	// Logger writes JSON lines with trace ids.
	Logger *slog.Logger
	// Redis is the service's client; the daemon closes it after the service
	// has drained.
	Redis redis.UniversalClient

	adminAddr string
	mux       *http.ServeMux
	ready     readiness

	mu    sync.Mutex
	hooks []hook
}

type hook struct {
	name string
	fn   func(context.Context) error
}

// OnShutdown registers fn to run after the service's RunFunc has returned
// and before Redis is closed. Hooks run last registered first, like defers,
// each with the context bounded by what is left of the shutdown timeout.
func (d *Daemon) OnShutdown(name string, fn func(context.Context) error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.hooks = append(d.hooks, hook{name, fn})
}

// Started tells the daemon the service has finished starting: its
// listeners are open and its readiness checks registered. Until then
// /readyz answers 503 "starting", so nothing that waits for readiness (a
// load balancer, the local launcher, a test) reaches a port that is not yet
// open or a service whose own checks do not exist yet.
func (d *Daemon) Started() { d.ready.started.Store(true) }

// AddReadyCheck registers a check /readyz runs; the service is ready only
// while every check returns nil. Checks must be quick and honour ctx (each
// gets CheckTimeout).
func (d *Daemon) AddReadyCheck(name string, check func(ctx context.Context) error) {
	d.ready.add(name, check)
}

// Ready runs the readiness checks as /readyz does and returns their failures.
func (d *Daemon) Ready(ctx context.Context) error { return d.ready.check(ctx).err() }

// Handle adds an endpoint to the admin server (e.g. a debug page).
func (d *Daemon) Handle(pattern string, h http.Handler) { d.mux.Handle(pattern, h) }

// AdminAddr is the address the admin server listens on (with the real port
// when the configured one was 0).
func (d *Daemon) AdminAddr() string { return d.adminAddr }

// Main is the whole main function of a service except the exit:
//
//	func main() { os.Exit(daemon.Main("scoring", &cfg, run)) }
//
// It loads cfg from os.Args and the environment, runs the service until
// SIGINT or SIGTERM and returns the exit code: 0 after a clean stop (or
// -help), 2 for a configuration error, 1 when the service failed.
func Main(name string, cfg Config, run RunFunc) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return mainContext(ctx, name, cfg, os.Args[1:], os.Getenv, os.Stderr, run)
}

// mainContext is Main with its process dependencies passed in.
func mainContext(ctx context.Context, name string, cfg Config, args []string, getenv func(string) string,
	stderr io.Writer, run RunFunc) int {
	if err := Load(cfg, name, args, getenv, stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 2
	}
	if svc := getenv(telemetry.EnvServiceName); svc != "" {
		name = svc // the OpenTelemetry convention: the environment names the service
	}
	// Process-wide, so here and not in Run (the local mode runs several
	// daemons in one process).
	if limit, ok := GoMemoryLimit(cfg.BaseConfig().MemoryLimit, getenv("GOMEMLIMIT")); ok {
		debug.SetMemoryLimit(limit)
	}
	opts := Options{Name: name, Version: buildVersion(), Config: *cfg.BaseConfig(), LogWriter: stderr, SetGlobal: true}
	if err := Run(ctx, opts, run); err != nil {
		// Run has logged it as JSON; this line is for a human at a terminal.
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}

func buildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "devel"
}

// Run runs one service: telemetry, Redis and the admin server around run,
// until ctx is cancelled or run returns, then shuts everything down in
// reverse order within opts.Config.ShutdownTimeout. The error joins run's
// error with whatever failed during shutdown.
func Run(ctx context.Context, opts Options, run RunFunc) (err error) {
	cfg := opts.Config
	if err := cfg.Validate(); err != nil {
		return err
	}
	tel, err := telemetry.Setup(ctx, telemetry.Config{
		Service: opts.Name, Version: opts.Version, LogLevel: cfg.LogLevel, LogWriter: opts.LogWriter,
		OTLPEndpoint: cfg.OTLPEndpoint, OTLPTracesEndpoint: cfg.OTLPTracesEndpoint,
		Sampler: cfg.TracesSampler, SamplerArg: cfg.TracesSamplerArg, SetGlobal: opts.SetGlobal,
	})
	if err != nil {
		return fmt.Errorf("daemon: telemetry: %w", err)
	}
	log := tel.Logger
	if opts.SetGlobal {
		// go-redis logs pool trouble through a process-wide logger in its
		// own text format; route it into the JSON log.
		redis.SetLogger(redisLogger{log})
	}
	// Telemetry is flushed last, after everything that may still log or
	// record a span; its context must outlive the caller's cancelled one.
	defer func() {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if ferr := tel.Shutdown(fctx); ferr != nil {
			err = errors.Join(err, fmt.Errorf("daemon: flush telemetry: %w", ferr))
		}
	}()

	ropts, err := cfg.RedisOptions()
	if err != nil {
		return err
	}
	rdb := newRedisClient(ropts)
	if rerr := tel.Registerer().Register(newPoolCollector(rdb)); rerr != nil {
		_ = rdb.Close()
		return fmt.Errorf("daemon: redis pool metrics: %w", rerr)
	}
	d := &Daemon{Name: opts.Name, Config: cfg, Telemetry: tel, Logger: log, Redis: rdb, mux: http.NewServeMux()}
	d.AddReadyCheck("redis", func(ctx context.Context) error { return rdb.Ping(ctx).Err() })

	ln, err := net.Listen("tcp", cfg.AdminAddr)
	if err != nil {
		_ = rdb.Close()
		return fmt.Errorf("daemon: admin listener: %w", err)
	}
	d.adminAddr = ln.Addr().String()
	d.routes(tel.MetricsHandler(), cfg.BaseConfig().ServePProf())
	admin := &http.Server{Handler: d.mux, ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	adminErr := make(chan error, 1)
	go func() {
		if serr := admin.Serve(ln); serr != nil && !errors.Is(serr, http.ErrServerClosed) {
			adminErr <- serr
		}
	}()
	log.Info("started", "admin_addr", d.adminAddr, "redis_addr", cfg.RedisAddr, "version", opts.Version)

	// The service's context is separate from ctx: on a stop signal the
	// service keeps working through the drain delay, while /readyz already
	// says no, so that load balancers stop sending work first.
	runCtx, cancelRun := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRun()
	runDone := make(chan error, 1)
	go func() { runDone <- callRun(runCtx, d, run) }()

	var runErr, adminFailure error
	finished := false
	select {
	case <-ctx.Done():
		log.Info("stopping", "reason", context.Cause(ctx))
	case runErr = <-runDone:
		finished = true
		if runErr != nil {
			log.Error("service failed", "err", runErr)
		} else {
			log.Info("service stopped by itself")
		}
	case serr := <-adminErr:
		adminFailure = fmt.Errorf("daemon: admin server: %w", serr)
		log.Error("admin server failed", "err", serr)
	}

	// Shutdown in reverse order of start-up, all within one deadline:
	// stop accepting (not ready), drain the service, run its hooks, stop the
	// admin server, close Redis, flush telemetry (deferred above).
	d.ready.drain()
	shutCtx, cancelShut := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancelShut()
	if !finished && cfg.DrainDelay > 0 && adminFailure == nil {
		t := time.NewTimer(cfg.DrainDelay)
		select {
		case <-t.C:
		case runErr = <-runDone:
			finished = true
		case <-shutCtx.Done():
		}
		t.Stop()
	}
	cancelRun()
	if !finished {
		select {
		case runErr = <-runDone:
		case <-shutCtx.Done():
			log.Error("service did not drain in time", "timeout", cfg.ShutdownTimeout)
			runErr = fmt.Errorf("%w: the service was still draining after %s", ErrShutdownTimeout, cfg.ShutdownTimeout)
		}
	}
	errs := []error{runErr, adminFailure}
	errs = append(errs, d.runHooks(shutCtx))
	if serr := admin.Shutdown(shutCtx); serr != nil {
		errs = append(errs, fmt.Errorf("daemon: stop admin server: %w", serr))
		_ = admin.Close()
	}
	if cerr := rdb.Close(); cerr != nil {
		errs = append(errs, fmt.Errorf("daemon: close redis: %w", cerr))
	}
	err = errors.Join(errs...)
	if err != nil {
		log.Error("stopped with errors", "err", err)
	} else {
		log.Info("stopped")
	}
	return err
}

// callRun turns a panic in the service into an error, so that the shutdown
// still runs (telemetry flushed, Redis closed) before the process exits.
func callRun(ctx context.Context, d *Daemon, run RunFunc) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("daemon: service panicked: %v\n%s", r, debug.Stack())
		}
	}()
	return run(ctx, d)
}

// runHooks runs the shutdown hooks, last registered first.
func (d *Daemon) runHooks(ctx context.Context) error {
	d.mu.Lock()
	hooks := append([]hook(nil), d.hooks...)
	d.mu.Unlock()
	var errs []error
	for i := len(hooks) - 1; i >= 0; i-- {
		if err := hooks[i].fn(ctx); err != nil {
			d.Logger.Error("shutdown step failed", "step", hooks[i].name, "err", err)
			errs = append(errs, fmt.Errorf("daemon: shutdown %s: %w", hooks[i].name, err))
		}
	}
	return errors.Join(errs...)
}

// readiness holds the checks and whether the daemon is shutting down.
type readiness struct {
	mu       sync.Mutex
	checks   []namedCheck
	started  atomic.Bool
	draining atomic.Bool
}

type namedCheck struct {
	name string
	fn   func(context.Context) error
}

func (r *readiness) add(name string, fn func(context.Context) error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checks = append(r.checks, namedCheck{name, fn})
}

func (r *readiness) drain() { r.draining.Store(true) }

// redisLogger adapts go-redis' internal logging to slog.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...interface{}) {
	l.log.WarnContext(ctx, fmt.Sprintf(format, v...), "component", "go-redis")
}

// clusterReload bounds how long a cluster client keeps sending a slot's
// commands to a master that died: go-redis retries the dead node until it
// reloads the topology, which it does on a MOVED or once this interval
// passed (its default is a minute — a minute of failed commands after every
// failover). A reload is one CLUSTER SLOTS, asked only while commands flow.
const clusterReload = time.Second

// clusterRetries and clusterMaxBackoff let a cluster client ride out a
// failover: a command whose master died (a refused dial, EOF, CLUSTERDOWN) is
// tried again for about seven seconds in all — the replica's promotion takes
// cluster-node-timeout plus about a second, and clusterReload more to learn
// of it — instead of failing after go-redis's default three quick tries, when
// a player's move, say, would be refused. go-redis retries exactly these
// errors by default already; this only makes its tries last long enough for
// a failover.
const (
	clusterRetries    = 24
	clusterMaxBackoff = 500 * time.Millisecond
)

// newRedisClient is redis.NewUniversalClient with a cluster client's
// topology reloaded every clusterReload and its commands retried across a
// failover.
func newRedisClient(o *redis.UniversalOptions) redis.UniversalClient {
	if o.MasterName == "" && (len(o.Addrs) > 1 || o.IsClusterMode) {
		co := o.Cluster()
		co.ClusterStateReloadInterval = clusterReload
		co.MaxRedirects = clusterRetries
		co.MaxRetryBackoff = clusterMaxBackoff
		return redis.NewClusterClient(co)
	}
	return redis.NewUniversalClient(o)
}
