package operator_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/pulka/pulka/pkg/assign"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
	pulkav1 "github.com/pulka/pulka/services/operator/api/v1alpha1"
	"github.com/pulka/pulka/services/operator/internal/kubetest"
	"github.com/pulka/pulka/services/operator/internal/operator"
)

var env *kubetest.Env

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m, &env)) }

// createPool makes the pool "rp" in ns the tests assign for: runners of
// up to 10 tables, replicas of them, heartbeats of heartbeat and a grace
// of grace before a NotReady pod counts as lost.
func createPool(t *testing.T, ns string, replicas int32, heartbeat, grace time.Duration) *pulkav1.RunnerPool {
	t.Helper()
	pool := &pulkav1.RunnerPool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rp"},
		Spec: pulkav1.RunnerPoolSpec{
			Template: pulkav1.RunnerTemplate{Image: "runner"}, MinRunners: 1, MaxRunners: 4, Replicas: &replicas,
			TablesPerRunner: 10, TargetUtilizationPercent: 70,
			DrainTimeout:  metav1.Duration{Duration: time.Minute},
			HeartbeatTTL:  metav1.Duration{Duration: heartbeat},
			NotReadyGrace: metav1.Duration{Duration: grace},
		},
	}
	if err := env.Client.Create(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	return pool
}

