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
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/pulka/pulka/services/operator/internal/controller"
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
	s, err := controller.NewScheme()
	if err != nil {
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

// Stop stops the API server and etcd.
func (e *Env) Stop() error { return e.env.Stop() }
