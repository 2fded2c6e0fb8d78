package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/pkg/envnames"
	"github.com/pulka/pulka/tools/stack"
	"github.com/pulka/pulka/tools/stack/stacktest"
)

// The test binary doubles as a fake service: started with fakeEnv set, it
// behaves as that variable says instead of running the tests, so the
// supervisor and run are tested with real child processes that start,
// answer /readyz, crash, or ignore SIGTERM on demand.
const (
	// fakeEnv is "key=mode,key=mode,…": a key is a runner id (runner-1), a
	// binary name (scoring) or * (any), tried in that order.
	fakeEnv = "PULKA_LOCAL_FAKE"
	// fakeTrigger names a file whose appearance makes a "crash" fake exit.
	fakeTrigger = "PULKA_LOCAL_FAKE_TRIGGER"
)

// Fake modes.
const (
	fakeServe      = "serve"       // ready at once; exits 0 on SIGTERM
	fakeIgnoreTerm = "ignore-term" // ready at once; ignores SIGTERM
	fakeFailStop   = "fail-stop"   // ready at once; exits 1 on SIGTERM
	fakeCrash      = "crash"       // ready at once; exits 3 when the trigger file appears
	fakeNeverReady = "never-ready" // /readyz answers 503
	fakeDie        = "die"         // exits 4 at once
	// fakeLateListen is ready at once but opens PULKA_GATEWAY_ADDR only
	// 300 ms later, as the gateway's /readyz can say yes before its HTTP
	// listener is open.
	fakeLateListen = "late-listen"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(fakeEnv); spec != "" {
		os.Exit(fakeService(spec))
	}
	os.Exit(stacktest.Main(m, nil))
}

// fakeMode picks this process's mode from spec.
func fakeMode(spec string) string {
	modes := map[string]string{}
	for _, kv := range strings.Split(spec, ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			modes[k] = v
		}
	}
	for _, key := range []string{os.Getenv(envnames.RunnerID), filepath.Base(os.Args[0]), "*"} {
		if m, ok := modes[key]; ok && key != "" {
			return m
		}
	}
	return fakeServe
}

func fakeService(spec string) int {
	mode := fakeMode(spec)
	terms := make(chan os.Signal, 1)
	if mode == fakeIgnoreTerm {
		signal.Ignore(syscall.SIGTERM)
	} else {
		signal.Notify(terms, syscall.SIGTERM)
	}
	// One JSON line on stderr as the services write, one plain line on
	// stdout: the launcher must print both under this process's name.
	fmt.Fprintf(os.Stderr, `{"time":"2026-01-02T03:04:05Z","level":"INFO","msg":"fake started","service":"x","mode":%q}`+"\n", mode)
	fmt.Fprintf(os.Stdout, "plain line from pid %d\n", os.Getpid())
	if mode == fakeDie {
		return 4
	}
	ln, err := net.Listen("tcp", os.Getenv(daemon.EnvAdminAddr))
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake:", err)
		return 5
	}
	status := http.StatusOK
	if mode == fakeNeverReady {
		status = http.StatusServiceUnavailable
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(status) }))
	}()
	if addr := os.Getenv(envnames.GatewayAddr); addr != "" {
		if mode == fakeLateListen {
			time.Sleep(300 * time.Millisecond)
		}
		web, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fake:", err)
			return 5
		}
		go func() { _ = http.Serve(web, http.NotFoundHandler()) }()
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-terms:
			if mode == fakeFailStop {
				fmt.Println("failing to stop")
				return 1
			}
			fmt.Println("bye")
			return 0
		case <-tick.C:
			if mode != fakeCrash {
				continue
			}
			if _, err := os.Stat(os.Getenv(fakeTrigger)); err == nil {
				fmt.Println("crashing")
				return 3
			}
		}
	}
}

// fakeEnviron is the environment of fake services: the test's own plus
// the modes. Under -race a process sleeps a second at exit by default
// (GORACE atexit_sleep_ms), which would look like a slow stop.
func fakeEnviron(modes string, extra ...string) []string {
	return append(append(os.Environ(), fakeEnv+"="+modes, "GORACE=atexit_sleep_ms=0"), extra...)
}

// fakeBinDir is a bin directory whose four service binaries are this test
// binary.
func fakeBinDir(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range stack.Services() {
		if err := os.Symlink(self, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// gone reports whether no process has pid any more.
func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
