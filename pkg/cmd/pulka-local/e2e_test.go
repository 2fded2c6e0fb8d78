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
// service as make build does, runs the launcher with a real redis-server
// and with the embedded server, talks to the gateway as a browser on this
// machine would, and stops it with Ctrl-C (SIGINT).
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
	t.Run("redis-server", func(t *testing.T) {
		if _, err := exec.LookPath("redis-server"); err != nil {
			t.Fatal("redis-server is not installed (apt-get install redis-server)")
		}
		runLocal(t, bin)
	})
	t.Run("embedded Redis", func(t *testing.T) { runLocal(t, bin, "-embedded-redis") })
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

// runLocal runs bin/pulka-local with args until it says everything is
// running, uses the gateway, then sends SIGINT and checks that every
// service and Redis are gone and that it exited 0.
func runLocal(t *testing.T, bin string, args ...string) {
	ports, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(ports[0])
	cmd := exec.Command(filepath.Join(bin, "pulka-local"), append([]string{"-addr", "127.0.0.1:" + port}, args...)...)
	out := &lockedBuffer{}
	cmd.Stderr = out
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		signalled := false
		for sc.Scan() {
			_, _ = out.Write(append(sc.Bytes(), '\n'))
			if !signalled && strings.HasSuffix(sc.Text(), "| Ctrl-C stops everything.") {
				close(ready)
				signalled = true
			}
		}
		exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("launcher output:\n%s", out.String())
		}
	})

	select {
	case <-ready:
	case err := <-exited:
		t.Fatalf("pulka-local exited before it was ready: %v", err)
	case <-time.After(3 * time.Minute):
		t.Fatal("pulka-local did not say it was running within 3 minutes")
	}
	summary := out.String()
	pids := pidsOf(t, summary)
	for _, n := range []string{"lobby", "scoring", "table-runner-1", "table-runner-2", "gateway"} {
		if pids[n] == 0 {
			t.Fatalf("no pid for %s in the summary", n)
		}
	}
	m := summaryRedis.FindStringSubmatch(summary)
	if m == nil {
		t.Fatal("no Redis address in the summary")
	}
	redisAddr := m[1]

	useGateway(t, "http://127.0.0.1:"+port, "http://localhost:"+port)

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("pulka-local after Ctrl-C: %v, want exit status 0", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("pulka-local did not exit within a minute of Ctrl-C")
	}
	for n, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s (pid %d) still runs after the launcher exited", n, pid)
		}
	}
	rdb := redis.NewClient(&redis.Options{Addr: redisAddr, MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Ping(context.Background()).Err(); err == nil {
		t.Errorf("the Redis at %s still answers after the launcher exited", redisAddr)
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
