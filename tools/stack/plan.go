package stack

import (
	"net"
	"strconv"
	"time"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/pkg/envnames"
)

// The service programs, by the name of their command
// (services/<name>/cmd/<name>, the file make build writes to bin/).
const (
	Lobby       = "lobby"
	Scoring     = "scoring"
	Wallet      = "wallet"
	TableRunner = "table-runner"
	Gateway     = "gateway"
)

// Services lists every service program in the order a stack starts them:
// the back ends, then the gateway, whose readiness waits for the lobby's
// view of the tables.
func Services() []string { return []string{Lobby, Scoring, Wallet, TableRunner, Gateway} }

// KubernetesOnly lists the service programs that run only inside
// Kubernetes, because they work through its API: the operator, which runs
// the runner pods and assigns tables to them. Outside Kubernetes (a stack,
// pulka-local, docker-compose) the table-runners assign tables among
// themselves through Redis heartbeats, so these are not started there.
func KubernetesOnly() []string { return []string{"operator"} }

// Process is one service process to run.
type Process struct {
	// Name is how the process is shown: lobby, scoring, table-runner-1, ...
	Name string
	// Binary is the program's file name (one of Services).
	Binary string
	// ID is the name the process goes by in Redis (its consumer name, its
	// runner id, its gateway instance); empty for a service that has none.
	ID string
	// Env are the process's settings (NAME=value), to be appended to the
	// environment it inherits, so they win over an inherited value.
	Env []string
	// Admin is the host:port of its /healthz, /readyz and /metrics.
	Admin string
	// Serves, when set, is an address the process must accept connections
	// on before it counts as ready (the gateway's): a service's /readyz can
	// say yes before its own listener is open.
	Serves string
}

// ReadyURL is where to ask whether the process is ready.
func (p Process) ReadyURL() string { return "http://" + p.Admin + "/readyz" }

// Wiring is what every process of one stack shares.
type Wiring struct {
	// RedisAddr is the Redis every service uses.
	RedisAddr string
	// RedisCluster says RedisAddr is a node of a Redis Cluster.
	RedisCluster bool
	// Addr is where the gateway serves the API, the WebSocket and the web
	// client (host:port).
	Addr string
	// Secret is the gateway's session secret.
	Secret string
	// LogLevel is every service's lowest log level.
	LogLevel string
	// ShutdownTimeout bounds each service's own graceful shutdown; zero
	// leaves the services' default.
	ShutdownTimeout time.Duration
}

// Process is the n-th process (from 1) of the service binary, its admin
// server on admin: the base settings every service reads (pkg/daemon) and
// those that make it this process — its name in Redis and, for the
// gateway, its address, secret and the origin a browser on this machine
// has.
func (w Wiring) Process(binary string, n int, admin string) Process {
	p := Process{Name: binary, Binary: binary, Admin: admin}
	if binary == TableRunner || n > 1 {
		p.Name += "-" + strconv.Itoa(n)
	}
	p.Env = []string{
		daemon.EnvRedisAddr + "=" + w.RedisAddr,
		daemon.EnvAdminAddr + "=" + admin,
		daemon.EnvLogLevel + "=" + w.LogLevel,
	}
	if w.RedisCluster {
		p.Env = append(p.Env, daemon.EnvRedisCluster+"=true")
	}
	if w.ShutdownTimeout > 0 {
		p.Env = append(p.Env, daemon.EnvShutdownTimeout+"="+w.ShutdownTimeout.String())
	}
	named := func(setting, prefix string) {
		p.ID = prefix + "-" + strconv.Itoa(n)
		p.Env = append(p.Env, setting+"="+p.ID)
	}
	switch binary {
	case Lobby:
		named(envnames.LobbyName, "lobby")
	case Scoring:
		named(envnames.ScoringConsumer, "scoring")
	case Wallet:
		named(envnames.WalletConsumer, "wallet")
	case TableRunner:
		named(envnames.RunnerID, "runner")
	case Gateway:
		named(envnames.GatewayInstance, "gateway")
		p.Env = append(p.Env,
			envnames.GatewayAddr+"="+w.Addr,
			envnames.SessionSecret+"="+w.Secret,
			envnames.AllowedOrigins+"="+BrowserURL(w.Addr))
		p.Serves = DialAddr(w.Addr)
	}
	return p
}

// Count is the number of service processes of a stack with the given
// number of table runners: one of every other service.
func Count(runners int) int { return len(Services()) - 1 + runners }

// Plan lists the processes of a stack with the given number of table
// runners: the back ends, which start first, and the gateway, which starts
// when they are ready. adminPorts must hold Count(runners) loopback ports.
func (w Wiring) Plan(runners int, adminPorts []int) (backends []Process, gateway Process) {
	next := 0
	admin := func() string {
		p := adminPorts[next]
		next++
		return net.JoinHostPort("127.0.0.1", strconv.Itoa(p))
	}
	for _, s := range Services() {
		switch s {
		case Gateway:
		case TableRunner:
			for i := 1; i <= runners; i++ {
				backends = append(backends, w.Process(s, i, admin()))
			}
		default:
			backends = append(backends, w.Process(s, 1, admin()))
		}
	}
	return backends, w.Process(Gateway, 1, admin())
}

// DialAddr is where this machine reaches a listener on addr: a listener on
// every interface is reached on loopback.
func DialAddr(addr string) string {
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

// BrowserURL is the address a browser on this machine opens for a gateway
// listening on addr: every interface (no host, 0.0.0.0, ::) and loopback
// hosts are shown as localhost, the name a browser treats as a secure
// context.
func BrowserURL(addr string) string {
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

// LauncherReady is the line pulka-local prints once every process it
// started is ready, right after its summary of what runs where.
const LauncherReady = "Ctrl-C stops everything."
