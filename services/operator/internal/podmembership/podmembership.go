// Package podmembership is the Kubernetes membership of the table-runner
// pool (an assign.Membership): the runners are a RunnerPool's pods, and a
// runner is live only while both Kubernetes and Redis say so.
//
// A member is live when its pod
//   - is Ready, or has been NotReady for less than the pool's grace (a blip
//     of the readiness probe does not move tables),
//   - is not being deleted (deletionTimestamp set: evicted, scaled away, or
//     its node drained — the runner hands its tables over on SIGTERM, and
//     the assigner moves whatever is left),
//   - is not failed or finished,
//   - is on a node that is there and Ready, or has been NotReady or Unknown
//     for less than the same grace (a node lost — its kubelet silent, the
//     machine gone, the Node deleted — is told by the Node at once, where
//     its pods would only turn NotReady once the node lifecycle controller
//     gave up on it, some 40 s later),
//
// and its runner's Redis heartbeat is fresh: a Ready pod cut off from Redis
// cannot append to its tables, so its tables move (the lease takeover fences
// it). A pod marked draining by the operator is a Draining member: live, its
// tables move, it takes no new ones.
//
// The runner id is the pod name: the operator gives each runner pod
// PULKA_RUNNER_ID from its own metadata.name.
package podmembership

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/pulka/pulka/pkg/assign"
	pulkav1 "github.com/pulka/pulka/services/operator/api/v1alpha1"
)

// Reasons a member is not live (or draining): the reason a migration off it
// is reported with.
const (
	ReasonPodDeleted       = "PodDeleted"
	ReasonPodFailed        = "PodFailed"
	ReasonNotReady         = "NotReady"
	ReasonHeartbeatExpired = "HeartbeatExpired"
	ReasonDraining         = "Draining"
	ReasonPodGone          = "PodGone"
	ReasonNodeLost         = "NodeLost"
)

// Heartbeats is the Redis half of the membership (assign.Heartbeats).
type Heartbeats interface {
	Members(ctx context.Context) ([]assign.Member, error)
}

// Nodes are cluster-scoped: the one rule of the operator's ClusterRole.
// +kubebuilder:rbac:groups="",resources=nodes,verbs=get;list;watch

// Membership lists one RunnerPool's runners.
type Membership struct {
	c     client.Reader
	pool  client.ObjectKey
	beats Heartbeats
	now   func() time.Time

	mu      sync.Mutex
	reasons map[string]string
	// lost is when each runner that is not live (or draining) stopped
	// being live: from the pod where it says (deletion, readiness, drain),
	// else when this process first saw it so.
	lost map[string]time.Time
}

// New makes the membership of the pool named by pool, reading pods and the
// pool through c and heartbeats through beats. now is the clock (nil: the
// system's).
func New(c client.Reader, pool client.ObjectKey, beats Heartbeats, now func() time.Time) *Membership {
	if now == nil {
		now = time.Now
	}
	return &Membership{c: c, pool: pool, beats: beats, now: now, reasons: map[string]string{}, lost: map[string]time.Time{}}
}

