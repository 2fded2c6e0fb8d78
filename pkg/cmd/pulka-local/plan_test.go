package main

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/daemon"
)

// envOf reads a variable from a child's settings (the last one wins, as
// for exec).
func envOf(s childSpec, key string) (string, bool) {
	val, found := "", false
	for _, kv := range s.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			val, found = v, true
		}
	}
	return val, found
}

func testPlan(t *testing.T, runners int) ([]childSpec, childSpec) {
	t.Helper()
	cfg := Config{Addr: "localhost:8080", BinDir: "bin", Runners: runners, LogLevel: "warn",
		ReadyTimeout: time.Minute, StopTimeout: 15 * time.Second}
	ports := make([]int, childCount(cfg))
	for i := range ports {
		ports[i] = 41000 + i
	}
	return plan(cfg, wiring{RedisAddr: "127.0.0.1:7777", Secret: strings.Repeat("s", 64), AdminPorts: ports})
}

func TestPlan_RunsLobbyScoringEveryRunnerThenTheGateway(t *testing.T) {
	backends, gw := testPlan(t, 3)
	var names, binaries []string
	for _, s := range append(backends, gw) {
		names = append(names, s.Name)
		binaries = append(binaries, s.Binary)
	}
	if got, want := strings.Join(names, " "), "lobby scoring wallet table-runner-1 table-runner-2 table-runner-3 gateway"; got != want {
		t.Errorf("names %q, want %q", got, want)
	}
	if got, want := strings.Join(binaries, " "), "lobby scoring wallet table-runner table-runner table-runner gateway"; got != want {
		t.Errorf("binaries %q, want %q", got, want)
	}
}

func TestPlan_EveryServiceSharesRedisAndHasItsOwnLoopbackAdminPort(t *testing.T) {
	backends, gw := testPlan(t, 2)
	seen := map[string]string{}
	for _, s := range append(backends, gw) {
		if v, _ := envOf(s, daemon.EnvRedisAddr); v != "127.0.0.1:7777" {
			t.Errorf("%s: %s=%q", s.Name, daemon.EnvRedisAddr, v)
		}
		admin, _ := envOf(s, daemon.EnvAdminAddr)
		if admin != s.Admin {
			t.Errorf("%s: listens on %q but is probed on %q", s.Name, admin, s.Admin)
		}
		if host, _, err := net.SplitHostPort(admin); err != nil || host != "127.0.0.1" {
			t.Errorf("%s: admin %q is not on loopback", s.Name, admin)
		}
		if other, dup := seen[admin]; dup {
			t.Errorf("%s and %s share admin address %s", s.Name, other, admin)
		}
		seen[admin] = s.Name
		if v, _ := envOf(s, daemon.EnvLogLevel); v != "warn" {
			t.Errorf("%s: log level %q, want the launcher's warn", s.Name, v)
		}
		// The service must finish its own shutdown before the launcher
		// kills it.
		v, _ := envOf(s, daemon.EnvShutdownTimeout)
		if d, err := time.ParseDuration(v); err != nil || d <= 0 || d >= 15*time.Second {
			t.Errorf("%s: shutdown timeout %q is not within the 15s stop timeout", s.Name, v)
		}
		if s.ReadyURL() != "http://"+s.Admin+"/readyz" {
			t.Errorf("%s: ready URL %q", s.Name, s.ReadyURL())
		}
	}
}

func TestPlan_ConsumersAndRunnersHaveDistinctNames(t *testing.T) {
	backends, gw := testPlan(t, 3)
	ids := map[string]bool{}
	for _, s := range backends {
		if s.Binary != "table-runner" {
			continue
		}
		id, ok := envOf(s, envRunnerID)
		if !ok || ids[id] {
			t.Errorf("%s: runner id %q missing or shared", s.Name, id)
		}
		ids[id] = true
	}
	if len(ids) != 3 {
		t.Errorf("want 3 runner ids, got %v", ids)
	}
	for _, c := range []struct {
		s   childSpec
		key string
	}{{backends[0], envLobbyName}, {backends[1], envScoringConsumer}, {backends[2], envWalletConsumer}, {gw, envInstance}} {
		if v, ok := envOf(c.s, c.key); !ok || v == "" {
			t.Errorf("%s: %s not set", c.s.Name, c.key)
		}
	}
}

