package helmtest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite charts/pulka/README.md with helm-docs")

func TestLintStrict(t *testing.T) {
	t.Parallel()
	for _, v := range valuesFiles {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			out := mustHelm(t, "lint", "--strict", chartDir(), "-f", valuesFile(v))
			if !strings.Contains(out, "0 chart(s) failed") {
				t.Fatalf("helm lint:\n%s", out)
			}
		})
	}
}

// Without a Redis the chart refuses to render, saying what to set.
func TestNoRedisIsRefused(t *testing.T) {
	t.Parallel()
	_, errOut, err := helm(t, "template", "pulka", chartDir())
	if err == nil || !strings.Contains(errOut, "set redis.addr") {
		t.Fatalf("helm template with no Redis: err %v, stderr %q; want the redis.addr error", err, errOut)
	}
}

// The combinations the schema cannot express are refused with a message.
func TestInvalidCombinationsAreRefused(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"sentinelMaster": {"--set", "redis.mode=sentinel"},
		"existingSecret": {"--set", "redis.inChart.enabled=false,redis.addr=r:6379,redis.auth.enabled=true"},
		"wallet.enabled": {"--set", "wallet.enabled=false"},
		"inChart":        {"--set", "redis.mode=cluster"},
		// The operator sets these on the runners itself (and drops a
		// template's entry of the same name): refused, not ignored.
		"PULKA_RUNNER_CAPACITY": {"--set", "runnerPool.extraEnv.PULKA_RUNNER_CAPACITY=9"},
		"PULKA_ADMIN_ADDR":      {"--set", "runnerPool.extraEnv.PULKA_ADMIN_ADDR=:1234"},
		// Behind an ingress every player would share its address.
		"gateway.trustedProxies": {"--set", "gateway.ingress.enabled=true,gateway.ingress.host=pulka.example"},
	}
	for want, args := range cases {
		t.Run(want, func(t *testing.T) {
			t.Parallel()
			all := append([]string{"template", "pulka", chartDir(), "-f", valuesFile("minimal")}, args...)
			_, errOut, err := helm(t, all...)
			if err == nil || !strings.Contains(errOut, want) {
				t.Fatalf("helm template %v: err %v, stderr %q; want an error naming %s", args, err, errOut, want)
			}
		})
	}
}

// A Redis CA from a Secret reaches every Pulka container, the operator's
// runner pods too (through the RunnerPool's secretMounts): each mounts it
// where PULKA_REDIS_TLS_CA_FILE points.
func TestRedisCAReachesEveryContainer(t *testing.T) {
	t.Parallel()
	idx := index(render(t, "minimal", "--set", "redis.tls.enabled=true,redis.tls.caSecret=redis-ca,redis.tls.caKey=ca.crt,runnerPool.topologySpreadConstraints[0].maxSkew=1,runnerPool.topologySpreadConstraints[0].topologyKey=topology.kubernetes.io/zone,runnerPool.topologySpreadConstraints[0].whenUnsatisfiable=ScheduleAnyway"))
	rp := idx["RunnerPool/runners"]
	if rp == nil {
		t.Fatal("no RunnerPool runners")
	}
	tmpl := must[map[string]any](t, rp.Object, "spec", "template")
	if ca := envOf(tmpl)["PULKA_REDIS_TLS_CA_FILE"]; ca != "/etc/pulka/redis-ca/ca.crt" {
		t.Errorf("the runners' CA file %q", ca)
	}
	mounts, _ := tmpl["secretMounts"].([]any)
	if len(mounts) != 1 || field(mounts[0].(map[string]any), "secretName") != "redis-ca" ||
		field(mounts[0].(map[string]any), "mountPath") != "/etc/pulka/redis-ca" {
		t.Errorf("the runners' secret mounts %v", mounts)
	}
	tsc, _ := tmpl["topologySpreadConstraints"].([]any)
	if len(tsc) != 1 || field(tsc[0].(map[string]any), "labelSelector") == nil {
		t.Errorf("the runners' topology spread %v (want one, its labelSelector defaulted)", tsc)
	}
	for name, o := range idx {
		if o.GetKind() != "Deployment" {
			continue
		}
		c := must[[]any](t, o.Object, "spec", "template", "spec", "containers")[0].(map[string]any)
		if envOf(c)["PULKA_REDIS_TLS_CA_FILE"] != "/etc/pulka/redis-ca/ca.crt" {
			t.Errorf("%s: no CA file", name)
		}
	}
}

