package podmembership_test

import (
	"context"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/pulka/pulka/pkg/assign"
	"github.com/pulka/pulka/pkg/redistest"
	pulkav1 "github.com/pulka/pulka/services/operator/api/v1alpha1"
	"github.com/pulka/pulka/services/operator/internal/kubetest"
	"github.com/pulka/pulka/services/operator/internal/podmembership"
)

var env *kubetest.Env

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m, &env)) }

// Each row is one way a runner stops being live, with the pod and the
// heartbeat as the API server and Redis really hold them.
func TestMembersLiveOnlyWhenPodAndHeartbeatAgree(t *testing.T) {
	ctx := context.Background()
	ns, err := env.Namespace(ctx, "members")
	if err != nil {
		t.Fatal(err)
	}
	c := env.Client
	pool := &pulkav1.RunnerPool{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "rp"},
		Spec: pulkav1.RunnerPoolSpec{
			Template: pulkav1.RunnerTemplate{Image: "runner"}, MinRunners: 1, MaxRunners: 10,
			TablesPerRunner: 7, TargetUtilizationPercent: 70,
			NotReadyGrace: metav1.Duration{Duration: 5 * time.Second},
		},
	}
	if err := c.Create(ctx, pool); err != nil {
		t.Fatal(err)
	}
	rdb := redistest.Start(t).Client(t)
	beats := assign.NewHeartbeats(rdb, time.Minute)
	short := assign.NewHeartbeats(rdb, 150*time.Millisecond)

	mkPod := func(name string, annotations map[string]string, finalizers ...string) *corev1.Pod {
		t.Helper()
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{pulkav1.PoolLabel: "rp"},
				Annotations: annotations, Finalizers: finalizers},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "r", Image: "runner"}}},
		}
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ready := func(p *corev1.Pod, ok bool, since time.Time) {
		t.Helper()
		st := corev1.ConditionFalse
		if ok {
			st = corev1.ConditionTrue
		}
		p.Status.Phase = corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.NewTime(since)}}
		if err := c.Status().Update(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	beat := func(h *assign.Heartbeats, id string) {
		t.Helper()
		if err := h.Beat(ctx, assign.Member{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now()

	live := mkPod("live", nil)
	ready(live, true, now)
	beat(beats, "live")

	silent := mkPod("silent", nil) // Ready, never beat
	ready(silent, true, now)

	cut := mkPod("cut-off", nil) // Ready, its heartbeat ran out: a partition
	ready(cut, true, now)
	beat(short, "cut-off")

	blip := mkPod("blip", nil) // NotReady for 1 s of a 5 s grace
	ready(blip, false, now.Add(-time.Second))
	beat(beats, "blip")

	down := mkPod("down", nil) // NotReady past the grace
	ready(down, false, now.Add(-10*time.Second))
	beat(beats, "down")

	mkPod("starting", nil) // never Ready
	beat(beats, "starting")

	drain := mkPod("draining", map[string]string{pulkav1.DrainingAnnotation: now.Format(time.RFC3339)})
	ready(drain, true, now)
	beat(beats, "draining")

	failed := mkPod("failed", nil)
	ready(failed, true, now)
	failed.Status.Phase = corev1.PodFailed
	if err := c.Status().Update(ctx, failed); err != nil {
		t.Fatal(err)
	}
	beat(beats, "failed")

	// A finalizer keeps the deleted pod visible with its deletionTimestamp,
	// as the kubelet's graceful termination does.
	deleted := mkPod("deleted", nil, "pulka.dev/test")
	ready(deleted, true, now)
	beat(beats, "deleted")
	if err := c.Delete(ctx, deleted); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var p corev1.Pod
		if c.Get(context.Background(), client.ObjectKeyFromObject(deleted), &p) == nil {
			p.Finalizers = nil
			_ = c.Update(context.Background(), &p)
		}
	})

	beat(beats, "ghost") // a heartbeat with no pod

	// Pods Ready and beating on nodes: one Ready, one NotReady for 1 s of
	// the 5 s grace (a blip), one Unknown for 10 s (its kubelet silent:
	// lost), and one on a Node that is gone.
	mkNode := func(name string, status corev1.ConditionStatus, since time.Time) string {
		t.Helper()
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + name}}
		if err := c.Create(ctx, n); err != nil {
			t.Fatal(err)
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: status,
			LastTransitionTime: metav1.NewTime(since), LastHeartbeatTime: metav1.NewTime(since)}}
		if err := c.Status().Update(ctx, n); err != nil {
			t.Fatal(err)
		}
		return n.Name
	}
	for pod, node := range map[string]string{
		"on-ok":   mkNode("ok", corev1.ConditionTrue, now),
		"on-blip": mkNode("blip", corev1.ConditionFalse, now.Add(-time.Second)),
		"on-down": mkNode("down", corev1.ConditionUnknown, now.Add(-10*time.Second)),
		"on-gone": ns + "-gone",
	} {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod, Labels: map[string]string{pulkav1.PoolLabel: "rp"}},
			Spec:       corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "r", Image: "runner"}}},
		}
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		ready(p, true, now)
		beat(beats, pod)
	}

	time.Sleep(300 * time.Millisecond) // the short heartbeat runs out
	m := podmembership.New(c, client.ObjectKeyFromObject(pool), beats, nil)
	members, err := m.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]assign.Member{}
	for _, mb := range members {
		got[mb.ID] = mb
	}
	for _, tc := range []struct {
		id              string
		ready, draining bool
		reason          string
	}{
		{"live", true, false, ""},
		{"silent", false, false, podmembership.ReasonHeartbeatExpired},
		{"cut-off", false, false, podmembership.ReasonHeartbeatExpired},
		{"blip", true, false, ""},
		{"down", false, false, podmembership.ReasonNotReady},
		{"starting", false, false, podmembership.ReasonNotReady},
		{"draining", true, true, podmembership.ReasonDraining},
		{"failed", false, false, podmembership.ReasonPodFailed},
		{"deleted", false, false, podmembership.ReasonPodDeleted},
		{"ghost", false, false, podmembership.ReasonPodGone},
		{"on-ok", true, false, ""},
		{"on-blip", true, false, ""},
		{"on-down", false, false, podmembership.ReasonNodeLost},
		{"on-gone", false, false, podmembership.ReasonNodeLost},
	} {
		mb, ok := got[tc.id]
		if !ok {
			t.Errorf("%s: not a member", tc.id)
			continue
		}
		if mb.Ready != tc.ready || mb.Draining != tc.draining {
			t.Errorf("%s: ready %v draining %v, want %v %v", tc.id, mb.Ready, mb.Draining, tc.ready, tc.draining)
		}
		if r := m.Reason(tc.id); r != tc.reason {
			t.Errorf("%s: reason %q, want %q", tc.id, r, tc.reason)
		}
		if tc.id != "ghost" && mb.Capacity != 7 {
			t.Errorf("%s: capacity %d, want the pool's 7 tables per runner", tc.id, mb.Capacity)
		}
	}
	// How long each live member stays live if nothing changes (the
	// assigner's next pass comes when the first runs out): the heartbeat's
	// minute, or what is left of a NotReady grace of 5 s (plus the second
	// the API server cuts from the transition time) on the pod or its node.
	for _, tc := range []struct {
		id       string
		min, max time.Duration
	}{
		{"live", 30 * time.Second, time.Minute},
		{"on-ok", 30 * time.Second, time.Minute},
		{"blip", 3 * time.Second, 6 * time.Second},
		{"on-blip", 3 * time.Second, 6 * time.Second},
		{"draining", 30 * time.Second, time.Minute},
		{"cut-off", 0, 0},
		{"down", 0, 0},
	} {
		if lf := got[tc.id].LiveFor; lf < tc.min || lf > tc.max {
			t.Errorf("%s: live for %v, want %v–%v", tc.id, lf, tc.min, tc.max)
		}
	}
	// Since when each was lost: from the pod where it says, else when the
	// membership first saw it (the heartbeat's end is not on the pod).
	for _, tc := range []struct {
		id   string
		near time.Time
	}{
		{"down", now.Add(-10 * time.Second)},
		{"draining", now},
		{"deleted", now},
		{"cut-off", time.Now()},
		{"ghost", time.Now()},
		{"on-down", now.Add(-10 * time.Second)},
		{"on-gone", time.Now()},
	} {
		at, ok := m.LostSince(tc.id)
		if d := at.Sub(tc.near).Abs(); !ok || d > 2*time.Second {
			t.Errorf("%s: lost since %v (%v), want about %v", tc.id, at, ok, tc.near)
		}
	}
	if _, ok := m.LostSince("live"); ok {
		t.Error("live: has a lost time")
	}
	if len(members) != 14 {
		t.Errorf("%d members, want 14", len(members))
	}

	// The same Plan as the Redis membership: every table of a runner that is
	// not live, or draining, moves to a live one; the blip keeps its table.
	owners := map[string]string{"t-live": "live", "t-blip": "blip", "t-cut": "cut-off", "t-down": "down",
		"t-drain": "draining", "t-deleted": "deleted", "t-ghost": "ghost",
		"t-on-ok": "on-ok", "t-on-blip": "on-blip", "t-on-down": "on-down", "t-on-gone": "on-gone"}
	moves, unplaced := assign.Plan(members, owners)
	if len(unplaced) != 0 {
		t.Errorf("unplaced %v", unplaced)
	}
	moved := map[string]string{}
	for _, mv := range moves {
		if mv.To != "live" && mv.To != "blip" && mv.To != "on-ok" && mv.To != "on-blip" {
			t.Errorf("%s moved to %s, not a live runner", mv.Table, mv.To)
		}
		moved[mv.Table] = mv.From
	}
	for _, tb := range []string{"t-cut", "t-down", "t-drain", "t-deleted", "t-ghost", "t-on-down", "t-on-gone"} {
		if _, ok := moved[tb]; !ok {
			t.Errorf("%s (owner %s) did not move", tb, owners[tb])
		}
	}
	for _, tb := range []string{"t-live", "t-blip", "t-on-ok", "t-on-blip"} {
		if _, ok := moved[tb]; ok {
			t.Errorf("%s moved off a live runner", tb)
		}
	}
}
