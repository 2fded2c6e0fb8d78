package operator

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/pulka/pulka/pkg/assign"
	pulkav1 "github.com/pulka/pulka/services/operator/api/v1alpha1"
)

// Reasoner says why and since when a runner was not live:
// podmembership.Membership.
type Reasoner interface {
	Reason(runner string) string
	LostSince(runner string) (time.Time, bool)
}

// migrations records the tables the assigner moved off the pool's runners:
// a count and the last reason for the pool's status, a Kubernetes Event on
// the pool per move, and the metric pulka.operator.migrations by reason.
type migrations struct {
	pool     client.ObjectKey
	reasons  Reasoner
	rec      recorder.EventRecorder
	count    metric.Int64Counter
	duration metric.Float64Histogram
	now      func() time.Time

	mu   sync.Mutex
	last pulkav1.Migrations
}

func newMigrations(pool client.ObjectKey, reasons Reasoner, rec recorder.EventRecorder, mp metric.MeterProvider) (*migrations, error) {
	c, err := mp.Meter("github.com/pulka/pulka/services/operator").Int64Counter("pulka.operator.migrations",
		metric.WithDescription("Tables the operator moved off a runner, by reason (PodDeleted, PodFailed, NodeLost, NotReady, HeartbeatExpired, Draining, PodGone)."))
	if err != nil {
		return nil, err
	}
	d, err := mp.Meter("github.com/pulka/pulka/services/operator").Float64Histogram("pulka.operator.migration.duration",
		metric.WithUnit("s"),
		metric.WithDescription("From a runner ceasing to be live (pod deleted, NotReady, heartbeat expired, drain begun) to its table's move, by reason."),
		metric.WithExplicitBucketBoundaries(0.1, 0.25, 0.5, 1, 2, 3, 5, 10, 30, 60, 120))
	if err != nil {
		return nil, err
	}
	return &migrations{pool: pool, reasons: reasons, rec: rec, count: c, duration: d, now: time.Now}, nil
}

// onMove is the assigner's OnMove. A placement of a table that had no
// owner is not a migration.
func (m *migrations) onMove(ctx context.Context, mv assign.Move) {
	if mv.From == "" {
		return
	}
	reason := m.reasons.Reason(mv.From)
	attrs := metric.WithAttributes(attribute.String("reason", reason))
	m.count.Add(ctx, 1, attrs)
	now := metav1.NewTime(m.now())
	if since, ok := m.reasons.LostSince(mv.From); ok && !since.After(now.Time) {
		m.duration.Record(ctx, now.Sub(since).Seconds(), attrs)
	}
	m.mu.Lock()
	m.last.Count++
	m.last.LastReason = reason
	m.last.LastTime = &now
	m.mu.Unlock()
	pool := &pulkav1.RunnerPool{ObjectMeta: metav1.ObjectMeta{Namespace: m.pool.Namespace, Name: m.pool.Name}}
	pool.SetGroupVersionKind(pulkav1.GroupVersion.WithKind("RunnerPool"))
	m.rec.Eventf(pool, nil, corev1.EventTypeNormal, "TableMigrated", reason,
		"table %s moved from runner %s to %s: %s", mv.Table, mv.From, mv.To, reason)
}

// TakeMigrations implements controller.Migrations: it hands over the moves
// recorded since the last call (the reconciler adds them to the status, so
// the count survives a restart of the operator) for the pool this operator
// assigns; other pools have none.
func (m *migrations) TakeMigrations(pool client.ObjectKey) pulkav1.Migrations {
	if pool != m.pool {
		return pulkav1.Migrations{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	out := m.last
	m.last = pulkav1.Migrations{}
	return out
}
