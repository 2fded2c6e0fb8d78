package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/pkg/redistest"
)

// syncBuffer collects the JSON logs of a daemon running in a goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func baseFor(srv *redistest.Server) daemon.Base {
	return daemon.Base{RedisAddr: srv.Addr(), AdminAddr: "127.0.0.1:0", ShutdownTimeout: 5 * time.Second}
}

// started runs a daemon in the background and waits until its admin server
// answers. stop cancels it and returns Run's error.
type started struct {
	d    *daemon.Daemon
	logs *syncBuffer
	stop func() error
	done chan error
}

func start(t *testing.T, cfg daemon.Base, run daemon.RunFunc) *started {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &started{logs: &syncBuffer{}, done: make(chan error, 1)}
	got := make(chan *daemon.Daemon, 1)
	go func() {
		s.done <- daemon.Run(ctx, daemon.Options{Name: "test", Config: cfg, LogWriter: s.logs},
			func(ctx context.Context, d *daemon.Daemon) error {
				d.Started()
				got <- d
				return run(ctx, d)
			})
	}()
	select {
	case s.d = <-got:
	case err := <-s.done:
		cancel()
		t.Fatalf("Run returned before the service started: %v", err)
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("service did not start")
	}
	var once sync.Once
	var err error
	s.stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-s.done:
			case <-time.After(30 * time.Second):
				err = errors.New("Run did not return within 30s")
			}
		})
		return err
	}
	t.Cleanup(func() { _ = s.stop() })
	return s
}

// untilCtx is a well-behaved service: it works until cancelled.
func untilCtx(ctx context.Context, _ *daemon.Daemon) error {
	<-ctx.Done()
	return nil
}

type probe struct {
	code int
	body map[string]any
}

