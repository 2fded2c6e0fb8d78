package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/tools/stack"
)

// runHarness runs run() with fake services (this test binary) and the
// embedded Redis.
type runHarness struct {
	out     *lockedBuffer
	done    chan error
	cancel  context.CancelFunc
	trigger string
}

func startRun(t *testing.T, modes string, change func(*Config)) *runHarness {
	t.Helper()
	ports, err := stack.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Addr: "127.0.0.1:" + strconv.Itoa(ports[0]), BinDir: fakeBinDir(t), Runners: 2, LogLevel: "info",
		RawLogs: true, ReadyTimeout: 20 * time.Second, StopTimeout: 5 * time.Second, EmbeddedRedis: true,
	}
	if change != nil {
		change(&cfg)
	}
	h := &runHarness{out: &lockedBuffer{}, done: make(chan error, 1), trigger: filepath.Join(t.TempDir(), "crash")}
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	env := fakeEnviron(modes, fakeTrigger+"="+h.trigger)
	go func() { h.done <- run(ctx, cfg, host{Env: env, Out: h.out, LookPath: noRedisServer}) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-h.done:
			_ = err // a test that cares has looked at it through result
		case <-time.After(30 * time.Second):
			t.Error("run did not return after its context was cancelled")
		}
	})
	return h
}

// waitFor waits until the output has a line containing text.
func (h *runHarness) waitFor(t *testing.T, text string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(h.out.String(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the output:\n%s", text, h.out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// result waits for run to return.
func (h *runHarness) result(t *testing.T) error {
	t.Helper()
	select {
	case err := <-h.done:
		h.done <- err // for the cleanup
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("run did not return:\n%s", h.out.String())
		return nil
	}
}

// crash makes every "crash" fake exit.
func (h *runHarness) crash(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(h.trigger, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

var summaryPid = regexp.MustCompile(`(?m)^pulka-local\s+\|\s+(\S+)\s+pid (\d+)\s+admin `)

// pidsOf reads "<name> pid <n>" from the summary.
func pidsOf(t *testing.T, out string) map[string]int {
	t.Helper()
	pids := map[string]int{}
	for _, m := range summaryPid.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.Atoi(m[2])
		pids[m[1]] = n
	}
	return pids
}

var summaryRedis = regexp.MustCompile(`(?m)^pulka-local\s+\|\s+Redis\s+(\S+)\s`)

func TestRun_CtrlCStopsEveryServiceAndRedisAndReturnsNil(t *testing.T) {
	h := startRun(t, "*="+fakeServe, nil)
	h.waitFor(t, stack.LauncherReady)
	out := h.out.String()
	pids := pidsOf(t, out)
	names := []string{"lobby", "scoring", "wallet", "table-runner-1", "table-runner-2", "gateway"}
	for _, n := range names {
		if pids[n] == 0 {
			t.Fatalf("summary has no pid for %s:\n%s", n, out)
		}
	}
	m := summaryRedis.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("summary has no Redis address:\n%s", out)
	}
	rdb := redis.NewClient(&redis.Options{Addr: m[1], MaxRetries: -1})
	defer rdb.Close()
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("Redis at %s: %v", m[1], err)
	}

	h.cancel()
	if err := h.result(t); err != nil {
		t.Fatalf("run after Ctrl-C: %v\n%s", err, h.out.String())
	}
	for _, n := range names {
		if !gone(pids[n]) {
			t.Errorf("%s (pid %d) still runs", n, pids[n])
		}
		if !hasLine(h.out.String(), n+" | bye") {
			t.Errorf("%s was not stopped with SIGTERM", n)
		}
	}
	if err := rdb.Ping(context.Background()).Err(); err == nil {
		t.Error("Redis still answers after the launcher stopped")
	}
	if !hasLine(h.out.String(), "pulka-local | stopped") {
		t.Errorf("no final 'stopped':\n%s", h.out.String())
	}
}

func TestRun_AServiceThatDiesStopsEverythingAndIsNamed(t *testing.T) {
	h := startRun(t, "scoring="+fakeCrash+",*="+fakeServe, nil)
	h.waitFor(t, stack.LauncherReady)
	pids := pidsOf(t, h.out.String())
	h.crash(t)
	err := h.result(t)
	want := "scoring (pid " + strconv.Itoa(pids["scoring"]) + ") exited unexpectedly (exit status 3)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("want an error containing %q, got %v", want, err)
	}
	for n, pid := range pids {
		if !gone(pid) {
			t.Errorf("%s (pid %d) still runs", n, pid)
		}
	}
}

func TestRun_AllowRunnerExitKeepsRunningWhileAnotherRunnerIsUp(t *testing.T) {
	h := startRun(t, "runner-1="+fakeCrash+",*="+fakeServe, func(c *Config) { c.AllowRunnerExit = true })
	h.waitFor(t, stack.LauncherReady)
	h.crash(t)
	h.waitFor(t, "table-runner-1 exited (exit status 3); its tables move to the other runners")
	select {
	case err := <-h.done:
		t.Fatalf("run returned after a runner ended although another is up: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	h.cancel()
	if err := h.result(t); err != nil {
		t.Fatalf("run: %v", err)
	}
}

func TestRun_ARunnerThatDiesStopsEverythingByDefault(t *testing.T) {
	h := startRun(t, "runner-2="+fakeCrash+",*="+fakeServe, nil)
	h.waitFor(t, stack.LauncherReady)
	h.crash(t)
	if err := h.result(t); err == nil || !strings.Contains(err.Error(), "table-runner-2 (pid") {
		t.Fatalf("want an error naming table-runner-2, got %v", err)
	}
}

func TestRun_AServiceThatCannotStartStopsTheOthers(t *testing.T) {
	h := startRun(t, "lobby="+fakeDie+",*="+fakeServe, nil)
	err := h.result(t)
	if err == nil || !strings.Contains(err.Error(), "lobby exited before it was ready (exit status 4)") {
		t.Fatalf("got %v", err)
	}
	if strings.Contains(err.Error(), "stopped with a failure") || strings.Contains(err.Error(), "killed") {
		t.Errorf("the others did not stop cleanly: %v", err)
	}
	// A fake stopped before it printed its pid ended by SIGTERM too; every
	// one that did print it must be gone.
	out := h.out.String()
	for _, m := range regexp.MustCompile(`plain line from pid (\d+)`).FindAllStringSubmatch(out, -1) {
		if pid, _ := strconv.Atoi(m[1]); !gone(pid) {
			t.Errorf("pid %d still runs", pid)
		}
	}
	if strings.Contains(out, "gateway ") {
		t.Errorf("the gateway was started although the lobby never was ready:\n%s", out)
	}
}

func TestRun_CtrlCDuringStartUpIsAStopNotAFailure(t *testing.T) {
	h := startRun(t, "gateway="+fakeNeverReady+",*="+fakeServe, nil)
	h.waitFor(t, `"mode":"never-ready"`)
	h.cancel()
	if err := h.result(t); err != nil {
		t.Fatalf("want nil, got %v", err)
	}
	if !hasLine(h.out.String(), "pulka-local | stopped before everything had started") {
		t.Errorf("output:\n%s", h.out.String())
	}
}

func TestRun_RefusesMissingBinariesBeforeStartingAnything(t *testing.T) {
	h := startRun(t, "*="+fakeServe, func(c *Config) { c.BinDir = t.TempDir() })
	err := h.result(t)
	if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "make build") {
		t.Fatalf("want ErrConfig saying make build, got %v", err)
	}
	if h.out.String() != "" {
		t.Errorf("something was started:\n%s", h.out.String())
	}
}
