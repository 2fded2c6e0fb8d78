package e2e

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/pkg/redistest"
)

// The services' own configuration packages are internal to their modules,
// so the environment variables the stack sets besides pkg/daemon's are
// spelled here;
// TestStack_EverySettingIsOneTheServiceReads checks them against each
// binary's -help.
const (
	envGatewayAddr   = "PULKA_GATEWAY_ADDR"
	envSessionSecret = "PULKA_SESSION_SECRET"
	envInstance      = "PULKA_INSTANCE"
	envPresenceBeat  = "PULKA_PRESENCE_BEAT"
	envSignupsPerIP  = "PULKA_SIGNUPS_PER_IP"
	envLoginPerIP    = "PULKA_LOGIN_PER_IP"
	envWSRate        = "PULKA_WS_RATE"
	envWSBurst       = "PULKA_WS_BURST"
	envWSPerIP       = "PULKA_WS_PER_IP"
	envConnPerIP     = "PULKA_CONN_PER_IP"

	envLobbyName       = "PULKA_LOBBY_NAME"
	envScoringConsumer = "PULKA_SCORING_CONSUMER"

	envRunnerID        = "PULKA_RUNNER_ID"
	envMoveTimeout     = "PULKA_RUNNER_MOVE_TIMEOUT"
	envReconnectGrace  = "PULKA_RUNNER_RECONNECT_GRACE"
	envBotDelay        = "PULKA_RUNNER_BOT_DELAY"
	envSeedTimeout     = "PULKA_RUNNER_SEED_TIMEOUT"
	envHeartbeatTTL    = "PULKA_RUNNER_HEARTBEAT_TTL"
	envLeaseTTL        = "PULKA_RUNNER_LEASE_TTL"
	envPollInterval    = "PULKA_RUNNER_POLL_INTERVAL"
	envLeaderTTL       = "PULKA_RUNNER_LEADER_TTL"
	envReconcile       = "PULKA_RUNNER_RECONCILE_INTERVAL"
	envE2EBin          = "PULKA_E2E_BIN"       // prebuilt binaries (make build's bin/), skips the build
	envE2EKeepLogs     = "PULKA_E2E_KEEP_LOGS" // keep the services' log files after the run
	sessionSecretValue = "e2e-session-secret-0123456789abcdef0123456789abcdef"
)

// Timers of every stack: short enough that a timeout, a grace or a
// migration happens within a test, long enough that a loaded 2-core machine
// does not trip them by accident (tables whose players must never time out
// set their own move time in their settings).
const (
	moveTimeout    = 1500 * time.Millisecond
	reconnectGrace = 2 * time.Second
	botDelay       = 10 * time.Millisecond
	heartbeatTTL   = time.Second
	presenceBeat   = 200 * time.Millisecond
)

// binDir is where TestMain built the service binaries (one file each).
var binDir string

// shared is the stack most tests use; TestMain starts it before the tests
// and stops it after them. Tests that kill processes start their own.
var shared *stack

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if testing.Short() {
		fmt.Println("e2e: builds and runs every service; skipped under -short")
		return 0
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: redis-server is not installed (apt-get install redis-server)")
		return 1
	}
	dir, cleanup, err := buildServices()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer cleanup()
	binDir = dir
	shared, err = startStack("shared", 2)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: start the shared stack:", err)
		return 1
	}
	code := m.Run()
	if gwAbuse != nil { // started by the first gateway abuse test (abuse_gateway_test.go)
		gwAbuse.close(code != 0)
	}
	shared.close(code != 0)
	return code
}

// serviceNames are the binaries, by the name of their cmd directory.
var serviceNames = []string{"gateway", "lobby", "scoring", "table-runner"}

// buildServices compiles every service with one go build at the workspace
// root (packages compile in parallel and share the build cache), unless
// PULKA_E2E_BIN names a directory that holds them already.
func buildServices() (dir string, cleanup func(), err error) {
	if d := os.Getenv(envE2EBin); d != "" {
		for _, s := range serviceNames {
			if _, err := os.Stat(filepath.Join(d, s)); err != nil {
				return "", nil, fmt.Errorf("%s=%s: %w", envE2EBin, d, err)
			}
		}
		return d, func() {}, nil
	}
	dir, err = os.MkdirTemp("", "pulka-e2e-bin-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	args := []string{"build", "-o", dir + string(filepath.Separator)}
	for _, s := range serviceNames {
		args = append(args, "./services/"+s+"/cmd/"+s)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = ".."
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("go build: %w\n%s", err, out)
	}
	fmt.Printf("e2e: built %d services in %v\n", len(serviceNames), time.Since(start).Round(time.Millisecond))
	return dir, cleanup, nil
}

// service is one running service process.
type service struct {
	name    string
	binary  string
	env     []string // the service's own settings (NAME=value) the stack gave
	admin   string
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
	once    sync.Once
}

// stop sends SIGTERM and waits for the process, killing it after 10 s.
func (s *service) stop() {
	s.once.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	})
}