// awaitPods waits for the n pods of ns the operator creates.
func awaitPods(t *testing.T, ns string, n int) []corev1.Pod {
	t.Helper()
	pods, err := env.AwaitPods(context.Background(), ns, n, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return pods
}

func eventually(t *testing.T, what string, within time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// replica is one operator process: its manager, running until stop.
type replica struct {
	id     string
	stop   context.CancelFunc
	done   chan error
	halted bool
}

func startReplica(t *testing.T, cfg operator.Config, id string, srv *redistest.Server) *replica {
	t.Helper()
	return startReplicaMetered(t, cfg, id, srv, noop.NewMeterProvider())
}

func startReplicaMetered(t *testing.T, cfg operator.Config, id string, srv *redistest.Server, mp metric.MeterProvider) *replica {
	t.Helper()
	cfg.ID = id
	rdb := srv.Client(t)
	mgr, err := cfg.NewManager(env.Config, rdb, mp, slog.New(slog.DiscardHandler), true)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{id: id, stop: cancel, done: make(chan error, 1)}
	go func() { r.done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		if r.halted {
			return
		}
		cancel()
		if err := <-r.done; err != nil {
			t.Errorf("replica %s: %v", id, err)
		}
	})
	return r
}

func (r *replica) halt(t *testing.T) {
	t.Helper()
	r.stop()
	r.halted = true
	if err := <-r.done; err != nil {
		t.Errorf("replica %s: %v", r.id, err)
	}
}

// Two operators elect one leader through the Lease; only the leader
// manages the pool and assigns its tables. The test plays the kubelet (it
// readies the pods) and the runners (it beats their heartbeats). When a
// runner's heartbeat stops while its pod stays Ready (a partition), its
// table moves to the other runner, fenced by a new lease epoch, and the
// migration is counted in the status and reported as an Event. When the
// leader stops, the standby takes over and goes on migrating: a deleted
// pod's table moves too.
func TestLeaderAssignsAndStandbyTakesOver(t *testing.T) {
	ctx := context.Background()
	ns, err := env.Namespace(ctx, "op")
	if err != nil {
		t.Fatal(err)
	}
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	c := env.Client
	pool := createPool(t, ns, 2, 300*time.Millisecond, time.Second)
	cfg := operator.Config{
		Pool: ns + "/rp", LeaderElect: true, LeaseDuration: 2 * time.Second,
		AssignLeaderTTL: 600 * time.Millisecond, Reconcile: 100 * time.Millisecond,
	}
	a := startReplica(t, cfg, "op-a", srv)
	b := startReplica(t, cfg, "op-b", srv)

	var leader string
	eventually(t, "one leader holds the Lease", 20*time.Second, func() error {
		var l coordinationv1.Lease
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: operator.LeaseName}, &l); err != nil {
			return err
		}
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity == "" {
			return fmt.Errorf("no holder")
		}
		leader = *l.Spec.HolderIdentity
		if leader != "op-a" && leader != "op-b" {
			return fmt.Errorf("holder %q is neither replica", leader)
		}
		return nil
	})
	first, standby := a, b
	if leader == "op-b" {
		first, standby = b, a
	}

	// The kubelet and the runners: pods Ready, heartbeats every 100 ms,
	// except for the runners in cut.
	beats := assign.NewHeartbeats(rdb, 300*time.Millisecond)
	cut := map[string]bool{}
	pods := awaitPods(t, ns, 2)
	for i := range pods {
		if err := env.SetReady(ctx, &pods[i], true); err != nil {
			t.Fatal(err)
		}
	}
	rctx, stopRunners := context.WithCancel(ctx)
	defer stopRunners()
	cutCh, addCh := make(chan string), make(chan string)
	go func() {
		ids := []string{pods[0].Name, pods[1].Name}
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			for _, id := range ids {
				if !cut[id] {
					_ = beats.Beat(rctx, assign.Member{ID: id, Capacity: 10})
				}
			}
			select {
			case <-rctx.Done():
				return
			case id := <-cutCh:
				cut[id] = true
			case id := <-addCh:
				ids = append(ids, id)
			case <-tick.C:
			}
		}
	}()

	// A table on the first runner, as the assigner had placed it.
	store := assign.NewStore(rdb)
	victim, other := pods[0].Name, pods[1].Name
	if ok, err := store.Add(ctx, streams.Lease{}, "t1", victim); err != nil || !ok {
		t.Fatal(ok, err)
	}
	time.Sleep(time.Second) // it stays: its runner is live
	if o, _, _ := store.Owner(ctx, "t1"); o != victim {
		t.Fatalf("t1 moved off a live runner to %q", o)
	}

	cutCh <- victim // the partition: the pod stays Ready, the heartbeat stops
	eventually(t, "t1 migrated off the cut-off runner", 10*time.Second, func() error {
		if o, _, _ := store.Owner(ctx, "t1"); o != other {
			return fmt.Errorf("owner %q", o)
		}
		return nil
	})
	// The new owner holds the table's lease: the cut-off runner is fenced.
	if v, err := rdb.HGet(ctx, streams.TableLease("t1"), "owner").Result(); err != nil || v != other {
		t.Errorf("t1's lease owner %q (%v), want %s", v, err, other)
	}
	eventually(t, "migration in the status and an Event", 10*time.Second, func() error {
		var p pulkav1.RunnerPool
		if err := c.Get(ctx, client.ObjectKeyFromObject(pool), &p); err != nil {
			return err
		}
		if p.Status.Migrations.Count != 1 || p.Status.Migrations.LastReason != "HeartbeatExpired" {
			return fmt.Errorf("migrations %+v", p.Status.Migrations)
		}
		var evs eventsv1.EventList
		if err := c.List(ctx, &evs, client.InNamespace(ns)); err != nil {
			return err
		}
		for _, e := range evs.Items {
			if e.Reason == "TableMigrated" && strings.Contains(e.Note, "t1") {
				return nil
			}
		}
		return fmt.Errorf("no TableMigrated event among %d", len(evs.Items))
	})

	// The leader stops; the standby takes the Lease and carries on.
	first.halt(t)
	eventually(t, "the standby leads", 20*time.Second, func() error {
		var l coordinationv1.Lease
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: operator.LeaseName}, &l); err != nil {
			return err
		}
		if l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != standby.id {
			return fmt.Errorf("holder %q, want %s", ptrStr(l.Spec.HolderIdentity), standby.id)
		}
		return nil
	})
	// The runner now owning t1 loses its pod: t1 moves back to the first
	// runner's replacement (a new pod the standby creates, readied here).
	var gone corev1.Pod
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: other}, &gone); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, &gone); err != nil {
		t.Fatal(err)
	}
	eventually(t, "t1 on a live runner after its pod was deleted", 20*time.Second, func() error {
		var l corev1.PodList
		if err := c.List(ctx, &l, client.InNamespace(ns)); err != nil {
			return err
		}
		for i := range l.Items {
			p := &l.Items[i]
			if p.Name == victim || p.Name == other {
				continue
			}
			if !kubeReady(p) {
				if err := env.SetReady(ctx, p, true); err != nil {
					return err
				}
			}
			if !containsPod(pods, p.Name) {
				pods = append(pods, *p)
				addCh <- p.Name // the runner in it is up and beats
			}
		}
		o, _, _ := store.Owner(ctx, "t1")
		if o == "" || o == victim || o == other {
			return fmt.Errorf("owner %q", o)
		}
		return nil
	})
}

func kubeReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func containsPod(ps []corev1.Pod, name string) bool {
	for _, p := range ps {
		if p.Name == name {
			return true
		}
	}
	return false
}

func ptrStr(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// runners plays the table-runners: it beats the heartbeat of every runner
// it was given, every 100 ms, until the test ends.
type runners struct {
	add chan string
}

func beatRunners(t *testing.T, beats *assign.Heartbeats, ids ...string) *runners {
	ctx, cancel := context.WithCancel(context.Background())
	r := &runners{add: make(chan string)}
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			for _, id := range ids {
				_ = beats.Beat(ctx, assign.Member{ID: id})
			}
			select {
			case <-ctx.Done():
				return
			case id := <-r.add:
				ids = append(ids, id)
			case <-tick.C:
			}
		}
	}()
	return r
}

// meteredPool makes a namespace named after prefix with a pool of three
// runners (heartbeat 300 ms, NotReady grace 1.5 s) and one operator replica
// on a Redis of its own, whose metrics reader it returns: the setting of the
// tests that count migrations by reason.
func meteredPool(t *testing.T, prefix string) (string, *redistest.Server, *pulkav1.RunnerPool, *sdkmetric.ManualReader) {
	t.Helper()
	ns, err := env.Namespace(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	srv := redistest.Start(t)
	pool := createPool(t, ns, 3, 300*time.Millisecond, 1500*time.Millisecond)
	reader := sdkmetric.NewManualReader()
	startReplicaMetered(t, operator.Config{Pool: ns + "/rp", LeaseNamespace: ns, LeaderElect: false,
		LeaseDuration: 2 * time.Second, AssignLeaderTTL: 600 * time.Millisecond, Reconcile: 100 * time.Millisecond},
		"op", srv, sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	return ns, srv, pool, reader
}

// Two more ways a runner is lost, each a migration with its reason: its pod
// NotReady past the grace (not before), and its pod being deleted (the
// kubelet still terminating it: a finalizer stands in for the grace period).
func TestMigrationTriggers(t *testing.T) {
	ctx := context.Background()
	ns, srv, pool, reader := meteredPool(t, "mig")
	rdb := srv.Client(t)
	c := env.Client

	pods := awaitPods(t, ns, 3)
	ids := make([]string, len(pods))
	for i := range pods {
		ids[i] = pods[i].Name
		if err := env.SetReady(ctx, &pods[i], true); err != nil {
			t.Fatal(err)
		}
	}
	// The production TTL (3 s), as in TestNodeLost: every runner stays live
	// by its beats, and only the pods say one is lost; a 300 ms TTL let a
	// stall of the beating goroutine on a loaded machine expire a healthy
	// runner and add migrations of another reason.
	beatRunners(t, assign.NewHeartbeats(rdb, 3*time.Second), ids...)
	store := assign.NewStore(rdb)
	flaky, doomed, healthy := pods[0].Name, pods[1].Name, pods[2].Name
	for tb, r := range map[string]string{"t-flaky": flaky, "t-doomed": doomed} {
		if ok, err := store.Add(ctx, streams.Lease{}, tb, r); err != nil || !ok {
			t.Fatal(ok, err)
		}
	}
	owner := func(tb string) string {
		o, _, _ := store.Owner(ctx, tb)
		return o
	}
	reason := func() string {
		var p pulkav1.RunnerPool
		_ = c.Get(ctx, client.ObjectKeyFromObject(pool), &p)
		return p.Status.Migrations.LastReason
	}

	// NotReady: the table stays within the grace, then moves.
	notReadyAt := time.Now()
	if err := env.SetReady(ctx, &pods[0], false); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	if o := owner("t-flaky"); o != flaky {
		t.Fatalf("t-flaky moved to %q within the NotReady grace", o)
	}
	eventually(t, "t-flaky migrated after the grace", 10*time.Second, func() error {
		if o := owner("t-flaky"); o == flaky || o == "" {
			return fmt.Errorf("owner %q", o)
		}
		return nil
	})
	if waited := time.Since(notReadyAt); waited < 1400*time.Millisecond {
		t.Errorf("moved after %v, before the 1.5 s grace", waited)
	}
	eventually(t, "reason NotReady", 10*time.Second, func() error {
		if r := reason(); r != "NotReady" {
			return fmt.Errorf("last reason %q", r)
		}
		return nil
	})

	// Being deleted: the pod is still there, Ready, beating; its table moves.
	var p corev1.Pod
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: doomed}, &p); err != nil {
		t.Fatal(err)
	}
	p.Finalizers = append(p.Finalizers, "pulka.dev/test")
	if err := c.Update(ctx, &p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var q corev1.Pod
		if c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: doomed}, &q) == nil {
			q.Finalizers = nil
			_ = c.Update(context.Background(), &q)
		}
	})
	if err := c.Delete(ctx, &p); err != nil {
		t.Fatal(err)
	}
	eventually(t, "t-doomed migrated off the deleted pod", 10*time.Second, func() error {
		if o := owner("t-doomed"); o != healthy && o != flaky {
			return fmt.Errorf("owner %q", o)
		}
		if o := owner("t-doomed"); o == flaky {
			return fmt.Errorf("moved to the NotReady runner %s", flaky)
		}
		return nil
	})
	eventually(t, "reason PodDeleted, two migrations", 10*time.Second, func() error {
		var pl pulkav1.RunnerPool
		if err := c.Get(ctx, client.ObjectKeyFromObject(pool), &pl); err != nil {
			return err
		}
		if m := pl.Status.Migrations; m.LastReason != "PodDeleted" || m.Count != 2 {
			return fmt.Errorf("migrations %+v", m)
		}
		return nil
	})

	// The metrics: one migration of each reason, and the NotReady one took
	// at least its grace from the pod's turn to NotReady.
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	counts, durations := map[string]int64{}, map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				if m.Name == "pulka.operator.migrations" {
					for _, p := range d.DataPoints {
						r, _ := p.Attributes.Value("reason")
						counts[r.AsString()] += p.Value
					}
				}
			case metricdata.Histogram[float64]:
				if m.Name == "pulka.operator.migration.duration" {
					for _, p := range d.DataPoints {
						r, _ := p.Attributes.Value("reason")
						durations[r.AsString()] = p.Sum
					}
				}
			}
		}
	}
	if counts["NotReady"] != 1 || counts["PodDeleted"] != 1 {
		t.Errorf("pulka.operator.migrations by reason: %v", counts)
	}
	if d := durations["NotReady"]; d < 1.4 || d > 10 {
		t.Errorf("NotReady migration took %.2fs by the histogram, want the 1.5 s grace and a little", d)
	}
	if _, ok := durations["PodDeleted"]; !ok {
		t.Errorf("no duration of the PodDeleted migration: %v", durations)
	}
}