// Every service gets its container's memory limit (the runtime holds its
// heap under 90 % of it) and the chart's GOGC; goGC null leaves Go's default.
func TestEveryServiceGetsItsMemoryLimitAndGOGC(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		set, gogc string
	}{{"", "400"}, {"goGC=200", "200"}, {"goGC=null", ""}} {
		args := []string{}
		if tc.set != "" {
			args = []string{"--set", tc.set}
		}
		idx := index(render(t, "minimal", args...))
		envs := map[string]map[string]string{}
		if rp := idx["RunnerPool/runners"]; rp != nil {
			envs["RunnerPool"] = envOf(must[map[string]any](t, rp.Object, "spec", "template"))
		}
		for name, o := range idx {
			if o.GetKind() == "Deployment" {
				envs[name] = envOf(must[[]any](t, o.Object, "spec", "template", "spec", "containers")[0].(map[string]any))
			}
		}
		if len(envs) < 5 {
			t.Fatalf("%q: only %d workloads rendered", tc.set, len(envs))
		}
		for name, env := range envs {
			if env["PULKA_MEMORY_LIMIT"] != "resource:limits.memory" {
				t.Errorf("%q: %s: PULKA_MEMORY_LIMIT %q, want the container's limits.memory", tc.set, name, env["PULKA_MEMORY_LIMIT"])
			}
			if got, set := env["GOGC"]; got != tc.gogc || set != (tc.gogc != "") {
				t.Errorf("%q: %s: GOGC %q (set %v), want %q", tc.set, name, got, set, tc.gogc)
			}
		}
	}
}

// index finds objects by kind and name suffix (the names carry the
// release's prefix).
func index(objs []*unstructured.Unstructured) map[string]*unstructured.Unstructured {
	m := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		m[o.GetKind()+"/"+o.GetName()] = o
	}
	return m
}

func must[T any](t *testing.T, o map[string]any, path ...string) T {
	t.Helper()
	v, ok, err := unstructured.NestedFieldNoCopy(o, path...)
	if err != nil || !ok {
		t.Fatalf("%s: missing (%v)", strings.Join(path, "."), err)
	}
	x, ok := v.(T)
	if !ok {
		t.Fatalf("%s: %T, want %T", strings.Join(path, "."), v, x)
	}
	return x
}

func field(o map[string]any, path ...string) any {
	v, _, _ := unstructured.NestedFieldNoCopy(o, path...)
	return v
}

// envOf maps a container's env names to their value (or "secret:name/key",
// "field:path").
func envOf(c map[string]any) map[string]string {
	env := map[string]string{}
	list, _ := c["env"].([]any)
	for _, e := range list {
		e := e.(map[string]any)
		name := e["name"].(string)
		switch {
		case e["value"] != nil:
			env[name] = fmt.Sprint(e["value"])
		case field(e, "valueFrom", "secretKeyRef") != nil:
			env[name] = fmt.Sprintf("secret:%v/%v", field(e, "valueFrom", "secretKeyRef", "name"), field(e, "valueFrom", "secretKeyRef", "key"))
		case field(e, "valueFrom", "fieldRef") != nil:
			env[name] = fmt.Sprintf("field:%v", field(e, "valueFrom", "fieldRef", "fieldPath"))
		case field(e, "valueFrom", "resourceFieldRef") != nil:
			env[name] = fmt.Sprintf("resource:%v", field(e, "valueFrom", "resourceFieldRef", "resource"))
		default:
			env[name] = ""
		}
	}
	return env
}

var (
	knownOnce sync.Once
	known     map[string]bool
)

// knownEnvNames are the environment variable names the Go code of pkg/ and
// services/ spells out: a name the chart sets that is not among them is
// one no service reads.
func knownEnvNames(t *testing.T) map[string]bool {
	t.Helper()
	knownOnce.Do(func() {
		known = map[string]bool{"GOGC": true, "GOMEMLIMIT": true} // the Go runtime's own
		re := regexp.MustCompile(`"((?:PULKA|OTEL)_[A-Z0-9_]+|LOG_LEVEL)"`)
		for _, dir := range []string{"pkg", "services"} {
			_ = filepath.WalkDir(filepath.Join(repoRoot(), dir), func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
					return err
				}
				b, err := os.ReadFile(path)
				if err != nil {
					return err
				}
				for _, m := range re.FindAllSubmatch(b, -1) {
					known[string(m[1])] = true
				}
				return nil
			})
		}
	})
	if len(known) < 20 {
		t.Fatalf("found only %d environment names in pkg/ and services/", len(known))
	}
	return known
}

