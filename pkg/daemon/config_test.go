package daemon_test

import (
	"bytes"
	"errors"
	"flag"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/daemon"
)

// svcConfig is how a service extends the base configuration.
type svcConfig struct {
	daemon.Base
	Group string
}

func (c *svcConfig) RegisterFlags(f *daemon.Flags) {
	c.Base.RegisterFlags(f)
	f.String(&c.Group, "group", "PULKA_TEST_GROUP", "scoring", "consumer group")
}

func (c *svcConfig) Validate() error {
	err := c.Base.Validate()
	if c.Group == "" {
		err = errors.Join(err, daemon.ErrConfig)
	}
	return err
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoad_DefaultsWithoutEnvOrFlags(t *testing.T) {
	var c svcConfig
	if err := daemon.Load(&c, "svc", nil, env(nil), &bytes.Buffer{}); err != nil {
		t.Fatalf("Load: %v", err)
	}
	if c.RedisAddr != daemon.DefaultRedisAddr || c.AdminAddr != daemon.DefaultAdminAddr ||
		c.ShutdownTimeout != daemon.DefaultShutdownTimeout || c.LogLevel != slog.LevelInfo || c.Group != "scoring" ||
		c.PProf != daemon.PProfLoopback {
		t.Fatalf("defaults not applied: %+v", c)
	}
}

func TestLoad_EnvSetsDefaultsAndFlagsWin(t *testing.T) {
	e := env(map[string]string{
		daemon.EnvRedisAddr: "redis:6380", daemon.EnvAdminAddr: ":9999", daemon.EnvLogLevel: "debug",
		daemon.EnvShutdownTimeout: "40s", daemon.EnvDrainDelay: "3s", daemon.EnvRedisPassword: "s3cret",
		daemon.EnvPProf: "true", "PULKA_TEST_GROUP": "g-env", daemon.EnvMemoryLimit: "1073741824",
	})
	var c svcConfig
	err := daemon.Load(&c, "svc", []string{"-redis-addr", "other:1", "-group", "g-flag"}, e, &bytes.Buffer{})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := svcConfig{Base: daemon.Base{
		RedisAddr: "other:1", RedisPassword: "s3cret", AdminAddr: ":9999", PProf: daemon.PProfOn, LogLevel: slog.LevelDebug,
		ShutdownTimeout: 40 * time.Second, DrainDelay: 3 * time.Second, MemoryLimit: 1 << 30,
	}, Group: "g-flag"}
	if c != want {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
}

func TestLoad_UnparsableEnvIsAnError(t *testing.T) {
	for _, tc := range []struct{ key, val string }{
		{daemon.EnvShutdownTimeout, "soon"},
		{daemon.EnvRedisDB, "one"},
		{daemon.EnvRedisCluster, "perhaps"},
		{daemon.EnvLogLevel, "loud"},
		{daemon.EnvMemoryLimit, "1Gi"}, // the downward API gives bytes
	} {
		t.Run(tc.key, func(t *testing.T) {
			var c svcConfig
			err := daemon.Load(&c, "svc", nil, env(map[string]string{tc.key: tc.val}), &bytes.Buffer{})
			if !errors.Is(err, daemon.ErrConfig) || !strings.Contains(err.Error(), tc.key) {
				t.Fatalf("want ErrConfig naming %s, got %v", tc.key, err)
			}
		})
	}
}

// The runtime's limit is 90 % of the container's, and GOMEMLIMIT, which the
// runtime has read already, wins; no container limit sets none.
func TestGoMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		name       string
		limit      int
		gomemlimit string
		want       int64
		ok         bool
	}{
		{"90 % of the container's", 1000, "", 900, true},
		{"1 GiB", 1 << 30, "", (1 << 30) / 10 * 9, true},
		{"no container limit", 0, "", 0, false},
		{"GOMEMLIMIT wins", 1 << 30, "512MiB", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := daemon.GoMemoryLimit(tc.limit, tc.gomemlimit)
			if got != tc.want || ok != tc.ok {
				t.Fatalf("GoMemoryLimit(%d, %q) = %d, %v; want %d, %v", tc.limit, tc.gomemlimit, got, ok, tc.want, tc.ok)
			}
		})
	}
	var c svcConfig
	if err := daemon.Load(&c, "svc", []string{"-memory-limit", "-1"}, env(nil), &bytes.Buffer{}); !errors.Is(err, daemon.ErrConfig) {
		t.Fatalf("a negative memory limit: want ErrConfig, got %v", err)
	}
}

