package stacktest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/envnames"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/tools/stack"
)

// Timing of the harness's own waits and of the services' shutdown.
const (
	readyTimeout    = time.Minute
	shutdownTimeout = 8 * time.Second // within Process.Stop's patience
)

// oneAddress are settings every stack gives: every client of a test comes
// from 127.0.0.1, so the gateway's per-address limits would refuse the
// later tests' sign-ups, logins, sockets and connections.
func oneAddress() map[string][]string {
	const lifted = "=100000"
	return map[string][]string{stack.Gateway: {
		envnames.SignupsPerIP + lifted,
		envnames.LoginPerIP + lifted,
		envnames.WSPerIP + lifted,
		envnames.ConnPerIP + lifted,
	}}
}

// Options are what a test chooses about its stack.
type Options struct {
	// Name tells the stack apart in log lines and in the name of its log
	// directory.
	Name string
	// Runners is the number of table runners (at least 1).
	Runners int
	// Settings are more settings (NAME=value, names from pkg/envnames) of
	// the processes of each service, by binary: a test's timers and limits.
	// They come after the plan's and the harness's, so they win.
	Settings map[string][]string
	// Cluster, when it has masters, runs the stack on a real multi-node
	// Redis Cluster (redistest.LaunchCluster) instead of one redis-server:
	// every service is given every node's address (PULKA_REDIS_ADDR as a
	// list), which makes its client a cluster client.
	Cluster Cluster
}

// Cluster is the shape of a stack's Redis Cluster.
type Cluster struct {
	// Masters is the number of masters (at least 3 for a real cluster; 0:
	// one redis-server, no cluster).
	Masters int
	// Replicas is the number of replicas of each master: at least 1 for a
	// test that fails a master over.
	Replicas int
}

// Stack is Redis and every service, each process started by the harness.
type Stack struct {
	name     string
	dir      string
	bin      string
	wiring   stack.Wiring
	settings map[string][]string
	redis    *redistest.Server  // nil on a cluster
	cluster  *redistest.Cluster // nil on one server
	rdb      redis.UniversalClient

	mu      sync.Mutex
	procs   []*Process
	count   map[string]int // processes started, by binary
	url     string         // the newest gateway's
	closed  bool
	closing sync.Once
}

// Start starts a stack for t and stops it when t ends, keeping its logs
// when t failed; it fails t when the stack cannot start.
func Start(t testing.TB, o Options) *Stack {
	t.Helper()
	skipShort(t)
	s, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(t.Failed()) })
	return s
}

var shared once[*Stack]

// Shared is the stack of this test binary named name, started by the first
// caller with o (later callers' o is not looked at) and stopped by Main
// after the tests; it fails t when the stack could not start.
func Shared(t testing.TB, name string, o Options) *Stack {
	t.Helper()
	return shared.forTest(t, name, func() (*Stack, error) { return New(o) })
}

// New starts a stack outside a test (a TestMain's setup): redis-server,
// then the lobby, scoring, the runners and the gateway, each on free
// loopback ports, and waits until each is ready. The caller closes it, or
// Main does after the tests.
func New(o Options) (*Stack, error) {
	if o.Runners < 1 {
		return nil, fmt.Errorf("stacktest: %d runners: a stack needs at least one", o.Runners)
	}
	if o.Name == "" {
		o.Name = "stack"
	}
	bin, err := Binaries()
	if err != nil {
		return nil, err
	}
	secret, err := stack.NewSecret()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pulka-stack-"+o.Name+"-")
	if err != nil {
		return nil, err
	}
	s := &Stack{
		name: o.Name, dir: dir, bin: bin,
		wiring: stack.Wiring{Secret: secret, LogLevel: "info", ShutdownTimeout: shutdownTimeout},
		count:  map[string]int{},
	}
	if o.Cluster.Masters > 0 {
		cl, err := redistest.LaunchCluster(o.Cluster.Masters, o.Cluster.Replicas)
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("stacktest: %w", err)
		}
		s.cluster, s.rdb = cl, cl.NewClient()
		s.wiring.RedisAddr = strings.Join(cl.Addrs(), ",")
	} else {
		srv, err := redistest.Launch()
		if err != nil {
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("stacktest: %w", err)
		}
		s.redis, s.rdb = srv, srv.NewClient()
		s.wiring.RedisAddr = srv.Addr()
	}
	s.settings = oneAddress()
	for b, env := range o.Settings {
		s.settings[b] = append(s.settings[b], env...)
	}
	register(s)
	// The plan's order: the back ends, all at once, then the gateway, whose
	// readiness waits for the lobby's view.
	var backends []string
	for _, b := range stack.Services() {
		switch b {
		case stack.Gateway:
		case stack.TableRunner:
			for range o.Runners {
				backends = append(backends, b)
			}
		default:
			backends = append(backends, b)
		}
	}
	if _, err := s.startReady(backends...); err != nil {
		s.Close(true)
		return nil, err
	}
	if _, err := s.startReady(stack.Gateway); err != nil {
		s.Close(true)
		return nil, err
	}
	return s, nil
}

