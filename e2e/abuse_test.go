package e2e

import (
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pulka/pulka/tools/stack/stacktest"
)

// The abuse suite's shared checks (abuse_gateway_test.go,
// abuse_lobby_test.go, abuse_ops_test.go): an honest player at another
// table keeps playing at normal latency during each attack, and no service
// panicked, exited or was restarted.

// honestGame is a player's classic game against three bots, played all
// along an attack.
type honestGame struct {
	table string
	c     *client
}

func (s *stack) startHonestGame(t *testing.T) *honestGame {
	t.Helper()
	a := s.register(t)
	g := &honestGame{}
	// A long game (24 hands) and a minute to move: only a lost command
	// would make the server move.
	g.table = s.createTable(t, a, tableSpec{standard: true, moveTime: time.Minute, name: "honest"})
	g.c = s.newClient(t, "honest", a)
	g.c.connect()
	g.c.join(g.table, "")
	s.fillWithBots(t, a, g.table)
	g.c.autoPlay(g.table, true)
	return g
}

// latencies are the honest player's move latencies between from and to:
// from the event that handed them the turn to the event of their move
// (the client answers at once, so this is the platform's round trip:
// gateway, command stream, runner, event stream, gateway).
func (g *honestGame) latencies(from, to time.Time) []time.Duration {
	var out []time.Duration
	var prev *frame
	for _, f := range g.c.snapshot() {
		if f.ev == nil || f.Table != g.table {
			continue
		}
		if prev != nil && isMove(f.ev) && moveSeat(f.ev) == 0 && !byServer(f.ev) && !f.At.Before(from) && f.At.Before(to) {
			out = append(out, f.At.Sub(prev.At))
		}
		prev = f
	}
	slices.Sort(out)
	return out
}

func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[int(q*float64(len(d)-1))]
}

// checkHonest checks the honest player's moves during the attack against
// those before it: still moving, at a latency a player would not notice.
func (g *honestGame) checkHonest(t *testing.T, before, attack, after time.Time) {
	t.Helper()
	if closed, err := g.c.isClosed(); closed {
		t.Fatalf("the honest player's connection closed: %v", err)
	}
	base, during := g.latencies(before, attack), g.latencies(attack, after)
	t.Logf("honest moves: before the attack %d, p50 %v p95 %v; during it %d, p50 %v p95 %v max %v",
		len(base), quantile(base, .5), quantile(base, .95), len(during), quantile(during, .5), quantile(during, .95), quantile(during, 1))
	if len(during) < 10 {
		t.Fatalf("the honest player made %d moves during the attack", len(during))
	}
	// Bounds a 2-core machine under the attack and other tests meets; a
	// stalled table (a consumer or runner starved) misses them by seconds.
	if p50, p95 := quantile(during, .5), quantile(during, .95); p50 > 150*time.Millisecond || p95 > 500*time.Millisecond {
		t.Fatalf("the honest game slowed down: p50 %v p95 %v", p50, p95)
	}
}

// processes are the services' process ids when a test began.
type processes map[*stacktest.Process]int

// processes records which process each service of s is now.
func (s *stack) processes() processes {
	out := processes{}
	for _, svc := range s.Processes() {
		out[svc] = svc.Pid()
	}
	return out
}

// noPanics fails when a service logged a panic, exited, or (given the
// processes of the test's start) is no longer the same live process: a
// service restarted by anything during the attack fails it too.
func (s *stack) noPanics(t *testing.T, since ...processes) {
	t.Helper()
	for _, svc := range s.Processes() {
		select {
		case <-svc.Exited():
			t.Errorf("%s exited during the test:\n%s", svc.Name, svc.LogTail(20))
		default:
		}
		b, err := os.ReadFile(svc.LogPath())
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(strings.ToLower(string(b)), "panic") {
			t.Errorf("%s logged a panic:\n%s", svc.Name, svc.LogTail(30))
		}
	}
	for _, before := range since {
		for svc, pid := range before {
			if svc.Pid() != pid {
				t.Errorf("%s was restarted during the test (pid %d before)", svc.Name, pid)
				continue
			}
			// Signal 0 checks that the process exists (and is ours).
			if err := syscall.Kill(pid, 0); err != nil {
				t.Errorf("%s (pid %d) is gone: %v", svc.Name, pid, err)
			}
		}
	}
}