// checkPod checks what every pod of the chart must have: probes, resources,
// the security context, a grace period beyond the service's own drain.
func checkPod(t *testing.T, kind, name string, spec map[string]any) {
	t.Helper()
	podSC, _ := spec["securityContext"].(map[string]any)
	if field(podSC, "runAsNonRoot") != true || field(podSC, "seccompProfile", "type") != "RuntimeDefault" {
		t.Errorf("%s %s: pod securityContext %v lacks runAsNonRoot and seccomp RuntimeDefault", kind, name, podSC)
	}
	// A Pulka image's pods run as the image's own (numeric) user, so that
	// the kubelet can verify runAsNonRoot and the files are the image's.
	if kind != "StatefulSet" {
		if uid, gid := imageUser(t); fmt.Sprint(field(podSC, "runAsUser")) != fmt.Sprint(uid) || fmt.Sprint(field(podSC, "runAsGroup")) != fmt.Sprint(gid) {
			t.Errorf("%s %s: pod runs as %v:%v, the images as %d:%d (deploy/docker/Dockerfile's USER)", kind, name,
				field(podSC, "runAsUser"), field(podSC, "runAsGroup"), uid, gid)
		}
	}
	grace, _ := spec["terminationGracePeriodSeconds"].(int64)
	if grace == 0 {
		if f, ok := spec["terminationGracePeriodSeconds"].(float64); ok {
			grace = int64(f)
		}
	}
	containers := must[[]any](t, spec, "containers")
	if len(containers) == 0 {
		t.Fatalf("%s %s: no container", kind, name)
	}
	for _, c := range containers {
		c := c.(map[string]any)
		where := fmt.Sprintf("%s %s container %v", kind, name, c["name"])
		for _, p := range []string{"startupProbe", "livenessProbe", "readinessProbe"} {
			if c[p] == nil {
				t.Errorf("%s: no %s", where, p)
			}
		}
		for _, r := range [][]string{{"requests", "cpu"}, {"requests", "memory"}, {"limits", "memory"}} {
			if field(c, append([]string{"resources"}, r...)...) == nil {
				t.Errorf("%s: no resources.%s", where, strings.Join(r, "."))
			}
		}
		sc, _ := c["securityContext"].(map[string]any)
		drop, _ := field(sc, "capabilities", "drop").([]any)
		if field(sc, "runAsNonRoot") != true || field(sc, "readOnlyRootFilesystem") != true ||
			field(sc, "allowPrivilegeEscalation") != false || !slices.Contains(drop, any("ALL")) ||
			field(sc, "seccompProfile", "type") != "RuntimeDefault" {
			t.Errorf("%s: securityContext %v is not non-root, read-only, no escalation, drop ALL, seccomp RuntimeDefault", where, sc)
		}
		if c["name"] == "redis" {
			continue
		}
		// A Pulka service: probes on the admin port's /healthz and /readyz.
		if field(c, "readinessProbe", "httpGet", "path") != "/readyz" || field(c, "readinessProbe", "httpGet", "port") != "admin" ||
			field(c, "livenessProbe", "httpGet", "path") != "/healthz" || field(c, "startupProbe", "httpGet", "path") != "/healthz" {
			t.Errorf("%s: probes are not /healthz and /readyz on the admin port", where)
		}
		ports, _ := c["ports"].([]any)
		if !slices.ContainsFunc(ports, func(p any) bool {
			return field(p.(map[string]any), "name") == "admin" && fmt.Sprint(field(p.(map[string]any), "containerPort")) == "9090"
		}) {
			t.Errorf("%s: no admin port 9090", where)
		}
		env := envOf(c)
		shutdown, err1 := time.ParseDuration(env["PULKA_SHUTDOWN_TIMEOUT"])
		drain, err2 := time.ParseDuration(env["PULKA_DRAIN_DELAY"])
		if err1 != nil || err2 != nil {
			t.Errorf("%s: PULKA_SHUTDOWN_TIMEOUT %q, PULKA_DRAIN_DELAY %q", where, env["PULKA_SHUTDOWN_TIMEOUT"], env["PULKA_DRAIN_DELAY"])
		} else if time.Duration(grace)*time.Second <= shutdown+drain {
			t.Errorf("%s: terminationGracePeriodSeconds %d is not beyond the shutdown timeout %v and drain delay %v", where, grace, shutdown, drain)
		}
		checkEnvNames(t, where, env)
		if env["PULKA_ADMIN_ADDR"] != ":9090" {
			t.Errorf("%s: PULKA_ADMIN_ADDR %q, want :9090 (the probes' port)", where, env["PULKA_ADMIN_ADDR"])
		}
	}
}

