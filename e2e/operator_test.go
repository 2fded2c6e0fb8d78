package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"

	"github.com/pulka/pulka/pkg/assign"
	"github.com/pulka/pulka/pkg/envnames"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/streams"
	stackplan "github.com/pulka/pulka/tools/stack"
	"github.com/pulka/pulka/tools/stack/stacktest"
)

// operatorStack is a stack whose table runners are the pods of a
// RunnerPool (issue 20): the API server, the operator process assigning
// the pool's tables, and the kubelet running a real table runner for each
// pod the operator creates. The gateway, the lobby, scoring and the wallet
// are the stack's as everywhere.
type operatorStack struct {
	*stack
	k  *kube
	ns string
	kl *kubelet
	op *stacktest.Process
}

// startOperatorStack starts an operatorStack for t of ps.runners runners,
// the kubelet reporting a dead runner's pod Failed notice after it died;
// with runnerDefaults the runners keep their own lease TTL and poll
// interval instead of the tests' short ones; settings are the operator's
// (NAME=value) beyond its defaults.
func startOperatorStack(t *testing.T, name string, ps poolSpec, notice time.Duration, runnerDefaults bool, settings ...string) *operatorStack {
	t.Helper()
	opts := options(name, 0)
	if runnerDefaults {
		opts.Settings[stackplan.TableRunner] = slices.DeleteFunc(slices.Clone(opts.Settings[stackplan.TableRunner]), func(kv string) bool {
			return strings.HasPrefix(kv, envnames.RunnerLeaseTTL+"=") || strings.HasPrefix(kv, envnames.RunnerPollInterval+"=")
		})
	}
	s := &stack{stacktest.Start(t, opts)}
	k := startKube(t)
	ns := k.namespace(t, name)
	k.createPool(t, ns, ps)
	o := &operatorStack{stack: s, k: k, ns: ns}
	o.op = startOperator(t, s, k, ns, settings...)
	o.kl = startKubelet(t, s, k, ns, notice)
	o.awaitRunners(t, ps.runners)
	return o
}

// awaitRunners waits until n runners are live members: their pods Ready
// (and counted Ready in the pool's status: the operator sees them) and
// their heartbeats fresh (a runner back from a partition beats again).
func (o *operatorStack) awaitRunners(t *testing.T, n int) {
	t.Helper()
	ctx := context.Background()
	beats := assign.NewHeartbeats(o.Redis(), time.Second)
	eventually(t, time.Minute, fmt.Sprintf("%d runners live", n), func() bool {
		o.kl.check(t)
		ready, _, _, err := o.k.poolStatus(ctx, o.ns)
		if err != nil || ready < int64(n) {
			return false
		}
		members, err := beats.Members(ctx)
		if err != nil {
			return false
		}
		pods := o.kl.readyPods()
		live := 0
		for _, m := range members {
			if m.Ready && !m.Draining && slices.Contains(pods, m.ID) {
				live++
			}
		}
		return live >= n
	})
}

// fault is a way a runner is lost while it plays.
type fault struct {
	name string
	// reasons are the migration's reasons the operator may record.
	reasons []string
	// partition: the fault needs the pods' own networks (root).
	partition bool
	// inject hits the runner of pod victim; heal, when not nil, undoes
	// what can be undone (the link of a partition) once the table moved.
	inject func(t *testing.T, o *operatorStack, victim string) (heal func())
}

// faults are the three of issue 20: the runner's process SIGKILLed (its
// pod reported Failed by the kubelet), its pod deleted (the kubelet sends
// SIGTERM: the runner hands its tables over), and its network cut off
// from Redis while its pod stays Ready (a partition the kubelet misses:
// only the heartbeat tells).
func faults() []fault {
	return []fault{
		{name: "SIGKILL", reasons: []string{"PodFailed"}, inject: func(t *testing.T, o *operatorStack, victim string) func() {
			o.kl.runner(victim).proc.Kill()
			return nil
		}},
		// The runner hands its tables over on SIGTERM and leaves the
		// membership; the operator moves them at its next pass, the pod
		// being deleted or, when the kubelet removed it already, gone.
		{name: "pod deleted", reasons: []string{"PodDeleted", "PodGone"}, inject: func(t *testing.T, o *operatorStack, victim string) func() {
			p := &corev1.Pod{}
			p.Name, p.Namespace = victim, o.ns
			if err := o.k.c.Delete(context.Background(), p); err != nil {
				t.Fatalf("delete pod %s: %v", victim, err)
			}
			return nil
		}},
		{name: "partition", reasons: []string{"HeartbeatExpired"}, partition: true, inject: func(t *testing.T, o *operatorStack, victim string) func() {
			pn := o.kl.runner(victim).net
			if err := pn.cut(); err != nil {
				t.Fatal(err)
			}
			return func() {
				if err := pn.heal(); err != nil {
					t.Error(err)
				}
			}
		}},
	}
}

