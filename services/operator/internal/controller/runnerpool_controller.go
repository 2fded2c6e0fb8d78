// Package controller reconciles RunnerPools: it creates and deletes the
// table-runner pods itself (as Agones' GameServerSet does, not through a
// Deployment), so that a pod chosen for removal is drained — its tables moved
// by the assigner — before it is deleted.
package controller

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	logf "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/recorder"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/pkg/envnames"
	pulkav1 "github.com/pulka/pulka/services/operator/api/v1alpha1"
)

// ContainerName is the runner container's name in the pods the operator makes.
const ContainerName = "table-runner"

// AdminPort is the runner's admin server (/healthz, /readyz, /metrics) in
// the pods the operator makes.
const AdminPort = 9090

// RunAsUser is the uid and gid the runner container runs as: distroless'
// nonroot (65532), the user of every Pulka image (deploy/docker/Dockerfile)
// and the chart's podSecurityContext. The kubelet enforces runAsNonRoot
// only against a numeric user: with none given here it reads the image's,
// and refuses to start an image whose USER is a name.
const RunAsUser = 65532

// Assignment is where the reconciler reads how many tables each runner owns:
// assign.Store (table → runner, "" for a table no runner could take).
type Assignment interface {
	Owners(ctx context.Context) (map[string]string, error)
}

// Migrations reports the tables the assigner moved off a pool's runners
// since the last call; the reconciler adds them to the pool's status. nil:
// no assigner runs in this process.
type Migrations interface {
	TakeMigrations(pool client.ObjectKey) pulkav1.Migrations
}

// RunnerPoolReconciler sizes, rolls and drains a RunnerPool's pods and keeps
// its status.
type RunnerPoolReconciler struct {
	client.Client
	// APIReader lists the pods straight from the API server: the cache may
	// lag a creation, and counting from it would create pods twice.
	APIReader client.Reader
	Recorder  recorder.EventRecorder
	Tables    Assignment
	Moves     Migrations
	// Now is the clock (nil: time.Now); tests of the drain timeout set it.
	Now func() time.Time
	// Resync is how often a pool is looked at again without any change of
	// its pods, to follow its tables (default 2 s).
	Resync time.Duration
}

// The operator manages one namespace (its manager's cache is limited to
// it): what it reads and writes there is a Role's, generated for the
// sample's namespace pulka (the chart binds the same rules in the
// release's).
// +kubebuilder:rbac:groups=pulka.dev,resources=runnerpools,verbs=get;list;watch;update;patch,namespace=pulka
// +kubebuilder:rbac:groups=pulka.dev,resources=runnerpools/status,verbs=get;update;patch,namespace=pulka
// +kubebuilder:rbac:groups=pulka.dev,resources=runnerpools/scale,verbs=get;update;patch,namespace=pulka
// +kubebuilder:rbac:groups="",resources=pods,verbs=get;list;watch;create;update;patch;delete,namespace=pulka
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;patch,namespace=pulka
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete,namespace=pulka

// SetupWithManager registers the reconciler: it watches pools and the pods
// they own.
func (r *RunnerPoolReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&pulkav1.RunnerPool{}).
		Owns(&corev1.Pod{}).
		Named("runnerpool").
		Complete(r)
}

// NewScheme returns a scheme with the core types and the operator's.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := corev1.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := pulkav1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

