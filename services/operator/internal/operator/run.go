package operator

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/go-logr/logr"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/metric"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/pulka/pulka/pkg/assign"
	"github.com/pulka/pulka/pkg/daemon"
	pulkav1 "github.com/pulka/pulka/services/operator/api/v1alpha1"
	"github.com/pulka/pulka/services/operator/internal/controller"
	"github.com/pulka/pulka/services/operator/internal/podmembership"
)

// Run is the operator's daemon.RunFunc: the cluster from the in-cluster
// service account or KUBECONFIG, then the manager until ctx ends.
func (c *Config) Run(ctx context.Context, d *daemon.Daemon) error {
	restCfg, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("operator: kubernetes client config: %w", err)
	}
	// controller-runtime logs through its process-wide logger; give it the
	// daemon's JSON log.
	ctrl.SetLogger(logr.FromSlogHandler(d.Logger.Handler()))
	mgr, err := c.NewManager(restCfg, d.Redis, d.Telemetry.MeterProvider, d.Logger, false)
	if err != nil {
		return err
	}
	d.Started()
	return mgr.Start(ctx)
}

// NewManager builds the manager: the RunnerPool reconciler, and, when
// c.Pool is set, the assigner over the pool's pods. Both run only on the
// elected replica (with c.LeaderElect). skipNameValidation lets a test run
// several managers in one process.
func (c *Config) NewManager(restCfg *rest.Config, rdb redis.UniversalClient, mp metric.MeterProvider,
	log *slog.Logger, skipNameValidation bool) (manager.Manager, error) {
	scheme, err := controller.NewScheme()
	if err != nil {
		return nil, err
	}
	id := c.ID
	if id == "" {
		if id, err = os.Hostname(); err != nil {
			return nil, fmt.Errorf("operator: host name for the id: %w", err)
		}
	}
	var pool client.ObjectKey
	if c.Pool != "" {
		ns, name, _ := strings.Cut(c.Pool, "/")
		pool = client.ObjectKey{Namespace: ns, Name: name}
	}
	leaseNS := c.LeaseNamespace
	if leaseNS == "" {
		leaseNS = pool.Namespace
	}
	var lock resourcelock.Interface
	if c.LeaderElect {
		if lock, err = newLock(restCfg, leaseNS, id); err != nil {
			return nil, err
		}
	}
	// The pods of every pool: those with the pool label.
	runnerPods, err := labels.Parse(pulkav1.PoolLabel)
	if err != nil {
		return nil, fmt.Errorf("operator: runner pod selector: %w", err)
	}
	// One namespace's pools and pods, when the operator has one: a release
	// manages its own pool only, and its Role grants no more. The Nodes the
	// membership reads are cluster-scoped: controller-runtime caches them
	// cluster-wide whatever DefaultNamespaces says.
	var namespaces map[string]cache.Config
	if ns := c.WatchNamespace(); ns != "" {
		namespaces = map[string]cache.Config{ns: {}}
	}
	renew := c.LeaseDuration * 2 / 3
	retry := c.LeaseDuration / 5
	mgr, err := ctrl.NewManager(restCfg, ctrl.Options{
		Scheme: scheme,
		Logger: logr.FromSlogHandler(log.Handler()),
		// The daemon's admin server serves /metrics and the probes.
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		LeaderElection:         c.LeaderElect,
		// Our own lock, so the Lease names the replica by its id.
		LeaderElectionResourceLockInterface: lock,
		LeaderElectionReleaseOnCancel:       true,
		LeaseDuration:                       &c.LeaseDuration,
		RenewDeadline:                       &renew,
		RetryPeriod:                         &retry,
		Controller:                          config.Controller{SkipNameValidation: &skipNameValidation},
		// Cache only the runner pods, not every pod of the cluster.
		Cache: cache.Options{DefaultNamespaces: namespaces, ByObject: map[client.Object]cache.ByObject{
			&corev1.Pod{}: {Label: runnerPods},
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("operator: manager: %w", err)
	}
	rec := mgr.GetEventRecorder("pulka-operator")
	store := assign.NewStore(rdb)
	r := &controller.RunnerPoolReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: rec, Tables: store,
	}
	if c.Pool != "" {
		// The heartbeat TTL only matters to Beat, which the operator never
		// calls; Members reads the deadlines the runners wrote.
		// The membership reads the manager's cache (informers on the pool
		// and its pods): it is asked on every placement and every reconcile
		// pass, and a pod's change reaches the cache within a watch event.
		mem := podmembership.New(mgr.GetClient(), pool, assign.NewHeartbeats(rdb, time.Second), nil)
		moves, err := newMigrations(pool, mem, rec, mp)
		if err != nil {
			return nil, err
		}
		r.Moves = moves
		asg, err := assign.NewAssigner(rdb, mem, store, assign.AssignerOptions{
			ID: "operator-" + id, LeaderTTL: c.AssignLeaderTTL, Interval: c.Reconcile,
			OnMove: moves.onMove, MeterProvider: mp, Logger: log,
		})
		if err != nil {
			return nil, err
		}
		// A RunnableFunc runs only on the elected replica; the assigner's
		// own Redis lease still fences its writes should two ever overlap.
		if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
			return runAssigner(ctx, mgr.GetCache(), pool, asg)
		})); err != nil {
			return nil, err
		}
	}
	if err := r.SetupWithManager(mgr); err != nil {
		return nil, fmt.Errorf("operator: reconciler: %w", err)
	}
	return mgr, nil
}

