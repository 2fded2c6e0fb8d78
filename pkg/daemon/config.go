package daemon

import (
	"crypto/tls"
	"crypto/x509"
	"encoding"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/telemetry"
)

// ErrConfig is wrapped by every configuration error: a bad flag, a bad
// environment variable or a value Validate refuses.
var ErrConfig = errors.New("daemon: invalid configuration")

// Environment variables of the base configuration. Each flag's default is
// read from its variable, so a container is configured by its environment
// and a developer by flags; a flag given on the command line wins.
const (
	EnvRedisAddr     = "PULKA_REDIS_ADDR"
	EnvRedisUsername = "PULKA_REDIS_USERNAME"
	EnvRedisPassword = "PULKA_REDIS_PASSWORD" // environment only: flags show up in ps
	EnvRedisDB       = "PULKA_REDIS_DB"
	EnvRedisCluster  = "PULKA_REDIS_CLUSTER"
	// Sentinel: the master's name, and the Sentinels' own credentials
	// (environment only, like the password).
	EnvRedisSentinelMaster   = "PULKA_REDIS_SENTINEL_MASTER"
	EnvRedisSentinelUsername = "PULKA_REDIS_SENTINEL_USERNAME"
	EnvRedisSentinelPassword = "PULKA_REDIS_SENTINEL_PASSWORD"
	// TLS to Redis (and the Sentinels).
	EnvRedisTLS           = "PULKA_REDIS_TLS"
	EnvRedisTLSCAFile     = "PULKA_REDIS_TLS_CA_FILE"
	EnvRedisTLSServerName = "PULKA_REDIS_TLS_SERVER_NAME"
	EnvAdminAddr          = "PULKA_ADMIN_ADDR"
	EnvPProf              = "PULKA_PPROF"
	EnvShutdownTimeout    = "PULKA_SHUTDOWN_TIMEOUT"
	EnvDrainDelay         = "PULKA_DRAIN_DELAY"
	EnvMemoryLimit        = "PULKA_MEMORY_LIMIT"
	EnvLogLevel           = telemetry.EnvLogLevel
	EnvOTLPEndpoint       = telemetry.EnvOTLPEndpoint
	EnvOTLPTraces         = telemetry.EnvOTLPTracesEndpoint
	EnvTracesSampler      = telemetry.EnvTracesSampler
	EnvTracesSamplerArg   = telemetry.EnvTracesSamplerArg
)

// Defaults of the base configuration.
const (
	DefaultRedisAddr = "localhost:6379"
	// DefaultAdminAddr is loopback: /metrics and /debug/pprof tell (and
	// cost) too much to offer to anyone who can reach the host. Exposing
	// them (PULKA_ADMIN_ADDR=:9090, as the container image does for
	// Prometheus and the kubelet's probes) is a deliberate setting.
	DefaultAdminAddr = "127.0.0.1:9090"
	// DefaultShutdownTimeout fits inside Kubernetes' default 30 s grace
	// period with room for the kubelet to notice.
	DefaultShutdownTimeout = 25 * time.Second
)

// Values of Base.PProf.
const (
	PProfLoopback = "loopback"
	PProfOn       = "true"
	PProfOff      = "false"
)

// Config is a service's configuration: the Base every service has, usually
// embedded, plus the service's own fields. A service type overrides
// RegisterFlags and Validate and calls the Base's versions from them.
type Config interface {
	// RegisterFlags declares the flags (with their environment variables).
	RegisterFlags(f *Flags)
	// Validate reports every problem at once, each wrapping ErrConfig.
	Validate() error
	// BaseConfig is the embedded base configuration.
	BaseConfig() *Base
}