// checkPodLabels: a pod's labels select it (NetworkPolicy, PodMonitor) and
// leave out the chart's version, so a chart upgrade that changes nothing of
// a pod does not roll it (a gateway's roll closes its WebSockets, a runner's
// moves its tables).
func checkPodLabels(t *testing.T, where string, labels any) {
	t.Helper()
	l, _ := labels.(map[string]any)
	if l["app.kubernetes.io/part-of"] != "pulka" || l["app.kubernetes.io/component"] == nil {
		t.Errorf("%s: pod labels %v lack part-of and component", where, l)
	}
	for _, k := range []string{"helm.sh/chart", "app.kubernetes.io/version"} {
		if _, ok := l[k]; ok {
			t.Errorf("%s: pod labels carry %s: a chart upgrade would roll every pod", where, k)
		}
	}
}

func checkEnvNames(t *testing.T, where string, env map[string]string) {
	t.Helper()
	known := knownEnvNames(t)
	for name := range env {
		if !known[name] {
			t.Errorf("%s: sets %s, which no service reads", where, name)
		}
	}
}

// rendered is what every values file must render.
func checkCommon(t *testing.T, objs []*unstructured.Unstructured, wallet bool) map[string]*unstructured.Unstructured {
	t.Helper()
	idx := index(objs)
	components := []string{"gateway", "lobby", "scoring", "operator"}
	if wallet {
		components = append(components, "wallet")
	} else if idx["Deployment/pulka-wallet"] != nil {
		t.Error("wallet disabled, yet its Deployment is rendered")
	}
	for _, c := range components {
		for _, kind := range []string{"Deployment", "Service", "PodDisruptionBudget"} {
			if idx[kind+"/pulka-"+c] == nil {
				t.Errorf("no %s pulka-%s", kind, c)
			}
		}
	}
	for _, o := range objs {
		switch o.GetKind() {
		case "Deployment", "StatefulSet":
			checkPod(t, o.GetKind(), o.GetName(), must[map[string]any](t, o.Object, "spec", "template", "spec"))
			checkPodLabels(t, o.GetKind()+" "+o.GetName(), field(o.Object, "spec", "template", "metadata", "labels"))
		case "Secret":
			if o.GetAnnotations()["helm.sh/resource-policy"] != "keep" {
				t.Errorf("Secret %s: not kept on uninstall", o.GetName())
			}
		}
	}
	op := idx["Deployment/pulka-operator"]
	if op == nil {
		t.Fatal("no operator")
	}
	spec := must[map[string]any](t, op.Object, "spec", "template", "spec")
	if spec["serviceAccountName"] != "pulka-operator" || idx["ServiceAccount/pulka-operator"] == nil {
		t.Errorf("operator: service account %v", spec["serviceAccountName"])
	}
	env := envOf(must[[]any](t, spec, "containers")[0].(map[string]any))
	if env["PULKA_OPERATOR_POOL"] != "games/runners" || env["PULKA_OPERATOR_NAMESPACE"] != "games" || env["PULKA_OPERATOR_LEADER_ELECT"] != "true" ||
		env["PULKA_OPERATOR_ID"] != "field:metadata.name" || env["PULKA_OPERATOR_LEASE_NAMESPACE"] != "games" {
		t.Errorf("operator env %v: want the pool games/runners in the namespace games, leader election, its pod's name as id, the lease in games", env)
	}
	if fmt.Sprint(field(op.Object, "spec", "replicas")) != "2" {
		t.Errorf("operator replicas %v, want 2", field(op.Object, "spec", "replicas"))
	}
	rp := idx["RunnerPool/runners"]
	if rp == nil {
		t.Fatal("no RunnerPool runners")
	}
	if field(rp.Object, "spec", "template", "resources", "requests", "cpu") == nil || field(rp.Object, "spec", "template", "resources", "limits", "memory") == nil {
		t.Error("RunnerPool: the runners have no resources")
	}
	checkPodLabels(t, "RunnerPool runners", field(rp.Object, "spec", "template", "labels"))
	renv := map[string]any{"env": field(rp.Object, "spec", "template", "env")}
	checkEnvNames(t, "RunnerPool runners", envOf(renv))
	for _, set := range []string{"PULKA_RUNNER_ID", "PULKA_RUNNER_CAPACITY", "PULKA_RUNNER_HEARTBEAT_TTL", "PULKA_RUNNER_ASSIGNER", "PULKA_ADMIN_ADDR"} {
		if _, ok := envOf(renv)[set]; ok {
			t.Errorf("RunnerPool: sets %s, which the operator sets itself", set)
		}
	}
	// The runners get the grace every pod of the chart gets: beyond their
	// shutdown timeout and drain delay.
	shutdown, err1 := time.ParseDuration(envOf(renv)["PULKA_SHUTDOWN_TIMEOUT"])
	drain, err2 := time.ParseDuration(envOf(renv)["PULKA_DRAIN_DELAY"])
	grace := fmt.Sprint(field(rp.Object, "spec", "template", "terminationGracePeriodSeconds"))
	if want := fmt.Sprint(int64((shutdown + drain + 5*time.Second) / time.Second)); err1 != nil || err2 != nil || grace != want {
		t.Errorf("RunnerPool: terminationGracePeriodSeconds %s, want %s (shutdown %v + drain %v + 5 s; %v %v)", grace, want, shutdown, drain, err1, err2)
	}
	return idx
}