// A node lost: the pods on it stop being live once their Node has been
// NotReady or Unknown for the grace — a kubelet gone silent, while its pods
// still say Ready (on a cluster they turn NotReady only when the node
// lifecycle controller gives up on the node, some 40 s later) — and at once
// when the Node is deleted. Their tables move, each migration an Event and
// a metric with the reason NodeLost.
func TestNodeLost(t *testing.T) {
	ctx := context.Background()
	ns, srv, pool, reader := meteredPool(t, "node")
	rdb := srv.Client(t)
	c := env.Client

	// A node for each pod, Ready, the pod bound to it as the scheduler
	// would, Ready and beating.
	pods := awaitPods(t, ns, 3)
	nodes := make([]*corev1.Node, len(pods))
	ids := make([]string, len(pods))
	for i := range pods {
		nodes[i] = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-node-%d", ns, i)}}
		if err := c.Create(ctx, nodes[i]); err != nil {
			t.Fatal(err)
		}
		setNodeReady(t, nodes[i], corev1.ConditionTrue)
		b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pods[i].Name},
			Target: corev1.ObjectReference{Kind: "Node", Name: nodes[i].Name}}
		if err := c.SubResource("binding").Create(ctx, &pods[i], b); err != nil {
			t.Fatal(err)
		}
		if err := c.Get(ctx, client.ObjectKeyFromObject(&pods[i]), &pods[i]); err != nil {
			t.Fatal(err)
		}
		if err := env.SetReady(ctx, &pods[i], true); err != nil {
			t.Fatal(err)
		}
		ids[i] = pods[i].Name
	}
	// The production TTL (3 s), not a short one: here every runner stays
	// live by its beats, and only the Nodes say it is lost. With 300 ms a
	// loaded CI machine stalled the beating goroutine long enough to expire
	// the healthy runner, and the tables moved twice more (four moves).
	beatRunners(t, assign.NewHeartbeats(rdb, 3*time.Second), ids...)
	store := assign.NewStore(rdb)
	silent, gone, healthy := ids[0], ids[1], ids[2]
	for tb, r := range map[string]string{"t-silent": silent, "t-gone": gone} {
		if ok, err := store.Add(ctx, streams.Lease{}, tb, r); err != nil || !ok {
			t.Fatal(ok, err)
		}
	}
	owner := func(tb string) string {
		o, _, _ := store.Owner(ctx, tb)
		return o
	}

	// The kubelet of the first node goes silent: its Ready turns Unknown.
	// Within the grace the table stays; then it moves to the least-loaded
	// live runner, the healthy one.
	unknownAt := time.Now()
	setNodeReady(t, nodes[0], corev1.ConditionUnknown)
	time.Sleep(700 * time.Millisecond)
	if o := owner("t-silent"); o != silent {
		t.Fatalf("t-silent moved to %q within the grace", o)
	}
	eventually(t, "t-silent moved off the lost node", 10*time.Second, func() error {
		if o := owner("t-silent"); o != healthy {
			return fmt.Errorf("owner %q", o)
		}
		return nil
	})
	if waited := time.Since(unknownAt); waited < 1400*time.Millisecond {
		t.Errorf("moved after %v, before the 1.5 s grace", waited)
	}
	if !isPodReady(c, ns, silent) {
		t.Error("the pod on the lost node is no longer Ready: this was not a node loss only the Node tells")
	}

	// The second Node is deleted: its pod's table moves at once.
	if err := c.Delete(ctx, nodes[1]); err != nil {
		t.Fatal(err)
	}
	eventually(t, "t-gone moved off the deleted node", 10*time.Second, func() error {
		if o := owner("t-gone"); o != healthy {
			return fmt.Errorf("owner %q", o)
		}
		return nil
	})

	eventually(t, "two NodeLost migrations in the status, and an Event", 10*time.Second, func() error {
		var p pulkav1.RunnerPool
		if err := c.Get(ctx, client.ObjectKeyFromObject(pool), &p); err != nil {
			return err
		}
		if m := p.Status.Migrations; m.Count != 2 || m.LastReason != "NodeLost" {
			return fmt.Errorf("migrations %+v", m)
		}
		var evs eventsv1.EventList
		if err := c.List(ctx, &evs, client.InNamespace(ns)); err != nil {
			return err
		}
		// The recorder folds like events of one object into a series, so
		// the two moves may be one Event: count them in the status and
		// the metric.
		for _, e := range evs.Items {
			if e.Reason == "TableMigrated" && strings.Contains(e.Note, "NodeLost") {
				return nil
			}
		}
		return fmt.Errorf("no TableMigrated event for NodeLost among %d", len(evs.Items))
	})
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if d, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "pulka.operator.migrations" {
				for _, p := range d.DataPoints {
					r, _ := p.Attributes.Value("reason")
					counts[r.AsString()] += p.Value
				}
			}
		}
	}
	if counts["NodeLost"] != 2 || len(counts) != 1 {
		t.Errorf("pulka.operator.migrations by reason: %v, want NodeLost 2", counts)
	}
}