// Base is the configuration every service shares.
type Base struct {
	// RedisAddr is host:port, or a comma-separated list of cluster nodes.
	RedisAddr     string
	RedisUsername string
	RedisPassword string
	RedisDB       int
	// RedisCluster forces cluster mode for a single address (a cluster's
	// configuration endpoint); several addresses always mean a cluster.
	RedisCluster bool
	// RedisSentinelMaster, when set, makes RedisAddr the Sentinels'
	// addresses, which name the master of that name (and follow its
	// failovers); RedisSentinelUsername and RedisSentinelPassword log in
	// to the Sentinels.
	RedisSentinelMaster                          string
	RedisSentinelUsername, RedisSentinelPassword string
	// RedisTLS speaks TLS to Redis, checking its certificate against
	// RedisTLSCAFile (a PEM bundle; empty: the system's roots) for
	// RedisTLSServerName (empty: the address's host).
	RedisTLS           bool
	RedisTLSCAFile     string
	RedisTLSServerName string
	// AdminAddr is where /healthz, /readyz and /metrics are served.
	AdminAddr string
	// PProf says when the admin server serves /debug/pprof: PProfLoopback
	// (the default: only while AdminAddr is a loopback address, so a
	// container exposing :9090 for Prometheus and the probes does not also
	// offer profiles and the command line), PProfOn or PProfOff.
	PProf    string
	LogLevel slog.Level
	// OTLPEndpoint is an OTLP/HTTP collector's base URL; empty: no export.
	OTLPEndpoint string
	// OTLPTracesEndpoint is the full traces URL; it wins over OTLPEndpoint.
	OTLPTracesEndpoint string
	// TracesSampler and TracesSamplerArg are OTEL_TRACES_SAMPLER and
	// OTEL_TRACES_SAMPLER_ARG (telemetry.ParseSampler); empty: record
	// traces when exporting them, not otherwise.
	TracesSampler, TracesSamplerArg string
	// ShutdownTimeout bounds the whole shutdown, drain delay included.
	ShutdownTimeout time.Duration
	// DrainDelay is how long the service keeps working after it reported
	// not-ready, so that load balancers stop sending it work first.
	DrainDelay time.Duration
	// MemoryLimit is the container's memory limit in bytes (0: none); the
	// chart passes limits.memory through the downward API. Main holds the
	// Go runtime under GoMemoryLimit of it, so that a GOGC above 100 (the
	// chart's 400: fewer collections, a shorter latency tail) can never
	// grow the heap into the kernel's OOM killer.
	MemoryLimit int
}

// BaseConfig returns b itself, so that a type embedding Base satisfies
// Config's BaseConfig.
func (b *Base) BaseConfig() *Base { return b }

// RegisterFlags declares the base flags.
func (b *Base) RegisterFlags(f *Flags) {
	f.String(&b.RedisAddr, "redis-addr", EnvRedisAddr, DefaultRedisAddr,
		"Redis address host:port, or a comma-separated list of cluster nodes")
	f.Env(&b.RedisUsername, EnvRedisUsername)
	f.Env(&b.RedisPassword, EnvRedisPassword)
	f.Int(&b.RedisDB, "redis-db", EnvRedisDB, 0, "Redis database number (single node only)")
	f.Bool(&b.RedisCluster, "redis-cluster", EnvRedisCluster, false,
		"treat a single Redis address as a cluster endpoint")
	f.String(&b.RedisSentinelMaster, "redis-sentinel-master", EnvRedisSentinelMaster, "",
		"the master's name under Redis Sentinel; redis-addr then lists the Sentinels")
	f.Env(&b.RedisSentinelUsername, EnvRedisSentinelUsername)
	f.Env(&b.RedisSentinelPassword, EnvRedisSentinelPassword)
	f.Bool(&b.RedisTLS, "redis-tls", EnvRedisTLS, false, "connect to Redis over TLS")
	f.String(&b.RedisTLSCAFile, "redis-tls-ca-file", EnvRedisTLSCAFile, "",
		"PEM file of the CAs Redis' certificate is checked against (empty: the system's)")
	f.String(&b.RedisTLSServerName, "redis-tls-server-name", EnvRedisTLSServerName, "",
		"the name Redis' certificate must carry (empty: the address's host)")
	f.String(&b.AdminAddr, "admin-addr", EnvAdminAddr, DefaultAdminAddr,
		"listen address of /healthz, /readyz, /metrics and /debug/pprof (loopback by default; :9090 exposes them)")
	f.String(&b.PProf, "pprof", EnvPProf, PProfLoopback,
		"serve /debug/pprof on the admin address: loopback (only when admin-addr is a loopback address), true or false")
	f.Text(&b.LogLevel, "log-level", EnvLogLevel, slog.LevelInfo, "lowest log level: debug, info, warn or error")
	f.String(&b.OTLPEndpoint, "otlp-endpoint", EnvOTLPEndpoint, "",
		"OTLP/HTTP collector base URL for traces, e.g. http://otel-collector:4318 (empty: no export)")
	f.Env(&b.OTLPTracesEndpoint, EnvOTLPTraces)
	f.Env(&b.TracesSampler, EnvTracesSampler)
	f.Env(&b.TracesSamplerArg, EnvTracesSamplerArg)
	f.Duration(&b.ShutdownTimeout, "shutdown-timeout", EnvShutdownTimeout, DefaultShutdownTimeout,
		"bound on the whole graceful shutdown")
	f.Duration(&b.DrainDelay, "drain-delay", EnvDrainDelay, 0,
		"time between reporting not-ready and stopping work (let load balancers notice)")
	f.Int(&b.MemoryLimit, "memory-limit", EnvMemoryLimit, 0,
		"the container's memory limit in bytes: the Go runtime is held under 90 % of it unless GOMEMLIMIT is set (0: no limit)")
}