func TestPlan_GatewayGetsItsAddressTheSecretAndItsOwnOrigin(t *testing.T) {
	backends, gw := testPlan(t, 2)
	want := map[string]string{
		envGatewayAddr:    "localhost:8080",
		envSessionSecret:  strings.Repeat("s", 64),
		envAllowedOrigins: "http://localhost:8080",
	}
	for k, v := range want {
		if got, _ := envOf(gw, k); got != v {
			t.Errorf("gateway %s=%q, want %q", k, got, v)
		}
	}
	if gw.Serves != "localhost:8080" {
		t.Errorf("gateway counts as ready once %q accepts connections, want localhost:8080", gw.Serves)
	}
	// The secret is the gateway's alone, and only its listener is waited for.
	for _, s := range backends {
		if s.Serves != "" {
			t.Errorf("%s waits for %q", s.Name, s.Serves)
		}
		if _, ok := envOf(s, envSessionSecret); ok {
			t.Errorf("%s was given the session secret", s.Name)
		}
	}
}

func TestGatewayURL_ShowsWhatABrowserOnThisMachineOpens(t *testing.T) {
	for addr, want := range map[string]string{
		"localhost:8080":   "http://localhost:8080",
		":8080":            "http://localhost:8080",
		"0.0.0.0:9000":     "http://localhost:9000",
		"[::]:9000":        "http://localhost:9000",
		"127.0.0.1:8081":   "http://localhost:8081",
		"192.168.1.5:8080": "http://192.168.1.5:8080",
		"pulka.test:80":    "http://pulka.test:80",
	} {
		if got := gatewayURL(addr); got != want {
			t.Errorf("gatewayURL(%q) = %q, want %q", addr, got, want)
		}
	}
}

func TestNewSecret_IsLongEnoughAndNewEachRun(t *testing.T) {
	a, err := newSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, err := newSecret()
	if err != nil {
		t.Fatal(err)
	}
	// The gateway refuses secrets shorter than 32 bytes.
	if len(a) < 32 || a == b {
		t.Fatalf("secrets %q and %q: want two different ones of at least 32 bytes", a, b)
	}
}

func TestFreePorts_AreDistinctAndFree(t *testing.T) {
	ports, err := freePorts(6)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if seen[p] {
			t.Fatalf("port %d returned twice in %v", p, ports)
		}
		seen[p] = true
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("port %d is not free: %v", p, err)
		}
		_ = l.Close()
	}
}

func TestDialAddr_ReachesAListenerOnEveryInterfaceOnLoopback(t *testing.T) {
	for addr, want := range map[string]string{
		":8080":          "127.0.0.1:8080",
		"0.0.0.0:8080":   "127.0.0.1:8080",
		"[::]:8080":      "[::1]:8080",
		"localhost:8080": "localhost:8080",
		"10.1.2.3:80":    "10.1.2.3:80",
	} {
		if got := dialAddr(addr); got != want {
			t.Errorf("dialAddr(%q) = %q, want %q", addr, got, want)
		}
	}
}

// The gateway's port is chosen before the admin ports, and may have been
// released a moment ago by whoever chose it (a test): the kernel can hand
// it out again, and then the gateway and a service's admin server collide.
func TestFreePorts_NeverTheGatewaysPort(t *testing.T) {
	first, err := freePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	for range 200 {
		ports, err := freePorts(4, first[0])
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(ports, first[0]) {
			t.Fatalf("freePorts returned the excepted port %d: %v", first[0], ports)
		}
	}
	if portOf("127.0.0.1:8080") != 8080 || portOf("localhost") != 0 || portOf(":x") != 0 {
		t.Fatal("portOf")
	}
}