// TestOperator_RunnerLostMidHand_TheGameFinishesOnAnotherRunner: the
// table runners are the pods of a RunnerPool, run by the test's kubelet
// and assigned their tables by the operator process. Four WebSocket
// players play a nines game through the gateway; in the middle of its
// second hand the runner owning the table is lost — SIGKILLed, its pod
// deleted, or cut off from Redis while its pod stays Ready — and the
// operator moves the table. Each time the game finishes on another
// runner, every command the players sent is in the log once and in the
// order each sent them (none lost, none applied twice, no move made by the
// server), the log replays purely and the sheets equal the replay, the
// old owner wrote nothing after the new owner's first event, a write
// under its lease is refused by the fence, and the pool's status counts
// the migration with the fault's reason.
func TestOperator_RunnerLostMidHand_TheGameFinishesOnAnotherRunner(t *testing.T) {
	t.Parallel()
	// A kubelet that reports a dead container quickly (its event-driven
	// relist), within the 1 s heartbeat: a SIGKILL is told by the pod.
	o := startOperatorStack(t, "operator", poolSpec{runners: 2, heartbeat: time.Second, grace: time.Second},
		300*time.Millisecond, false, envOperatorReconcile+"=100ms")
	for _, f := range faults() {
		t.Run(f.name, func(t *testing.T) {
			if f.partition && !o.kl.netns {
				t.Skip("the pods share this host's network (not root): no partition")
			}
			o.awaitRunners(t, 2)
			faultMidHand(t, o, f)
		})
	}
}

