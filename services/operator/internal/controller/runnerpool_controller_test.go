package controller_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/yaml"

	"github.com/pulka/pulka/pkg/assign"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
	pulkav1 "github.com/pulka/pulka/services/operator/api/v1alpha1"
	"github.com/pulka/pulka/services/operator/internal/controller"
	"github.com/pulka/pulka/services/operator/internal/kubetest"
)

var env *kubetest.Env

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m, &env)) }

// fixture is one test's namespace, Redis assignment and running reconciler.
type fixture struct {
	t     *testing.T
	ctx   context.Context
	ns    string
	c     client.Client
	store *assign.Store
}

func start(t *testing.T) *fixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ns, err := env.Namespace(ctx, "pool")
	if err != nil {
		t.Fatal(err)
	}
	rdb := redistest.Start(t).Client(t)
	store := assign.NewStore(rdb)
	skip := true
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  cache.Options{DefaultNamespaces: map[string]cache.Config{ns: {}}},
		Controller:             config.Controller{SkipNameValidation: &skip},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := &controller.RunnerPoolReconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(),
		Recorder: mgr.GetEventRecorder("pulka-operator"), Tables: store,
		Resync: 200 * time.Millisecond,
	}
	if err := r.SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("manager: %v", err)
		}
	})
	return &fixture{t: t, ctx: ctx, ns: ns, c: env.Client, store: store}
}

func (f *fixture) createPool(name string, mutate func(*pulkav1.RunnerPoolSpec)) *pulkav1.RunnerPool {
	f.t.Helper()
	p := &pulkav1.RunnerPool{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec: pulkav1.RunnerPoolSpec{
			Template:                 pulkav1.RunnerTemplate{Image: "pulka/table-runner:test"},
			MinRunners:               1,
			MaxRunners:               5,
			TablesPerRunner:          4,
			TargetUtilizationPercent: 100,
			DrainTimeout:             metav1.Duration{Duration: time.Minute},
			HeartbeatTTL:             metav1.Duration{Duration: 3 * time.Second},
			NotReadyGrace:            metav1.Duration{Duration: 5 * time.Second},
		},
	}
	if mutate != nil {
		mutate(&p.Spec)
	}
	if err := f.c.Create(f.ctx, p); err != nil {
		f.t.Fatal(err)
	}
	return p
}

func (f *fixture) updatePool(name string, mutate func(*pulkav1.RunnerPoolSpec)) {
	f.t.Helper()
	f.eventually("update the pool", func() error {
		var p pulkav1.RunnerPool
		if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: name}, &p); err != nil {
			return err
		}
		mutate(&p.Spec)
		return f.c.Update(f.ctx, &p)
	})
}

func (f *fixture) pool(name string) *pulkav1.RunnerPool {
	f.t.Helper()
	var p pulkav1.RunnerPool
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: name}, &p); err != nil {
		f.t.Fatal(err)
	}
	return &p
}

// pods returns the pool's pods, sorted by name.
func (f *fixture) pods(pool string) []corev1.Pod {
	f.t.Helper()
	var l corev1.PodList
	if err := f.c.List(f.ctx, &l, client.InNamespace(f.ns), client.MatchingLabels{pulkav1.PoolLabel: pool}); err != nil {
		f.t.Fatal(err)
	}
	slices.SortFunc(l.Items, func(a, b corev1.Pod) int {
		if a.Name < b.Name {
			return -1
		}
		return 1
	})
	return l.Items
}

