package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/tools/stack"
)

// ErrConfig is wrapped by every problem with the launcher's flags.
var ErrConfig = errors.New("invalid configuration")

// Config is what the launcher runs and how.
type Config struct {
	// Addr is where the gateway serves the API, the WebSocket and the web
	// client (host:port; an empty host means every interface).
	Addr string
	// BinDir holds the service binaries (gateway, lobby, scoring, wallet,
	// table-runner); by default the launcher's own directory, i.e. bin/.
	BinDir string
	// Redis is an existing Redis to use; empty: start one.
	Redis string
	// RedisCluster says Redis is a node of a Redis Cluster: the launcher
	// and every service use cluster clients (PULKA_REDIS_CLUSTER).
	RedisCluster bool
	// ClusterMasters, when positive, starts a Redis Cluster of that many
	// masters (each with ClusterReplicas replicas) on loopback ports
	// instead of one redis-server: to try Pulka, or measure it, on a
	// cluster (pkg/redistest.LaunchCluster).
	ClusterMasters, ClusterReplicas int
	// EmbeddedRedis starts the in-process Redis-compatible server even when
	// redis-server is on PATH.
	EmbeddedRedis bool
	// Runners is how many table-runner processes run; two or more let a
	// table move when one of them is stopped.
	Runners int
	// AllowRunnerExit keeps everything running when a table runner ends
	// while another is still up, so that a table can be watched moving to
	// the other runner (kill -9 one of them). Any other service ending
	// always stops the launcher.
	AllowRunnerExit bool
	// LogLevel is handed to every service (debug, info, warn, error).
	LogLevel string
	// RawLogs prints the services' JSON log lines as they are instead of
	// the short human form.
	RawLogs bool
	// ReadyTimeout bounds the wait for each service's /readyz.
	ReadyTimeout time.Duration
	// StopTimeout is how long a service may take to stop after SIGTERM
	// before it is killed. Each service is told to finish its own
	// shutdown well within it.
	StopTimeout time.Duration
}

// Flag defaults.
const (
	DefaultAddr         = "localhost:8080"
	DefaultRunners      = 2
	DefaultReadyTimeout = time.Minute
	DefaultStopTimeout  = 15 * time.Second
	maxRunners          = 8
	maxClusterMasters   = 9
	maxClusterReplicas  = 2
)

// clusterMode says the services' Redis is a Redis Cluster.
func (c Config) clusterMode() bool { return c.RedisCluster || c.ClusterMasters > 0 }

// parseConfig reads the flags. exe is the launcher's own path (for the
// default BinDir). It returns flag.ErrHelp after printing the usage for -h.
func parseConfig(args []string, exe string, output io.Writer) (Config, error) {
	var c Config
	fs := flag.NewFlagSet("pulka-local", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.Usage = func() {
		fmt.Fprintf(output, "Usage: pulka-local [flags]\n\n"+
			"Runs all of Pulka on this machine: Redis, the lobby, scoring, the wallet, table runners and the\n"+
			"gateway (the web client at http://%s). Ctrl-C stops everything.\n\nFlags:\n", DefaultAddr)
		fs.PrintDefaults()
	}
	fs.StringVar(&c.Addr, "addr", DefaultAddr, "gateway listen address (the web client and the API)")
	fs.StringVar(&c.BinDir, "bin-dir", filepath.Dir(exe), "directory of the service binaries (make build puts them in bin/)")
	fs.StringVar(&c.Redis, "redis", "", "use this Redis (host:port) instead of starting one")
	fs.BoolVar(&c.RedisCluster, "redis-cluster", false, "-redis is a node of a Redis Cluster (the services use cluster clients)")
	fs.IntVar(&c.ClusterMasters, "cluster-masters", 0, "start a Redis Cluster of this many masters (in memory only) instead of one redis-server")
	fs.IntVar(&c.ClusterReplicas, "cluster-replicas", 0, "replicas of each master of -cluster-masters")
	fs.BoolVar(&c.EmbeddedRedis, "embedded-redis", false, "use the embedded Redis-compatible server even when redis-server is installed")
	fs.IntVar(&c.Runners, "runners", DefaultRunners, "table-runner processes (2 or more let tables move between them)")
	fs.BoolVar(&c.AllowRunnerExit, "allow-runner-exit", false, "keep running when a table-runner ends while another is up (to watch its tables move)")
	fs.StringVar(&c.LogLevel, "log-level", "info", "services' lowest log level: debug, info, warn or error")
	fs.BoolVar(&c.RawLogs, "raw-logs", false, "print the services' JSON log lines unchanged")
	fs.DurationVar(&c.ReadyTimeout, "ready-timeout", DefaultReadyTimeout, "how long each service may take to become ready")
	fs.DurationVar(&c.StopTimeout, "stop-timeout", DefaultStopTimeout, "how long a service may take to stop before it is killed")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, err
		}
		return c, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("%w: unexpected arguments %q", ErrConfig, fs.Args())
	}
	return c, c.Validate()
}

// Validate reports every problem at once, each wrapping ErrConfig.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	if err := daemon.CheckHostPort(c.Addr, false); err != nil {
		bad("-addr %q: %v", c.Addr, err)
	}
	if c.Redis != "" {
		if err := daemon.CheckHostPort(c.Redis, false); err != nil {
			bad("-redis %q: %v", c.Redis, err)
		}
		if c.EmbeddedRedis {
			bad("-redis and -embedded-redis exclude each other")
		}
	} else if c.RedisCluster {
		bad("-redis-cluster needs -redis (a node of the cluster)")
	}
	switch {
	case c.ClusterMasters < 0 || c.ClusterMasters > maxClusterMasters || c.ClusterReplicas < 0 || c.ClusterReplicas > maxClusterReplicas:
		bad("-cluster-masters must be 0..%d and -cluster-replicas 0..%d", maxClusterMasters, maxClusterReplicas)
	case c.ClusterMasters > 0 && c.ClusterMasters < 3:
		bad("-cluster-masters: a Redis Cluster needs at least 3 masters")
	case c.ClusterMasters > 0 && (c.Redis != "" || c.EmbeddedRedis):
		bad("-cluster-masters excludes -redis and -embedded-redis")
	case c.ClusterMasters == 0 && c.ClusterReplicas > 0:
		bad("-cluster-replicas needs -cluster-masters")
	}
	if c.BinDir == "" {
		bad("-bin-dir is empty")
	}
	if c.Runners < 1 || c.Runners > maxRunners {
		bad("-runners must be 1..%d, not %d", maxRunners, c.Runners)
	} else if c.AllowRunnerExit && c.Runners < 2 {
		bad("-allow-runner-exit needs -runners 2 or more (the tables need somewhere to go)")
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.LogLevel)); err != nil {
		bad("-log-level %q: want debug, info, warn or error", c.LogLevel)
	}
	if c.ReadyTimeout <= 0 {
		bad("-ready-timeout must be positive")
	}
	if c.StopTimeout < time.Second {
		bad("-stop-timeout must be at least 1s (the services need time to hand their tables over)")
	}
	return errors.Join(errs...)
}

// checkBinaries reports every service binary missing from dir.
func checkBinaries(dir string) error {
	var missing []string
	for _, name := range stack.Services() {
		st, err := os.Stat(filepath.Join(dir, name))
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: %s missing from %s (run make build, or point -bin-dir at them)",
			ErrConfig, strings.Join(missing, ", "), dir)
	}
	return nil
}