// faultMidHand plays a game on o and hits its owner with f mid-hand; see
// TestOperator_RunnerLostMidHand_TheGameFinishesOnAnotherRunner. It returns
// the time from the fault to the next move applied (by the new owner).
func faultMidHand(t *testing.T, o *operatorStack, f fault) time.Duration {
	s := o.stack
	ctx := context.Background()
	var tableID string
	s.dumpOnFailure(t, &tableID)
	sessions := []session{s.guest(t), s.guest(t), s.guest(t), s.guest(t)}
	clients := seatPlayers(t, s, tableSpec{moveTime: time.Minute, name: "e2e operator " + f.name}, sessions, &tableID)
	// The counts before (read now: the game, at machine speed, must still
	// be in progress at the fault).
	_, migrationsBefore, _, err := o.k.poolStatus(ctx, o.ns)
	if err != nil {
		t.Fatal(err)
	}
	metricBefore := o.migrationsMetric(t, f)
	for _, c := range clients {
		c.autoPlay(tableID, true)
	}
	c := clients[0]
	second := c.awaitHand(60*time.Second, tableID, 1, "the second hand")
	c.awaitCards(second.N, 30*time.Second, tableID, 10, "ten cards of the second hand")
	victim := owner(s, tableID)
	if o.kl.runner(victim) == nil {
		t.Fatalf("the table's owner %q is not the runner of a pod", victim)
	}
	old, ok, err := streams.NewLeases(s.Redis(), time.Second).Current(ctx, streams.TableLease(tableID))
	if err != nil || !ok || old.Owner != victim {
		t.Fatalf("the table's lease: %+v (held %v, err %v), want %s's", old, ok, err, victim)
	}
	at := time.Now()
	heal := f.inject(t, o, victim)
	t.Logf("%s: runner %s, the owner of %s (lease epoch %d)", f.name, victim, tableID, old.Epoch)
	if heal != nil {
		// The link comes back once the table moved: the cut-off runner
		// is live again, and what it still holds of the table is stale.
		eventually(t, 30*time.Second, "the table moved off the cut-off runner", func() bool {
			l, ok, err := streams.NewLeases(s.Redis(), time.Second).Current(ctx, streams.TableLease(tableID))
			return err == nil && ok && l.Epoch > old.Epoch
		})
		heal()
	}

	for _, c := range clients {
		c.awaitEvent(0, 90*time.Second, tableID, "the end of the game after the fault", gameEnded)
	}
	g := verifyGame(t, s, tableID, clients)
	checkAllMovesByPlayers(t, g.log, clients)
	checkCommandOrder(t, g.log, clients)
	_, firstNew := epochHandover(t, g.log)
	if now := owner(s, tableID); now == victim {
		t.Errorf("the table is still assigned to %s", victim)
	}
	next := firstMoveFrom(g.log, firstNew)
	if next == nil {
		t.Fatal("no move after the fault")
	}
	took := next.Ev.GetOccurredAt().AsTime().Sub(at)
	t.Logf("%s → the table's next applied move (epoch %d → %d): %v", f.name, old.Epoch, firstNew.Ev.GetEpoch(), took.Round(time.Millisecond))

	// The fence: a write under the old owner's lease — the write a runner
	// that missed the move would make — is refused, and the log is
	// unchanged by it.
	checkFenced(t, s, tableID, old)
	if heal != nil {
		// And the cut-off runner's own writes, if it made any once back:
		// each refused (pulka.runner.fenced), none in the log (above).
		t.Logf("the cut-off runner's writes refused by the fence: %v", opsMetricSum(t, o.kl.runner(victim).proc, "pulka_runner_fenced_total"))
	}
	var count int64
	var reason string
	deadline := time.Now().Add(10 * time.Second)
	for count <= migrationsBefore || !slices.Contains(f.reasons, reason) {
		if time.Now().After(deadline) {
			t.Fatalf("the pool's status: %d migrations (%d before the fault), the last for %q; want one more, for %v",
				count, migrationsBefore, reason, f.reasons)
		}
		time.Sleep(50 * time.Millisecond)
		if _, count, reason, err = o.k.poolStatus(ctx, o.ns); err != nil {
			t.Fatal(err)
		}
	}
	if m := o.migrationsMetric(t, f); m <= metricBefore {
		t.Errorf("the operator's pulka_operator_migrations_total for %v: %v, %v before the fault", f.reasons, m, metricBefore)
	}
	return took
}

// migrationsMetric is the operator's count of migrations for the fault's
// reasons (its /metrics).
func (o *operatorStack) migrationsMetric(t *testing.T, f fault) float64 {
	t.Helper()
	sum := 0.0
	for _, r := range f.reasons {
		sum += opsMetricSumWhere(t, o.op, "pulka_operator_migrations_total", `reason="`+r+`"`)
	}
	return sum
}

// checkCommandOrder: each client's commands are in the log in the order
// it sent them (checkAllMovesByPlayers checked each is there once).
func checkCommandOrder(t *testing.T, log []logEntry, clients []*client) {
	t.Helper()
	at := map[string]int{}
	for i, e := range log {
		if e.Input != nil && e.Input.Command != nil {
			at[e.Input.Command.GetCommandId()] = i
		}
	}
	for _, c := range clients {
		sent := c.commandsSent(log[0].Ev.GetTableId())
		positions := make([]int, 0, len(sent))
		for _, id := range sent {
			positions = append(positions, at[id])
		}
		if !slices.IsSorted(positions) {
			t.Errorf("%s's commands are not in the log in the order it sent them", c.name)
		}
	}
}

// firstMoveFrom is the first move event of the log at or after from.
func firstMoveFrom(log []logEntry, from *logEntry) *logEntry {
	seen := false
	for i := range log {
		seen = seen || log[i].ID == from.ID
		if seen && isMove(log[i].Ev) {
			return &log[i]
		}
	}
	return nil
}