// eventually retries cond until it returns nil, failing the test after 20 s
// with its last error.
func (f *fixture) eventually(what string, cond func() error) {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("%s: %v", what, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitPods waits until the pool has n pods that are not draining, and
// returns all its pods.
func (f *fixture) waitPods(pool string, n int) []corev1.Pod {
	f.t.Helper()
	var pods []corev1.Pod
	f.eventually(fmt.Sprintf("%d runner pods", n), func() error {
		pods = f.pods(pool)
		active := 0
		for _, p := range pods {
			if _, d := p.Annotations[pulkav1.DrainingAnnotation]; !d {
				active++
			}
		}
		if active != n {
			return fmt.Errorf("%d active of %d pods", active, len(pods))
		}
		return nil
	})
	return pods
}

// readyAll plays the kubelet: every pod of the pool not Ready yet becomes Ready.
func (f *fixture) readyAll(pool string) {
	f.t.Helper()
	for _, p := range f.pods(pool) {
		if !isReady(&p) {
			if err := env.SetReady(f.ctx, &p, true); err != nil && !apierrors.IsNotFound(err) {
				f.t.Fatal(err)
			}
		}
	}
}

func isReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// give records tables as owned by runner, as the assigner would.
func (f *fixture) give(runner string, tables ...string) {
	f.t.Helper()
	for _, tb := range tables {
		if ok, err := f.store.Add(f.ctx, streams.Lease{}, tb, runner); err != nil || !ok {
			f.t.Fatalf("add %s to %s: %v %v", tb, runner, ok, err)
		}
	}
}

func (f *fixture) condition(pool, typ string) metav1.ConditionStatus {
	c := meta.FindStatusCondition(f.pool(pool).Status.Conditions, typ)
	if c == nil {
		return ""
	}
	return c.Status
}

// The pool starts at its minimum, the pods are made from the template with
// the runner's id from the pod name, and the status follows the readiness
// the test sets.
func TestPoolCreatesMinRunnersAndReportsStatus(t *testing.T) {
	f := start(t)
	p := f.createPool("rp", func(s *pulkav1.RunnerPoolSpec) {
		s.MinRunners = 2
		s.Template.Env = []corev1.EnvVar{{Name: "PULKA_REDIS_ADDR", Value: "redis:6379"}}
		s.Template.NodeSelector = map[string]string{"pool": "games"}
		s.Template.SecretMounts = []pulkav1.SecretMount{{Name: "redis-ca", SecretName: "ca", MountPath: "/etc/pulka/redis-ca"}}
	})
	pods := f.waitPods("rp", 2)
	for _, pod := range pods {
		if !metav1.IsControlledBy(&pod, p) {
			t.Errorf("%s is not controlled by the pool", pod.Name)
		}
		if v := pod.Spec.Volumes; len(v) != 1 || v[0].Name != "redis-ca" || v[0].Secret == nil || v[0].Secret.SecretName != "ca" {
			t.Errorf("%s: volumes %+v, want the secret mount's", pod.Name, v)
		}
		if m := pod.Spec.Containers[0].VolumeMounts; len(m) != 1 || m[0].MountPath != "/etc/pulka/redis-ca" || !m[0].ReadOnly {
			t.Errorf("%s: mounts %+v, want /etc/pulka/redis-ca read-only", pod.Name, m)
		}
		if pod.Spec.NodeSelector["pool"] != "games" || pod.Spec.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("%s: node selector %v, restart %s", pod.Name, pod.Spec.NodeSelector, pod.Spec.RestartPolicy)
		}
		env := map[string]corev1.EnvVar{}
		for _, e := range pod.Spec.Containers[0].Env {
			env[e.Name] = e
		}
		if id := env["PULKA_RUNNER_ID"]; id.ValueFrom == nil || id.ValueFrom.FieldRef.FieldPath != "metadata.name" {
			t.Errorf("%s: PULKA_RUNNER_ID %+v, want the pod name", pod.Name, id)
		}
		if env["PULKA_RUNNER_CAPACITY"].Value != "4" || env["PULKA_RUNNER_ASSIGNER"].Value != "false" ||
			env["PULKA_REDIS_ADDR"].Value != "redis:6379" || env["PULKA_ADMIN_ADDR"].Value != ":9090" {
			t.Errorf("%s: env %v", pod.Name, env)
		}
		// Hardened as every Pulka container, and Ready only when the runner
		// says so (the membership counts Ready pods).
		c := pod.Spec.Containers[0]
		sc, psc := c.SecurityContext, pod.Spec.SecurityContext
		if sc == nil || psc == nil || !ptr.Deref(sc.ReadOnlyRootFilesystem, false) || ptr.Deref(sc.AllowPrivilegeEscalation, true) ||
			!ptr.Deref(psc.RunAsNonRoot, false) || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault ||
			sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
			t.Errorf("%s: security context %+v / %+v", pod.Name, sc, psc)
		}
		// runAsNonRoot needs a numeric user to check: without one the
		// kubelet refuses to start a container whose image names its user
		// (distroless' "nonroot"). The pod's user is distroless' nonroot uid.
		if ptr.Deref(psc.RunAsUser, 0) != controller.RunAsUser || ptr.Deref(psc.RunAsGroup, 0) != controller.RunAsUser ||
			controller.RunAsUser != 65532 || !ptr.Deref(sc.RunAsNonRoot, false) ||
			sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			t.Errorf("%s: pod runs as user %v group %v, container %+v; want distroless' nonroot 65532:65532, non-root, seccomp RuntimeDefault",
				pod.Name, ptr.Deref(psc.RunAsUser, -1), ptr.Deref(psc.RunAsGroup, -1), sc)
		}
		if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" ||
			c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" ||
			len(c.Ports) != 1 || c.Ports[0].ContainerPort != 9090 || c.Ports[0].Name != "admin" {
			t.Errorf("%s: probes %+v %+v, ports %+v", pod.Name, c.ReadinessProbe, c.LivenessProbe, c.Ports)
		}
	}
	f.eventually("Available false before the pods are Ready", func() error {
		if c := f.condition("rp", pulkav1.ConditionAvailable); c != metav1.ConditionFalse {
			return fmt.Errorf("Available %q", c)
		}
		return nil
	})
	f.readyAll("rp")
	f.eventually("status after readiness", func() error {
		st := f.pool("rp").Status
		if st.ReadyRunners != 2 || st.Replicas != 2 || st.Capacity != 8 || st.DesiredRunners != 2 ||
			st.ObservedGeneration != f.pool("rp").Generation || st.Selector != "pulka.dev/pool=rp" {
			return fmt.Errorf("status %+v", st)
		}
		if f.condition("rp", pulkav1.ConditionAvailable) != metav1.ConditionTrue ||
			f.condition("rp", pulkav1.ConditionProgressing) != metav1.ConditionFalse ||
			f.condition("rp", pulkav1.ConditionDegraded) != metav1.ConditionFalse {
			return fmt.Errorf("conditions %+v", st.Conditions)
		}
		return nil
	})
}

