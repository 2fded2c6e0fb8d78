package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
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
)

// ErrNoRedisServer means redis-server is not on PATH.
var ErrNoRedisServer = errors.New("redistest: redis-server not found on PATH (install it: apt-get install redis-server)")

// Option changes how the server is started.
type Option func(*config)

type config struct {
	args         []string
	startTimeout time.Duration
	cluster      bool
	// member is a node of a multi-node cluster (StartCluster): started in
	// cluster mode, its slots given by the cluster, not by startProcess.
	member bool
}

// WithArgs appends redis-server command-line arguments, e.g.
// WithArgs("--maxmemory", "64mb"). Later arguments override earlier ones, so
// these win over the defaults.
func WithArgs(args ...string) Option {
	return func(c *config) { c.args = append(c.args, args...) }
}

// WithPersistence turns on the append-only file with an fsync before every
// reply, so that every write Redis acknowledged survives Kill and Restart.
func WithPersistence() Option {
	return WithArgs("--appendonly", "yes", "--appendfsync", "always")
}

// WithCluster starts the server in cluster mode as a one-node cluster that
// owns all 16384 slots. Multi-key commands are then refused across slots
// (CROSSSLOT) exactly as on a real cluster, so code meant for Redis Cluster
// can be tested with a redis.ClusterClient on Addr.
func WithCluster() Option {
	return func(c *config) {
		c.cluster = true
		c.args = append(c.args, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "5000")
	}
}

// WithStartTimeout bounds how long Start waits for the first PONG.
func WithStartTimeout(d time.Duration) Option {
	return func(c *config) { c.startTimeout = d }
}

// Server is one running (or killed) redis-server process.
type Server struct {
	cfg  config
	bin  string
	dir  string
	port int
	// ownsDir is set for servers made by Launch, whose directory Stop removes
	// (a test's directory belongs to t.TempDir).
	ownsDir bool

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	logPath string
	clients []*redis.Client
	closers []func() error
}

// Start launches a redis-server for the test and stops it (and closes every
// client made with Client) in t.Cleanup. It fails the test when the server
// cannot be started.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	dir := t.TempDir()
	s, err := launch(dir, opts...)
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	t.Cleanup(s.Stop)
	return s
}

// Launch starts a server outside a test (for measurement programs). The caller
// must call Stop, which also removes the server's directory.
func Launch(opts ...Option) (*Server, error) {
	dir, err := os.MkdirTemp("", "redistest-")
	if err != nil {
		return nil, fmt.Errorf("temp dir: %w", err)
	}
	s, err := launch(dir, opts...)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	s.ownsDir = true
	return s, nil
}

