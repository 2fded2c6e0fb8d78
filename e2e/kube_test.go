package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/retry"
	ctrlclient "sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/pulka/pulka/tools/stack/stacktest"
)

// The operator's tests on real processes run a real Kubernetes API server
// (envtest's kube-apiserver and etcd, with the RunnerPool CRD) and the
// operator's binary against it; the e2e module imports nothing of the
// operator's (a service's packages are its own), it reads the CRD from
// services/operator/config/crd and drives the operator as a process.

// poolGVK is the RunnerPool's kind (services/operator/api/v1alpha1).
var poolGVK = schema.GroupVersionKind{Group: "pulka.dev", Version: "v1alpha1", Kind: "RunnerPool"}

// poolLabel is the label of a pool's pods (pulkav1.PoolLabel).
const poolLabel = "pulka.dev/pool"

// The operator's settings by their environment names
// (services/operator/internal/operator/config.go).
const (
	envOperatorID        = "PULKA_OPERATOR_ID"
	envOperatorPool      = "PULKA_OPERATOR_POOL"
	envOperatorReconcile = "PULKA_OPERATOR_RECONCILE_INTERVAL"
)

// kube is a running API server: a client, and a kubeconfig file for the
// operator process.
type kube struct {
	c          ctrlclient.Client
	kubeconfig string
}

// startKube starts an API server for t, stopped when t ends. The binaries
// come from KUBEBUILDER_ASSETS (make test sets it) or, when it is unset,
// from scripts/envtest-bins.sh, which builds them once into the user's
// cache (minutes the first time).
func startKube(t *testing.T) *kube {
	t.Helper()
	root := repoRoot(t)
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		var out bytes.Buffer
		cmd := exec.Command(filepath.Join(root, "scripts", "envtest-bins.sh"))
		cmd.Stdout, cmd.Stderr = &out, os.Stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("KUBEBUILDER_ASSETS is unset and scripts/envtest-bins.sh failed: %v", err)
		}
		assets = strings.TrimSpace(out.String())
	}
	s := k8sruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "services", "operator", "config", "crd")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
		Scheme:                s,
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start the API server (assets %s): %v", assets, err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Logf("stop the API server: %v", err)
		}
	})
	c, err := ctrlclient.New(cfg, ctrlclient.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, env.KubeConfig, 0o600); err != nil {
		t.Fatal(err)
	}
	return &kube{c: c, kubeconfig: kubeconfig}
}

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := stacktest.RepoRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// namespace creates a namespace for one test's pool.
func (k *kube) namespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := k.c.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}

// poolSpec is what a test chooses of its RunnerPool "rp"; zero durations
// leave the CRD's defaults (heartbeat 3 s, NotReady grace 5 s).
type poolSpec struct {
	runners   int
	heartbeat time.Duration
	grace     time.Duration
}

// createPool creates the RunnerPool rp in ns: a fixed number of runners
// (spec.replicas), each of capacity 10.
func (k *kube) createPool(t *testing.T, ns string, ps poolSpec) {
	t.Helper()
	spec := map[string]any{
		"template":                 map[string]any{"image": "table-runner"},
		"minRunners":               int64(1),
		"maxRunners":               int64(ps.runners + 2),
		"replicas":                 int64(ps.runners),
		"tablesPerRunner":          int64(10),
		"targetUtilizationPercent": int64(70),
	}
	if ps.heartbeat > 0 {
		spec["heartbeatTTL"] = ps.heartbeat.String()
	}
	if ps.grace > 0 {
		spec["notReadyGrace"] = ps.grace.String()
	}
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(poolGVK)
	u.SetNamespace(ns)
	u.SetName("rp")
	if err := k.c.Create(context.Background(), u); err != nil {
		t.Fatal(err)
	}
}