// The pod keeps the template's labels — the chart's PodMonitor,
// NetworkPolicy and topology spread select the runners by the chart's
// app.kubernetes.io/name, instance and component — and the operator forces
// only its own pulka.dev/ labels, which its selection of a pool's pods
// rests on. A template without a name gets app.kubernetes.io/name
// table-runner.
func TestPodKeepsTemplateLabels(t *testing.T) {
	f := start(t)
	tmpl := map[string]string{
		"app.kubernetes.io/name":      "pulka",
		"app.kubernetes.io/instance":  "rel",
		"app.kubernetes.io/component": "table-runner",
		"app.kubernetes.io/part-of":   "pulka",
		"team":                        "games",
		pulkav1.PoolLabel:             "someone-else",
		pulkav1.TemplateHashLabel:     "forged",
	}
	f.createPool("labelled", func(s *pulkav1.RunnerPoolSpec) { s.Template.Labels = tmpl })
	f.createPool("bare", nil)
	for _, pod := range f.waitPods("labelled", 1) {
		for k, v := range tmpl {
			if k == pulkav1.PoolLabel || k == pulkav1.TemplateHashLabel {
				continue
			}
			if pod.Labels[k] != v {
				t.Errorf("%s: label %s=%q, want the template's %q (labels %v)", pod.Name, k, pod.Labels[k], v, pod.Labels)
			}
		}
		if pod.Labels[pulkav1.PoolLabel] != "labelled" || pod.Labels[pulkav1.TemplateHashLabel] != controller.TemplateHash(&f.pool("labelled").Spec.Template) {
			t.Errorf("%s: labels %v; the operator's own pulka.dev/ labels must win over the template's", pod.Name, pod.Labels)
		}
	}
	for _, pod := range f.waitPods("bare", 1) {
		if pod.Labels["app.kubernetes.io/name"] != "table-runner" || pod.Labels[pulkav1.PoolLabel] != "bare" {
			t.Errorf("%s: labels %v; want app.kubernetes.io/name table-runner when the template names none", pod.Name, pod.Labels)
		}
	}
}