// imageUser is the uid and gid of deploy/docker/Dockerfile's last USER,
// which must be numeric: the kubelet checks runAsNonRoot only against a
// number, and refuses an image whose user is a name unless the pod gives
// runAsUser.
func imageUser(t *testing.T) (uid, gid int64) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot(), "deploy", "docker", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	user := ""
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && strings.EqualFold(f[0], "USER") {
			user = f[1]
		}
	}
	u, g, _ := strings.Cut(user, ":")
	if uid, err = strconv.ParseInt(u, 10, 64); err != nil || uid == 0 {
		t.Fatalf("deploy/docker/Dockerfile: USER %q is not a numeric non-root uid[:gid]", user)
	}
	gid = uid
	if g != "" {
		if gid, err = strconv.ParseInt(g, 10, 64); err != nil {
			t.Fatalf("deploy/docker/Dockerfile: USER %q: the group is not numeric", user)
		}
	}
	return uid, gid
}

func TestRenderMinimal(t *testing.T) {
	t.Parallel()
	objs := render(t, "minimal")
	idx := checkCommon(t, objs, true)
	redis := idx["StatefulSet/pulka-redis"]
	if redis == nil {
		t.Fatal("no in-chart Redis")
	}
	c := must[[]any](t, redis.Object, "spec", "template", "spec", "containers")[0].(map[string]any)
	args := strings.Join(func() []string {
		var s []string
		for _, a := range c["args"].([]any) {
			s = append(s, fmt.Sprint(a))
		}
		return s
	}(), " ")
	for _, want := range []string{"--appendonly yes", "--appendfsync always", "--maxmemory-policy noeviction", "--requirepass $(REDIS_PASSWORD)"} {
		if !strings.Contains(args, want) {
			t.Errorf("in-chart Redis args %q lack %q", args, want)
		}
	}
	for _, s := range []string{"Secret/pulka-session", "Secret/pulka-redis"} {
		if idx[s] == nil {
			t.Errorf("no generated %s", s)
		}
	}
	gw := envOf(must[[]any](t, idx["Deployment/pulka-gateway"].Object, "spec", "template", "spec", "containers")[0].(map[string]any))
	if gw["PULKA_SESSION_SECRET"] != "secret:pulka-session/session-secret" || gw["PULKA_REDIS_PASSWORD"] != "secret:pulka-redis/password" ||
		gw["PULKA_REDIS_ADDR"] != "pulka-redis:6379" {
		t.Errorf("gateway env %v: want the session key and Redis password from the generated Secrets, Redis at pulka-redis:6379", gw)
	}
	for _, kind := range []string{"HorizontalPodAutoscaler", "Ingress", "ServiceMonitor", "PodMonitor", "NetworkPolicy"} {
		for _, o := range objs {
			if o.GetKind() == kind {
				t.Errorf("%s %s rendered though off by default", kind, o.GetName())
			}
		}
	}
}