func TestLoad_HelpAndStrayArguments(t *testing.T) {
	var c svcConfig
	var out bytes.Buffer
	if err := daemon.Load(&c, "svc", []string{"-h"}, env(nil), &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: want flag.ErrHelp, got %v", err)
	}
	if !strings.Contains(out.String(), "PULKA_REDIS_ADDR") {
		t.Errorf("usage does not name the environment variables:\n%s", out.String())
	}
	if err := daemon.Load(&c, "svc", []string{"extra"}, env(nil), &out); !errors.Is(err, daemon.ErrConfig) {
		t.Fatalf("stray argument: want ErrConfig, got %v", err)
	}
	if err := daemon.Load(&c, "svc", []string{"-no-such-flag"}, env(nil), &out); !errors.Is(err, daemon.ErrConfig) {
		t.Fatalf("unknown flag: want ErrConfig, got %v", err)
	}
	if err := daemon.Load(&c, "svc", []string{"-group="}, env(nil), &out); !errors.Is(err, daemon.ErrConfig) {
		t.Fatalf("service Validate not called: got %v", err)
	}
}

func TestBase_Validate(t *testing.T) {
	good := func() daemon.Base {
		return daemon.Base{RedisAddr: "localhost:6379", AdminAddr: ":9090", ShutdownTimeout: 10 * time.Second}
	}
	cases := []struct {
		name   string
		change func(*daemon.Base)
		bad    string // substring of the error; "" means valid
	}{
		{"defaults", func(*daemon.Base) {}, ""},
		{"cluster list", func(b *daemon.Base) { b.RedisAddr = "a:7000, b:7001" }, ""},
		{"admin on a free port", func(b *daemon.Base) { b.AdminAddr = "127.0.0.1:0" }, ""},
		{"otlp endpoint", func(b *daemon.Base) { b.OTLPEndpoint = "http://collector:4318" }, ""},
		{"empty redis", func(b *daemon.Base) { b.RedisAddr = " , " }, "redis-addr is empty"},
		{"redis without port", func(b *daemon.Base) { b.RedisAddr = "localhost" }, "redis-addr"},
		{"redis port 0", func(b *daemon.Base) { b.RedisAddr = "localhost:0" }, "bad port"},
		{"redis port too big", func(b *daemon.Base) { b.RedisAddr = "localhost:70000" }, "bad port"},
		{"negative db", func(b *daemon.Base) { b.RedisDB = -1 }, "negative"},
		{"db on a cluster", func(b *daemon.Base) { b.RedisAddr = "a:1,b:2"; b.RedisDB = 3 }, "only database 0"},
		{"admin without port", func(b *daemon.Base) { b.AdminAddr = "9090" }, "admin-addr"},
		{"otlp not a url", func(b *daemon.Base) { b.OTLPEndpoint = "collector:4318" }, "otlp-endpoint"},
		{"ratio sampler", func(b *daemon.Base) { b.TracesSampler, b.TracesSamplerArg = "parentbased_traceidratio", "0.01" }, ""},
		{"unknown sampler", func(b *daemon.Base) { b.TracesSampler = "sometimes" }, "OTEL_TRACES_SAMPLER"},
		{"ratio above 1", func(b *daemon.Base) { b.TracesSampler, b.TracesSamplerArg = "traceidratio", "2" }, "OTEL_TRACES_SAMPLER_ARG"},
		{"zero shutdown timeout", func(b *daemon.Base) { b.ShutdownTimeout = 0 }, "shutdown-timeout"},
		{"negative drain", func(b *daemon.Base) { b.DrainDelay = -time.Second }, "drain-delay"},
		{"drain eats the timeout", func(b *daemon.Base) { b.DrainDelay = 10 * time.Second }, "no time to drain"},
		{"sentinel", func(b *daemon.Base) {
			b.RedisAddr = "s1:26379,s2:26379"
			b.RedisSentinelMaster = "pulka"
			b.RedisDB = 2
		}, ""},
		{"sentinel and cluster", func(b *daemon.Base) { b.RedisSentinelMaster = "pulka"; b.RedisCluster = true }, "Sentinel watches one master"},
		{"tls", func(b *daemon.Base) { b.RedisTLS = true; b.RedisTLSServerName = "redis.internal" }, ""},
		{"tls settings without tls", func(b *daemon.Base) { b.RedisTLSServerName = "redis.internal" }, "without redis-tls"},
		{"tls ca file missing", func(b *daemon.Base) { b.RedisTLS = true; b.RedisTLSCAFile = "/nonexistent/ca.pem" }, "redis-tls-ca-file"},
		{"tls ca file not pem", func(b *daemon.Base) { b.RedisTLS = true; b.RedisTLSCAFile = "config_test.go" }, "no PEM certificate"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := good()
			tc.change(&b)
			err := b.Validate()
			switch {
			case tc.bad == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case tc.bad != "" && (!errors.Is(err, daemon.ErrConfig) || !strings.Contains(err.Error(), tc.bad)):
				t.Fatalf("want ErrConfig containing %q, got %v", tc.bad, err)
			}
		})
	}
}

func TestBase_ValidateReportsEveryProblem(t *testing.T) {
	b := daemon.Base{RedisAddr: "", AdminAddr: "x", ShutdownTimeout: 0}
	err := b.Validate()
	for _, want := range []string{"redis-addr", "admin-addr", "shutdown-timeout"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %s", err, want)
		}
	}
}
