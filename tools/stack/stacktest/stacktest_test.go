package stacktest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/tools/stack"
)

func TestMain(m *testing.M) { os.Exit(Main(m, nil)) }

func TestRepoRoot_IsFoundFromAnyDirectoryOfTheRepository(t *testing.T) {
	root, err := RepoRoot(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{root, filepath.Join(root, "tools", "stack"), filepath.Join(root, "e2e")} {
		if got, err := RepoRoot(d); err != nil || got != root {
			t.Errorf("RepoRoot(%s) = %q, %v; want %s", d, got, err, root)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Errorf("the root %s has no go.work: %v", root, err)
	}
}

func TestRepoRoot_OutsideARepositoryIsAClearError(t *testing.T) {
	_, err := RepoRoot(t.TempDir())
	if !errors.Is(err, ErrNoRepository) {
		t.Fatalf("RepoRoot outside a repository: %v, want ErrNoRepository", err)
	}
}

// Every setting the plan and the harness give a service is one that
// service's -help names, so a setting given to the wrong service (or one
// the service stopped reading) fails here rather than leaving a default
// under every stack.
func TestStack_EverySettingIsOneTheServiceReads(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every service: skipped under -short")
	}
	w := stack.Wiring{RedisAddr: "127.0.0.1:1", Addr: "127.0.0.1:2", Secret: "s", LogLevel: "info", ShutdownTimeout: shutdownTimeout}
	backends, gw := w.Plan(1, make([]int, stack.Count(1)))
	for _, p := range append(backends, gw) {
		p.Env = append(p.Env, oneAddress()[p.Binary]...)
		unread, err := UnreadSettings(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range unread {
			t.Errorf("%s: %s is not a setting of %s", p.Name, name, p.Binary)
		}
	}
}

// A closed stack leaves nothing behind: every process it started (also
// one started later and one the test killed), its Redis and its logs are
// gone.
func TestStack_CloseLeavesNoProcessAndNoFile(t *testing.T) {
	s := Start(t, Options{Name: "close", Runners: 1})
	if _, err := s.Start(stack.TableRunner); err != nil {
		t.Fatal(err)
	}
	first := s.URL()
	gw, err := s.Start(stack.Gateway)
	if err != nil {
		t.Fatal(err)
	}
	if s.URL() == first || s.URL() != "http://"+gw.Serves {
		t.Errorf("URL %s after a second gateway on %s (the first on %s)", s.URL(), gw.Serves, first)
	}
	if r := s.Runner("runner-2"); r == nil || len(s.Of(stack.TableRunner)) != 2 {
		t.Fatalf("runner-2: %v, runners %v", r, s.Of(stack.TableRunner))
	}
	s.Of(stack.Lobby)[0].Kill()
	procs := s.Processes()
	if len(procs) != stack.Count(2)+1 {
		t.Fatalf("%d processes, want %d", len(procs), stack.Count(2)+1)
	}
	redisDir, redisAddr := s.RedisServer().Dir(), s.RedisServer().Addr()
	s.Close(false)
	for _, p := range procs {
		if err := syscall.Kill(p.Pid(), 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s (pid %d) still runs after Close", p.Name, p.Pid())
		}
	}
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr, MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Ping(t.Context()).Err(); err == nil {
		t.Errorf("the stack's Redis at %s still answers after Close", redisAddr)
	}
	for _, d := range []string{s.Dir(), redisDir} {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s is still there after Close: %v", d, err)
		}
	}
	if _, err := s.Start(stack.TableRunner); err == nil {
		t.Error("a closed stack started a process")
	}
}

// A process that could not bind a port the harness chose for it (another
// program took it between stack.FreePorts and the bind) is started again
// on new ports under the same name, its first tries' logs kept; one whose
// chosen port stays taken fails after portAttempts tries, naming the
// cause; only its last try, ended, stays among the stack's processes.
func TestStack_APortTakenBeforeTheBindIsChosenAgain(t *testing.T) {
	s := Start(t, Options{Name: "ports"})
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	taken := held.Addr().(*net.TCPAddr).Port
	// hand hands out the held port as the index-th port of the first
	// losing calls, then free ports; it counts the calls.
	hand := func(index, losing int) *int {
		calls := 0
		s.freePorts = func(n int, except ...int) ([]int, error) {
			calls++
			ports, err := stack.FreePorts(n, except...)
			if err == nil && calls <= losing {
				ports[index] = taken
			}
			return ports, err
		}
		return &calls
	}
	for _, c := range []struct {
		binary, name string
		index        int // 0: the admin port, 1: the gateway's
		addr         func(*Process) string
	}{
		{stack.TableRunner, "table-runner-1", 0, func(p *Process) string { return p.Admin }},
		{stack.Gateway, "gateway-2", 1, func(p *Process) string { return p.Serves }},
	} {
		t.Run(c.binary, func(t *testing.T) {
			calls := hand(c.index, portAttempts-1)
			p, err := s.Start(c.binary)
			if err != nil {
				t.Fatalf("Start with the port taken %d times: %v", portAttempts-1, err)
			}
			if *calls != portAttempts || p.Name != c.name || stack.PortOf(c.addr(p)) == taken {
				t.Errorf("%s on %s after %d choices; want %s, not port %d, after %d", p.Name, c.addr(p), *calls, c.name, taken, portAttempts)
			}
			if of := s.Of(c.binary); of[len(of)-1] != p || (c.binary == stack.TableRunner && len(of) != 1) {
				t.Errorf("the stack's %s processes: %v", c.binary, of)
			}
			for try := 1; try < portAttempts; try++ {
				log, err := os.ReadFile(filepath.Join(s.Dir(), c.name+".try"+strconv.Itoa(try)+".log"))
				if want := "127.0.0.1:" + strconv.Itoa(taken) + ": bind: address already in use"; err != nil || !strings.Contains(string(log), want) {
					t.Errorf("try %d's log (%v) does not say %q:\n%s", try, err, want, log)
				}
			}
		})
	}
	t.Run("always taken", func(t *testing.T) {
		calls := hand(0, portAttempts)
		before := len(s.Processes())
		_, err := s.Start(stack.TableRunner)
		if err == nil || !errors.Is(err, stack.ErrExited) || !strings.Contains(err.Error(), "address already in use") {
			t.Fatalf("Start with the port always taken: %v; want the runner's bind error", err)
		}
		procs := s.Processes()
		if *calls != portAttempts || len(procs) != before+1 {
			t.Fatalf("%d choices, %d processes (%d before); want %d, the last try's added", *calls, len(procs), before, portAttempts)
		}
		select {
		case <-procs[before].Exited():
		default:
			t.Errorf("%s, the last try, still runs", procs[before].Name)
		}
	})
}

func TestLocal_InterruptStopsTheLauncher(t *testing.T) {
	l := StartLocal(t, LocalOptions{Args: []string{"-runners", "1", "-log-level", "warn", "-stop-timeout", "5s"}})
	if err := l.Interrupt(time.Minute); err != nil {
		t.Fatalf("pulka-local after Ctrl-C: %v, want exit status 0", err)
	}
	if err := syscall.Kill(l.Pid(), 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("pulka-local (pid %d) still runs", l.Pid())
	}
}

// A launcher whose gateway cannot bind its address ends before it is ready
// with an error NewLocal starts it again for; any other failure is not.
func TestLocal_APortTakenBeforeTheBindIsALostPort(t *testing.T) {
	skipShort(t)
	bin, err := Binaries()
	if err != nil {
		t.Fatal(err)
	}
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	l, err := startLocal(LocalOptions{Args: []string{"-runners", "1", "-log-level", "warn"}}, bin, held.Addr().String())
	if err == nil {
		l.Close(false)
		t.Fatalf("pulka-local started with its gateway's address %s taken", held.Addr())
	}
	if !errors.Is(err, errLostPort) || !strings.Contains(err.Error(), held.Addr().String()) {
		t.Fatalf("pulka-local with its gateway's address taken: %v; want errLostPort naming %s", err, held.Addr())
	}
	if lostPort("gateway exited by itself (exit status 1)") {
		t.Error("an exit without a bind error is taken for a lost port")
	}
	if !lostPort("Warning: Could not create server TCP listening socket 127.0.0.1:6380: bind: Address already in use") {
		t.Error("redis-server's bind error is not taken for a lost port")
	}
}

func TestRetryLostPort_StartsAgainOnlyForALostPortAndAtMostAttemptsTimes(t *testing.T) {
	lost := fmt.Errorf("%w: gateway: bind: address already in use", errLostPort)
	other := errors.New("the gateway is not ready")
	for _, c := range []struct {
		name      string
		errs      []error // start's result at each call; nil once it starts
		wantCalls int
		wantErr   error
	}{
		{"started at once", []error{nil}, 1, nil},
		{"lost twice, then started", []error{lost, lost, nil}, 3, nil},
		{"lost every time", []error{lost, lost, lost, lost, lost}, 4, errLostPort},
		{"another failure is not retried", []error{other, nil}, 1, other},
		{"lost, then another failure", []error{lost, other, nil}, 2, other},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			v, err := retryLostPort(4, func() (int, error) {
				calls++
				if err := c.errs[calls-1]; err != nil {
					return 0, err
				}
				return calls, nil
			})
			if calls != c.wantCalls || (c.wantErr == nil) != (err == nil) || (c.wantErr != nil && !errors.Is(err, c.wantErr)) {
				t.Fatalf("%d calls, %v; want %d calls and %v", calls, err, c.wantCalls, c.wantErr)
			}
			if err == nil && v != calls {
				t.Errorf("the value of call %d was dropped: got %d", calls, v)
			}
			if err != nil && calls > 1 && !strings.Contains(err.Error(), fmt.Sprintf("%d earlier attempts lost a port", calls-1)) {
				t.Errorf("the error does not tell the earlier attempts: %v", err)
			}
		})
	}
}

// The binaries of checkouts no test used for a week go; the current
// checkout's, recent ones' and other files stay.
func TestPruneStale_DropsOnlyOtherCheckoutsUnusedForAWeek(t *testing.T) {
	parent := t.TempDir()
	now := time.Now()
	mk := func(name string, age time.Duration) string {
		p := filepath.Join(parent, name)
		if err := os.MkdirAll(filepath.Join(p, "sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p+".lock", nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
		return p
	}
	current := mk("current", 30*24*time.Hour)
	recent := mk("recent", 24*time.Hour)
	stale := mk("stale", 8*24*time.Hour)
	pruneStale(parent, current, now.Add(-staleBinAge))
	for p, want := range map[string]bool{current: true, current + ".lock": true, recent: true, recent + ".lock": true,
		stale: false, stale + ".lock": false} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists = %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}