// Members returns every runner pod of the pool as a member. A runner that
// heartbeats but has no pod (a pod deleted and gone, or a runner outside
// Kubernetes) is returned not Ready, so its tables move.
func (m *Membership) Members(ctx context.Context) ([]assign.Member, error) {
	var pool pulkav1.RunnerPool
	if err := m.c.Get(ctx, m.pool, &pool); err != nil {
		return nil, fmt.Errorf("podmembership: pool %s: %w", m.pool, err)
	}
	var pods corev1.PodList
	if err := m.c.List(ctx, &pods, client.InNamespace(m.pool.Namespace),
		client.MatchingLabels{pulkav1.PoolLabel: m.pool.Name}); err != nil {
		return nil, fmt.Errorf("podmembership: pods of %s: %w", m.pool, err)
	}
	beats, err := m.beats.Members(ctx)
	if err != nil {
		return nil, err
	}
	fresh := make(map[string]assign.Member, len(beats))
	for _, b := range beats {
		fresh[b.ID] = b
	}
	now := m.now()
	grace := pool.Spec.NotReadyGrace.Duration
	nodes, nodeEnds, err := m.lostNodes(ctx, &pods, now, grace)
	if err != nil {
		return nil, err
	}
	capacity := int(pool.Spec.TablesPerRunner)
	reasons := make(map[string]string, len(pods.Items))
	lost := make(map[string]time.Time)
	out := make([]assign.Member, 0, len(pods.Items))
	seen := make(map[string]bool, len(pods.Items))
	for i := range pods.Items {
		p := &pods.Items[i]
		seen[p.Name] = true
		b, beating := fresh[p.Name]
		member := assign.Member{ID: p.Name, Capacity: capacity}
		reason := ""
		switch {
		case p.DeletionTimestamp != nil:
			reason = ReasonPodDeleted
		case p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded:
			reason = ReasonPodFailed
		case nodeLost(nodes, p.Spec.NodeName):
			reason = ReasonNodeLost
		case !ReadyWithin(p, now, grace):
			reason = ReasonNotReady
		case !beating || !b.Ready:
			reason = ReasonHeartbeatExpired
		default:
			member.Ready = true
			// The assigner's next pass comes when the first of these
			// runs out: the heartbeat's deadline, the pod's or the
			// node's NotReady grace.
			member.LiveFor = soonest(b.LiveFor, graceLeft(p, now, grace), nodeEnds[p.Spec.NodeName].Sub(now))
		}
		if _, draining := p.Annotations[pulkav1.DrainingAnnotation]; draining || b.Draining {
			member.Draining = true
			if reason == "" {
				reason = ReasonDraining
			}
		}
		reasons[p.Name] = reason
		if reason == ReasonNodeLost {
			lost[p.Name] = nodes[p.Spec.NodeName]
		} else if reason != "" {
			lost[p.Name] = lostAt(p, reason)
		}
		out = append(out, member)
	}
	for _, b := range beats {
		if !seen[b.ID] {
			out = append(out, assign.Member{ID: b.ID})
			reasons[b.ID] = ReasonPodGone
			lost[b.ID] = time.Time{}
		}
	}
	slices.SortFunc(out, func(a, b assign.Member) int {
		switch {
		case a.ID < b.ID:
			return -1
		case a.ID > b.ID:
			return 1
		}
		return 0
	})
	m.mu.Lock()
	for id, at := range lost {
		if prev, ok := m.lost[id]; at.IsZero() && ok {
			at = prev // first seen lost earlier
		} else if at.IsZero() {
			at = now
		}
		lost[id] = at
	}
	m.reasons, m.lost = reasons, lost
	m.mu.Unlock()
	return out, nil
}

// lostNodes reads the nodes the pods are on and returns those lost: gone
// (zero time: since this process first saw it so), or not Ready for grace
// (since the Ready condition turned); and, for the nodes not Ready but
// still within the grace, when it ends. The reads go to the manager's
// cache, which watches the Nodes, so a node's turn is seen within a watch
// event.
func (m *Membership) lostNodes(ctx context.Context, pods *corev1.PodList, now time.Time, grace time.Duration) (lost, ends map[string]time.Time, err error) {
	lost, ends = map[string]time.Time{}, map[string]time.Time{}
	seen := map[string]bool{}
	for i := range pods.Items {
		name := pods.Items[i].Spec.NodeName
		if name == "" || seen[name] {
			continue
		}
		seen[name] = true
		var node corev1.Node
		if err := m.c.Get(ctx, client.ObjectKey{Name: name}, &node); err != nil {
			if apierrors.IsNotFound(err) {
				lost[name] = time.Time{}
				continue
			}
			return nil, nil, fmt.Errorf("podmembership: node %s: %w", name, err)
		}
		// The second more of ReadyWithin: LastTransitionTime is cut down
		// to the second.
		if at, ok := nodeNotReadySince(&node); ok {
			if end := at.Add(grace + time.Second); now.Before(end) {
				ends[name] = end
			} else {
				lost[name] = at
			}
		}
	}
	return lost, ends, nil
}

