// Package operator is the operator process: a controller-runtime manager
// (leader election through a coordination.k8s.io Lease) running the
// RunnerPool reconciler and, for the pool named by -pool, the assigner of
// pkg/assign over the pool's pods (podmembership).
package operator

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pulka/pulka/pkg/daemon"
)

// Environment variables of the operator's settings.
const (
	EnvID              = "PULKA_OPERATOR_ID"
	EnvPool            = "PULKA_OPERATOR_POOL"
	EnvNamespace       = "PULKA_OPERATOR_NAMESPACE"
	EnvLeaderElect     = "PULKA_OPERATOR_LEADER_ELECT"
	EnvLeaseNamespace  = "PULKA_OPERATOR_LEASE_NAMESPACE"
	EnvLeaseDuration   = "PULKA_OPERATOR_LEASE_DURATION"
	EnvAssignLeaderTTL = "PULKA_OPERATOR_ASSIGN_LEADER_TTL"
	EnvReconcile       = "PULKA_OPERATOR_RECONCILE_INTERVAL"
)

// LeaseName is the coordination.k8s.io Lease the operator replicas elect a
// leader with.
const LeaseName = "pulka-operator"

// Config is the operator's configuration: the daemon's base plus its own.
type Config struct {
	daemon.Base
	// ID names this replica in the elections (default: host name).
	ID string
	// Pool is namespace/name of the RunnerPool whose tables this operator
	// assigns; empty: the operator only manages pods, and the runners
	// assign among themselves (PULKA_RUNNER_ASSIGNER=true on their pods).
	Pool string
	// Namespace is the one namespace whose RunnerPools and pods this
	// operator manages (default: the pool's; empty with no pool: every
	// namespace). Limited to one, two releases in two namespaces do not
	// reconcile each other's pools, and the operator needs only a Role
	// there (and a ClusterRole for the Nodes alone).
	Namespace string
	// LeaderElect makes the replicas elect one leader through a Lease;
	// only the leader reconciles and assigns.
	LeaderElect    bool
	LeaseNamespace string
	LeaseDuration  time.Duration
	// AssignLeaderTTL is the TTL of the assigner's Redis leader lease, the
	// one that fences the assignment writes.
	AssignLeaderTTL time.Duration
	// Reconcile is how often the assigner runs Plan over the membership.
	Reconcile time.Duration
}

// RegisterFlags declares the base flags and the operator's.
func (c *Config) RegisterFlags(f *daemon.Flags) {
	c.Base.RegisterFlags(f)
	f.String(&c.ID, "id", EnvID, "", "this replica's id in the elections (default: host name)")
	f.String(&c.Pool, "pool", EnvPool, "", "namespace/name of the RunnerPool whose tables this operator assigns (empty: manage pods only)")
	f.String(&c.Namespace, "namespace", EnvNamespace, "", "the only namespace whose RunnerPools and pods this operator manages (default: the pool's; empty with no -pool: every namespace)")
	f.Bool(&c.LeaderElect, "leader-elect", EnvLeaderElect, true, "elect one active replica through a coordination.k8s.io Lease")
	f.String(&c.LeaseNamespace, "lease-namespace", EnvLeaseNamespace, "", "namespace of the leader Lease (default: the pool's, else the in-cluster namespace)")
	f.Duration(&c.LeaseDuration, "lease-duration", EnvLeaseDuration, 15*time.Second, "how long a silent leader keeps the Lease before a standby takes over")
	f.Duration(&c.AssignLeaderTTL, "assign-leader-ttl", EnvAssignLeaderTTL, 3*time.Second, "TTL of the assigner's Redis leader lease (fences assignment writes)")
	f.Duration(&c.Reconcile, "reconcile-interval", EnvReconcile, 500*time.Millisecond, "how often the assigner moves tables off runners that are not live")
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	errs := []error{c.Base.Validate()}
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{daemon.ErrConfig}, args...)...))
	}
	if c.Pool != "" {
		if ns, name, ok := strings.Cut(c.Pool, "/"); !ok || ns == "" || name == "" || strings.Contains(name, "/") {
			bad("-pool %q must be namespace/name", c.Pool)
		} else if c.Namespace != "" && ns != c.Namespace {
			bad("-pool %q is not in -namespace %q, the only one this operator sees", c.Pool, c.Namespace)
		}
	}
	if c.ID != "" && strings.ContainsAny(c.ID, "{}, \t\r\n") {
		bad("-id %q must not contain braces, commas or spaces", c.ID)
	}
	if c.LeaseDuration < time.Second {
		bad("-lease-duration must be at least 1s")
	}
	if c.AssignLeaderTTL < 100*time.Millisecond {
		bad("-assign-leader-ttl must be at least 100ms")
	}
	if c.Reconcile < time.Millisecond {
		bad("-reconcile-interval must be at least 1ms")
	}
	return errors.Join(errs...)
}

// WatchNamespace is the namespace the operator manages: -namespace, else the
// pool's; "" is every namespace.
func (c *Config) WatchNamespace() string {
	if c.Namespace != "" {
		return c.Namespace
	}
	ns, _, _ := strings.Cut(c.Pool, "/")
	return ns
}
