// Package kubetest runs a real Kubernetes API server (kube-apiserver and
// etcd, through controller-runtime's envtest) with the operator's CRDs
// installed, for the operator's tests. There is no kubelet: a test plays it,
// setting the pods' Ready conditions and phases itself.
//
// The binaries come from KUBEBUILDER_ASSETS when set (make test sets it),
// else from scripts/envtest-bins.sh, which builds them from the Go module
// proxy into the user's cache once per version.
package kubetest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	pulkav1 "github.com/pulka/pulka/services/operator/api/v1alpha1"
)

// Env is a running API server with a client.
type Env struct {
	Config *rest.Config
	Client client.Client
	Scheme *k8sruntime.Scheme
	env    *envtest.Environment
}

// moduleDir is services/operator, found from this file's place in it.
func moduleDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Assets returns the directory holding kube-apiserver and etcd.
func Assets() (string, error) {
	if d := os.Getenv("KUBEBUILDER_ASSETS"); d != "" {
		return d, nil
	}
	script := filepath.Join(moduleDir(), "..", "..", "scripts", "envtest-bins.sh")
	var out bytes.Buffer
	cmd := exec.Command(script)
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("kubetest: KUBEBUILDER_ASSETS is unset and %s failed: %w", script, err)
	}
	return strings.TrimSpace(out.String()), nil
}

// Start runs an API server with the CRDs of config/crd installed. The
// caller must Stop it.
func Start() (*Env, error) {
	assets, err := Assets()
	if err != nil {
		return nil, err
	}
	// The tests read what the operator writes besides its own types:
	// Leases, Events; so every built-in type, not the operator's scheme.
	s := k8sruntime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := pulkav1.AddToScheme(s); err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(moduleDir(), "config", "crd")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
		Scheme:                s,
	}
	cfg, err := env.Start()
	if err != nil {
		return nil, fmt.Errorf("kubetest: start the API server (assets %s): %w", assets, err)
	}
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		_ = env.Stop()
		return nil, err
	}
	return &Env{Config: cfg, Client: c, Scheme: s, env: env}, nil
}

// Main is the TestMain of a package whose tests use the API server: it
// starts it into *env, runs the tests, stops it, and returns the exit code.
// controller-runtime's own log is dropped (the tests look at what the
// operator writes to the API server, Redis and its metrics).
//
//	var env *kubetest.Env
//
//	func TestMain(m *testing.M) { os.Exit(kubetest.Main(m, &env)) }
func Main(m *testing.M, env **Env) int {
	ctrl.SetLogger(logr.Discard())
	e, err := Start()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	*env = e
	code := m.Run()
	if err := e.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "kubetest: stop the API server:", err)
	}
	return code
}

// AwaitPods waits until ns holds exactly n pods (the operator creates a
// pool's pods a few at a time) and returns them, sorted by name; it gives up
// after within, with the count it saw last.
func (e *Env) AwaitPods(ctx context.Context, ns string, n int, within time.Duration) ([]corev1.Pod, error) {
	deadline := time.Now().Add(within)
	for {
		var l corev1.PodList
		if err := e.Client.List(ctx, &l, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		if len(l.Items) == n {
			slices.SortFunc(l.Items, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
			return l.Items, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("kubetest: %d pods in %s after %v, want %d", len(l.Items), ns, within, n)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Stop stops the API server and etcd.
func (e *Env) Stop() error { return e.env.Stop() }

// Namespace creates a namespace with a unique name for one test; the
// API server has no namespace controller, so it is left behind, which
// costs nothing in a throwaway etcd.
func (e *Env) Namespace(ctx context.Context, prefix string) (string, error) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	if err := e.Client.Create(ctx, ns); err != nil {
		return "", err
	}
	return ns.Name, nil
}

// SetReady plays the kubelet: it sets pod's Ready condition (and the
// Running phase) as a kubelet whose probe passed or failed would.
func (e *Env) SetReady(ctx context.Context, pod *corev1.Pod, ready bool) error {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	pod.Status.Phase = corev1.PodRunning
	cond := corev1.PodCondition{Type: corev1.PodReady, Status: status, LastTransitionTime: metav1.Now()}
	replaced := false
	for i, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			if c.Status == status {
				cond.LastTransitionTime = c.LastTransitionTime
			}
			pod.Status.Conditions[i], replaced = cond, true
		}
	}
	if !replaced {
		pod.Status.Conditions = append(pod.Status.Conditions, cond)
	}
	return e.Client.Status().Update(ctx, pod)
}

// SetPhase plays the kubelet reporting a pod's end (PodFailed: the
// container died and, with restartPolicy Never, is not restarted).
func (e *Env) SetPhase(ctx context.Context, pod *corev1.Pod, phase corev1.PodPhase) error {
	pod.Status.Phase = phase
	return e.Client.Status().Update(ctx, pod)
}