// The variables the operator sets (the runner's id, capacity, heartbeat,
// assigner role and admin address) are its alone: an entry of the
// template's env of the same name is dropped, not appended after the
// operator's (where, the last entry winning, it would override it).
func TestOperatorOwnsItsEnv(t *testing.T) {
	f := start(t)
	f.createPool("rp", func(s *pulkav1.RunnerPoolSpec) {
		s.Template.Env = []corev1.EnvVar{
			{Name: "PULKA_REDIS_ADDR", Value: "redis:6379"},
			{Name: "PULKA_RUNNER_ID", Value: "forged"},
			{Name: "PULKA_RUNNER_CAPACITY", Value: "999"},
			{Name: "PULKA_RUNNER_HEARTBEAT_TTL", Value: "1h"},
			{Name: "PULKA_RUNNER_ASSIGNER", Value: "true"},
			{Name: "PULKA_ADMIN_ADDR", Value: ":1234"},
		}
	})
	for _, pod := range f.waitPods("rp", 1) {
		env := map[string][]corev1.EnvVar{}
		for _, e := range pod.Spec.Containers[0].Env {
			env[e.Name] = append(env[e.Name], e)
		}
		for name, want := range map[string]string{"PULKA_RUNNER_CAPACITY": "4", "PULKA_RUNNER_HEARTBEAT_TTL": "3s",
			"PULKA_RUNNER_ASSIGNER": "false", "PULKA_ADMIN_ADDR": ":9090", "PULKA_REDIS_ADDR": "redis:6379"} {
			if got := env[name]; len(got) != 1 || got[0].Value != want {
				t.Errorf("%s: %s %+v, want one entry %q", pod.Name, name, got, want)
			}
		}
		if id := env["PULKA_RUNNER_ID"]; len(id) != 1 || id[0].ValueFrom == nil || id[0].ValueFrom.FieldRef == nil ||
			id[0].ValueFrom.FieldRef.FieldPath != "metadata.name" {
			t.Errorf("%s: PULKA_RUNNER_ID %+v, want one entry, the pod's name", pod.Name, id)
		}
	}
}

// The template's terminationGracePeriodSeconds reaches the pods (the chart
// gives every pod its shutdown timeout plus drain delay plus 5 s); without
// it they keep Kubernetes' default.
func TestPodTerminationGrace(t *testing.T) {
	f := start(t)
	f.createPool("graced", func(s *pulkav1.RunnerPoolSpec) { s.Template.TerminationGracePeriodSeconds = ptr.To[int64](40) })
	f.createPool("default", nil)
	for _, pod := range f.waitPods("graced", 1) {
		if g := ptr.Deref(pod.Spec.TerminationGracePeriodSeconds, -1); g != 40 {
			t.Errorf("%s: terminationGracePeriodSeconds %d, want the template's 40", pod.Name, g)
		}
	}
	for _, pod := range f.waitPods("default", 1) {
		if g := ptr.Deref(pod.Spec.TerminationGracePeriodSeconds, -1); g != corev1.DefaultTerminationGracePeriodSeconds {
			t.Errorf("%s: terminationGracePeriodSeconds %d, want Kubernetes' default %d", pod.Name, g, corev1.DefaultTerminationGracePeriodSeconds)
		}
	}
	// A negative grace is refused by the CRD, not by the pod creation.
	bad := &pulkav1.RunnerPool{ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: "negative"},
		Spec: pulkav1.RunnerPoolSpec{Template: pulkav1.RunnerTemplate{Image: "runner", TerminationGracePeriodSeconds: ptr.To[int64](-1)}, MaxRunners: 1}}
	if err := f.c.Create(f.ctx, bad); !apierrors.IsInvalid(err) {
		t.Errorf("terminationGracePeriodSeconds -1: got %v, want Invalid", err)
	}
}

