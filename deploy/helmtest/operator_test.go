package helmtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/pulka/pulka/pkg/redistest"
)

// buildOperator builds services/operator's binary (the one the chart's
// operator image runs).
func buildOperator(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "operator")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/operator")
	cmd.Dir = filepath.Join(repoRoot(), "services", "operator")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build the operator: %v\n%s", err, out)
	}
	return bin
}

// runOperator runs the operator as the chart's Deployment configures it —
// its rendered environment, the Redis password from the release's Secret,
// logged in to the API server as the chart's ServiceAccount, so that only
// the chart's ClusterRole lets it do anything — and checks that it leads
// and creates the chart's RunnerPool's runner pods as the chart describes
// them.
func runOperator(t *testing.T, c *cluster, env *envtest.Environment, ns string) {
	t.Helper()
	ctx := context.Background()
	bin := buildOperator(t)

	var deploy map[string]any
	manifest := index(decode(t, c.helm(t, "get", "manifest", "pulka", "-n", ns)))
	if o := manifest["Deployment/pulka-operator"]; o != nil {
		deploy = o.Object
	}
	if deploy == nil {
		t.Fatal("no operator Deployment in the release")
	}
	container := must[[]any](t, deploy, "spec", "template", "spec", "containers")[0].(map[string]any)
	password := c.secretData(t, ns, "pulka-redis", "password")
	// The release's Redis password, as the in-chart Redis requires it (set
	// after the start: redistest's readiness check logs in without one).
	redis := redistest.Start(t)
	if err := redis.Client(t).ConfigSet(ctx, "requirepass", password).Err(); err != nil {
		t.Fatal(err)
	}

	const id = "pulka-operator-test-0"
	user, err := env.AddUser(envtest.User{Name: "system:serviceaccount:" + ns + ":pulka-operator", Groups: []string{"system:serviceaccounts"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	kcPath := filepath.Join(t.TempDir(), "operator-kubeconfig")
	if err := os.WriteFile(kcPath, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	procEnv := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "KUBECONFIG=" + kcPath}
	for name, value := range envOf(container) {
		switch {
		case name == "PULKA_REDIS_ADDR":
			value = redis.Addr()
		case name == "PULKA_ADMIN_ADDR":
			value = "127.0.0.1:0" // the kubelet's probes are not played here
		case value == "field:metadata.name":
			value = id
		case value == "resource:limits.memory": // the kubelet gives bytes
			q, err := resource.ParseQuantity(fmt.Sprint(field(container, "resources", "limits", "memory")))
			if err != nil {
				t.Fatalf("the operator's memory limit: %v", err)
			}
			value = strconv.FormatInt(q.Value(), 10)
		case value == "secret:pulka-redis/password":
			value = password
		case strings.HasPrefix(value, "secret:"):
			continue // an optional key the release's Secret does not hold
		}
		procEnv = append(procEnv, name+"="+value)
	}
	logPath := filepath.Join(t.TempDir(), "operator.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(bin)
	cmd.Env, cmd.Stdout, cmd.Stderr = procEnv, logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			// Its exit status after SIGTERM is the operator's own tests'
			// business; here it only has to stop.
			if err != nil {
				t.Logf("operator: %v", err)
			}
		case <-time.After(40 * time.Second):
			_ = cmd.Process.Kill()
			t.Logf("operator killed after 40 s: %v", <-exited)
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("operator log:\n%s", b)
		}
	}()

	var pods *corev1.PodList
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case err := <-exited:
			t.Fatalf("the operator exited: %v", err)
		default:
		}
		pods, err = c.kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "pulka.dev/pool=runners"})
		if err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the operator created %d runner pods in 90 s, want the pool's minRunners 2", len(pods.Items))
		}
		time.Sleep(200 * time.Millisecond)
	}
	pod := pods.Items[0]
	if pod.Spec.ServiceAccountName != "pulka-workload" || pod.Labels["app.kubernetes.io/component"] != "table-runner" ||
		pod.Labels["app.kubernetes.io/part-of"] != "pulka" {
		t.Errorf("runner pod %s: account %q, labels %v; want the chart's", pod.Name, pod.Spec.ServiceAccountName, pod.Labels)
	}
	runner := pod.Spec.Containers[0]
	if runner.Image != "ghcr.io/pulka/table-runner:0.1.0" || runner.Resources.Requests.Cpu().IsZero() {
		t.Errorf("runner container: image %q, resources %v", runner.Image, runner.Resources)
	}
	got := map[string]corev1.EnvVar{}
	for _, e := range runner.Env {
		if _, twice := got[e.Name]; twice {
			t.Errorf("runner env sets %s twice (the last wins): %v", e.Name, runner.Env)
		}
		got[e.Name] = e
	}
	if got["PULKA_REDIS_ADDR"].Value != "pulka-redis:6379" || got["PULKA_REDIS_PASSWORD"].ValueFrom == nil ||
		got["PULKA_RUNNER_ID"].ValueFrom == nil || got["PULKA_RUNNER_ID"].ValueFrom.FieldRef == nil ||
		got["PULKA_RUNNER_ID"].ValueFrom.FieldRef.FieldPath != "metadata.name" || got["PULKA_RUNNER_ASSIGNER"].Value != "false" {
		t.Errorf("runner env %v: want the chart's Redis settings and the operator's own", got)
	}
	checkRunnerPod(t, manifest, &pod)
	lease, err := c.kube.CoordinationV1().Leases(ns).Get(ctx, "pulka-operator", metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != id {
		t.Errorf("leader Lease pulka-operator in %s: %v, err %v; want held by %s", ns, fmt.Sprint(lease.Spec.HolderIdentity), err, id)
	}
}

