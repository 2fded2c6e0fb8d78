package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// stack is all of Pulka running on this machine (pulka-local with every
// service binary built from this tree), shared by the tests that play
// through it.
type stack struct {
	url string
	cmd *exec.Cmd
	err error
}

var (
	stackOnce sync.Once
	theStack  stack
)

// liveStack builds and starts the stack once per test binary. The launcher
// gets SIGTERM from the kernel when the test binary ends (Pdeathsig) and
// stops every service gracefully.
func liveStack(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs every service: skipped under -short")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed")
	}
	stackOnce.Do(func() { theStack = startStack() })
	if theStack.err != nil {
		t.Fatal(theStack.err)
	}
	return theStack.url
}

func startStack() stack {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		return stack{err: err}
	}
	bin, err := os.MkdirTemp("", "pulkactl-stack-")
	if err != nil {
		return stack{err: err}
	}
	build := exec.Command("go", "build", "-o", bin+string(filepath.Separator), "./pkg/cmd/pulka-local",
		"./services/gateway/cmd/gateway", "./services/lobby/cmd/lobby",
		"./services/table-runner/cmd/table-runner", "./services/scoring/cmd/scoring",
		"./services/wallet/cmd/wallet")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return stack{err: &buildError{err: err, out: string(out)}}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return stack{err: err}
	}
	addr := l.Addr().String()
	_ = l.Close()
	cmd := exec.Command(filepath.Join(bin, "pulka-local"), "-addr", addr, "-bin-dir", bin, "-runners", "1", "-log-level", "warn")
	// Bots move at once and the per-connection limits allow a load
	// generator's many moves per connection; sessions come from one IP. A
	// hand whose clients send no client seed (they all do) is dealt after 1s, not 3s.
	cmd.Env = append(os.Environ(), "PULKA_RUNNER_BOT_DELAY=1ms", "PULKA_WS_RATE=1000", "PULKA_WS_BURST=1000",
		"PULKA_SIGNUPS_PER_IP=100000", "PULKA_WS_PER_IP=100000", "PULKA_CONN_PER_IP=100000", "PULKA_RUNNER_SEED_TIMEOUT=1s")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return stack{err: err}
	}
	s := stack{url: "http://" + addr, cmd: cmd}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		resp, err := http.Get(s.url + "/api/v1/tables")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode < http.StatusInternalServerError { // 401: up, and asks for a session
				// Every service is running: their files are no longer needed.
				_ = os.RemoveAll(bin)
				return s
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	_ = os.RemoveAll(bin)
	return stack{err: errTimeout}
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return "go build: " + e.err.Error() + "\n" + e.out }

var errTimeout = &buildError{err: context.DeadlineExceeded, out: "the gateway did not answer within 2 minutes"}