func TestRenderProduction(t *testing.T) {
	t.Parallel()
	objs := render(t, "production")
	idx := checkCommon(t, objs, true)
	for _, o := range objs {
		if o.GetKind() == "Secret" {
			t.Errorf("Secret %s rendered though every secret comes from an existing one", o.GetName())
		}
	}
	gw := idx["Deployment/pulka-gateway"]
	if field(gw.Object, "spec", "replicas") != nil {
		t.Error("gateway Deployment sets replicas though its HPA owns them")
	}
	if idx["HorizontalPodAutoscaler/pulka-gateway"] == nil || idx["Ingress/pulka-gateway"] == nil {
		t.Error("no HPA or Ingress for the gateway")
	}
	if a := idx["Ingress/pulka-gateway"].GetAnnotations()["nginx.ingress.kubernetes.io/proxy-read-timeout"]; a != "3600" {
		t.Errorf("Ingress annotations: proxy-read-timeout %q", a)
	}
	for _, c := range []string{"gateway", "lobby", "scoring", "wallet", "operator"} {
		sm := idx["ServiceMonitor/pulka-"+c]
		if sm == nil || sm.GetLabels()["release"] != "prometheus" {
			t.Errorf("ServiceMonitor pulka-%s missing or without the extra label", c)
		}
	}
	if idx["PodMonitor/pulka-table-runner"] == nil || idx["NetworkPolicy/pulka-default"] == nil || idx["NetworkPolicy/pulka-gateway"] == nil {
		t.Error("no PodMonitor or NetworkPolicies")
	}
	spec := must[map[string]any](t, gw.Object, "spec", "template", "spec")
	tsc := must[[]any](t, spec, "topologySpreadConstraints")[0].(map[string]any)
	if field(tsc, "labelSelector", "matchLabels", "app.kubernetes.io/component") != "gateway" {
		t.Errorf("gateway topology spread %v: no default selector of the gateway's pods", tsc)
	}
	if field(spec, "nodeSelector", "pool") != "web" || len(must[[]any](t, spec, "tolerations")) != 1 {
		t.Error("gateway: nodeSelector or tolerations not rendered")
	}
	if field(spec, "imagePullSecrets") == nil {
		t.Error("no imagePullSecrets")
	}
	// The runners' account carries them (their template has no field).
	if sa := idx["ServiceAccount/pulka-workload"]; sa == nil || field(sa.Object, "imagePullSecrets") == nil {
		t.Error("the workload ServiceAccount has no imagePullSecrets")
	}
	env := envOf(must[[]any](t, spec, "containers")[0].(map[string]any))
	want := map[string]string{
		"PULKA_REDIS_SENTINEL_MASTER": "pulka", "PULKA_REDIS_TLS": "true", "PULKA_REDIS_TLS_SERVER_NAME": "redis.internal",
		"PULKA_REDIS_PASSWORD": "secret:pulka-redis/password", "PULKA_REDIS_SENTINEL_PASSWORD": "secret:pulka-redis/sentinel-password",
		"PULKA_SESSION_SECRET": "secret:pulka-session/session-secret", "PULKA_WS_RATE": "20",
		"PULKA_SESSION_PREVIOUS_SECRETS": "secret:pulka-session/previous-session-secrets", "PULKA_SHUTDOWN_TIMEOUT": "30s",
		"OTEL_TRACES_SAMPLER_ARG": "0.05", "PULKA_TRUSTED_PROXIES": "10.0.0.0/8",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("gateway %s = %q, want %q", k, env[k], v)
		}
	}
	if g := field(spec, "terminationGracePeriodSeconds"); fmt.Sprint(g) != "45" {
		t.Errorf("gateway grace %v, want 30+10+5", g)
	}
	rp := idx["RunnerPool/runners"]
	for k, v := range map[string]string{"minRunners": "3", "maxRunners": "40", "drainTimeout": "120s", "targetUtilizationPercent": "70"} {
		if got := fmt.Sprint(field(rp.Object, "spec", k)); got != v {
			t.Errorf("RunnerPool %s = %s, want %s", k, got, v)
		}
	}
	if field(rp.Object, "spec", "template", "nodeSelector", "pool") != "games" {
		t.Error("RunnerPool: nodeSelector not rendered")
	}
}