// Desired runners follow the tables: ceil(tables / (per runner × target)),
// bounded by the maximum, and Degraded says when the maximum is too few.
func TestPoolScalesWithTables(t *testing.T) {
	f := start(t)
	f.createPool("rp", func(s *pulkav1.RunnerPoolSpec) {
		s.MaxRunners = 4
		s.TargetUtilizationPercent = 50 // 2 tables per runner at the target
	})
	pods := f.waitPods("rp", 1)
	f.readyAll("rp")
	f.give(pods[0].Name, "t1", "t2", "t3", "t4", "t5") // ceil(5/2) = 3
	f.waitPods("rp", 3)
	f.readyAll("rp")
	f.give(pods[0].Name, "t6", "t7", "t8", "t9", "t10", "t11", "t12", "t13", "t14", "t15", "t16", "t17") // 17 > 4 × 4
	f.eventually("capped at the maximum and degraded", func() error {
		f.readyAll("rp")
		st := f.pool("rp").Status
		if len(f.pods("rp")) != 4 || st.DesiredRunners != 4 || st.Tables != 17 {
			return fmt.Errorf("%d pods, status %+v", len(f.pods("rp")), st)
		}
		if f.condition("rp", pulkav1.ConditionDegraded) != metav1.ConditionTrue {
			return fmt.Errorf("not Degraded: %+v", st.Conditions)
		}
		return nil
	})
}

// Scaling down never deletes a runner that owns tables: the least-loaded
// runner is marked draining, deleted as soon as it owns nothing; one still
// owning tables waits until they are moved.
func TestScaleDownDrainsFirst(t *testing.T) {
	f := start(t)
	three := int32(3)
	f.createPool("rp", func(s *pulkav1.RunnerPoolSpec) { s.Replicas = &three })
	pods := f.waitPods("rp", 3)
	f.readyAll("rp")
	busy, light, empty := pods[0].Name, pods[1].Name, pods[2].Name
	f.give(busy, "a", "b", "c")
	f.give(light, "d")

	one := int32(1)
	f.updatePool("rp", func(s *pulkav1.RunnerPoolSpec) { s.Replicas = &one })
	// The empty runner goes at once; the light one is draining but stays
	// while it owns a table; the busy one is kept.
	f.eventually("empty runner deleted, light one draining", func() error {
		names := map[string]corev1.Pod{}
		for _, p := range f.pods("rp") {
			names[p.Name] = p
		}
		if _, ok := names[empty]; ok {
			return fmt.Errorf("%s (no tables) still there", empty)
		}
		l, ok := names[light]
		if !ok {
			return fmt.Errorf("%s deleted while it owned a table", light)
		}
		if _, d := l.Annotations[pulkav1.DrainingAnnotation]; !d {
			return fmt.Errorf("%s not draining", light)
		}
		if b := names[busy]; b.Annotations[pulkav1.DrainingAnnotation] != "" {
			return fmt.Errorf("the busiest runner %s is draining", busy)
		}
		return nil
	})
	time.Sleep(500 * time.Millisecond) // several resyncs: still not deleted
	if err := f.c.Get(f.ctx, client.ObjectKey{Namespace: f.ns, Name: light}, &corev1.Pod{}); err != nil {
		t.Fatalf("%s with a table was deleted: %v", light, err)
	}
	if st := f.pool("rp").Status; st.DrainingRunners != 1 ||
		f.condition("rp", pulkav1.ConditionProgressing) != metav1.ConditionTrue {
		t.Errorf("while draining: status %+v", st)
	}
	// The assigner moves its table; then the pod goes.
	if ok, err := f.store.Move(f.ctx, streams.Lease{}, "d", light, busy); err != nil || !ok {
		t.Fatalf("move: %v %v", ok, err)
	}
	f.eventually("drained runner deleted", func() error {
		if ps := f.pods("rp"); len(ps) != 1 || ps[0].Name != busy {
			return fmt.Errorf("pods %v", podNames(ps))
		}
		return nil
	})
	f.eventually("events of the drain", func() error {
		for _, want := range []string{"RunnerDraining", "RunnerDrained"} {
			if n := f.events(want); n != 2 {
				return fmt.Errorf("%d %s events, want 2", n, want)
			}
		}
		return nil
	})
}

