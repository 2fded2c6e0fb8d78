package helmtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// repoRoot is the repository's root, found from this file's place in it.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func chartDir() string { return filepath.Join(repoRoot(), "charts", "pulka") }

// valuesFiles are the chart's test values (charts/pulka/ci: helm's own
// convention for them), by name.
var valuesFiles = []string{"minimal", "production", "redis-cluster"}

func valuesFile(name string) string {
	return filepath.Join(chartDir(), "ci", name+"-values.yaml")
}

// tool is a binary of scripts/helm-bin.sh: $env when set, else what the
// script builds or finds.
type tool struct {
	name, env string
	once      sync.Once
	path      string
	err       error
}

func (b *tool) get(t *testing.T) string {
	t.Helper()
	b.once.Do(func() {
		if p := os.Getenv(b.env); p != "" {
			b.path = p
			return
		}
		var out bytes.Buffer
		cmd := exec.Command(filepath.Join(repoRoot(), "scripts", "helm-bin.sh"), b.name)
		cmd.Stdout, cmd.Stderr = &out, os.Stderr
		if err := cmd.Run(); err != nil {
			b.err = fmt.Errorf("%s is unset and scripts/helm-bin.sh %s failed (above): %w", b.env, b.name, err)
			return
		}
		b.path = strings.TrimSpace(out.String())
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

var (
	helmTool     = &tool{name: "helm", env: "PULKA_HELM"}
	helmDocsTool = &tool{name: "helm-docs", env: "PULKA_HELM_DOCS"}
)

func helmBin(t *testing.T) string     { return helmTool.get(t) }
func helmDocsBin(t *testing.T) string { return helmDocsTool.get(t) }

// helm runs the helm CLI with its config, cache and data in a scratch
// directory (nothing of the user's), returning stdout and stderr.
func helm(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(helmBin(t), args...)
	cmd.Env = append(os.Environ(),
		"HELM_CONFIG_HOME="+filepath.Join(home, "config"),
		"HELM_CACHE_HOME="+filepath.Join(home, "cache"),
		"HELM_DATA_HOME="+filepath.Join(home, "data"),
	)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// mustHelm runs helm and fails the test when it fails.
func mustHelm(t *testing.T, args ...string) string {
	t.Helper()
	out, errOut, err := helm(t, args...)
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return out
}

// render runs helm template with a values file (and more flags) and decodes
// every object.
func render(t *testing.T, values string, args ...string) []*unstructured.Unstructured {
	t.Helper()
	all := append([]string{"template", "pulka", chartDir(), "--namespace", "games", "-f", valuesFile(values)}, args...)
	return decode(t, mustHelm(t, all...))
}

func decode(t *testing.T, manifest string) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			if errors.Is(err, io.EOF) {
				return objs
			}
			t.Fatalf("decode the rendered manifest: %v", err)
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
}