func (r *RunnerPoolReconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// runner is one pod of the pool with what the reconciler derives from it.
type runner struct {
	pod      *corev1.Pod
	tables   int
	ready    bool
	updated  bool
	draining bool
	drainAt  time.Time
}

// Reconcile brings one pool's pods toward its spec:
//
//  1. failed pods are deleted (their tables move: the membership does not
//     count them);
//  2. a draining pod is deleted once it owns no table or its drain timeout
//     has passed;
//  3. the pool is sized: desired = replicas when set, else
//     ceil(tables / (tablesPerRunner × target utilisation)), within
//     [minRunners, maxRunners]; missing pods are created, surplus ones are
//     marked draining (least-loaded first), never deleted outright;
//  4. a template change rolls one runner at a time: one new pod is started
//     beside the desired count, and when every runner is Ready one outdated
//     runner is drained;
//  5. the status and its conditions are written.
func (r *RunnerPoolReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := logf.FromContext(ctx)
	var pool pulkav1.RunnerPool
	if err := r.Get(ctx, req.NamespacedName, &pool); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if pool.DeletionTimestamp != nil {
		return ctrl.Result{}, nil // the pods go with it (owner references)
	}
	now := r.now()
	hash := TemplateHash(&pool.Spec.Template)

	var pods corev1.PodList
	if err := r.APIReader.List(ctx, &pods, client.InNamespace(pool.Namespace),
		client.MatchingLabels{pulkav1.PoolLabel: pool.Name}); err != nil {
		return ctrl.Result{}, fmt.Errorf("list pods of %s: %w", req.NamespacedName, err)
	}
	owners, err := r.Tables.Owners(ctx)
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("tables of %s: %w", req.NamespacedName, err)
	}
	load := make(map[string]int, len(pods.Items))
	unplaced := 0
	for _, o := range owners {
		if o == "" {
			unplaced++
			continue
		}
		load[o]++
	}

	var active, draining []*runner
	tables := unplaced
	requeue := r.resync()
	for i := range pods.Items {
		p := &pods.Items[i]
		if !metav1.IsControlledBy(p, &pool) {
			continue
		}
		tables += load[p.Name]
		if p.DeletionTimestamp != nil {
			continue
		}
		if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
			if load[p.Name] > 0 {
				// Kept until its tables have moved: the assigner tells
				// why a runner was lost from its pod (PodFailed); a pod
				// deleted first would leave it only "gone". A replacement
				// is made meanwhile (the failed pod is not active).
				continue
			}
			log.Info("deleting a finished runner pod", "pod", p.Name, "phase", p.Status.Phase)
			r.Recorder.Eventf(&pool, p, corev1.EventTypeWarning, "RunnerFailed", "Delete",
				"runner pod %s is %s; its tables move", p.Name, p.Status.Phase)
			if err := r.Delete(ctx, p); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, err
			}
			continue
		}
		rn := &runner{pod: p, tables: load[p.Name], ready: podReady(p), updated: p.Labels[pulkav1.TemplateHashLabel] == hash}
		if at, ok := p.Annotations[pulkav1.DrainingAnnotation]; ok {
			rn.draining = true
			rn.drainAt, _ = time.Parse(time.RFC3339Nano, at)
			draining = append(draining, rn)
			continue
		}
		active = append(active, rn)
	}

	// 2. Finish drains.
	stillDraining := draining[:0:0]
	for _, rn := range draining {
		deadline := rn.drainAt.Add(pool.Spec.DrainTimeout.Duration)
		if rn.tables > 0 && now.Before(deadline) {
			requeue = min(requeue, max(deadline.Sub(now), 100*time.Millisecond))
			stillDraining = append(stillDraining, rn)
			continue
		}
		why := "its tables have moved"
		if rn.tables > 0 {
			why = fmt.Sprintf("the drain timeout passed with %d tables left", rn.tables)
		}
		r.Recorder.Eventf(&pool, rn.pod, corev1.EventTypeNormal, "RunnerDrained", "Delete",
			"deleting runner pod %s: %s", rn.pod.Name, why)
		if err := r.Delete(ctx, rn.pod); client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
	}
	draining = stillDraining

	// 3 and 4. Size and roll.
	desired := DesiredRunners(&pool.Spec, tables)
	outdated := 0
	allReady := true
	for _, rn := range active {
		if !rn.updated {
			outdated++
		}
		if !rn.ready {
			allReady = false
		}
	}
	target := desired
	if outdated > 0 && desired > 0 {
		target++ // surge one new runner while rolling
	}
	switch {
	case len(active) < target && (len(active) < desired || allReady):
		for range target - len(active) {
			p, err := r.newPod(&pool, hash)
			if err != nil {
				return ctrl.Result{}, err
			}
			if err := r.Create(ctx, p); err != nil {
				return ctrl.Result{}, fmt.Errorf("create runner pod of %s: %w", req.NamespacedName, err)
			}
			log.Info("created runner pod", "pod", p.Name)
			r.Recorder.Eventf(&pool, p, corev1.EventTypeNormal, "RunnerCreated", "Create", "created runner pod %s", p.Name)
			active = append(active, &runner{pod: p, updated: true})
		}
	case len(active) > target || (outdated > 0 && len(active) == target && allReady && len(draining) == 0):
		n := max(len(active)-target, 1)
		for _, rn := range pickForDrain(active, n) {
			if err := r.markDraining(ctx, rn.pod, now); err != nil {
				return ctrl.Result{}, err
			}
			why := "the pool is scaling down"
			if !rn.updated {
				why = "its template is outdated"
			}
			r.Recorder.Eventf(&pool, rn.pod, corev1.EventTypeNormal, "RunnerDraining", "Drain",
				"draining runner pod %s (%d tables): %s", rn.pod.Name, rn.tables, why)
			rn.draining = true
			draining = append(draining, rn)
		}
		active = slices.DeleteFunc(active, func(rn *runner) bool { return rn.draining })
		requeue = min(requeue, 100*time.Millisecond)
	}

	// 5. Status.
	if err := r.writeStatus(ctx, &pool, active, draining, desired, tables, unplaced, outdated); err != nil {
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

func (r *RunnerPoolReconciler) resync() time.Duration {
	if r.Resync > 0 {
		return r.Resync
	}
	return 2 * time.Second
}

// DesiredRunners is the number of runners spec asks for with tables tables:
// spec.replicas when set, else enough that the tables fill the runners to the
// target utilisation; always within [minRunners, maxRunners].
func DesiredRunners(spec *pulkav1.RunnerPoolSpec, tables int) int {
	lo, hi := int(spec.MinRunners), int(max(spec.MaxRunners, spec.MinRunners))
	var want int
	if spec.Replicas != nil {
		want = int(*spec.Replicas)
	} else {
		per := int64(max(spec.TablesPerRunner, 1)) * int64(min(max(spec.TargetUtilizationPercent, 1), 100))
		want = int((int64(tables)*100 + per - 1) / per)
	}
	return min(max(want, lo), hi)
}

// pickForDrain chooses n runners to drain: not Ready ones first (they serve
// nothing), then outdated ones, then the least-loaded (fewest tables to
// move), ties by name so the choice is stable.
func pickForDrain(active []*runner, n int) []*runner {
	c := slices.Clone(active)
	slices.SortFunc(c, func(a, b *runner) int {
		if a.ready != b.ready {
			if !a.ready {
				return -1
			}
			return 1
		}
		if a.updated != b.updated {
			if !a.updated {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.tables, b.tables), cmp.Compare(a.pod.Name, b.pod.Name))
	})
	return c[:min(n, len(c))]
}

func (r *RunnerPoolReconciler) markDraining(ctx context.Context, p *corev1.Pod, now time.Time) error {
	patch := client.MergeFrom(p.DeepCopy())
	if p.Annotations == nil {
		p.Annotations = map[string]string{}
	}
	p.Annotations[pulkav1.DrainingAnnotation] = now.UTC().Format(time.RFC3339Nano)
	if err := r.Patch(ctx, p, patch); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("mark %s draining: %w", p.Name, err)
	}
	return nil
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// TemplateHash names a pod template: pods whose hash label differs from the
// pool's are rolled.
func TemplateHash(t *pulkav1.RunnerTemplate) string {
	b, _ := json.Marshal(t) // a struct of plain fields: Marshal cannot fail
	h := fnv.New32a()
	_, _ = h.Write(b)
	return strconv.FormatUint(uint64(h.Sum32()), 36)
}

// newPod makes a runner pod of pool from its template. The runner's id is
// the pod's name (downward API), the id the membership and the assignment
// know it by.
func (r *RunnerPoolReconciler) newPod(pool *pulkav1.RunnerPool, hash string) (*corev1.Pod, error) {
	t := &pool.Spec.Template
	// The template's labels are kept, app.kubernetes.io/* included: they are
	// what others select the runners by (the chart's PodMonitor,
	// NetworkPolicy and topology spread match its own name, instance and
	// component). The operator forces only its own pulka.dev/ labels, which
	// its listing of a pool's pods, its pod cache and the scale selector rest
	// on; a template naming no application gets table-runner.
	podLabels := labels.Merge(labels.Set{"app.kubernetes.io/name": "table-runner"}, t.Labels)
	podLabels = labels.Merge(podLabels, labels.Set{
		pulkav1.PoolLabel:         pool.Name,
		pulkav1.TemplateHashLabel: hash,
	})
	env := []corev1.EnvVar{
		{Name: envnames.RunnerID, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}},
		{Name: envnames.RunnerCapacity, Value: strconv.Itoa(int(pool.Spec.TablesPerRunner))},
		{Name: envnames.RunnerHeartbeatTTL, Value: pool.Spec.HeartbeatTTL.Duration.String()},
		// The operator assigns; its runners take no part in the election.
		{Name: envnames.RunnerAssigner, Value: "false"},
		// The probes (on the port named admin) and Prometheus reach the
		// admin server on the pod's IP at AdminPort.
		{Name: daemon.EnvAdminAddr, Value: ":" + strconv.Itoa(AdminPort)},
	}
	// These variables are the operator's: the pod's probes, ports, id and
	// capacity follow from them. A template entry of the same name would
	// come later and win (the last of a name does), so it is dropped.
	owned := map[string]bool{}
	for _, e := range env {
		owned[e.Name] = true
	}
	for _, e := range t.Env {
		if !owned[e.Name] {
			env = append(env, e)
		}
	}
	var volumes []corev1.Volume
	var mounts []corev1.VolumeMount
	for _, m := range t.SecretMounts {
		volumes = append(volumes, corev1.Volume{Name: m.Name,
			VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: m.SecretName}}})
		mounts = append(mounts, corev1.VolumeMount{Name: m.Name, MountPath: m.MountPath, ReadOnly: true})
	}
	probe := func(path string, period int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("admin")}},
			PeriodSeconds: period, FailureThreshold: 3, TimeoutSeconds: 2,
		}
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: pool.Name + "-" + hash + "-",
			Namespace:    pool.Namespace,
			Labels:       podLabels,
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:            ContainerName,
				Image:           t.Image,
				ImagePullPolicy: t.ImagePullPolicy,
				Resources:       t.Resources,
				Env:             env,
				VolumeMounts:    mounts,
				Ports:           []corev1.ContainerPort{{Name: "admin", ContainerPort: AdminPort, Protocol: corev1.ProtocolTCP}},
				// Ready is what the membership counts as live (with a fresh
				// heartbeat): /readyz says the runner is serving its tables.
				ReadinessProbe: probe("/readyz", 2),
				LivenessProbe:  probe("/healthz", 10),
				// The chart's securityContext for every Pulka container.
				SecurityContext: &corev1.SecurityContext{
					AllowPrivilegeEscalation: ptr.To(false),
					ReadOnlyRootFilesystem:   ptr.To(true),
					RunAsNonRoot:             ptr.To(true),
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
					SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				},
			}},
			// The chart's podSecurityContext. RunAsUser lets the kubelet
			// verify runAsNonRoot whatever the image's USER says (a name
			// cannot be verified: the container would not start).
			SecurityContext: &corev1.PodSecurityContext{
				RunAsNonRoot:   ptr.To(true),
				RunAsUser:      ptr.To[int64](RunAsUser),
				RunAsGroup:     ptr.To[int64](RunAsUser),
				FSGroup:        ptr.To[int64](RunAsUser),
				SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
			},
			// nil: Kubernetes' default (30 s).
			TerminationGracePeriodSeconds: t.TerminationGracePeriodSeconds,
			NodeSelector:                  t.NodeSelector,
			Tolerations:                   t.Tolerations,
			Affinity:                      t.Affinity,
			TopologySpreadConstraints:     t.TopologySpreadConstraints,
			Volumes:                       volumes,
			ServiceAccountName:            t.ServiceAccountName,
			// A runner is replaced by a new pod (a new id) rather than
			// restarted in place: its tables have moved meanwhile.
			RestartPolicy: corev1.RestartPolicyNever,
		},
	}
	if err := controllerutil.SetControllerReference(pool, p, r.Scheme()); err != nil {
		return nil, err
	}
	return p, nil
}