// checkFenced appends to the table's event stream under the lease old
// (an owner's the table has moved from): the fence must refuse it with a
// stale epoch, and nothing of it may be in the stream (which the new owner
// may be appending to meanwhile).
func checkFenced(t *testing.T, s *stack, tableID string, old streams.Lease) {
	t.Helper()
	ctx := context.Background()
	key := streams.TableEvents(tableID)
	last, err := s.Redis().XRevRangeN(ctx, key, "+", "-", 1).Result()
	if err != nil || len(last) != 1 {
		t.Fatalf("the log's last entry: %v %v", last, err)
	}
	probe := []byte(fmt.Sprintf("a write of the old owner %s, epoch %d", old.Owner, old.Epoch))
	_, err = streams.NewPublisher(s.Redis()).AppendFenced(ctx, old, streams.Entry{Stream: key, Data: probe})
	if !errors.Is(err, streams.ErrStaleEpoch) {
		t.Errorf("a write under the old owner's lease (epoch %d): %v, want %v", old.Epoch, err, streams.ErrStaleEpoch)
	}
	after, err := streams.ReadAfter(ctx, s.Redis(), key, last[0].ID, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range after {
		if bytes.Equal(m.Data, probe) {
			t.Errorf("the table's event stream has the old owner's write at %s", m.ID)
		}
	}
}

// operatorMeasure is the environment variable that turns the operator's
// measurements on (TestOperator_Measure).
const operatorMeasure = "PULKA_OPERATOR_MEASURE"

// TestOperator_Measure measures what issue 20 asks of the operator, with
// its default settings (heartbeat TTL 3 s, NotReady grace 5 s, a reconcile
// every 500 ms) and the runners' (a table lease of 10 s, a poll every
// 250 ms), the kubelet reporting a dead runner's pod Failed a second after
// it died (its relist period): for each fault, N in a row (100, or
// PULKA_OPERATOR_MEASURE_FAULTS), each hitting the owner of a standard game
// in progress every 30 moves, the time from the fault to the table's next
// applied move; every game is played to its end and checked as in
// TestOperator_RunnerLostMidHand_TheGameFinishesOnAnotherRunner (no command
// lost or applied twice, the sheets equal the replay, no write of an old
// owner after a newer one's). Only with PULKA_OPERATOR_MEASURE=1: a
// measurement, whose numbers go to docs/benchmarks.md.
//
//	PULKA_OPERATOR_MEASURE=1 KUBEBUILDER_ASSETS=$(scripts/envtest-bins.sh) \
//	  go test -run TestOperator_Measure -v -timeout 3h ./e2e/
func TestOperator_Measure(t *testing.T) {
	if os.Getenv(operatorMeasure) != "1" {
		t.Skip("a measurement: set " + operatorMeasure + "=1")
	}
	n := 100
	if v := os.Getenv(operatorMeasure + "_FAULTS"); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil || n < 1 {
			t.Fatalf("%s_FAULTS=%q", operatorMeasure, v)
		}
	}
	for _, f := range faults() {
		if name := os.Getenv(operatorMeasure + "_ONLY"); name != "" && name != f.name {
			continue
		}
		t.Run(f.name, func(t *testing.T) {
			if f.partition && !canNetns() {
				t.Skip("the pods would share this host's network (not root): no partition")
			}
			o := startOperatorStack(t, "measure", poolSpec{runners: 2}, time.Second, true)
			var took []time.Duration
			for games := 1; len(took) < n; games++ {
				t.Run(fmt.Sprint("game ", games), func(t *testing.T) { faultsInGame(t, o, f, n, &took) })
				if t.Failed() {
					t.Fatalf("after %d faults", len(took))
				}
			}
			slices.Sort(took)
			q := func(p float64) time.Duration { return took[min(len(took)-1, int(p*float64(len(took))))] }
			t.Logf("MEASURE %s: %d faults in a row, no move lost; fault → next applied move: p50 %v, p99 %v, max %v",
				f.name, len(took), q(0.5).Round(time.Millisecond), q(0.99).Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))
			if f.partition {
				// The runners were cut off in turn and came back: what
				// they wrote of their stale tables once back was refused.
				fenced := 0.0
				for _, name := range o.kl.readyPods() {
					fenced += opsMetricSum(t, o.kl.runner(name).proc, "pulka_runner_fenced_total")
				}
				t.Logf("MEASURE %s: writes of the cut-off runners refused by the fence once back: %v", f.name, fenced)
			}
		})
	}
}