// events counts the Events of the fixture's namespace with reason.
func (f *fixture) events(reason string) int {
	f.t.Helper()
	var l eventsv1.EventList
	if err := f.c.List(f.ctx, &l, client.InNamespace(f.ns)); err != nil {
		f.t.Fatal(err)
	}
	n := 0
	for _, e := range l.Items {
		if e.Reason == reason {
			n++
		}
	}
	return n
}

// The scale subresource (kubectl scale, an autoscaler) sets spec.replicas
// and reads status.replicas and the selector. (The API server refuses it on
// a pool sized from its tables, whose spec.replicas is unset.)
func TestScaleSubresource(t *testing.T) {
	f := start(t)
	one := int32(1)
	f.createPool("rp", func(s *pulkav1.RunnerPoolSpec) { s.Replicas = &one })
	f.waitPods("rp", 1)
	f.readyAll("rp")
	pool := f.pool("rp")
	scale := &autoscalingv1.Scale{}
	f.eventually("scale to 3", func() error { // the status writes race the update: retry on conflict
		if err := f.c.SubResource("scale").Get(f.ctx, pool, scale); err != nil {
			return err
		}
		scale.Spec.Replicas = 3
		return f.c.SubResource("scale").Update(f.ctx, pool, client.WithSubResourceBody(scale))
	})
	f.waitPods("rp", 3)
	f.eventually("scale status", func() error {
		f.readyAll("rp")
		if err := f.c.SubResource("scale").Get(f.ctx, pool, scale); err != nil {
			return err
		}
		if scale.Status.Replicas != 3 || scale.Status.Selector != "pulka.dev/pool=rp" {
			return fmt.Errorf("scale status %+v", scale.Status)
		}
		return nil
	})
	if got := f.pool("rp").Spec.Replicas; got == nil || *got != 3 {
		t.Errorf("spec.replicas %v, want 3", got)
	}
}

// A runner whose tables do not move is deleted when the drain timeout has
// passed.
func TestDrainTimeout(t *testing.T) {
	f := start(t)
	two := int32(2)
	f.createPool("rp", func(s *pulkav1.RunnerPoolSpec) {
		s.Replicas = &two
		s.DrainTimeout = metav1.Duration{Duration: 2 * time.Second}
	})
	pods := f.waitPods("rp", 2)
	f.readyAll("rp")
	f.give(pods[0].Name, "a", "b")
	f.give(pods[1].Name, "c")
	one := int32(1)
	f.updatePool("rp", func(s *pulkav1.RunnerPoolSpec) { s.Replicas = &one })
	f.waitPods("rp", 1)
	began := time.Now()
	f.eventually("timed-out runner deleted", func() error {
		if ps := f.pods("rp"); len(ps) != 1 || ps[0].Name != pods[0].Name {
			return fmt.Errorf("pods %v", podNames(ps))
		}
		return nil
	})
	if waited := time.Since(began); waited < time.Second {
		t.Errorf("deleted after %v, before the 2 s drain timeout", waited)
	}
}