func (r *RunnerPoolReconciler) writeStatus(ctx context.Context, pool *pulkav1.RunnerPool, active, draining []*runner,
	desired, tables, unplaced, outdated int) error {
	before := pool.DeepCopy()
	st := &pool.Status
	ready, updated := 0, 0
	for _, rn := range active {
		if rn.ready {
			ready++
		}
		if rn.updated {
			updated++
		}
	}
	st.ObservedGeneration = pool.Generation
	st.Replicas = int32(len(active) + len(draining))
	st.DesiredRunners = int32(desired)
	st.ReadyRunners = int32(ready)
	st.DrainingRunners = int32(len(draining))
	st.UpdatedRunners = int32(updated)
	st.Tables = int32(tables)
	st.Capacity = int32(ready) * pool.Spec.TablesPerRunner
	st.Selector = labels.SelectorFromSet(labels.Set{pulkav1.PoolLabel: pool.Name}).String()
	if r.Moves != nil {
		if mv := r.Moves.TakeMigrations(client.ObjectKeyFromObject(pool)); mv.Count > 0 {
			st.Migrations.Count += mv.Count
			st.Migrations.LastReason, st.Migrations.LastTime = mv.LastReason, mv.LastTime
		}
	}

	gen := pool.Generation
	avail := metav1.Condition{Type: pulkav1.ConditionAvailable, ObservedGeneration: gen}
	if ready >= int(pool.Spec.MinRunners) && (desired == 0 || ready > 0) {
		avail.Status, avail.Reason = metav1.ConditionTrue, "MinimumRunnersReady"
		avail.Message = fmt.Sprintf("%d of at least %d runners ready", ready, pool.Spec.MinRunners)
	} else {
		avail.Status, avail.Reason = metav1.ConditionFalse, "TooFewRunnersReady"
		avail.Message = fmt.Sprintf("%d runners ready, at least %d wanted", ready, pool.Spec.MinRunners)
	}
	prog := metav1.Condition{Type: pulkav1.ConditionProgressing, ObservedGeneration: gen,
		Status: metav1.ConditionFalse, Reason: "Stable", Message: fmt.Sprintf("%d runners ready as desired", ready)}
	switch {
	case outdated > 0:
		prog.Status, prog.Reason = metav1.ConditionTrue, "Rolling"
		prog.Message = fmt.Sprintf("%d runners on an outdated template", outdated)
	case len(draining) > 0:
		prog.Status, prog.Reason = metav1.ConditionTrue, "Draining"
		prog.Message = fmt.Sprintf("%d runners draining", len(draining))
	case len(active) != desired || ready != desired:
		prog.Status, prog.Reason = metav1.ConditionTrue, "Scaling"
		prog.Message = fmt.Sprintf("%d runners, %d ready, %d desired", len(active), ready, desired)
	}
	deg := metav1.Condition{Type: pulkav1.ConditionDegraded, ObservedGeneration: gen,
		Status: metav1.ConditionFalse, Reason: "AsDesired", Message: "every table has a runner"}
	switch {
	case unplaced > 0:
		deg.Status, deg.Reason = metav1.ConditionTrue, "TablesUnplaced"
		deg.Message = fmt.Sprintf("%d tables have no runner with room", unplaced)
	case tables > int(st.Capacity) && desired == int(pool.Spec.MaxRunners):
		deg.Status, deg.Reason = metav1.ConditionTrue, "AtMaxRunners"
		deg.Message = fmt.Sprintf("%d tables exceed the capacity %d of the most runners allowed", tables, st.Capacity)
	}
	for _, c := range []metav1.Condition{avail, prog, deg} {
		meta.SetStatusCondition(&st.Conditions, c)
	}
	if equalStatus(&before.Status, st) {
		return nil
	}
	if err := r.Status().Patch(ctx, pool, client.MergeFrom(before)); err != nil {
		return client.IgnoreNotFound(err)
	}
	return nil
}

func equalStatus(a, b *pulkav1.RunnerPoolStatus) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