// graceLeft is how long a NotReady pod that ReadyWithin counts Ready still
// has of its grace; 0 for a Ready pod (no end known).
func graceLeft(p *corev1.Pod, now time.Time, grace time.Duration) time.Duration {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status != corev1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return max(0, c.LastTransitionTime.Add(grace+time.Second).Sub(now))
		}
	}
	return 0
}

// soonest is the shortest of the positive durations ds; 0 when none is.
func soonest(ds ...time.Duration) time.Duration {
	var out time.Duration
	for _, d := range ds {
		if d > 0 && (out == 0 || d < out) {
			out = d
		}
	}
	return out
}

// nodeLost reports whether the node named is among lost.
func nodeLost(lost map[string]time.Time, node string) bool {
	_, ok := lost[node]
	return node != "" && ok
}

// nodeNotReadySince is when node's Ready condition turned False or
// Unknown; ok is false while it is Ready. A node that reports no Ready
// condition (one just registered) counts as Ready: its pods' own readiness
// and heartbeats tell.
func nodeNotReadySince(node *corev1.Node) (at time.Time, ok bool) {
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady && c.Status != corev1.ConditionTrue {
			return c.LastTransitionTime.Time, true
		}
	}
	return time.Time{}, false
}

// lostAt is when the pod stopped being live for reason, as far as the pod
// tells; zero when it does not (a heartbeat's end is not on the pod).
func lostAt(p *corev1.Pod, reason string) time.Time {
	switch reason {
	case ReasonPodDeleted:
		at := p.DeletionTimestamp.Time
		if g := p.DeletionGracePeriodSeconds; g != nil {
			at = at.Add(-time.Duration(*g) * time.Second) // deletionTimestamp is the end of the grace
		}
		return at
	case ReasonNotReady, ReasonPodFailed:
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodReady && c.Status != corev1.ConditionTrue {
				return c.LastTransitionTime.Time
			}
		}
	case ReasonDraining:
		if at, err := time.Parse(time.RFC3339Nano, p.Annotations[pulkav1.DrainingAnnotation]); err == nil {
			return at
		}
	}
	return time.Time{}
}

// LostSince is when runner stopped being live (or began draining), as the
// last Members call knew it; ok is false when it was live or unknown. The
// operator measures a migration's duration from it.
func (m *Membership) LostSince(runner string) (at time.Time, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	at, ok = m.lost[runner]
	return at, ok
}

// Reason says why runner was not live (or was draining) at the last Members
// call: one of the Reason constants, or "" when it was live. A runner the
// last call did not see at all was gone: ReasonPodGone.
func (m *Membership) Reason(runner string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.reasons[runner]; ok {
		return r
	}
	return ReasonPodGone
}

// ReadyWithin reports whether pod counts as Ready at now: its Ready
// condition is true, or turned false less than grace ago (so up to a second
// more: see below). A pod still
// starting within the grace counts too; the heartbeat, which a runner only
// sends once it is up, keeps it from being given tables too early.
func ReadyWithin(pod *corev1.Pod, now time.Time, grace time.Duration) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type != corev1.PodReady {
			continue
		}
		if c.Status == corev1.ConditionTrue {
			return true
		}
		// The API server keeps LastTransitionTime to the second, cut
		// down: the pod really turned NotReady up to a second later. Add
		// that second so a blip is never cut short of its grace.
		return grace > 0 && !c.LastTransitionTime.IsZero() && now.Sub(c.LastTransitionTime.Time) < grace+time.Second
	}
	return false
}
