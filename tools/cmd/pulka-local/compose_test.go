package main

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v3"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/pkg/envnames"
	"github.com/pulka/pulka/tools/stack"
)

// There is no Docker engine where the tests run, so docker-compose.yml and
// the Dockerfile are checked structurally here: every service under
// services/ is built from deploy/docker/Dockerfile, health-checked on its
// /readyz, and given the settings the launcher gives it.

// composeFile is what the tests read of docker-compose.yml, as Docker
// Compose itself loads it (compose-go: the compose specification's schema,
// interpolation, profiles, paths resolved).
type composeFile struct {
	Name     string
	Services map[string]composeService
	Volumes  map[string]types.VolumeConfig
}

type composeService struct {
	Image string
	Build *struct {
		Context    string // relative to the repository root
		Dockerfile string
		Args       map[string]string
	}
	Environment map[string]string
	Healthcheck *struct{ Test []string }
	DependsOn   map[string]struct{ Condition string }
	Deploy      struct{ Replicas int }
	Ports       []string // "published:target"
	Command     []string
	Volumes     []string // "source:target"
	Profiles    []string
}

// testSecret stands for the session secret compose requires from .env.
const testSecret = "0123456789abcdef0123456789abcdef"

// loadCompose loads docker-compose.yml as docker compose does, with every
// profile, in an environment of env only.
func loadCompose(root string, env map[string]string) (*types.Project, error) {
	return loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  root,
		ConfigFiles: []types.ConfigFile{{Filename: filepath.Join(root, "docker-compose.yml")}},
		Environment: env,
	}, func(o *loader.Options) {
		o.SetProjectName("pulka", true)
		o.Profiles = []string{"*"}
	})
}

