package helmtest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// cluster is a real kube-apiserver and etcd (envtest) with the chart's
// CRDs, and a kubeconfig for helm.
type cluster struct {
	env        *envtest.Environment
	kubeconfig string
	dyn        dynamic.Interface
	kube       kubernetes.Interface
	mapper     meta.RESTMapper
}

// envtestAssets is $KUBEBUILDER_ASSETS, else what scripts/envtest-bins.sh
// builds or finds (the operator's tests use the same binaries).
func envtestAssets(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d
	}
	var out bytes.Buffer
	cmd := exec.Command(filepath.Join(repoRoot(), "scripts", "envtest-bins.sh"))
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("KUBEBUILDER_ASSETS is unset and scripts/envtest-bins.sh failed (above): %v", err)
	}
	return strings.TrimSpace(out.String())
}

func startCluster(t *testing.T) *cluster {
	t.Helper()
	env := &envtest.Environment{
		// The chart's own crds/ (what helm installs), and stand-ins for the
		// Prometheus Operator's kinds.
		CRDDirectoryPaths:     []string{filepath.Join(chartDir(), "crds"), filepath.Join("testdata", "monitoring-crds.yaml")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: envtestAssets(t),
	}
	cfg, err := env.Start()
	if err != nil {
		t.Fatalf("start the API server: %v", err)
	}
	t.Cleanup(func() {
		if err := env.Stop(); err != nil {
			t.Errorf("stop the API server: %v", err)
		}
	})
	user, err := env.AddUser(envtest.User{Name: "helm", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{env: env, kubeconfig: path, mapper: restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))}
	if c.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if c.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	return c
}

func (c *cluster) namespace(t *testing.T, name string) {
	t.Helper()
	_, err := c.kube.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// resource is the API resource of an object, in namespace ns when it is
// namespaced.
func (c *cluster) resource(t *testing.T, o *unstructured.Unstructured, ns string) dynamic.ResourceInterface {
	t.Helper()
	gvk := o.GroupVersionKind()
	m, err := c.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatalf("%s %s: the API server does not serve it: %v", gvk, o.GetName(), err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return c.dyn.Resource(m.Resource).Namespace(ns)
	}
	return c.dyn.Resource(m.Resource)
}

// helm runs the helm CLI against the cluster.
func (c *cluster) helm(t *testing.T, args ...string) string {
	t.Helper()
	return mustHelm(t, append(args, "--kubeconfig", c.kubeconfig)...)
}

// existAll checks that every object of a release's manifest exists, and
// returns them as the API server holds them.
func (c *cluster) existAll(t *testing.T, release, ns string) map[string]*unstructured.Unstructured {
	t.Helper()
	objs := decode(t, c.helm(t, "get", "manifest", release, "-n", ns))
	if len(objs) < 15 {
		t.Fatalf("release %s: only %d objects in its manifest", release, len(objs))
	}
	got := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		live, err := c.resource(t, o, ns).Get(context.Background(), o.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Errorf("release %s: %s %s: %v", release, o.GetKind(), o.GetName(), err)
			continue
		}
		got[o.GetKind()+"/"+o.GetName()] = live
	}
	return got
}

func (c *cluster) secretData(t *testing.T, ns, name, key string) string {
	t.Helper()
	s, err := c.kube.CoreV1().Secrets(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return string(s.Data[key])
}

// TestCluster runs the chart against a real API server: every object of
// every values file passes a server-side dry-run (the API server's own
// validation, unknown fields refused), then releases are installed and
// upgraded with helm and every object is there.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts kube-apiserver and etcd")
	}
	c := startCluster(t)
	ctx := context.Background()

	t.Run("dry-run", func(t *testing.T) {
		for _, v := range valuesFiles {
			ns := "dry-" + v
			c.namespace(t, ns)
			for _, o := range render(t, v, "--namespace", ns) {
				_, err := c.resource(t, o, ns).Create(ctx, o, metav1.CreateOptions{
					DryRun:          []string{metav1.DryRunAll},
					FieldValidation: metav1.FieldValidationStrict,
				})
				if err != nil {
					t.Errorf("%s: %s %s refused: %v", v, o.GetKind(), o.GetName(), err)
				}
			}
		}
	})

	t.Run("install and upgrade", func(t *testing.T) {
		ns := "try"
		c.namespace(t, ns)
		c.helm(t, "install", "pulka", chartDir(), "-n", ns, "-f", valuesFile("minimal"), "--timeout", "2m")
		before := c.existAll(t, "pulka", ns)
		session := c.secretData(t, ns, "pulka-session", "session-secret")
		redisPassword := c.secretData(t, ns, "pulka-redis", "password")
		if len(session) != 64 || len(redisPassword) != 32 {
			t.Fatalf("generated secrets of %d and %d bytes, want 64 and 32", len(session), len(redisPassword))
		}
		if before["RunnerPool/runners"] == nil || before["StatefulSet/pulka-redis"] == nil {
			t.Fatal("no RunnerPool or Redis installed")
		}

		// The upgrade also turns on what selects the runner pods (the
		// PodMonitor, the NetworkPolicies, the runners' topology spread),
		// which runOperator matches against the pods the operator makes.
		c.helm(t, "upgrade", "pulka", chartDir(), "-n", ns, "-f", valuesFile("minimal"),
			"--set", "gateway.replicas=3,runnerPool.maxRunners=12,metrics.serviceMonitor.enabled=true,networkPolicy.enabled=true",
			"--set", "runnerPool.topologySpreadConstraints[0].maxSkew=1,runnerPool.topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone,runnerPool.topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway",
			"--timeout", "2m")
		after := c.existAll(t, "pulka", ns)
		if got := fmt.Sprint(after["Deployment/pulka-gateway"].Object["spec"].(map[string]any)["replicas"]); got != "3" {
			t.Errorf("gateway replicas after the upgrade: %s, want 3", got)
		}
		if got := fmt.Sprint(after["RunnerPool/runners"].Object["spec"].(map[string]any)["maxRunners"]); got != "12" {
			t.Errorf("RunnerPool maxRunners after the upgrade: %s, want 12", got)
		}
		// Generated once: the upgrade looked the secrets up instead of
		// logging every player out and locking the services out of Redis.
		if s := c.secretData(t, ns, "pulka-session", "session-secret"); s != session {
			t.Error("the upgrade replaced the generated session key")
		}
		if p := c.secretData(t, ns, "pulka-redis", "password"); p != redisPassword {
			t.Error("the upgrade replaced the generated Redis password")
		}
		if h := c.helm(t, "history", "pulka", "-n", ns); !strings.Contains(h, "deployed") || strings.Count(h, "\n") < 3 {
			t.Errorf("helm history:\n%s", h)
		}

		// The chart's operator, with the chart's RBAC alone, runs the
		// chart's RunnerPool.
		runOperator(t, c, c.env, ns)
	})

	t.Run("production then cluster", func(t *testing.T) {
		ns := "prod"
		c.namespace(t, ns)
		for name, data := range map[string]map[string]string{
			"pulka-session": {"session-secret": strings.Repeat("k", 64)},
			"pulka-redis":   {"password": "p", "sentinel-password": "s"},
		} {
			_, err := c.kube.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name}, StringData: data}, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
		}
		c.helm(t, "install", "pulka", chartDir(), "-n", ns, "-f", valuesFile("production"), "--timeout", "2m")
		got := c.existAll(t, "pulka", ns)
		for _, k := range []string{"HorizontalPodAutoscaler/pulka-gateway", "Ingress/pulka-gateway", "ServiceMonitor/pulka-gateway", "PodMonitor/pulka-table-runner", "NetworkPolicy/pulka-default", "Deployment/pulka-wallet"} {
			if got[k] == nil {
				t.Errorf("production: no %s", k)
			}
		}
		// The same release moved to a Redis Cluster without the wallet:
		// its objects go, the rest stays. The session key stays the
		// existing Secret's (without existingSecret helm would refuse to
		// take over a Secret it did not create, rather than overwrite it).
		c.helm(t, "upgrade", "pulka", chartDir(), "-n", ns, "-f", valuesFile("redis-cluster"),
			"--set", "sessionSecret.existingSecret=pulka-session", "--timeout", "2m")
		got = c.existAll(t, "pulka", ns)
		if got["Deployment/pulka-wallet"] != nil {
			t.Error("redis-cluster upgrade: the wallet is in the manifest")
		}
		_, err := c.kube.AppsV1().Deployments(ns).Get(ctx, "pulka-wallet", metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			t.Errorf("redis-cluster upgrade: the wallet's Deployment is still there (err %v)", err)
		}
		if k := c.secretData(t, ns, "pulka-session", "session-secret"); k != strings.Repeat("k", 64) {
			t.Errorf("the upgrade changed the existing session key to %q", k)
		}
	})
}