// faultsInGame plays a standard game on o, hitting its owner with f every
// 30 moves until the game ends or want faults are in took (each with the
// time from the fault to the next move applied), then checks the game.
func faultsInGame(t *testing.T, o *operatorStack, f fault, want int, took *[]time.Duration) {
	s := o.stack
	ctx := context.Background()
	var tableID string
	s.dumpOnFailure(t, &tableID)
	sessions := []session{s.guest(t), s.guest(t), s.guest(t), s.guest(t)}
	clients := seatPlayers(t, s, tableSpec{standard: true, moveTime: time.Minute, name: "e2e measure " + f.name}, sessions, &tableID)
	for _, c := range clients {
		c.autoPlay(tableID, true)
	}
	c := clients[0]
	from, ended := 0, false
	for !ended && len(*took) < want {
		moves := 0
		fr := c.awaitEvent(from, 2*time.Minute, tableID, "30 moves or the end", func(ev *tablev1.Event) bool {
			if isMove(ev) {
				moves++
			}
			ended = gameEnded(ev)
			return ended || moves == 30
		})
		from = fr.N + 1
		if ended {
			break
		}
		o.awaitRunners(t, 2)
		// The fault hits the owner: the table may be between owners for a
		// moment when the operator's view of the last fault's replacement
		// lags the kubelet's (unplaced, owner "").
		var victim string
		eventually(t, 30*time.Second, "an owner that runs", func() bool {
			victim = owner(s, tableID)
			ended = c.find(func(f *frame) bool { return f.ev != nil && f.Table == tableID && gameEnded(f.ev) }) != nil
			return ended || o.kl.runner(victim) != nil
		})
		if ended {
			break // the 30 moves were the game's last
		}
		old, ok, err := streams.NewLeases(s.Redis(), time.Second).Current(ctx, streams.TableLease(tableID))
		if err != nil || !ok || old.Owner != victim {
			t.Fatalf("the table's lease: %+v (held %v, err %v), want %s's", old, ok, err, victim)
		}
		last, err := s.Redis().XRevRangeN(ctx, streams.TableEvents(tableID), "+", "-", 1).Result()
		if err != nil || len(last) != 1 {
			t.Fatalf("the log's last entry: %v %v", last, err)
		}
		at := time.Now()
		heal := f.inject(t, o, victim)
		var next *tablev1.Event
		eventually(t, time.Minute, "the next move after the fault", func() bool {
			next, ended = nextMove(t, s, tableID, last[0].ID, old.Epoch)
			return next != nil || ended
		})
		if heal != nil {
			heal()
		}
		if next == nil {
			break // the fault came after the game's last move: nothing to measure
		}
		d := next.GetOccurredAt().AsTime().Sub(at)
		*took = append(*took, d)
		t.Logf("fault %d: %s of %s (epoch %d) → next applied move (epoch %d): %v", len(*took), f.name, victim, old.Epoch,
			next.GetEpoch(), d.Round(time.Millisecond))
		checkFenced(t, s, tableID, old)
	}
	for _, c := range clients {
		c.awaitEvent(0, 5*time.Minute, tableID, "the end of the game", gameEnded)
	}
	g := verifyGame(t, s, tableID, clients)
	checkAllMovesByPlayers(t, g.log, clients)
	checkCommandOrder(t, g.log, clients)
	for i := 1; i < len(g.log); i++ {
		if g.log[i].Ev.GetEpoch() < g.log[i-1].Ev.GetEpoch() {
			t.Errorf("an old owner wrote after a newer one: %s after %s", describe(g.log[i].ID, g.log[i].Ev), describe(g.log[i-1].ID, g.log[i-1].Ev))
		}
	}
}

// nextMove is the first move event of the table's log after entry id
// written under an epoch above epoch; nil if none yet, or none ever when
// the game ended first (ended).
func nextMove(t *testing.T, s *stack, tableID, id string, epoch int64) (next *tablev1.Event, ended bool) {
	t.Helper()
	msgs, err := streams.ReadAfter(context.Background(), s.Redis(), streams.TableEvents(tableID), id, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		ev := &tablev1.Event{}
		if err := proto.Unmarshal(m.Data, ev); err != nil {
			t.Fatalf("event %s: %v", m.ID, err)
		}
		if int64(ev.GetEpoch()) > epoch && isMove(ev) {
			return ev, false
		}
		if gameEnded(ev) {
			return nil, true
		}
	}
	return nil, false
}