// kill sends SIGKILL: no snapshot, no lease release, no goodbye.
func (s *service) kill() {
	s.once.Do(func() {
		_ = s.cmd.Process.Signal(syscall.SIGKILL)
		<-s.exited
	})
}

// logTail returns the last n lines of the service's log.
func (s *service) logTail(n int) string {
	f, err := os.Open(s.logPath)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > 4*n {
			lines = lines[len(lines)-n:]
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// stack is Redis and every service, wired together on free loopback ports.
type stack struct {
	name     string
	dir      string
	redis    *redistest.Server
	rdb      *redis.Client
	base     string // the gateway's http://host:port
	mu       sync.Mutex
	services []*service
	runners  []*service
	nextID   int
	// gatewayEnv are settings of this stack's gateways besides the usual
	// ones (startStackWith).
	gatewayEnv []string
}

// startStack starts redis-server, the lobby, scoring, `runners`
// table-runners and the gateway, and waits until each is ready.
func startStack(name string, runners int) (*stack, error) {
	return startStackWith(name, runners, nil)
}

// startStackWith is startStack whose gateways get gatewayEnv (NAME=value)
// after the usual settings.
func startStackWith(name string, runners int, gatewayEnv []string) (*stack, error) {
	dir, err := os.MkdirTemp("", "pulka-e2e-"+name+"-")
	if err != nil {
		return nil, err
	}
	srv, err := redistest.Launch()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	s := &stack{name: name, dir: dir, redis: srv, rdb: srv.NewClient(), gatewayEnv: gatewayEnv}
	fail := func(err error) (*stack, error) {
		s.close(true)
		return nil, err
	}
	if _, err := s.start("lobby", "lobby", envLobbyName+"="+name+"-lobby"); err != nil {
		return fail(err)
	}
	if _, err := s.start("scoring", "scoring", envScoringConsumer+"="+name+"-scoring"); err != nil {
		return fail(err)
	}
	for range runners {
		if _, err := s.startRunner(); err != nil {
			return fail(err)
		}
	}
	if _, err := s.startGateway(); err != nil {
		return fail(err)
	}
	for _, svc := range s.all() {
		if err := waitReady(svc, 30*time.Second); err != nil {
			return fail(err)
		}
	}
	// The gateway's /readyz can answer before its HTTP server listens:
	// wait for the API itself.
	if err := waitHTTP(s.base+"/api/v1/me", 10*time.Second); err != nil {
		return fail(err)
	}
	return s, nil
}

// startGateway starts a gateway on a new port and makes it the stack's
// base; a test that killed the gateway starts another with it.
func (s *stack) startGateway() (*service, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	s.mu.Lock()
	s.nextID++
	instance := s.name + "-gateway-" + strconv.Itoa(s.nextID)
	s.mu.Unlock()
	env := []string{envGatewayAddr + "=" + addr,
		envSessionSecret + "=" + sessionSecretValue,
		envInstance + "=" + instance,
		// Every client of the tests comes from 127.0.0.1: the per-IP
		// limits would refuse the later tests' sessions.
		envSignupsPerIP + "=100000",
		envLoginPerIP + "=100000",
		envWSPerIP + "=100000",
		envConnPerIP + "=100000",
		envWSRate + "=200",
		envWSBurst + "=400",
		// A killed gateway is taken for dead after three beats.
		envPresenceBeat + "=" + presenceBeat.String(),
	}
	svc, err := s.start(instance, "gateway", append(env, s.gatewayEnv...)...)
	if err != nil {
		return nil, err
	}
	s.base = "http://" + addr
	return svc, nil
}

// startRunner starts one more table-runner with the stack's timers.
func (s *stack) startRunner() (*service, error) {
	s.mu.Lock()
	s.nextID++
	id := s.name + "-runner-" + strconv.Itoa(s.nextID)
	s.mu.Unlock()
	svc, err := s.start(id, "table-runner",
		envRunnerID+"="+id,
		envMoveTimeout+"="+moveTimeout.String(),
		envReconnectGrace+"="+reconnectGrace.String(),
		envBotDelay+"="+botDelay.String(),
		// Short, so that a hand whose clients send no seed is dealt soon.
		envSeedTimeout+"=300ms",
		envHeartbeatTTL+"="+heartbeatTTL.String(),
		envLeaderTTL+"=1s",
		envLeaseTTL+"=3s",
		envPollInterval+"=100ms",
		envReconcile+"=200ms",
	)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.runners = append(s.runners, svc)
	s.mu.Unlock()
	return svc, nil
}

// start runs one service binary with the base settings plus env.
func (s *stack) start(name, binary string, env ...string) (*service, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	svc := &service{
		name:    name,
		binary:  binary,
		env:     env,
		admin:   net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		logPath: filepath.Join(s.dir, name+".log"),
		exited:  make(chan struct{}),
	}
	logFile, err := os.Create(svc.logPath)
	if err != nil {
		return nil, err
	}
	svc.cmd = exec.Command(filepath.Join(binDir, binary))
	svc.cmd.Env = append(os.Environ(),
		daemon.EnvRedisAddr+"="+s.redis.Addr(),
		daemon.EnvAdminAddr+"="+svc.admin,
		daemon.EnvLogLevel+"=info",
		daemon.EnvShutdownTimeout+"=8s",
		daemon.EnvDrainDelay+"=0s",
	)
	svc.cmd.Env = append(svc.cmd.Env, env...)
	svc.cmd.Stdout, svc.cmd.Stderr = logFile, logFile
	if err := svc.cmd.Start(); err != nil {
		_ = logFile.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		_ = svc.cmd.Wait()
		_ = logFile.Close()
		close(svc.exited)
	}()
	s.mu.Lock()
	s.services = append(s.services, svc)
	s.mu.Unlock()
	return svc, nil
}

func (s *stack) all() []*service {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*service(nil), s.services...)
}

// runner returns the runner process with the given id, nil if none.
func (s *stack) runner(id string) *service {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.runners {
		if r.name == id {
			return r
		}
	}
	return nil
}

// close stops every service (gateway first, so no client writes to a
// stopped back end) and Redis; the logs stay on disk when keepLogs or
// PULKA_E2E_KEEP_LOGS is set.
func (s *stack) close(keepLogs bool) {
	svcs := s.all()
	var wg sync.WaitGroup
	for i := len(svcs) - 1; i >= 0; i-- {
		wg.Add(1)
		go func(svc *service) {
			defer wg.Done()
			svc.stop()
		}(svcs[i])
	}
	wg.Wait()
	_ = s.rdb.Close()
	s.redis.Stop()
	if keepLogs || os.Getenv(envE2EKeepLogs) != "" {
		fmt.Printf("e2e: the %s stack's service logs are in %s\n", s.name, s.dir)
		return
	}
	_ = os.RemoveAll(s.dir)
}

// dumpOnFailure registers a cleanup that, when t failed, prints the tail
// of each table's event log and of every service's log.
func (s *stack) dumpOnFailure(t *testing.T, tables ...*string) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for _, id := range tables {
			if *id != "" {
				t.Logf("event log tail of table %s:\n%s", *id, logTail(ctx, s.rdb, *id, 40))
			}
		}
		for _, svc := range s.all() {
			t.Logf("log tail of %s:\n%s", svc.name, svc.logTail(15))
		}
	})
}