// GoMemoryLimit is the Go runtime's soft memory limit (runtime/debug.
// SetMemoryLimit) for a container limit of limit bytes: 90 % of it, the
// rest left to what the runtime does not count (cgo, the binary's pages,
// the kernel's socket buffers charged to the container). ok is false when
// there is no limit, or when GOMEMLIMIT (gomemlimit, as the environment
// has it) is set: the runtime has read it already and it wins.
func GoMemoryLimit(limit int, gomemlimit string) (bytes int64, ok bool) {
	if limit <= 0 || gomemlimit != "" {
		return 0, false
	}
	return int64(limit) / 10 * 9, true
}

// RedisAddrs splits RedisAddr into its addresses.
func (b *Base) RedisAddrs() []string {
	var out []string
	for _, a := range strings.Split(b.RedisAddr, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// Validate reports every problem of the base configuration.
func (b *Base) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	addrs := b.RedisAddrs()
	if len(addrs) == 0 {
		bad("redis-addr is empty")
	}
	for _, a := range addrs {
		if err := CheckHostPort(a, false); err != nil {
			bad("redis-addr %q: %v", a, err)
		}
	}
	if b.RedisDB < 0 {
		bad("redis-db %d is negative", b.RedisDB)
	}
	if b.RedisDB != 0 && b.RedisSentinelMaster == "" && (len(addrs) > 1 || b.RedisCluster) {
		bad("redis-db %d: a Redis cluster has only database 0", b.RedisDB)
	}
	if b.RedisSentinelMaster != "" && b.RedisCluster {
		bad("redis-sentinel-master and redis-cluster: Sentinel watches one master, not a cluster")
	}
	if !b.RedisTLS && (b.RedisTLSCAFile != "" || b.RedisTLSServerName != "") {
		bad("redis-tls-ca-file or redis-tls-server-name without redis-tls")
	}
	if b.RedisTLSCAFile != "" {
		if _, err := b.redisTLS(); err != nil {
			bad("%v", err)
		}
	}
	if err := CheckHostPort(b.AdminAddr, true); err != nil {
		bad("admin-addr %q: %v", b.AdminAddr, err)
	}
	switch b.PProf {
	case "", PProfLoopback, PProfOn, PProfOff:
	default:
		bad("pprof %q: loopback, true or false", b.PProf)
	}
	for name, u := range map[string]string{"otlp-endpoint": b.OTLPEndpoint, EnvOTLPTraces: b.OTLPTracesEndpoint} {
		if u == "" {
			continue
		}
		if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			bad("%s %q is not an http(s) URL", name, u)
		}
	}
	if _, err := telemetry.ParseSampler(b.TracesSampler, b.TracesSamplerArg); err != nil {
		bad("%w", err)
	}
	if b.ShutdownTimeout <= 0 {
		bad("shutdown-timeout %s must be positive", b.ShutdownTimeout)
	}
	if b.MemoryLimit < 0 {
		bad("memory-limit %d is negative", b.MemoryLimit)
	}
	if b.DrainDelay < 0 {
		bad("drain-delay %s is negative", b.DrainDelay)
	} else if b.ShutdownTimeout > 0 && b.DrainDelay >= b.ShutdownTimeout {
		bad("drain-delay %s leaves no time to drain within shutdown-timeout %s", b.DrainDelay, b.ShutdownTimeout)
	}
	return errors.Join(errs...)
}

// CheckHostPort accepts host:port with a numeric port (an empty host means
// every interface; port 0, "any free port", only where anyPort allows it).
// The local launcher checks its addresses with it too.
func CheckHostPort(addr string, anyPort bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if strings.ContainsAny(host, " /") {
		return fmt.Errorf("bad host %q", host)
	}
	lowest := 1
	if anyPort {
		lowest = 0
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < lowest || n > 65535 {
		return fmt.Errorf("bad port %q: must be %d..65535", port, lowest)
	}
	return nil
}

// Load fills cfg from the environment (through getenv) and then from args,
// and validates it. It returns flag.ErrHelp when args ask for help (the
// usage has then been written to output).
func Load(cfg Config, name string, args []string, getenv func(string) string, output io.Writer) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(output)
	f := NewFlags(fs, getenv)
	cfg.RegisterFlags(f)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", ErrConfig, fs.Args())
	}
	if err := f.Err(); err != nil {
		return err
	}
	return cfg.Validate()
}

// Flags declares flags whose defaults come from environment variables.
// An environment value that does not parse is an error (reported by Err),
// not silently replaced by the default.
type Flags struct {
	fs     *flag.FlagSet
	getenv func(string) string
	errs   []error
}

// NewFlags declares flags on fs, reading defaults through getenv (os.Getenv
// in a main, a map in tests).
func NewFlags(fs *flag.FlagSet, getenv func(string) string) *Flags {
	return &Flags{fs: fs, getenv: getenv}
}