// A change of the template rolls the runners one at a time: a new one is
// started, and only when it is Ready is an old one drained.
func TestTemplateChangeRolls(t *testing.T) {
	f := start(t)
	two := int32(2)
	f.createPool("rp", func(s *pulkav1.RunnerPoolSpec) { s.Replicas = &two })
	old := f.waitPods("rp", 2)
	f.readyAll("rp")
	oldHash := old[0].Labels[pulkav1.TemplateHashLabel]
	f.updatePool("rp", func(s *pulkav1.RunnerPoolSpec) { s.Template.Image = "pulka/table-runner:v2" })

	f.eventually("one new runner beside the two old", func() error {
		if ps := f.pods("rp"); len(ps) != 3 {
			return fmt.Errorf("pods %v", podNames(ps))
		}
		return nil
	})
	time.Sleep(500 * time.Millisecond)
	for _, p := range f.pods("rp") {
		if _, d := p.Annotations[pulkav1.DrainingAnnotation]; d {
			t.Fatalf("%s drained before the new runner was Ready", p.Name)
		}
		if len(f.pods("rp")) != 3 {
			t.Fatalf("more than one surge pod: %v", podNames(f.pods("rp")))
		}
	}
	f.eventually("all runners on the new template", func() error {
		f.readyAll("rp")
		ps := f.pods("rp")
		if len(ps) > 3 {
			return fmt.Errorf("more than one extra runner while rolling: %v", podNames(ps))
		}
		if len(ps) != 2 {
			return fmt.Errorf("pods %v", podNames(ps))
		}
		for _, p := range ps {
			if p.Labels[pulkav1.TemplateHashLabel] == oldHash || p.Spec.Containers[0].Image != "pulka/table-runner:v2" {
				return fmt.Errorf("%s still old", p.Name)
			}
		}
		return nil
	})
	f.eventually("rolled status", func() error {
		st := f.pool("rp").Status
		if st.UpdatedRunners != 2 || st.ReadyRunners != 2 || f.condition("rp", pulkav1.ConditionProgressing) != metav1.ConditionFalse {
			return fmt.Errorf("status %+v", st)
		}
		return nil
	})
}

// A failed runner pod (the container died; restartPolicy Never) is deleted
// and replaced.
func TestFailedPodReplaced(t *testing.T) {
	f := start(t)
	f.createPool("rp", nil)
	f.waitPods("rp", 1)
	f.readyAll("rp")
	dead := f.pods("rp")[0]
	if err := env.SetPhase(f.ctx, &dead, corev1.PodFailed); err != nil {
		t.Fatal(err)
	}
	f.eventually("failed pod replaced", func() error {
		if ps := f.pods("rp"); len(ps) != 1 || ps[0].Name == dead.Name {
			return fmt.Errorf("pods %v", podNames(ps))
		}
		return nil
	})
}

func podNames(ps []corev1.Pod) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

// The sample in config/samples is a valid RunnerPool for the CRD as the API
// server enforces it (schema, defaults, the min ≤ max rule).
func TestSampleIsValid(t *testing.T) {
	ctx := context.Background()
	b, err := os.ReadFile("../../config/samples/runnerpool.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var p pulkav1.RunnerPool
	if err := yaml.UnmarshalStrict(b, &p); err != nil {
		t.Fatal(err)
	}
	ns, err := env.Namespace(ctx, "sample")
	if err != nil {
		t.Fatal(err)
	}
	p.Namespace = ns
	if err := env.Client.Create(ctx, &p); err != nil {
		t.Fatalf("the sample is refused: %v", err)
	}
	bad := p.DeepCopy()
	bad.ObjectMeta = metav1.ObjectMeta{Namespace: ns, Name: "inverted"}
	bad.Spec.MinRunners, bad.Spec.MaxRunners = 5, 2
	if err := env.Client.Create(ctx, bad); !apierrors.IsInvalid(err) {
		t.Errorf("minRunners > maxRunners: got %v, want Invalid", err)
	}
	defaulted := &pulkav1.RunnerPool{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "defaults"},
		Spec: pulkav1.RunnerPoolSpec{Template: pulkav1.RunnerTemplate{Image: "runner"}, MaxRunners: 3}}
	if err := env.Client.Create(ctx, defaulted); err != nil {
		t.Fatal(err)
	}
	if s := defaulted.Spec; s.TablesPerRunner != 50 || s.TargetUtilizationPercent != 70 ||
		s.DrainTimeout.Duration != time.Minute || s.HeartbeatTTL.Duration != 3*time.Second {
		t.Errorf("defaults not applied: %+v", s)
	}
}