func get(t *testing.T, addr, path string) probe {
	t.Helper()
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	p := probe{code: resp.StatusCode}
	b, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(b, &p.body); err != nil {
			t.Fatalf("GET %s: bad JSON %q: %v", path, b, err)
		}
	} else {
		p.body = map[string]any{"text": string(b)}
	}
	return p
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestReadyz_FollowsRedis(t *testing.T) {
	srv := redistest.Start(t)
	s := start(t, baseFor(srv), untilCtx)
	addr := s.d.AdminAddr()

	if p := get(t, addr, "/readyz"); p.code != http.StatusOK {
		t.Fatalf("with Redis up: /readyz %d %v", p.code, p.body)
	}
	srv.Kill()
	p := get(t, addr, "/readyz")
	if p.code != http.StatusServiceUnavailable {
		t.Fatalf("with Redis down: /readyz %d, want 503", p.code)
	}
	if checks, _ := p.body["checks"].(map[string]any); checks["redis"] == "ok" {
		t.Fatalf("with Redis down the redis check says ok: %v", p.body)
	}
	if h := get(t, addr, "/healthz"); h.code != http.StatusOK {
		t.Fatalf("a dependency being down must not fail liveness: /healthz %d", h.code)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "ready again after Redis restarted", func() bool { return get(t, addr, "/readyz").code == http.StatusOK })
	if err := s.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestReadyz_ServiceChecks(t *testing.T) {
	srv := redistest.Start(t)
	var warm atomic.Bool
	s := start(t, baseFor(srv), func(ctx context.Context, d *daemon.Daemon) error {
		d.AddReadyCheck("consumer", func(context.Context) error {
			if !warm.Load() {
				return errors.New("not reading yet")
			}
			return nil
		})
		<-ctx.Done()
		return nil
	})
	addr := s.d.AdminAddr()
	eventually(t, "the service's check to be registered", func() bool {
		p := get(t, addr, "/readyz")
		checks, _ := p.body["checks"].(map[string]any)
		return checks["consumer"] != nil
	})
	if p := get(t, addr, "/readyz"); p.code != http.StatusServiceUnavailable {
		t.Fatalf("failing service check: /readyz %d, want 503", p.code)
	}
	warm.Store(true)
	if p := get(t, addr, "/readyz"); p.code != http.StatusOK {
		t.Fatalf("passing checks: /readyz %d %v", p.code, p.body)
	}
	if err := s.d.Ready(context.Background()); err != nil {
		t.Fatalf("Ready: %v", err)
	}
}

func TestReadyz_SlowCheckTimesOut(t *testing.T) {
	srv := redistest.Start(t)
	s := start(t, baseFor(srv), func(ctx context.Context, d *daemon.Daemon) error {
		d.AddReadyCheck("stuck", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
		<-ctx.Done()
		return nil
	})
	eventually(t, "the stuck check to fail within the check timeout", func() bool {
		begin := time.Now()
		p := get(t, s.d.AdminAddr(), "/readyz")
		return p.code == http.StatusServiceUnavailable && time.Since(begin) < 2*daemon.CheckTimeout
	})
}

func TestShutdown_NotReadyDuringDrainDelayWhileServiceStillWorks(t *testing.T) {
	srv := redistest.Start(t)
	cfg := baseFor(srv)
	cfg.DrainDelay = 600 * time.Millisecond
	var serviceCancelled atomic.Bool
	s := start(t, cfg, func(ctx context.Context, _ *daemon.Daemon) error {
		<-ctx.Done()
		serviceCancelled.Store(true)
		return nil
	})
	addr := s.d.AdminAddr()
	if p := get(t, addr, "/readyz"); p.code != http.StatusOK {
		t.Fatalf("before shutdown: /readyz %d", p.code)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- s.stop() }()
	eventually(t, "readiness to drop on the stop signal", func() bool {
		return get(t, addr, "/readyz").code == http.StatusServiceUnavailable
	})
	if serviceCancelled.Load() {
		t.Fatal("the service was stopped before the drain delay passed")
	}
	if h := get(t, addr, "/healthz"); h.code != http.StatusOK {
		t.Fatalf("while draining: /healthz %d, want 200", h.code)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !serviceCancelled.Load() {
		t.Fatal("service context never cancelled")
	}
}

func TestShutdown_ReverseOrder(t *testing.T) {
	srv := redistest.Start(t)
	var mu sync.Mutex
	var steps []string
	step := func(s string) { mu.Lock(); steps = append(steps, s); mu.Unlock() }
	var rdb redis.UniversalClient
	s := start(t, baseFor(srv), func(ctx context.Context, d *daemon.Daemon) error {
		rdb = d.Redis
		d.OnShutdown("first", func(ctx context.Context) error {
			// Hooks run before Redis is closed, so they may still use it.
			if err := d.Redis.Ping(ctx).Err(); err != nil {
				return err
			}
			step("hook first")
			return nil
		})
		d.OnShutdown("second", func(context.Context) error { step("hook second"); return nil })
		<-ctx.Done()
		time.Sleep(100 * time.Millisecond) // draining in-flight work
		step("service drained")
		return nil
	})
	if err := s.stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []string{"service drained", "hook second", "hook first"}
	if strings.Join(steps, ",") != strings.Join(want, ",") {
		t.Fatalf("shutdown steps %v, want %v", steps, want)
	}
	if err := rdb.Ping(context.Background()).Err(); !errors.Is(err, redis.ErrClosed) {
		t.Fatalf("Redis client after Run: %v, want redis.ErrClosed", err)
	}
	if _, err := net.DialTimeout("tcp", s.d.AdminAddr(), time.Second); err == nil {
		t.Fatal("admin server still accepting after Run returned")
	}
	if !strings.Contains(s.logs.String(), `"msg":"stopped"`) {
		t.Fatalf("no clean stop logged:\n%s", s.logs.String())
	}
}

func TestShutdown_TimeoutBoundsAServiceThatDoesNotDrain(t *testing.T) {
	srv := redistest.Start(t)
	cfg := baseFor(srv)
	cfg.ShutdownTimeout = 300 * time.Millisecond
	release := make(chan struct{})
	defer close(release)
	var hookRan atomic.Bool
	s := start(t, cfg, func(_ context.Context, d *daemon.Daemon) error {
		d.OnShutdown("hook", func(context.Context) error { hookRan.Store(true); return nil })
		<-release // ignores its context
		return nil
	})
	begin := time.Now()
	err := s.stop()
	if !errors.Is(err, daemon.ErrShutdownTimeout) {
		t.Fatalf("want ErrShutdownTimeout, got %v", err)
	}
	if took := time.Since(begin); took > 3*time.Second {
		t.Fatalf("shutdown took %s with a 300ms timeout", took)
	}
	if !hookRan.Load() {
		t.Fatal("shutdown hooks skipped after the timeout")
	}
}

func TestRun_ServiceErrorEndsTheDaemon(t *testing.T) {
	srv := redistest.Start(t)
	boom := errors.New("boom")
	var rdb redis.UniversalClient
	err := daemon.Run(context.Background(), daemon.Options{Name: "t", Config: baseFor(srv), LogWriter: io.Discard},
		func(_ context.Context, d *daemon.Daemon) error { rdb = d.Redis; return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("want the service's error, got %v", err)
	}
	if err := rdb.Ping(context.Background()).Err(); !errors.Is(err, redis.ErrClosed) {
		t.Fatalf("Redis not closed after a failed service: %v", err)
	}
}

func TestRun_PanicBecomesAnError(t *testing.T) {
	srv := redistest.Start(t)
	err := daemon.Run(context.Background(), daemon.Options{Name: "t", Config: baseFor(srv), LogWriter: io.Discard},
		func(context.Context, *daemon.Daemon) error { panic("bug") })
	if err == nil || !strings.Contains(err.Error(), "panicked: bug") {
		t.Fatalf("want the panic as an error, got %v", err)
	}
}

func TestRun_InvalidConfigAndBusyAdminPort(t *testing.T) {
	srv := redistest.Start(t)
	called := false
	svc := func(context.Context, *daemon.Daemon) error { called = true; return nil }

	bad := baseFor(srv)
	bad.ShutdownTimeout = 0
	if err := daemon.Run(context.Background(), daemon.Options{Config: bad, LogWriter: io.Discard}, svc); !errors.Is(err, daemon.ErrConfig) {
		t.Fatalf("invalid config: want ErrConfig, got %v", err)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := baseFor(srv)
	busy.AdminAddr = ln.Addr().String()
	if err := daemon.Run(context.Background(), daemon.Options{Config: busy, LogWriter: io.Discard}, svc); err == nil {
		t.Fatal("admin port in use: want an error")
	}
	if called {
		t.Fatal("the service ran although the daemon could not start")
	}
}

func TestMetrics_ServesRedisPoolAndServiceMetrics(t *testing.T) {
	srv := redistest.Start(t)
	s := start(t, baseFor(srv), func(ctx context.Context, d *daemon.Daemon) error {
		c, err := d.Telemetry.Meter("test").Int64Counter("pulka.test.things")
		if err != nil {
			return err
		}
		c.Add(ctx, 3)
		<-ctx.Done()
		return nil
	})
	eventually(t, "metrics", func() bool {
		text, _ := get(t, s.d.AdminAddr(), "/metrics").body["text"].(string)
		return strings.Contains(text, "pulka_redis_pool_connections") && strings.Contains(text, "pulka_test_things_total")
	})
}

// A service is not ready before it says it has started, whatever its checks
// say: the launcher once reached the gateway's port before it was open.
func TestReadyz_NotReadyUntilTheServiceHasStarted(t *testing.T) {
	srv := redistest.Start(t)
	proceed := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan *daemon.Daemon, 1)
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.Options{Name: "slow", Config: baseFor(srv), LogWriter: io.Discard},
			func(ctx context.Context, d *daemon.Daemon) error {
				got <- d
				<-proceed
				d.Started()
				<-ctx.Done()
				return nil
			})
	}()
	d := <-got
	if p := get(t, d.AdminAddr(), "/readyz"); p.code != http.StatusServiceUnavailable {
		t.Fatalf("before Started: /readyz %d %v, want 503", p.code, p.body)
	}
	if err := d.Ready(context.Background()); !errors.Is(err, daemon.ErrStarting) {
		t.Fatalf("before Started: Ready() = %v, want ErrStarting", err)
	}
	close(proceed)
	eventually(t, "ready after Started", func() bool { return get(t, d.AdminAddr(), "/readyz").code == http.StatusOK })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestAdmin_ServesProfiles(t *testing.T) {
	srv := redistest.Start(t)
	s := start(t, baseFor(srv), untilCtx)
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap?debug=1", "/debug/pprof/goroutine?debug=1"} {
		if p := get(t, s.d.AdminAddr(), path); p.code != http.StatusOK {
			t.Errorf("%s: %d, want 200", path, p.code)
		}
	}
}

func TestAdminAddr_DefaultsToLoopback(t *testing.T) {
	host, _, err := net.SplitHostPort(daemon.DefaultAdminAddr)
	if err != nil {
		t.Fatal(err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		t.Fatalf("DefaultAdminAddr %q: /metrics and /debug/pprof must bind to loopback unless exposed on purpose", daemon.DefaultAdminAddr)
	}
}

// Changed on purpose (issue 17 review): the public probes answer only the
// status, and check readiness at most once per ttl.
func TestPublicProbeHandler_CachedStatusWithoutInternals(t *testing.T) {
	srv := redistest.Start(t)
	s := start(t, baseFor(srv), untilCtx)
	var checks atomic.Int64
	s.d.AddReadyCheck("counted", func(context.Context) error { checks.Add(1); return nil })
	const ttl = 300 * time.Millisecond
	pub := &http.Server{Handler: s.d.PublicProbeHandler(ttl), ReadHeaderTimeout: time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = pub.Serve(ln) }()
	t.Cleanup(func() { _ = pub.Close() })
	addr := ln.Addr().String()
	for _, path := range []string{"/healthz", "/readyz"} {
		if p := get(t, addr, path); p.code != http.StatusOK {
			t.Fatalf("public %s: %d %v", path, p.code, p.body)
		}
	}
	before := checks.Load()
	for range 50 {
		get(t, addr, "/readyz")
	}
	if n := checks.Load() - before; n > 2 {
		t.Fatalf("50 quick public /readyz ran the checks %d times, want at most one per %v", n, ttl)
	}
	if p := get(t, addr, "/metrics"); p.code != http.StatusNotFound {
		t.Fatalf("public /metrics: %d, want 404 (admin only)", p.code)
	}
	srv.Kill()
	eventually(t, "public /readyz says unavailable", func() bool {
		return get(t, addr, "/readyz").code == http.StatusServiceUnavailable
	})
	p := get(t, addr, "/readyz")
	if _, ok := p.body["checks"]; ok || p.body["status"] != "unavailable" {
		t.Fatalf("public /readyz body %v: want the status only (the checks' errors name Redis's address)", p.body)
	}
	if a := get(t, s.d.AdminAddr(), "/readyz"); a.body["checks"] == nil {
		t.Fatalf("admin /readyz lost its checks: %v", a.body)
	}
	_ = s.stop()
}

func TestAdmin_ProfilesOnlyOnLoopbackUnlessEnabled(t *testing.T) {
	for _, tc := range []struct {
		addr, pprof string
		want        bool
	}{
		{"127.0.0.1:9090", "", true}, {"127.0.0.1:9090", daemon.PProfLoopback, true}, {"localhost:9090", "", true},
		{"[::1]:9090", "", true}, {":9090", "", false}, {"0.0.0.0:9090", daemon.PProfLoopback, false},
		{"10.0.0.5:9090", "", false}, {":9090", daemon.PProfOn, true}, {"127.0.0.1:9090", daemon.PProfOff, false},
	} {
		b := daemon.Base{AdminAddr: tc.addr, PProf: tc.pprof}
		if got := b.ServePProf(); got != tc.want {
			t.Errorf("admin %s pprof %q: ServePProf = %v, want %v", tc.addr, tc.pprof, got, tc.want)
		}
	}
	srv := redistest.Start(t)
	cfg := baseFor(srv)
	cfg.PProf = daemon.PProfOff
	s := start(t, cfg, untilCtx)
	if p := get(t, s.d.AdminAddr(), "/debug/pprof/"); p.code != http.StatusNotFound {
		t.Fatalf("pprof off: /debug/pprof/ %d, want 404", p.code)
	}
	if p := get(t, s.d.AdminAddr(), "/metrics"); p.code != http.StatusOK {
		t.Fatalf("pprof off: /metrics %d, want 200", p.code)
	}
}