// runAssigner runs asg, waking it on every event of the pool's pods: a pod
// turning Ready starts a runner's heartbeat being timed (the assigner's
// passes come at each live runner's expiry, so it must have seen the runner
// live once), and a pod deleted, failed or turning NotReady is acted on at
// once instead of at the next pass. The informer's cache is updated before
// its handlers are called, so the pass reads what the event told.
func runAssigner(ctx context.Context, c cache.Cache, pool client.ObjectKey, asg *assign.Assigner) error {
	inf, err := c.GetInformer(ctx, &corev1.Pod{})
	if err != nil {
		return fmt.Errorf("operator: pod informer: %w", err)
	}
	mine := func(obj any) bool {
		p, ok := obj.(*corev1.Pod)
		// A tombstone (a deletion the watch missed) may be anyone's: wake.
		return !ok || (p.Namespace == pool.Namespace && p.Labels[pulkav1.PoolLabel] == pool.Name)
	}
	reg, err := inf.AddEventHandler(toolscache.FilteringResourceEventHandler{
		FilterFunc: mine,
		Handler: toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(any) { asg.Wake() },
			UpdateFunc: func(any, any) { asg.Wake() },
			DeleteFunc: func(any) { asg.Wake() },
		},
	})
	if err != nil {
		return fmt.Errorf("operator: pod events: %w", err)
	}
	defer func() { _ = inf.RemoveEventHandler(reg) }()
	return asg.Run(ctx)
}

// serviceAccountNamespace is where a pod finds its own namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// newLock makes the Lease lock the replicas elect a leader with, holding
// id: `kubectl get lease pulka-operator` shows which replica leads.
func newLock(restCfg *rest.Config, ns, id string) (resourcelock.Interface, error) {
	if ns == "" {
		b, err := os.ReadFile(serviceAccountNamespace)
		if err != nil {
			return nil, fmt.Errorf("operator: no -lease-namespace or -pool, and not in a cluster: %w", err)
		}
		ns = strings.TrimSpace(string(b))
	}
	cs, err := kubernetes.NewForConfig(rest.AddUserAgent(restCfg, "leader-election"))
	if err != nil {
		return nil, fmt.Errorf("operator: leader election client: %w", err)
	}
	return resourcelock.New(resourcelock.LeasesResourceLock, ns, LeaseName, cs.CoreV1(), cs.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: id})
}