func launch(dir string, opts ...Option) (*Server, error) {
	cfg := config{startTimeout: 10 * time.Second}
	for _, o := range opts {
		o(&cfg)
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, ErrNoRedisServer
	}
	s := &Server{cfg: cfg, bin: bin, dir: dir, logPath: filepath.Join(dir, "redis.log")}
	// A port taken between "listen on :0" and redis-server's bind is a real
	// race on a busy machine: retry with a fresh port instead of failing.
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s.port = port
		if lastErr = s.startProcess(); lastErr == nil {
			return s, nil
		}
	}
	return nil, fmt.Errorf("start redis-server: %w", lastErr)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (s *Server) startProcess() error {
	args := []string{
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--dir", s.dir,
		"--save", "",
		"--appendonly", "no",
		"--daemonize", "no",
		"--protected-mode", "no",
		"--logfile", s.logPath,
		"--loglevel", "warning",
	}
	args = append(args, s.cfg.args...)
	cmd := exec.Command(s.bin, args...)
	cmd.Dir = s.dir
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("exec %s: %w", s.bin, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()

	if err := s.waitReady(exited); err != nil {
		_ = cmd.Process.Kill()
		<-exited
		return err
	}
	if s.cfg.cluster && !s.cfg.member {
		if err := s.assignAllSlots(exited); err != nil {
			_ = cmd.Process.Kill()
			<-exited
			return err
		}
	}
	return nil
}

// assignAllSlots makes the single node own every slot (unless nodes.conf
// from before a Restart already says so) and waits for cluster_state:ok.
func (s *Server) assignAllSlots(exited <-chan struct{}) error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1, PoolSize: 1})
	defer c.Close()
	ctx := context.Background()
	err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err()
	if err != nil && !strings.Contains(err.Error(), "already busy") {
		return fmt.Errorf("cluster addslotsrange: %w", err)
	}
	deadline := time.Now().Add(s.cfg.startTimeout)
	for {
		select {
		case <-exited:
			return fmt.Errorf("redis-server exited while forming the cluster: %s", s.logTail())
		default:
		}
		info, err := c.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cluster not ok within %s: %w %s", s.cfg.startTimeout, err, info)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *Server) waitReady(exited <-chan struct{}) error {
	deadline := time.Now().Add(s.cfg.startTimeout)
	probe := redis.NewClient(&redis.Options{
		Addr: s.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond,
		ReadTimeout: 500 * time.Millisecond, PoolSize: 1,
	})
	defer probe.Close()
	for {
		select {
		case <-exited:
			return fmt.Errorf("redis-server exited during start-up: %s", s.logTail())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		err := probe.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		// LOADING: the AOF is being replayed after a restart; keep waiting.
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on port %d did not answer PING within %s: %w; log: %s",
				s.port, s.cfg.startTimeout, err, s.logTail())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *Server) logTail() string {
	f, err := os.Open(s.logPath)
	if err != nil {
		return "(no log)"
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > 10 {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, " | ")
}

// Addr is host:port of the server.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Port is the server's TCP port.
func (s *Server) Port() int { return s.port }

// Dir is the server's working directory (where an AOF would live).
func (s *Server) Dir() string { return s.dir }

// Client returns a new go-redis client for the server, closed on cleanup.
// Extra options may tune it (the address is always the server's).
func (s *Server) Client(t testing.TB, tune ...func(*redis.Options)) *redis.Client {
	t.Helper()
	return s.NewClient(tune...)
}

// NewClient is Client without a testing.TB; Stop closes it.
func (s *Server) NewClient(tune ...func(*redis.Options)) *redis.Client {
	o := &redis.Options{Addr: s.Addr()}
	for _, f := range tune {
		f(o)
	}
	o.Addr = s.Addr()
	c := redis.NewClient(o)
	s.mu.Lock()
	s.clients = append(s.clients, c)
	s.mu.Unlock()
	return c
}

// Kill ends the server with SIGKILL, as a crash would: nothing is flushed
// beyond what the configured fsync policy already wrote.
func (s *Server) Kill() {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

// Restart kills the server if it is running and starts it again on the same
// port and directory, so clients reconnect to the same address and an AOF
// (see WithPersistence) is replayed.
func (s *Server) Restart() error {
	s.Kill()
	var err error
	// The old socket may linger briefly; bind failures are retried.
	for attempt := 0; attempt < 50; attempt++ {
		if err = s.startProcess(); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("restart redis-server on port %d: %w", s.port, err)
}

// ClusterClient returns a go-redis cluster client for a WithCluster server,
// closed on cleanup.
func (s *Server) ClusterClient(t testing.TB) *redis.ClusterClient {
	t.Helper()
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{s.Addr()}})
	s.mu.Lock()
	s.closers = append(s.closers, c.Close)
	s.mu.Unlock()
	return c
}

// Stop closes every client made by Client/NewClient and kills the server.
// It is safe to call more than once.
func (s *Server) Stop() {
	s.mu.Lock()
	clients, closers := s.clients, s.closers
	s.clients, s.closers = nil, nil
	s.mu.Unlock()
	for _, c := range clients {
		_ = c.Close()
	}
	for _, c := range closers {
		_ = c()
	}
	s.Kill()
	if s.ownsDir {
		_ = os.RemoveAll(s.dir)
	}
}