// poolStatus reads an integer field of the pool's status (readyRunners,
// say) and the migrations' count and last reason.
func (k *kube) poolStatus(ctx context.Context, ns string) (ready, migrations int64, lastReason string, err error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(poolGVK)
	if err := k.c.Get(ctx, ctrlclient.ObjectKey{Namespace: ns, Name: "rp"}, u); err != nil {
		return 0, 0, "", err
	}
	ready, _, _ = unstructured.NestedInt64(u.Object, "status", "readyRunners")
	migrations, _, _ = unstructured.NestedInt64(u.Object, "status", "migrations", "count")
	lastReason, _, _ = unstructured.NestedString(u.Object, "status", "migrations", "lastReason")
	return ready, migrations, lastReason, nil
}

// operatorBinary is the operator's binary: the one in PULKA_E2E_BIN (make
// build's bin/) when set, else built from this repository (go build's
// cache makes the second build quick).
func operatorBinary(t *testing.T) string {
	t.Helper()
	if d := os.Getenv(stacktest.EnvBin); d != "" {
		bin := filepath.Join(d, "operator")
		if _, err := os.Stat(bin); err != nil {
			t.Fatalf("%s=%s has no operator: %v", stacktest.EnvBin, d, err)
		}
		return bin
	}
	root := repoRoot(t)
	bin := filepath.Join(t.TempDir(), "operator")
	cmd := exec.Command("go", "build", "-o", bin, "./services/operator/cmd/operator")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the operator: %v\n%s", err, out)
	}
	return bin
}

// startOperator runs the operator process of s for the pool rp of ns:
// the stack's Redis, the API server k, and the operator's defaults
// (leader election through its Lease, a reconcile every 500 ms) unless
// settings say otherwise (NAME=value).
func startOperator(t *testing.T, s *stack, k *kube, ns string, settings ...string) *stacktest.Process {
	t.Helper()
	env := append([]string{
		"KUBECONFIG=" + k.kubeconfig,
		envOperatorID + "=e2e-operator",
		envOperatorPool + "=" + ns + "/rp",
	}, settings...)
	p, err := s.StartProgram(operatorBinary(t), env)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// setReady plays the kubelet whose readiness probe passed or failed: the
// pod's Ready condition, and the Running phase.
func setReady(ctx context.Context, c ctrlclient.Client, pod *corev1.Pod, ready bool) error {
	readyCondition(pod, ready)
	pod.Status.Phase = corev1.PodRunning
	return c.Status().Update(ctx, pod)
}

// setFailed plays the kubelet reporting that a pod's container died (with
// restartPolicy Never it is not restarted): not Ready, phase Failed.
func setFailed(ctx context.Context, c ctrlclient.Client, pod *corev1.Pod) error {
	readyCondition(pod, false)
	pod.Status.Phase = corev1.PodFailed
	return c.Status().Update(ctx, pod)
}

// readyCondition sets the pod's Ready condition, its transition time only
// when it turns.
func readyCondition(pod *corev1.Pod, ready bool) {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	cond := corev1.PodCondition{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Now()}
	for i, pc := range pod.Status.Conditions {
		if pc.Type == corev1.PodReady {
			if pc.Status == status {
				cond.LastTransitionTime = pc.LastTransitionTime
			}
			pod.Status.Conditions[i] = cond
			return
		}
	}
	pod.Status.Conditions = append(pod.Status.Conditions, cond)
}

// getPod reads a pod afresh.
func getPod(ctx context.Context, c ctrlclient.Client, ns, name string) (*corev1.Pod, error) {
	var p corev1.Pod
	if err := c.Get(ctx, ctrlclient.ObjectKey{Namespace: ns, Name: name}, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// onPod reads pod name afresh and applies f to it, again while the API
// server says it changed meanwhile (the operator writes the same pods).
func onPod(ctx context.Context, c ctrlclient.Client, ns, name string, f func(*corev1.Pod) error) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		p, err := getPod(ctx, c, ns, name)
		if err != nil {
			return err
		}
		return f(p)
	})
}