// setNodeReady plays a node's kubelet (or, for Unknown, the node
// lifecycle controller once the kubelet went silent): the Ready condition.
func setNodeReady(t *testing.T, node *corev1.Node, status corev1.ConditionStatus) {
	t.Helper()
	now := metav1.Now()
	node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status,
		LastHeartbeatTime: now, LastTransitionTime: now}}
	if err := env.Client.Status().Update(context.Background(), node); err != nil {
		t.Fatal(err)
	}
}

// An operator manages the RunnerPools of its own namespace only (its
// manager's cache and its role are the namespace's): two releases in two
// namespaces do not size, roll or write the status of each other's pools.
// The namespace is the pool's, or -namespace (the chart's, with or without
// a pool).
func TestOperatorIgnoresOtherNamespaces(t *testing.T) {
	for _, withPool := range []bool{true, false} {
		t.Run(fmt.Sprintf("pool=%v", withPool), func(t *testing.T) { ignoresOtherNamespaces(t, withPool) })
	}
}

func ignoresOtherNamespaces(t *testing.T, withPool bool) {
	ctx := context.Background()
	srv := redistest.Start(t)
	mine, err := env.Namespace(ctx, "mine")
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := env.Namespace(ctx, "theirs")
	if err != nil {
		t.Fatal(err)
	}
	createPool(t, mine, 1, 3*time.Second, 5*time.Second)
	createPool(t, theirs, 1, 3*time.Second, 5*time.Second)
	cfg := operator.Config{Namespace: mine, LeaseNamespace: mine, LeaderElect: false,
		LeaseDuration: 2 * time.Second, AssignLeaderTTL: 600 * time.Millisecond, Reconcile: 100 * time.Millisecond}
	if withPool {
		cfg.Namespace, cfg.Pool = "", mine+"/rp"
	}
	startReplica(t, cfg, "op", srv)
	awaitPods(t, mine, 1)
	eventually(t, "the status of the pool in "+mine, 10*time.Second, func() error {
		var p pulkav1.RunnerPool
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: mine, Name: "rp"}, &p); err != nil {
			return err
		}
		if p.Status.ObservedGeneration == 0 {
			return fmt.Errorf("status %+v", p.Status)
		}
		return nil
	})
	// Every pool the cache holds is reconciled at the start, in parallel
	// with the first; a second more is plenty for the other pool's turn.
	time.Sleep(time.Second)
	var pods corev1.PodList
	if err := env.Client.List(ctx, &pods, client.InNamespace(theirs)); err != nil {
		t.Fatal(err)
	}
	var p pulkav1.RunnerPool
	if err := env.Client.Get(ctx, client.ObjectKey{Namespace: theirs, Name: "rp"}, &p); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 0 || p.Status.ObservedGeneration != 0 {
		t.Errorf("the operator of %s made %d pods in %s and wrote its pool's status %+v", mine, len(pods.Items), theirs, p.Status)
	}
}
