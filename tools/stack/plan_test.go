package stack

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/pkg/envnames"
)

// envOf reads a variable from a process's settings (the last one wins, as
// for exec).
func envOf(p Process, key string) (string, bool) {
	val, found := "", false
	for _, kv := range p.Env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == key {
			val, found = v, true
		}
	}
	return val, found
}

func testPlan(t *testing.T, runners int) ([]Process, Process) {
	t.Helper()
	w := Wiring{RedisAddr: "127.0.0.1:7777", Addr: "localhost:8080", Secret: strings.Repeat("s", 64),
		LogLevel: "warn", ShutdownTimeout: 10 * time.Second}
	ports := make([]int, Count(runners))
	for i := range ports {
		ports[i] = 41000 + i
	}
	return w.Plan(runners, ports)
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
	if got := len(backends) + 1; got != Count(3) {
		t.Errorf("%d processes, Count says %d", got, Count(3))
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
			t.Errorf("%s: log level %q, want the stack's warn", s.Name, v)
		}
		if v, _ := envOf(s, daemon.EnvShutdownTimeout); v != "10s" {
			t.Errorf("%s: shutdown timeout %q, want the stack's 10s", s.Name, v)
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
		if s.Binary != TableRunner {
			continue
		}
		id, ok := envOf(s, envnames.RunnerID)
		if !ok || ids[id] || id != s.ID {
			t.Errorf("%s: runner id %q missing, shared or not its ID %q", s.Name, id, s.ID)
		}
		ids[id] = true
	}
	if len(ids) != 3 {
		t.Errorf("want 3 runner ids, got %v", ids)
	}
	for _, c := range []struct {
		s   Process
		key string
	}{{backends[0], envnames.LobbyName}, {backends[1], envnames.ScoringConsumer}, {backends[2], envnames.WalletConsumer}, {gw, envnames.GatewayInstance}} {
		if v, ok := envOf(c.s, c.key); !ok || v == "" || v != c.s.ID {
			t.Errorf("%s: %s=%q, ID %q", c.s.Name, c.key, v, c.s.ID)
		}
	}
}

func TestProcess_ASecondGatewayIsAnotherInstance(t *testing.T) {
	w := Wiring{RedisAddr: "127.0.0.1:7777", Addr: "127.0.0.1:9001", Secret: "s"}
	first, second := w.Process(Gateway, 1, "127.0.0.1:1"), w.Process(Gateway, 2, "127.0.0.1:2")
	if first.Name != "gateway" || second.Name != "gateway-2" || first.ID == second.ID {
		t.Errorf("names %q and %q, instances %q and %q", first.Name, second.Name, first.ID, second.ID)
	}
	if _, ok := envOf(first, daemon.EnvShutdownTimeout); ok {
		t.Error("a zero ShutdownTimeout set the service's")
	}
}

func TestPlan_GatewayGetsItsAddressTheSecretAndItsOwnOrigin(t *testing.T) {
	backends, gw := testPlan(t, 2)
	want := map[string]string{
		envnames.GatewayAddr:    "localhost:8080",
		envnames.SessionSecret:  strings.Repeat("s", 64),
		envnames.AllowedOrigins: "http://localhost:8080",
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
		if _, ok := envOf(s, envnames.SessionSecret); ok {
			t.Errorf("%s was given the session secret", s.Name)
		}
	}
}

func TestBrowserURL_ShowsWhatABrowserOnThisMachineOpens(t *testing.T) {
	for addr, want := range map[string]string{
		"localhost:8080":   "http://localhost:8080",
		":8080":            "http://localhost:8080",
		"0.0.0.0:9000":     "http://localhost:9000",
		"[::]:9000":        "http://localhost:9000",
		"127.0.0.1:8081":   "http://localhost:8081",
		"192.168.1.5:8080": "http://192.168.1.5:8080",
		"pulka.test:80":    "http://pulka.test:80",
	} {
		if got := BrowserURL(addr); got != want {
			t.Errorf("BrowserURL(%q) = %q, want %q", addr, got, want)
		}
	}
}

func TestNewSecret_IsLongEnoughAndNewEachRun(t *testing.T) {
	a, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	// The gateway refuses secrets shorter than 32 bytes.
	if len(a) < 32 || a == b {
		t.Fatalf("secrets %q and %q: want two different ones of at least 32 bytes", a, b)
	}
}

func TestFreePorts_AreDistinctAndFree(t *testing.T) {
	ports, err := FreePorts(6)
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
		if got := DialAddr(addr); got != want {
			t.Errorf("DialAddr(%q) = %q, want %q", addr, got, want)
		}
	}
}

// The gateway's port is chosen before the admin ports, and may have been
// released a moment ago by whoever chose it (a test): the kernel can hand
// it out again, and then the gateway and a service's admin server collide.
func TestFreePorts_NeverTheGatewaysPort(t *testing.T) {
	first, err := FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	for range 200 {
		ports, err := FreePorts(4, first[0])
		if err != nil {
			t.Fatal(err)
		}
		if slices.Contains(ports, first[0]) {
			t.Fatalf("FreePorts returned the excepted port %d: %v", first[0], ports)
		}
	}
	if PortOf("127.0.0.1:8080") != 8080 || PortOf("localhost") != 0 || PortOf(":x") != 0 {
		t.Fatal("PortOf")
	}
}