// FlagSet is the underlying flag set.
func (f *Flags) FlagSet() *flag.FlagSet { return f.fs }

// Err reports the environment variables that did not parse.
func (f *Flags) Err() error { return errors.Join(f.errs...) }

func (f *Flags) envValue(env string) (string, bool) {
	if env == "" || f.getenv == nil {
		return "", false
	}
	v := f.getenv(env)
	return v, v != ""
}

func (f *Flags) badEnv(env, v string, err error) {
	f.errs = append(f.errs, fmt.Errorf("%w: %s=%q: %w", ErrConfig, env, v, err))
}

func usage(u, env string) string {
	if env == "" {
		return u
	}
	return u + " (env " + env + ")"
}

// Env reads a string from an environment variable only, for secrets that
// must not appear in a process listing.
func (f *Flags) Env(p *string, env string) {
	if v, ok := f.envValue(env); ok {
		*p = v
	}
}

// String declares a string flag.
func (f *Flags) String(p *string, name, env, def, u string) {
	if v, ok := f.envValue(env); ok {
		def = v
	}
	f.fs.StringVar(p, name, def, usage(u, env))
}

// Int declares an int flag.
func (f *Flags) Int(p *int, name, env string, def int, u string) {
	if v, ok := f.envValue(env); ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			f.badEnv(env, v, err)
		} else {
			def = n
		}
	}
	f.fs.IntVar(p, name, def, usage(u, env))
}

// Int64 declares an int64 flag.
func (f *Flags) Int64(p *int64, name, env string, def int64, u string) {
	if v, ok := f.envValue(env); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			f.badEnv(env, v, err)
		} else {
			def = n
		}
	}
	f.fs.Int64Var(p, name, def, usage(u, env))
}

// Bool declares a bool flag.
func (f *Flags) Bool(p *bool, name, env string, def bool, u string) {
	if v, ok := f.envValue(env); ok {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			f.badEnv(env, v, err)
		} else {
			def = b
		}
	}
	f.fs.BoolVar(p, name, def, usage(u, env))
}

// Duration declares a time.Duration flag ("30s", "5m").
func (f *Flags) Duration(p *time.Duration, name, env string, def time.Duration, u string) {
	if v, ok := f.envValue(env); ok {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			f.badEnv(env, v, err)
		} else {
			def = d
		}
	}
	f.fs.DurationVar(p, name, def, usage(u, env))
}

// textValue is what Text needs: a value that reads and writes itself as
// text (slog.Level, scoring.Khishti, ...).
type textValue interface {
	encoding.TextMarshaler
	encoding.TextUnmarshaler
}

// Text declares a flag of a type that reads itself from text (slog.Level,
// scoring.Khishti, ...); p must point at a value of def's type.
func (f *Flags) Text(p textValue, name, env string, def encoding.TextMarshaler, u string) {
	f.fs.TextVar(p, name, def, usage(u, env)) // sets *p to def
	if v, ok := f.envValue(env); ok {
		if err := p.UnmarshalText([]byte(strings.TrimSpace(v))); err != nil {
			f.badEnv(env, v, err)
		}
	}
}

// ServePProf reports whether the admin server offers /debug/pprof: profiles
// and the command line are for the operator on the host, not for whoever
// can reach an exposed admin port, unless PProf is PProfOn.
func (b *Base) ServePProf() bool {
	switch b.PProf {
	case PProfOn:
		return true
	case PProfOff:
		return false
	}
	host, _, err := net.SplitHostPort(b.AdminAddr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// redisTLS is the TLS configuration RedisTLS asks for (nil without it).
func (b *Base) redisTLS() (*tls.Config, error) {
	if !b.RedisTLS {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: b.RedisTLSServerName}
	if b.RedisTLSCAFile != "" {
		pem, err := os.ReadFile(b.RedisTLSCAFile)
		if err != nil {
			return nil, fmt.Errorf("redis-tls-ca-file: %w", err)
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("redis-tls-ca-file %s holds no PEM certificate", b.RedisTLSCAFile)
		}
	}
	return c, nil
}

// RedisOptions are the client options the configuration asks for: a
// cluster client for several addresses (or redis-cluster), a client that
// asks Sentinel for its master (redis-sentinel-master), a single-node client
// otherwise; over TLS with redis-tls.
func (b *Base) RedisOptions() (*redis.UniversalOptions, error) {
	t, err := b.redisTLS()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return &redis.UniversalOptions{
		Addrs:            b.RedisAddrs(),
		Username:         b.RedisUsername,
		Password:         b.RedisPassword,
		DB:               b.RedisDB,
		IsClusterMode:    b.RedisCluster,
		MasterName:       b.RedisSentinelMaster,
		SentinelUsername: b.RedisSentinelUsername,
		SentinelPassword: b.RedisSentinelPassword,
		TLSConfig:        t,
	}, nil
}
