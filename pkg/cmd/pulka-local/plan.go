package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/pulka/pulka/pkg/daemon"
)

// serviceBinaries are the programs the launcher runs, by file name (the
// name of each service's cmd directory, which is what make build writes).
func serviceBinaries() []string {
	return []string{"lobby", "scoring", "wallet", "table-runner", "gateway"}
}

// Settings of the services the launcher sets, besides daemon's base ones.
// The services' own packages are internal to their modules, so the names
// are repeated here; the end-to-end test checks each against the binary's
// -help.
const (
	envLobbyName       = "PULKA_LOBBY_NAME"
	envScoringConsumer = "PULKA_SCORING_CONSUMER"
	envWalletConsumer  = "PULKA_WALLET_CONSUMER"
	envRunnerID        = "PULKA_RUNNER_ID"
	envGatewayAddr     = "PULKA_GATEWAY_ADDR"
	envSessionSecret   = "PULKA_SESSION_SECRET" // environment only: flags show in ps
	envAllowedOrigins  = "PULKA_ALLOWED_ORIGINS"
	envInstance        = "PULKA_INSTANCE"
)

// childSpec is one service process to run.
type childSpec struct {
	// Name is how the process is shown: lobby, scoring, table-runner-1, ...
	Name string
	// Binary is the program's file name in the bin directory.
	Binary string
	// Env is appended to the launcher's own environment, so it wins over
	// an inherited value of the same variable.
	Env []string
	// Admin is the host:port of its /healthz, /readyz and /metrics.
	Admin string
	// Serves, when set, is an address the service must accept connections
	// on before it counts as ready (the gateway's): a service's /readyz can
	// say yes before its own listener is open.
	Serves string
}

// ReadyURL is where the launcher asks whether the service is ready.
func (s childSpec) ReadyURL() string { return "http://" + s.Admin + "/readyz" }

// wiring is what one run of the launcher chose: where Redis is, the
// session secret, and a free admin port per service.
type wiring struct {
	RedisAddr  string
	Secret     string
	AdminPorts []int
}

// childCount is the number of service processes cfg runs.
func childCount(cfg Config) int { return 4 + cfg.Runners }

// plan lists the service processes: the back ends (lobby, scoring, the
// wallet, the runners), which start first, and the gateway, which starts when they are
// ready (its readiness needs the lobby's view). w.AdminPorts must hold
// childCount(cfg) ports.
func plan(cfg Config, w wiring) (backends []childSpec, gateway childSpec) {
	next := 0
	admin := func() string {
		p := w.AdminPorts[next]
		next++
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
	}
	// Each service gets two thirds of the stop timeout for its own graceful
	// shutdown, so it finishes (tables handed over, WebSockets closed)
	// before the launcher loses patience and kills it.
	shutdown := (cfg.StopTimeout * 2 / 3).Round(time.Millisecond)
	spec := func(name, binary string, env ...string) childSpec {
		s := childSpec{Name: name, Binary: binary, Admin: admin()}
		s.Env = append([]string{
			daemon.EnvRedisAddr + "=" + w.RedisAddr,
			daemon.EnvAdminAddr + "=" + s.Admin,
			daemon.EnvLogLevel + "=" + cfg.LogLevel,
			daemon.EnvShutdownTimeout + "=" + shutdown.String(),
		}, env...)
		return s
	}
	backends = append(backends,
		spec("lobby", "lobby", envLobbyName+"=lobby-1"),
		spec("scoring", "scoring", envScoringConsumer+"=scoring-1"),
		spec("wallet", "wallet", envWalletConsumer+"=wallet-1"))
	for i := 1; i <= cfg.Runners; i++ {
		id := "runner-" + strconv.Itoa(i)
		backends = append(backends, spec("table-runner-"+strconv.Itoa(i), "table-runner", envRunnerID+"="+id))
	}
	gateway = spec("gateway", "gateway",
		envGatewayAddr+"="+cfg.Addr,
		envSessionSecret+"="+w.Secret,
		envAllowedOrigins+"="+gatewayURL(cfg.Addr),
		envInstance+"=gateway-1")
	gateway.Serves = dialAddr(cfg.Addr)
	return backends, gateway
}

// dialAddr is where this machine reaches a listener on addr: a listener on
// every interface is reached on loopback.
func dialAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return net.JoinHostPort(host, port)
}

// gatewayURL is the address a browser on this machine opens: every
// interface (no host, 0.0.0.0, ::) and loopback hosts are shown as
// localhost, the name a browser treats as a secure context.
func gatewayURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	switch host {
	case "", "0.0.0.0", "::", "127.0.0.1", "::1":
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// newSecret makes a session secret for one run: sessions do not outlive
// the launcher, which is what a local run wants (and no secret is ever
// written to disk).
func newSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("session secret: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// freePorts returns n distinct free loopback ports, none of them in except
// (the gateway's port, chosen by the user or a test, which may be free just
// now because it was released a moment ago). All are held open until every
// one is found, so none is returned twice; another program may still take
// one before the service binds it, which the service then reports.
func freePorts(n int, except ...int) ([]int, error) {
	ports := make([]int, 0, n)
	var held []net.Listener
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		held = append(held, l) // an excepted port stays held too: it is not drawn again
		if p := l.Addr().(*net.TCPAddr).Port; !slices.Contains(except, p) {
			ports = append(ports, p)
		}
	}
	return ports, nil
}

// portOf is the port of a host:port address, or 0 when it has none.
func portOf(addr string) int {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return 0
	}
	return p
}