func TestRenderRedisCluster(t *testing.T) {
	t.Parallel()
	objs := render(t, "redis-cluster")
	idx := checkCommon(t, objs, false)
	check := func(where string, env map[string]string) {
		if env["PULKA_REDIS_CLUSTER"] != "true" || !strings.Contains(env["PULKA_REDIS_ADDR"], ",") {
			t.Errorf("%s: PULKA_REDIS_CLUSTER %q, PULKA_REDIS_ADDR %q", where, env["PULKA_REDIS_CLUSTER"], env["PULKA_REDIS_ADDR"])
		}
		if _, ok := env["PULKA_REDIS_DB"]; ok {
			t.Errorf("%s: sets PULKA_REDIS_DB, which a cluster has not", where)
		}
	}
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			check(o.GetName(), envOf(must[[]any](t, o.Object, "spec", "template", "spec", "containers")[0].(map[string]any)))
		}
	}
	check("RunnerPool", envOf(map[string]any{"env": field(idx["RunnerPool/runners"].Object, "spec", "template", "env")}))
	lobby := envOf(must[[]any](t, idx["Deployment/pulka-lobby"].Object, "spec", "template", "spec", "containers")[0].(map[string]any))
	if lobby["PULKA_LOBBY_COIN_TABLES"] != "false" {
		t.Errorf("lobby coin tables %q with no wallet", lobby["PULKA_LOBBY_COIN_TABLES"])
	}
}

// The chart's ClusterRole and Role grant what the operator's markers
// generate: the Nodes cluster-wide, the rest in the release's namespace only
// (the operator manages that one).
func TestRolesMatchOperator(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot(), "services", "operator", "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	gen := map[string]any{}
	for _, o := range decode(t, string(b)) {
		gen[o.GetKind()] = o.Object["rules"]
	}
	chart := map[string]any{}
	for _, o := range render(t, "minimal") {
		if o.GetKind() == "ClusterRole" || o.GetKind() == "Role" {
			if _, twice := chart[o.GetKind()]; twice {
				t.Errorf("the chart renders more than one %s", o.GetKind())
			}
			chart[o.GetKind()] = o.Object["rules"]
		}
	}
	for _, kind := range []string{"ClusterRole", "Role"} {
		if gen[kind] == nil || chart[kind] == nil {
			t.Errorf("%s: generated %v, chart %v; want both", kind, gen[kind] != nil, chart[kind] != nil)
		} else if !reflect.DeepEqual(chart[kind], gen[kind]) {
			t.Errorf("the chart's %s rules\n%v\ndiffer from services/operator/config/rbac/role.yaml's\n%v", kind, chart[kind], gen[kind])
		}
	}
	if len(gen) != 2 {
		t.Errorf("services/operator/config/rbac/role.yaml holds %v, want a ClusterRole and a Role", slices.Sorted(maps.Keys(gen)))
	}
}

// crds/ holds the operator's generated CRDs, byte for byte.
func TestCRDsMatchOperator(t *testing.T) {
	t.Parallel()
	gen := filepath.Join(repoRoot(), "services", "operator", "config", "crd")
	chart := filepath.Join(chartDir(), "crds")
	names := func(dir string) []string {
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, e := range es {
			n = append(n, e.Name())
		}
		return n
	}
	if g, c := names(gen), names(chart); !slices.Equal(g, c) {
		t.Fatalf("charts/pulka/crds holds %v, the operator generates %v (copy services/operator/config/crd/* into charts/pulka/crds)", c, g)
	}
	for _, n := range names(gen) {
		a, _ := os.ReadFile(filepath.Join(gen, n))
		b, _ := os.ReadFile(filepath.Join(chart, n))
		if !bytes.Equal(a, b) {
			t.Errorf("charts/pulka/crds/%s differs from services/operator/config/crd/%s: copy it again after make operator-generate", n, n)
		}
	}
}