// Start starts one more process of the service binary and waits until it
// is ready: another table runner, or a gateway on a new port, which
// becomes the stack's URL (after the test killed the first, say).
func (s *Stack) Start(binary string) (*Process, error) {
	started, err := s.startReady(binary)
	if err != nil {
		return nil, err
	}
	return started[0], nil
}

// startReady starts a process of each binary, then waits until all of
// them are ready (at once: a process that dies is reported as soon as it
// does).
func (s *Stack) startReady(binaries ...string) ([]*Process, error) {
	var started []*Process
	for _, b := range binaries {
		p, err := s.start(b)
		if err != nil {
			return nil, err
		}
		started = append(started, p)
	}
	errc := make(chan error, len(started))
	for _, p := range started {
		go func() {
			err := stack.WaitReady(context.Background(), p.Process, p.exited, readyTimeout)
			if errors.Is(err, stack.ErrExited) {
				err = fmt.Errorf("%w (%s):\n%s", err, stack.ExitText(p.err), p.LogTail(30))
			} else if err != nil {
				err = fmt.Errorf("%w\n%s", err, p.LogTail(30))
			}
			errc <- err
		}()
	}
	var errs []error
	for range started {
		errs = append(errs, <-errc)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("stacktest: the %s stack: %w", s.name, err)
	}
	for _, p := range started {
		if p.Binary == stack.Gateway {
			s.mu.Lock()
			s.url = "http://" + p.Serves
			s.mu.Unlock()
		}
	}
	return started, nil
}

// start runs the next process of binary: the plan's settings, the
// harness's, then the test's.
func (s *Stack) start(binary string) (*Process, error) {
	ports, err := stack.FreePorts(2)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, fmt.Errorf("stacktest: the %s stack is closed", s.name)
	}
	s.count[binary]++
	n := s.count[binary]
	s.mu.Unlock()
	w := s.wiring
	if binary == stack.Gateway {
		w.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))
	}
	p := w.Process(binary, n, net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[0])))
	p.Env = slices.Concat(p.Env, s.settings[binary])
	proc, err := start(p, s.bin, filepath.Join(s.dir, p.Name+".log"))
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.procs = append(s.procs, proc)
	s.mu.Unlock()
	return proc, nil
}

// Name is the stack's name (Options.Name).
func (s *Stack) Name() string { return s.name }

// URL is the gateway's base URL, http://127.0.0.1:<port>: the newest
// gateway's once Start started another.
func (s *Stack) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.url
}

// Redis is a client of the stack's Redis (closed with the stack), for the
// checks that look at what an operator sees: a cluster client on a
// cluster.
func (s *Stack) Redis() redis.UniversalClient { return s.rdb }

// RedisServer is the stack's redis-server, to kill or restart it; nil on a
// cluster (see RedisCluster).
func (s *Stack) RedisServer() *redistest.Server { return s.redis }

// RedisCluster is the stack's Redis Cluster, to fail a master over; nil on
// one redis-server.
func (s *Stack) RedisCluster() *redistest.Cluster { return s.cluster }

// Processes are every process the stack started, in order, stopped or
// killed ones too.
func (s *Stack) Processes() []*Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.procs)
}

// Of are the processes of the service binary, in order.
func (s *Stack) Of(binary string) []*Process {
	var out []*Process
	for _, p := range s.Processes() {
		if p.Binary == binary {
			out = append(out, p)
		}
	}
	return out
}

// Runner is the table runner whose id (its ID, what the assignment names
// as a table's owner) is id; nil if none.
func (s *Stack) Runner(id string) *Process {
	for _, p := range s.Of(stack.TableRunner) {
		if p.ID == id {
			return p
		}
	}
	return nil
}

// Dir is the directory of the stack's logs.
func (s *Stack) Dir() string { return s.dir }

// Close stops every process — the gateways first, so no client writes to
// a stopped back end, then the rest at once — and Redis, and removes the
// logs unless keepLogs or PULKA_E2E_KEEP_LOGS is set (then it prints where
// they are).
func (s *Stack) Close(keepLogs bool) {
	s.closing.Do(func() {
		unregister(s)
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		procs := s.Processes()
		stopAll := func(gateways bool) {
			var wg sync.WaitGroup
			for _, p := range procs {
				if (p.Binary == stack.Gateway) == gateways {
					wg.Go(p.Stop)
				}
			}
			wg.Wait()
		}
		stopAll(true)
		stopAll(false)
		_ = s.rdb.Close()
		if s.redis != nil {
			s.redis.Stop()
		}
		if s.cluster != nil {
			s.cluster.Stop()
		}
		if keepLogs || os.Getenv(EnvKeepLogs) != "" {
			fmt.Fprintf(os.Stderr, "stacktest: the %s stack's logs are in %s\n", s.name, s.dir)
			return
		}
		_ = os.RemoveAll(s.dir)
	})
}
