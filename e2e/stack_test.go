package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/envnames"
	stackplan "github.com/pulka/pulka/tools/stack"
	"github.com/pulka/pulka/tools/stack/stacktest"
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

// options are the settings of every stack of the tests (stacktest lifts
// the gateway's per-address limits itself); gateway are more settings of
// its gateways.
func options(name string, runners int, gateway ...string) stacktest.Options {
	return stacktest.Options{Name: name, Runners: runners, Settings: map[string][]string{
		stackplan.TableRunner: {
			envnames.RunnerMoveTimeout + "=" + moveTimeout.String(),
			envnames.RunnerReconnectGrace + "=" + reconnectGrace.String(),
			envnames.RunnerBotDelay + "=" + botDelay.String(),
			// Short, so that a hand whose clients send no seed is dealt soon.
			envnames.RunnerSeedTimeout + "=300ms",
			envnames.RunnerHeartbeatTTL + "=" + heartbeatTTL.String(),
			envnames.RunnerLeaderTTL + "=1s",
			envnames.RunnerLeaseTTL + "=3s",
			envnames.RunnerPollInterval + "=100ms",
			envnames.RunnerReconcileInterval + "=200ms",
		},
		stackplan.Gateway: append([]string{
			// Four clients answering at machine speed.
			envnames.WSRate + "=200",
			envnames.WSBurst + "=400",
			// A killed gateway is taken for dead after three beats.
			envnames.PresenceBeat + "=" + presenceBeat.String(),
		}, gateway...),
	}}
}

// stack is a stacktest.Stack (Redis and every service, each process
// started by the harness) with the tests' helpers as methods.
type stack struct{ *stacktest.Stack }

// startStack starts a stack of its own for t (a test that kills a process
// or floods a service), stopped when t ends.
func startStack(t *testing.T, name string, runners int) *stack {
	t.Helper()
	return &stack{stacktest.Start(t, options(name, runners))}
}

// shared is the stack most tests use; TestMain starts it before the tests
// and stacktest.Main stops it after them.
var shared *stack

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("e2e: builds and runs every service; skipped under -short")
		return
	}
	os.Exit(stacktest.Main(m, func() error {
		s, err := stacktest.New(options("shared", 2))
		if err != nil {
			return fmt.Errorf("start the shared stack: %w", err)
		}
		shared = &stack{s}
		return nil
	}))
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
				t.Logf("event log tail of table %s:\n%s", *id, logTail(ctx, s.Redis(), *id, 40))
			}
		}
		for _, p := range s.Processes() {
			t.Logf("log tail of %s:\n%s", p.Name, p.LogTail(15))
		}
	})
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
// setting given to the wrong service) fails here instead of silently
// leaving a default — a one-minute move timer, say — under the tests.
func TestStack_EverySettingIsOneTheServiceReads(t *testing.T) {
	t.Parallel()
	for _, p := range shared.Processes() {
		unread, err := stacktest.UnreadSettings(p.Process)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range unread {
			t.Errorf("%s: %s is not a setting of %s", p.Name, name, p.Binary)
		}
	}
}
