package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/pprof"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// CheckTimeout bounds one readiness check: a probe must answer before the
// kubelet's own timeout (1 s by default) gives up on it.
const CheckTimeout = 800 * time.Millisecond

// ErrDraining is the readiness failure of a daemon that is shutting down.
var ErrDraining = errors.New("daemon: shutting down")

// ErrStarting is the readiness failure of a service that has not yet called
// Daemon.Started.
var ErrStarting = errors.New("daemon: starting")

// status is the JSON body of /healthz and /readyz.
type status struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks,omitempty"`
}

// checkResult is the outcome of every readiness check.
type checkResult struct {
	failed map[string]error
	names  []string
}

func (c checkResult) err() error {
	if len(c.failed) == 0 {
		return nil
	}
	names := make([]string, 0, len(c.failed))
	for n := range c.failed {
		names = append(names, n)
	}
	sort.Strings(names)
	errs := make([]error, 0, len(names))
	for _, n := range names {
		errs = append(errs, fmt.Errorf("%s: %w", n, c.failed[n]))
	}
	return errors.Join(errs...)
}

// check runs every check concurrently, each bounded by CheckTimeout.
func (r *readiness) check(ctx context.Context) checkResult {
	r.mu.Lock()
	checks := append([]namedCheck(nil), r.checks...)
	r.mu.Unlock()
	res := checkResult{failed: map[string]error{}}
	if !r.started.Load() {
		res.names = append(res.names, "started")
		res.failed["started"] = ErrStarting
	}
	if r.draining.Load() {
		res.names = append(res.names, "shutdown")
		res.failed["shutdown"] = ErrDraining
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range checks {
		res.names = append(res.names, c.name)
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, CheckTimeout)
			defer cancel()
			if err := c.fn(cctx); err != nil {
				mu.Lock()
				res.failed[c.name] = err
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return res
}

func (d *Daemon) routes(metrics http.Handler, pprofOn bool) {
	d.probes(d.mux)
	d.mux.Handle("GET /metrics", metrics)
	if !pprofOn {
		return
	}
	// Profiles on the admin port only (never the public one), and there
	// only on loopback unless enabled (Base.ServePProf): measuring before
	// optimising needs them in the running services. Registered by hand so
	// nothing lands on http.DefaultServeMux.
	d.mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	d.mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	d.mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	d.mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	d.mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
}

// PublicProbeHandler serves /healthz and /readyz for a service that also
// offers them on its public port (with the admin server on loopback, a
// probe from outside the host reaches them there). They run the admin
// server's checks, but the
// readiness is checked at most once per ttl whatever the request rate (a
// probe flood must not become a Redis flood), and only the status is
// answered, never the checks' errors (they name internal addresses).
func (d *Daemon) PublicProbeHandler(ttl time.Duration) http.Handler {
	var mu sync.Mutex
	var at time.Time
	var ready bool
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeStatus(w, http.StatusOK, status{Status: "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		// Callers wait on the lock while one of them checks: one check at
		// a time, bounded by CheckTimeout.
		mu.Lock()
		if at.IsZero() || time.Since(at) >= ttl {
			ready = len(d.ready.check(context.WithoutCancel(r.Context())).failed) == 0
			at = time.Now()
		}
		ok := ready
		mu.Unlock()
		if !ok {
			writeStatus(w, http.StatusServiceUnavailable, status{Status: "unavailable"})
			return
		}
		writeStatus(w, http.StatusOK, status{Status: "ok"})
	})
	return mux
}

func (d *Daemon) probes(mux *http.ServeMux) {
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		// Alive means the process answers: a failing dependency is a
		// readiness problem, and restarting us would not fix it.
		writeStatus(w, http.StatusOK, status{Status: "ok"})
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		res := d.ready.check(r.Context())
		st := status{Status: "ok", Checks: make(map[string]string, len(res.names))}
		for _, n := range res.names {
			st.Checks[n] = "ok"
			if err := res.failed[n]; err != nil {
				st.Checks[n] = err.Error()
			}
		}
		code := http.StatusOK
		if len(res.failed) > 0 {
			st.Status, code = "unavailable", http.StatusServiceUnavailable
		}
		writeStatus(w, code, st)
	})
}

func writeStatus(w http.ResponseWriter, code int, st status) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(st)
}

// poolCollector exports the Redis client's connection-pool counters, which
// tell a saturated pool (timeouts, waits) from a slow Redis.
type poolCollector struct {
	rdb                                  redis.UniversalClient
	hits, misses, timeouts, waits, stale *prometheus.Desc
	total, idle, pending                 *prometheus.Desc
}

func newPoolCollector(rdb redis.UniversalClient) *poolCollector {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc("pulka_redis_pool_"+name, help, nil, nil)
	}
	return &poolCollector{
		rdb:      rdb,
		hits:     d("hits_total", "Times a free connection was found in the pool."),
		misses:   d("misses_total", "Times no free connection was found in the pool."),
		timeouts: d("timeouts_total", "Times waiting for a connection timed out."),
		waits:    d("waits_total", "Times a caller waited for a connection."),
		stale:    d("stale_connections_total", "Stale connections removed from the pool."),
		total:    d("connections", "Connections in the pool."),
		idle:     d("idle_connections", "Idle connections in the pool."),
		pending:  d("pending_requests", "Requests waiting for a connection."),
	}
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.hits, c.misses, c.timeouts, c.waits, c.stale, c.total, c.idle, c.pending} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.rdb.PoolStats()
	counter := func(d *prometheus.Desc, v uint32) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v))
	}
	gauge := func(d *prometheus.Desc, v uint32) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v))
	}
	counter(c.hits, s.Hits)
	counter(c.misses, s.Misses)
	counter(c.timeouts, s.Timeouts)
	counter(c.waits, s.WaitCount)
	counter(c.stale, s.StaleConns)
	gauge(c.total, s.TotalConns)
	gauge(c.idle, s.IdleConns)
	gauge(c.pending, s.PendingRequests)
}
