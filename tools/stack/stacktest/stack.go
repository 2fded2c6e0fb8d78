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
	// Runners is the number of table runners the stack starts; 0 leaves
	// them to the test (StartRunner): the runners of the pods an operator
	// created, say, which it assigns the tables to.
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

	// freePorts chooses each process's ports (stack.FreePorts; a test of
	// the harness gives one that hands out a port it holds).
	freePorts func(n int, except ...int) ([]int, error)

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
	if o.Runners < 0 {
		return nil, fmt.Errorf("stacktest: %d runners", o.Runners)
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

		freePorts: stack.FreePorts,
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

// portAttempts bounds how often a process is started again because a port
// the harness chose for it was taken by another program (a parallel test
// package's connection, say) between stack.FreePorts and its bind.
const portAttempts = 4

// startReady starts a process of each binary, then waits until all of
// them are ready (at once: a process that dies is reported as soon as it
// does).
func (s *Stack) startReady(binaries ...string) ([]*Process, error) {
	return s.launch(binaries, make([]extra, len(binaries)))
}

// launch starts a process of binaries[i] with xs[i] for each i and waits
// until every one is ready, each numbered in the order given.
func (s *Stack) launch(binaries []string, xs []extra) ([]*Process, error) {
	ns := make([]int, len(binaries))
	for i, b := range binaries {
		n, err := s.next(b)
		if err != nil {
			return nil, err
		}
		ns[i] = n
	}
	started := make([]*Process, len(binaries))
	errs := make([]error, len(binaries))
	var wg sync.WaitGroup
	for i, b := range binaries {
		wg.Go(func() { started[i], errs[i] = s.run(b, ns[i], xs[i]) })
	}
	wg.Wait()
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

// run starts the n-th process of binary and waits until it is ready. A
// process that ends before it is ready because a port the harness chose
// was taken is started again — the same name and number, new ports — up
// to portAttempts times in all; its log is kept beside the new one.
func (s *Stack) run(binary string, n int, x extra) (*Process, error) {
	for attempt := 1; ; attempt++ {
		p, err := s.spawn(binary, n, x)
		if err != nil {
			return nil, err
		}
		err = awaitReady(p)
		if err == nil {
			return p, nil
		}
		if attempt == portAttempts || !errors.Is(err, stack.ErrExited) || !p.lostPort(x) {
			return nil, err
		}
		s.forget(p, attempt)
	}
}

// awaitReady waits until p is ready; the error carries the end of its log.
func awaitReady(p *Process) error {
	err := stack.WaitReady(context.Background(), p.Process, p.exited, readyTimeout)
	if errors.Is(err, stack.ErrExited) {
		return fmt.Errorf("%w (%s):\n%s", err, stack.ExitText(p.err), p.LogTail(30))
	} else if err != nil {
		return fmt.Errorf("%w\n%s", err, p.LogTail(30))
	}
	return nil
}

// lostPort says whether p, which has ended, could not bind an address the
// harness chose for it (its admin address unless the test gave the port;
// the gateway's address).
func (p *Process) lostPort(x extra) bool {
	var chosen []string
	if x.adminPort == 0 {
		chosen = append(chosen, p.Admin)
	}
	if p.Serves != "" {
		chosen = append(chosen, p.Serves)
	}
	log, err := os.ReadFile(p.logPath)
	if err != nil {
		return false
	}
	for _, addr := range chosen {
		if strings.Contains(string(log), addr+": "+addrInUse) {
			return true
		}
	}
	return false
}

// forget drops p, which ended before it was ready, from the stack's
// processes, and keeps its log as <name>.try<attempt>.log.
func (s *Stack) forget(p *Process, attempt int) {
	s.mu.Lock()
	s.procs = slices.DeleteFunc(s.procs, func(q *Process) bool { return q == p })
	s.mu.Unlock()
	_ = os.Rename(p.logPath, strings.TrimSuffix(p.logPath, ".log")+".try"+strconv.Itoa(attempt)+".log")
}

// RunnerSpec is a table runner a test starts itself (StartRunner): the
// runner of a pod, say, which a test playing the kubelet runs the way the
// pod's container would run.
type RunnerSpec struct {
	// ID is the runner's id (what the assignment names as a table's
	// owner): the pod's name.
	ID string
	// Env are more settings, after the stack's and the test's for every
	// runner (Options.Settings): the pod's environment.
	Env []string
	// Wrap is a command line the binary is run under, its path appended
	// ("ip netns exec NAME": the runner in the pod's network namespace);
	// the wrapper must exec the binary, so the process is the runner.
	Wrap []string
	// AdminHost is the address its admin server listens on and is asked
	// for readiness at (the pod's IP); empty: 127.0.0.1.
	AdminHost string
	// AdminPort is its admin server's port; 0: a free port of this host.
	AdminPort int
}

// StartRunner starts a table runner as spec says and waits until it is
// ready: a runner that is a member of the assignment.
func (s *Stack) StartRunner(spec RunnerSpec) (*Process, error) {
	if spec.ID == "" {
		return nil, errors.New("stacktest: a runner needs an id")
	}
	return s.startOne(stack.TableRunner, extra{id: spec.ID, env: spec.Env, wrap: spec.Wrap,
		adminHost: spec.AdminHost, adminPort: spec.AdminPort})
}

// StartProgram starts a program that is not one of the stack's services —
// the operator, which runs only beside a Kubernetes API server — from
// path, with the settings every service gets (the stack's Redis, an admin
// server on a free port, the log level) and env after them, and waits
// until its /readyz says it is ready. The stack stops it with the others.
func (s *Stack) StartProgram(path string, env []string) (*Process, error) {
	return s.startOne(filepath.Base(path), extra{dir: filepath.Dir(path), env: env})
}

func (s *Stack) startOne(binary string, x extra) (*Process, error) {
	started, err := s.launch([]string{binary}, []extra{x})
	if err != nil {
		return nil, err
	}
	return started[0], nil
}

// extra is what a test chose of one process beyond the stack's settings
// (StartRunner, StartProgram); its zero value is a service process as the
// stack runs it.
type extra struct {
	dir       string // the binary's directory ("": the stack's binaries)
	id        string // a runner's id ("": the plan's)
	env       []string
	wrap      []string
	adminHost string
	adminPort int
}

// next numbers the next process of binary (from 1); it fails once the
// stack is closed.
func (s *Stack) next(binary string) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, fmt.Errorf("stacktest: the %s stack is closed", s.name)
	}
	s.count[binary]++
	return s.count[binary], nil
}

// spawn runs the n-th process of binary on ports the harness chooses: the
// plan's settings, the harness's, the test's for every process of binary,
// then x's.
func (s *Stack) spawn(binary string, n int, x extra) (*Process, error) {
	ports, err := s.freePorts(2)
	if err != nil {
		return nil, err
	}
	adminHost, dir := "127.0.0.1", s.bin
	if x.adminHost != "" {
		adminHost = x.adminHost
	}
	if x.adminPort != 0 {
		ports[0] = x.adminPort
	}
	if x.dir != "" {
		dir = x.dir
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("stacktest: the %s stack is closed", s.name)
	}
	w := s.wiring
	if binary == stack.Gateway {
		w.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(ports[1]))
	}
	p := w.Process(binary, n, net.JoinHostPort(adminHost, strconv.Itoa(ports[0])))
	p.Env = slices.Concat(p.Env, s.settings[binary])
	if x.id != "" {
		p.ID = x.id
		p.Env = append(p.Env, envnames.RunnerID+"="+x.id)
	}
	p.Env = append(p.Env, x.env...)
	proc, err := start(p, dir, x.wrap, filepath.Join(s.dir, p.Name+".log"))
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