func readCompose(t *testing.T, root string) composeFile {
	t.Helper()
	p, err := loadCompose(root, map[string]string{envnames.SessionSecret: testSecret})
	if err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	c := composeFile{Name: p.Name, Services: map[string]composeService{}, Volumes: p.Volumes}
	deref := func(m types.MappingWithEquals) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			if v != nil {
				out[k] = *v
			}
		}
		return out
	}
	for name, s := range p.Services {
		cs := composeService{Image: s.Image, Environment: deref(s.Environment), Command: s.Command,
			Profiles: s.Profiles, DependsOn: map[string]struct{ Condition string }{}}
		if s.Build != nil {
			rel, err := filepath.Rel(root, s.Build.Context)
			if err != nil {
				t.Fatal(err)
			}
			cs.Build = &struct {
				Context    string
				Dockerfile string
				Args       map[string]string
			}{rel, s.Build.Dockerfile, deref(s.Build.Args)}
		}
		if s.HealthCheck != nil {
			cs.Healthcheck = &struct{ Test []string }{s.HealthCheck.Test}
		}
		for dep, d := range s.DependsOn {
			cs.DependsOn[dep] = struct{ Condition string }{d.Condition}
		}
		if s.Deploy != nil && s.Deploy.Replicas != nil {
			cs.Deploy.Replicas = *s.Deploy.Replicas
		}
		for _, port := range s.Ports {
			cs.Ports = append(cs.Ports, port.Published+":"+strconv.FormatUint(uint64(port.Target), 10))
		}
		for _, v := range s.Volumes {
			cs.Volumes = append(cs.Volumes, v.Source+":"+v.Target)
		}
		c.Services[name] = cs
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
				// Traces go to the observability profile's collector when
				// asked for (every service reads the variable; the
				// launcher sends traces nowhere).
				if k == daemon.EnvOTLPEndpoint {
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
	// The secret comes from the environment or .env, never from the file:
	// compose refuses to start without it.
	if sec := g.Environment[envnames.SessionSecret]; sec != testSecret {
		t.Errorf("gateway session secret %q: want the environment's", sec)
	}
	if _, err := loadCompose(root, nil); err == nil || !strings.Contains(err.Error(), envnames.SessionSecret) {
		t.Errorf("docker-compose.yml loads without %s (err %v); it must be required", envnames.SessionSecret, err)
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
		"COPY --from=build /out/healthcheck /healthcheck",
		// Numeric: the kubelet verifies runAsNonRoot only against a uid.
		"USER 65532:65532"} {
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
	c := readCompose(t, repoRoot(t))
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

// The observability profile: off by default; when on, the services' traces
// reach the collector, which hands them to Jaeger, and Prometheus scrapes
// every Pulka service's admin port.
func TestCompose_ObservabilityProfileSeesEveryService(t *testing.T) {
	root := repoRoot(t)
	c := readCompose(t, root)
	for _, name := range []string{"otel-collector", "jaeger", "prometheus"} {
		if s, ok := c.Services[name]; !ok || !slices.Equal(s.Profiles, []string{"observability"}) {
			t.Errorf("%s: want it in the observability profile only, got %+v", name, s.Profiles)
		}
	}
	pulka := servicesInRepo(t, root)
	for _, name := range append([]string{"redis"}, pulka...) {
		if p := c.Services[name].Profiles; len(p) != 0 {
			t.Errorf("%s runs only with profiles %v; Pulka itself must always run", name, p)
		}
	}

	// Traces: nowhere by default; the collector's OTLP/HTTP port when set.
	for _, name := range pulka {
		if v := c.Services[name].Environment[daemon.EnvOTLPEndpoint]; v != "" {
			t.Errorf("%s sends traces to %q by default", name, v)
		}
	}
	p, err := loadCompose(root, map[string]string{envnames.SessionSecret: testSecret, daemon.EnvOTLPEndpoint: "http://otel-collector:4318"})
	if err != nil {
		t.Fatal(err)
	}
	if v := p.Services["lobby"].Environment[daemon.EnvOTLPEndpoint]; v == nil || *v != "http://otel-collector:4318" {
		t.Errorf("the lobby's trace endpoint %v, want the environment's", v)
	}
	var collector struct {
		Receivers struct {
			OTLP struct {
				Protocols struct {
					HTTP struct{ Endpoint string } `yaml:"http"`
				} `yaml:"protocols"`
			} `yaml:"otlp"`
		} `yaml:"receivers"`
		Exporters map[string]struct{ Endpoint string } `yaml:"exporters"`
		Service   struct {
			Pipelines map[string]struct{ Receivers, Exporters []string } `yaml:"pipelines"`
		} `yaml:"service"`
	}
	readYAML(t, filepath.Join(root, "deploy", "observability", "otel-collector.yaml"), &collector)
	if ep := collector.Receivers.OTLP.Protocols.HTTP.Endpoint; !strings.HasSuffix(ep, ":4318") {
		t.Errorf("the collector's OTLP/HTTP receiver is on %q, not the :4318 the services are told", ep)
	}
	traces := collector.Service.Pipelines["traces"]
	if !slices.Contains(traces.Receivers, "otlp") || len(traces.Exporters) == 0 {
		t.Fatalf("the collector's traces pipeline %+v", traces)
	}
	for _, e := range traces.Exporters {
		host, _, _ := strings.Cut(collector.Exporters[e].Endpoint, ":")
		if _, ok := c.Services[host]; !ok {
			t.Errorf("the collector exports %s to %q, which is no compose service", e, collector.Exporters[e].Endpoint)
		}
	}

	// Metrics: every Pulka service, on the port its admin server listens on.
	var prom struct {
		ScrapeConfigs []struct {
			DNS []struct {
				Names []string
				Port  int
			} `yaml:"dns_sd_configs"`
		} `yaml:"scrape_configs"`
	}
	readYAML(t, filepath.Join(root, "deploy", "observability", "prometheus.yml"), &prom)
	scraped := map[string]int{}
	for _, sc := range prom.ScrapeConfigs {
		for _, d := range sc.DNS {
			for _, n := range d.Names {
				scraped[n] = d.Port
			}
		}
	}
	for _, name := range pulka {
		if port, admin := scraped[name], c.Services[name].Environment[daemon.EnvAdminAddr]; ":"+strconv.Itoa(port) != admin {
			t.Errorf("prometheus scrapes %s on port %d; its admin server listens on %q", name, port, admin)
		}
	}
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