// checkRunnerPod checks a runner pod the operator made from the release's
// RunnerPool against the rest of the release: what selects the runners
// (the PodMonitor, the NetworkPolicy letting Pulka's pods reach the admin
// port and the in-chart Redis, the topology spread) selects it, Prometheus
// finds its port, and it runs as the image's user with the chart's grace.
func checkRunnerPod(t *testing.T, manifest map[string]*unstructured.Unstructured, pod *corev1.Pod) {
	t.Helper()
	matches := func(what string, sel any) {
		t.Helper()
		var ls metav1.LabelSelector
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(asMap(sel), &ls); err != nil {
			t.Fatalf("%s: selector %v: %v", what, sel, err)
		}
		s, err := metav1.LabelSelectorAsSelector(&ls)
		if err != nil || s.Empty() || !s.Matches(labels.Set(pod.Labels)) {
			t.Errorf("%s selects %v (err %v); runner pod %s has labels %v", what, sel, err, pod.Name, pod.Labels)
		}
	}

	pm := manifest["PodMonitor/pulka-table-runner"]
	if pm == nil {
		t.Fatal("no PodMonitor pulka-table-runner in the release")
	}
	matches("PodMonitor pulka-table-runner", field(pm.Object, "spec", "selector"))
	endpoints, _ := field(pm.Object, "spec", "podMetricsEndpoints").([]any)
	if len(endpoints) == 0 {
		t.Fatal("PodMonitor pulka-table-runner: no podMetricsEndpoints")
	}
	port := field(endpoints[0].(map[string]any), "port")
	if !slices.ContainsFunc(pod.Spec.Containers[0].Ports, func(p corev1.ContainerPort) bool { return p.Name == port && p.ContainerPort == 9090 }) {
		t.Errorf("PodMonitor scrapes port %v; runner pod %s declares %v", port, pod.Name, pod.Spec.Containers[0].Ports)
	}

	np := manifest["NetworkPolicy/pulka-default"]
	if np == nil {
		t.Fatal("no NetworkPolicy pulka-default in the release")
	}
	matches("NetworkPolicy pulka-default's podSelector (who may be reached)", field(np.Object, "spec", "podSelector"))
	redisRule := false
	for _, r := range field(np.Object, "spec", "ingress").([]any) {
		r := r.(map[string]any)
		ports, _ := r["ports"].([]any)
		if !slices.ContainsFunc(ports, func(p any) bool { return fmt.Sprint(field(p.(map[string]any), "port")) == "6379" }) {
			continue
		}
		redisRule = true
		from, _ := r["from"].([]any)
		if len(from) != 1 {
			t.Fatalf("NetworkPolicy pulka-default: the Redis rule has %d peers, want Pulka's pods", len(from))
		}
		matches("NetworkPolicy pulka-default's Redis clients", field(from[0].(map[string]any), "podSelector"))
	}
	if !redisRule {
		t.Error("NetworkPolicy pulka-default: no rule for the in-chart Redis' port 6379")
	}

	if len(pod.Spec.TopologySpreadConstraints) == 0 {
		t.Error("runner pod: no topology spread constraints, though the release sets runnerPool.topologySpreadConstraints")
	}
	for i, tsc := range pod.Spec.TopologySpreadConstraints {
		s, err := metav1.LabelSelectorAsSelector(tsc.LabelSelector)
		if err != nil || s.Empty() || !s.Matches(labels.Set(pod.Labels)) {
			t.Errorf("runner pod's topology spread %d selects %v (err %v), not the runners' labels %v", i, tsc.LabelSelector, err, pod.Labels)
		}
	}

	uid, gid := imageUser(t)
	if psc := pod.Spec.SecurityContext; psc == nil || (psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot) ||
		deref(psc.RunAsUser) != uid || deref(psc.RunAsGroup) != gid {
		t.Errorf("runner pod security context %+v; want runAsNonRoot as the image's user %d:%d", psc, uid, gid)
	}
	rp := manifest["RunnerPool/runners"]
	if rp == nil {
		t.Fatal("no RunnerPool runners in the release")
	}
	want := fmt.Sprint(field(rp.Object, "spec", "template", "terminationGracePeriodSeconds"))
	if got := fmt.Sprint(deref(pod.Spec.TerminationGracePeriodSeconds)); got != want {
		t.Errorf("runner pod terminationGracePeriodSeconds %s, want the chart's %s", got, want)
	}
}

// deref is *p, or -1 for nil (no valid uid, gid or grace).
func deref(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
