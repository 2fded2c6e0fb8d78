package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// repoRoot is the repository root (where go.work is), from this package's
// directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Fatalf("no go.work at %s: %v", root, err)
	}
	return root
}

// TestLocal_RunsAllOfPulkaAndStopsOnCtrlC builds the launcher and every
// service as make build does and, for each Redis the launcher can start (a
// real redis-server and the embedded server; one body for both), runs the
// launcher, talks to the gateway as a browser on this machine would, plays
// whole games through every service (a classic game with bots, a Japanese
// match of two players), and stops it with Ctrl-C (SIGINT).
func TestLocal_RunsAllOfPulkaAndStopsOnCtrlC(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every service and runs all of Pulka: skipped under -short")
	}
	root := repoRoot(t)
	bin := t.TempDir()
	// One go build of every package at the workspace root: the packages
	// compile in parallel and share the build cache with make build.
	pkgs := []string{"./pkg/cmd/pulka-local"}
	for _, s := range serviceBinaries() {
		pkgs = append(pkgs, "./services/"+s+"/cmd/"+s)
	}
	build := exec.Command("go", append([]string{"build", "-o", bin + string(filepath.Separator)}, pkgs...)...)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	t.Run("every setting the launcher gives is one the service reads", func(t *testing.T) {
		checkSettingsAgainstHelp(t, bin)
	})
	for _, b := range []struct {
		name string
		// real: the machine's redis-server, which must be installed.
		real bool
		args []string
		// about is what the summary must say the Redis is, so that a run
		// meant for one Redis never passes on the other.
		about string
	}{
		{name: "redis-server", real: true, about: "redis-server"},
		{name: "embedded Redis", args: []string{"-embedded-redis"}, about: "embedded (miniredis)"},
	} {
		t.Run(b.name, func(t *testing.T) {
			if b.real {
				if _, err := exec.LookPath("redis-server"); err != nil {
					t.Fatal("redis-server is not installed (apt-get install redis-server)")
				}
			}
			l := startLocal(t, bin, b.args...)
			if !strings.Contains(l.redisAbout, b.about) {
				t.Fatalf("the summary says the Redis is %q, want %s", l.redisAbout, b.about)
			}
			useGateway(t, l.base, l.origin)
			t.Run("a classic game with bots is played to the end", func(t *testing.T) {
				playClassicWithBots(t, l.base)
			})
			t.Run("a Japanese match of two players is played to the end", func(t *testing.T) {
				playJapaneseMatch(t, l.base)
			})
			l.stop(t)
		})
	}
}

// checkSettingsAgainstHelp runs each binary with -h: every variable the
// launcher sets must be named in its usage (the session secret is read
// from the environment only, so it is not listed; the gateway refuses to
// start without it, which the runs check).
func checkSettingsAgainstHelp(t *testing.T, bin string) {
	cfg := Config{Addr: DefaultAddr, Runners: 2, LogLevel: "info", StopTimeout: DefaultStopTimeout}
	ports := make([]int, childCount(cfg))
	backends, gw := plan(cfg, wiring{RedisAddr: "127.0.0.1:1", Secret: "x", AdminPorts: ports})
	help := map[string]string{}
	for _, s := range append(backends, gw) {
		if _, ok := help[s.Binary]; !ok {
			// -h prints the usage and exits 0 (flag.ErrHelp).
			out, err := exec.Command(filepath.Join(bin, s.Binary), "-h").CombinedOutput()
			if err != nil {
				t.Fatalf("%s -h: %v\n%s", s.Binary, err, out)
			}
			help[s.Binary] = string(out)
		}
		for _, kv := range s.Env {
			key, _, _ := strings.Cut(kv, "=")
			if key != envSessionSecret && !strings.Contains(help[s.Binary], "(env "+key+")") {
				t.Errorf("%s: the launcher sets %s, which %s -h does not list", s.Name, key, s.Binary)
			}
		}
	}
}

// localEnv is what the launcher (and so every service) gets on top of the
// test's environment: bots move at once, and a client may send a move as
// soon as its turn comes (the gateway's default 20 frames/s would make the
// game wait for the rate limit instead of Redis).
var localEnv = []string{"PULKA_RUNNER_BOT_DELAY=1ms", "PULKA_WS_RATE=1000", "PULKA_WS_BURST=1000"}

