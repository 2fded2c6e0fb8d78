package main

import (
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/pkg/envnames"
	"github.com/pulka/pulka/tools/stack"
)

// There is no Docker engine where the tests run, so docker-compose.yml and
// the Dockerfile are checked structurally here: every service under
// services/ is built from deploy/docker/Dockerfile, health-checked on its
// /readyz, and given the settings the launcher gives it.

type composeFile struct {
	Name     string                    `yaml:"name"`
	Services map[string]composeService `yaml:"services"`
}

type composeService struct {
	Image string `yaml:"image"`
	Build *struct {
		Context    string            `yaml:"context"`
		Dockerfile string            `yaml:"dockerfile"`
		Args       map[string]string `yaml:"args"`
	} `yaml:"build"`
	Environment map[string]string `yaml:"environment"`
	Healthcheck *struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
	DependsOn map[string]struct {
		Condition string `yaml:"condition"`
	} `yaml:"depends_on"`
	Deploy struct {
		Replicas int `yaml:"replicas"`
	} `yaml:"deploy"`
	Ports   []string `yaml:"ports"`
	Command []string `yaml:"command"`
	Volumes []string `yaml:"volumes"`
}

func readCompose(t *testing.T, root string) composeFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return c
}

// servicesInRepo lists the services/ directories that have a command of
// their own name (what make build and the Dockerfile build), but for the
// Kubernetes-only ones (stack.KubernetesOnly), which a laptop does not run.
func servicesInRepo(t *testing.T, root string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(root, "services"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if slices.Contains(stack.KubernetesOnly(), e.Name()) {
			continue // runs only in Kubernetes (the Helm chart)
		}
		if st, err := os.Stat(filepath.Join(root, "services", e.Name(), "cmd", e.Name())); err == nil && st.IsDir() {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		t.Fatal("no services found under services/")
	}
	return names
}

func TestLauncher_RunsEveryServiceInTheRepository(t *testing.T) {
	root := repoRoot(t)
	for _, name := range stack.KubernetesOnly() {
		if _, err := os.Stat(filepath.Join(root, "services", name, "cmd", name)); err != nil {
			t.Errorf("stack.KubernetesOnly names %s, which services/ does not have: %v", name, err)
		}
	}
	got := slices.Sorted(slices.Values(stack.Services()))
	if want := servicesInRepo(t, root); !slices.Equal(got, want) {
		t.Fatalf("the launcher runs %v, services/ has %v", got, want)
	}
}

func TestCompose_EveryServiceIsBuiltHealthCheckedAndWiredLikeTheLauncher(t *testing.T) {
	root := repoRoot(t)
	c := readCompose(t, root)

	redis, ok := c.Services["redis"]
	if !ok || !strings.HasPrefix(redis.Image, "redis:7") || redis.Healthcheck == nil {
		t.Fatalf("want a redis:7 service with a healthcheck, got %+v", redis)
	}

	// The settings the launcher gives each binary (the end-to-end test
	// checks those against the binaries' -help).
	cfg := Config{Addr: DefaultAddr, Runners: 2, LogLevel: "info", StopTimeout: DefaultStopTimeout}
	backends, gw := plan(cfg, "x:1", "s", make([]int, stack.Count(cfg.Runners)))
	launcherSets := map[string]map[string]bool{}
	for _, s := range append(backends, gw) {
		if launcherSets[s.Binary] == nil {
			launcherSets[s.Binary] = map[string]bool{}
		}
		for _, kv := range s.Env {
			k, _, _ := strings.Cut(kv, "=")
			launcherSets[s.Binary][k] = true
		}
	}

	for _, name := range servicesInRepo(t, root) {
		t.Run(name, func(t *testing.T) {
			s, ok := c.Services[name]
			if !ok {
				t.Fatalf("services/%s is not in docker-compose.yml", name)
			}
			if s.Build == nil || s.Build.Context != "." || s.Build.Dockerfile != "deploy/docker/Dockerfile" || s.Build.Args["SERVICE"] != name {
				t.Errorf("build: want context . and deploy/docker/Dockerfile with SERVICE=%s, got %+v", name, s.Build)
			}
			if s.Healthcheck == nil || len(s.Healthcheck.Test) < 3 || s.Healthcheck.Test[0] != "CMD" || s.Healthcheck.Test[1] != "/healthcheck" {
				t.Fatalf("healthcheck: want [CMD /healthcheck <readyz URL>], got %+v", s.Healthcheck)
			}
			u, err := url.Parse(s.Healthcheck.Test[2])
			if err != nil || u.Path != "/readyz" {
				t.Errorf("healthcheck asks %q, not /readyz", s.Healthcheck.Test[2])
			} else if admin := s.Environment[daemon.EnvAdminAddr]; admin != ":"+u.Port() {
				t.Errorf("healthcheck asks port %s, the admin server listens on %q", u.Port(), admin)
			}
			if s.Environment[daemon.EnvRedisAddr] != "redis:6379" {
				t.Errorf("%s=%q, want redis:6379", daemon.EnvRedisAddr, s.Environment[daemon.EnvRedisAddr])
			}
			if s.DependsOn["redis"].Condition != "service_healthy" {
				t.Errorf("does not wait for a healthy redis: %+v", s.DependsOn)
			}
			for k := range s.Environment {
				// A container's admin server listens on every interface
				// (for the probes and Prometheus), so compose turns its
				// profiles off; the launcher's admin servers are on
				// loopback, where they stay on.
				if k == daemon.EnvPProf {
					continue
				}
				if !launcherSets[name][k] {
					t.Errorf("sets %s, which the launcher does not give %s", k, name)
				}
			}
			for k := range launcherSets[name] {
				// Names are per process in the launcher; in compose each
				// container's host name makes them unique.
				switch k {
				case envnames.LobbyName, envnames.ScoringConsumer, envnames.WalletConsumer, envnames.RunnerID, envnames.GatewayInstance:
					continue
				}
				if _, ok := s.Environment[k]; !ok {
					t.Errorf("the launcher gives %s %s, compose does not", name, k)
				}
			}
		})
	}

	if r := c.Services["table-runner"].Deploy.Replicas; r != 2 {
		t.Errorf("table-runner replicas %d, want 2 (a table needs somewhere to move)", r)
	}
	g := c.Services["gateway"]
	if !slices.Contains(g.Ports, "8080:8080") || g.Environment[envnames.GatewayAddr] != ":8080" {
		t.Errorf("gateway: want :8080 published as 8080:8080, got ports %v addr %q", g.Ports, g.Environment[envnames.GatewayAddr])
	}
	if o := g.Environment[envnames.AllowedOrigins]; o != "http://localhost:8080" {
		t.Errorf("gateway allowed origin %q, want http://localhost:8080", o)
	}
	// The secret comes from the environment or .env, never from the file.
	if sec := g.Environment[envnames.SessionSecret]; !strings.HasPrefix(sec, "${"+envnames.SessionSecret+":?") {
		t.Errorf("gateway session secret %q: want a required ${%s:?…} reference", sec, envnames.SessionSecret)
	}
	if g.DependsOn["lobby"].Condition != "service_healthy" {
		t.Errorf("the gateway does not wait for a healthy lobby (its readiness needs the lobby's view): %+v", g.DependsOn)
	}
}

func TestDockerfile_BuildsAnyServiceOfTheWorkspace(t *testing.T) {
	root := repoRoot(t)
	b, err := os.ReadFile(filepath.Join(root, "deploy", "docker", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	df := string(b)
	for _, want := range []string{"ARG SERVICE", `go build -ldflags="-s -w" -o /out/service "./cmd/$SERVICE"`,
		"COPY --from=build /out/healthcheck /healthcheck", "USER nonroot"} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	// The image's workspace is pkg plus the one service, whose module
	// files are copied before go mod download.
	for _, want := range []string{
		"COPY pkg/go.mod pkg/go.sum pkg/",
		"COPY services/${SERVICE}/go.mod services/${SERVICE}/go.sum services/${SERVICE}/",
		`go work init ./pkg "./services/$SERVICE"`,
	} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	// That workspace is enough only while a service needs no module but
	// pkg and its own.
	for _, name := range servicesInRepo(t, root) {
		mod, err := os.ReadFile(filepath.Join(root, "services", name, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(mod), "\n") {
			f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
			if len(f) > 0 && strings.HasPrefix(f[0], "github.com/pulka/pulka/") && f[0] != "github.com/pulka/pulka/pkg" &&
				!strings.HasPrefix(strings.TrimSpace(line), "module ") {
				t.Errorf("services/%s requires %s, which the image's workspace lacks", name, f[0])
			}
		}
	}
	if _, err := os.Stat(filepath.Join(root, "deploy", "docker", "healthcheck", "main.go")); err != nil {
		t.Errorf("the healthcheck the images run is missing: %v", err)
	}
}

// docker-compose's Redis keeps its data (issue 17): AOF with fsync before
// every reply (issue 19: the wallet's ledger loses nothing acknowledged), memory bounded with noeviction (an evicted lease, log or
// snapshot would corrupt a game), and /data on a named volume so the
// container's restart does not lose it.
func TestCompose_RedisPersistsAndNeverEvicts(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Services map[string]composeService `yaml:"services"`
		Volumes  map[string]any            `yaml:"volumes"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	r, ok := c.Services["redis"]
	if !ok {
		t.Fatal("no redis service")
	}
	args := map[string]string{}
	for i := 0; i+1 < len(r.Command); i++ {
		if strings.HasPrefix(r.Command[i], "--") {
			args[r.Command[i]] = r.Command[i+1]
		}
	}
	want := map[string]string{"--appendonly": "yes", "--appendfsync": "always", "--maxmemory-policy": "noeviction"}
	for k, v := range want {
		if args[k] != v {
			t.Errorf("redis %s = %q, want %q (command %v)", k, args[k], v, r.Command)
		}
	}
	if args["--maxmemory"] == "" || args["--maxmemory"] == "0" {
		t.Errorf("redis has no maxmemory (command %v)", r.Command)
	}
	if !slices.Contains(r.Volumes, "redis-data:/data") {
		t.Errorf("redis volumes %v, want redis-data:/data", r.Volumes)
	}
	if _, ok := c.Volumes["redis-data"]; !ok {
		t.Error("the redis-data volume is not declared")
	}
}