func readSchema(t *testing.T) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(chartDir(), "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// resolve follows a "#/$defs/name" reference.
func resolve(root, node map[string]any) map[string]any {
	for {
		ref, ok := node["$ref"].(string)
		if !ok {
			return node
		}
		node = root["$defs"].(map[string]any)[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
	}
}

// Every key of values.yaml is described by the schema (not merely let
// through), and every object of the schema with properties is closed.
func TestSchemaCoversValues(t *testing.T) {
	t.Parallel()
	root := readSchema(t)
	b, err := os.ReadFile(filepath.Join(chartDir(), "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(b, &values); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v map[string]any, s map[string]any)
	walk = func(path string, v map[string]any, s map[string]any) {
		s = resolve(root, s)
		props, _ := s["properties"].(map[string]any)
		for k, val := range v {
			p, ok := props[k].(map[string]any)
			if !ok {
				if _, isMap := s["additionalProperties"].(map[string]any); isMap || s["additionalProperties"] == true {
					continue // a map of the user's keys: extraEnv, nodeSelector, ...
				}
				t.Errorf("values.yaml %s%s: not in values.schema.json", path, k)
				continue
			}
			if m, ok := val.(map[string]any); ok {
				walk(path+k+".", m, p)
			}
		}
	}
	walk("", values, root)
	count := 0
	var closed func(path string, s any)
	closed = func(path string, s any) {
		switch s := s.(type) {
		case map[string]any:
			if _, ok := s["properties"]; ok {
				count++
				if s["additionalProperties"] != false {
					t.Errorf("schema %s: an object with properties that lets unknown keys through", path)
				}
			}
			for k, v := range s {
				closed(path+"/"+k, v)
			}
		case []any:
			for i, v := range s {
				closed(fmt.Sprintf("%s/%d", path, i), v)
			}
		}
	}
	closed("#", root)
	if count < 30 {
		t.Errorf("only %d closed objects in the schema", count)
	}
}

// The schema refuses a wrong type, an unknown key and a value out of its
// set, anywhere in the tree, and lets the good ones through.
func TestSchemaRefusesBadValues(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, set, want string
	}{
		{"wrong type", "gateway.replicas=two", "/gateway/replicas"},
		{"wrong type bool", "redis.tls.enabled=yes", "/redis/tls/enabled"},
		{"wrong type nested", "runnerPool.minRunners=-1", "/runnerPool/minRunners"},
		{"unknown key top", "replicas=3", "'replicas' not allowed"},
		{"unknown key", "gateway.replica=3", "'replica' not allowed"},
		{"unknown key deep", "lobby.resources.requests.gpu=1", "'gpu' not allowed"},
		{"unknown key security", "securityContext.runAsRoot=true", "'runAsRoot' not allowed"},
		{"enum", "redis.mode=primary", "/redis/mode"},
		{"duration", "runnerPool.drainTimeout=soon", "/runnerPool/drainTimeout"},
		{"env name", "gateway.extraEnv.bad-name=1", "invalid propertyName 'bad-name'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, errOut, err := helm(t, "template", "pulka", chartDir(), "-f", valuesFile("minimal"), "--set", c.set)
			if err == nil || !strings.Contains(errOut, "schema") || !strings.Contains(errOut, c.want) {
				t.Fatalf("--set %s: err %v, stderr %q; want a schema error at %s", c.set, err, errOut, c.want)
			}
		})
	}
	// The same keys with good values render: the refusals above are the
	// values', not the keys'.
	mustHelm(t, "template", "pulka", chartDir(), "-f", valuesFile("minimal"), "--set",
		"gateway.replicas=3,redis.tls.enabled=true,runnerPool.minRunners=0,lobby.resources.requests.cpu=1,runnerPool.drainTimeout=90s,gateway.extraEnv.PULKA_WS_RATE=30")
}

// Every value of values.yaml has a "# --" comment (helm-docs would list an
// undocumented one with an empty description).
func TestEveryValueIsDocumented(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(chartDir(), "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	values, err := DocumentedValues(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(values) < 100 {
		t.Fatalf("only %d documented values", len(values))
	}
}

// helmDocsArgs renders charts/pulka/README.md from README.md.gotmpl and the
// comments of values.yaml, in the file's order.
var helmDocsArgs = []string{"--chart-search-root", ".", "--sort-values-order", "file", "--skip-version-footer", "--log-level", "warning"}

// README.md is what helm-docs renders from values.yaml now.
func TestReadmeIsCurrent(t *testing.T) {
	t.Parallel()
	bin := helmDocsBin(t)
	if *update {
		cmd := exec.Command(bin, helmDocsArgs...)
		cmd.Dir = chartDir()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("helm-docs: %v\n%s", err, out)
		}
	}
	cmd := exec.Command(bin, append(helmDocsArgs, "--dry-run")...)
	cmd.Dir = chartDir()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil || errOut.Len() > 0 {
		t.Fatalf("helm-docs --dry-run: %v\n%s", err, errOut.String())
	}
	got, err := os.ReadFile(filepath.Join(chartDir(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "| redis.mode |") {
		t.Fatalf("helm-docs rendered no values table:\n%s", out.String())
	}
	if !bytes.Equal(got, out.Bytes()) {
		t.Fatal("charts/pulka/README.md is stale: run `make chart-readme` and commit it")
	}
}