// local is a running bin/pulka-local.
type local struct {
	cmd    *exec.Cmd
	out    *lockedBuffer
	exited chan error
	// base is where the test reaches the gateway, origin the URL the
	// launcher prints (what a browser's page has as its origin).
	base, origin string
	pids         map[string]int
	// redisAddr and redisAbout are the summary's Redis line.
	redisAddr, redisAbout string
}

var summaryRedisAbout = regexp.MustCompile(`(?m)^pulka-local\s+\|\s+Redis\s+(\S+)\s+\((.*)\)\s*$`)

// startLocal runs bin/pulka-local with args (and localEnv) until it says
// everything is running.
func startLocal(t *testing.T, bin string, args ...string) *local {
	t.Helper()
	ports, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ports[0])
	cmd := exec.Command(filepath.Join(bin, "pulka-local"), append([]string{"-addr", "127.0.0.1:" + port}, args...)...)
	cmd.Env = append(os.Environ(), localEnv...)
	l := &local{cmd: cmd, out: &lockedBuffer{}, exited: make(chan error, 1),
		base: "http://127.0.0.1:" + port, origin: "http://localhost:" + port}
	cmd.Stderr = l.out
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		signalled := false
		for sc.Scan() {
			_, _ = l.out.Write(append(sc.Bytes(), '\n'))
			if !signalled && strings.HasSuffix(sc.Text(), "| Ctrl-C stops everything.") {
				close(ready)
				signalled = true
			}
		}
		l.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("launcher output:\n%s", l.out.String())
		}
	})

	select {
	case <-ready:
	case err := <-l.exited:
		t.Fatalf("pulka-local exited before it was ready: %v", err)
	case <-time.After(3 * time.Minute):
		t.Fatal("pulka-local did not say it was running within 3 minutes")
	}
	summary := l.out.String()
	l.pids = pidsOf(t, summary)
	for _, n := range []string{"lobby", "scoring", "wallet", "table-runner-1", "table-runner-2", "gateway"} {
		if l.pids[n] == 0 {
			t.Fatalf("no pid for %s in the summary", n)
		}
	}
	m := summaryRedisAbout.FindStringSubmatch(summary)
	if m == nil {
		t.Fatal("no Redis address in the summary")
	}
	l.redisAddr, l.redisAbout = m[1], m[2]
	return l
}

// stop sends SIGINT and checks that the launcher exits 0 and that every
// service and Redis are gone.
func (l *local) stop(t *testing.T) {
	t.Helper()
	if err := l.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-l.exited:
		if err != nil {
			t.Fatalf("pulka-local after Ctrl-C: %v, want exit status 0", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("pulka-local did not exit within a minute of Ctrl-C")
	}
	for n, pid := range l.pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s (pid %d) still runs after the launcher exited", n, pid)
		}
	}
	rdb := redis.NewClient(&redis.Options{Addr: l.redisAddr, MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Ping(context.Background()).Err(); err == nil {
		t.Errorf("the Redis at %s still answers after the launcher exited", l.redisAddr)
	}
}

// useGateway does what the web client does first: it loads the page, gets
// a guest session from a page of origin (the URL the launcher prints,
// which is not the host the request goes to, so the allowed origin is what
// lets it through) and lists the tables with it.
func useGateway(t *testing.T, base, origin string) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusServiceUnavailable:
		t.Errorf("GET /: %s: the gateway was built without the web client; run `make web` (make test does) first", resp.Status)
	default:
		t.Errorf("GET /: %s", resp.Status)
	}

	req, err := http.NewRequest(http.MethodPost, base+"/api/v1/session/guest", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", origin)
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var session struct {
		Token  string `json:"token"`
		Player struct {
			ID string `json:"id"`
		} `json:"player"`
	}
	err = json.NewDecoder(resp.Body).Decode(&session)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusCreated || err != nil || session.Token == "" || session.Player.ID == "" {
		t.Fatalf("POST /api/v1/session/guest from %s: %s, %+v, %v", origin, resp.Status, session, err)
	}

	req, err = http.NewRequest(http.MethodGet, base+"/api/v1/tables", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+session.Token)
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/tables with the guest session: %s", resp.Status)
	}
}