// waitReady polls the service's /readyz until it answers 200.
func waitReady(svc *service, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	hc := &http.Client{Timeout: time.Second}
	var last string
	for {
		select {
		case <-svc.exited:
			return fmt.Errorf("%s exited while starting:\n%s", svc.name, svc.logTail(30))
		default:
		}
		resp, err := hc.Get("http://" + svc.admin + "/readyz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %v (last: %s)\n%s", svc.name, timeout, last, svc.logTail(30))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitHTTP polls url until the server answers at all.
func waitHTTP(url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	hc := &http.Client{Timeout: time.Second}
	for {
		resp, err := hc.Get(url)
		if err == nil {
			_ = resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %w", url, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freePort returns a loopback port nobody listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// errTimeout is returned by the waits of the helpers.
var errTimeout = errors.New("timed out")

// eventually polls cond every 20 ms until it holds or timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v after %v", what, errTimeout, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStack_EverySettingIsOneTheServiceReads: each environment variable the
// stack gives a service is one that service's -help names, so a typo (or a
// renamed setting) fails here instead of silently leaving a default — a
// one-minute move timer, say — under the tests. The session secret is
// read from the environment only and is not listed; the gateway refuses to
// start without it.
func TestStack_EverySettingIsOneTheServiceReads(t *testing.T) {
	t.Parallel()
	for _, svc := range shared.all() {
		out, err := exec.Command(filepath.Join(binDir, svc.binary), "-help").CombinedOutput()
		if err != nil {
			t.Fatalf("%s -help: %v\n%s", svc.binary, err, out)
		}
		for _, kv := range svc.env {
			name, _, _ := strings.Cut(kv, "=")
			if name != envSessionSecret && !strings.Contains(string(out), "(env "+name+")") {
				t.Errorf("%s: %s is not a setting of %s", svc.name, name, svc.binary)
			}
		}
	}
}
