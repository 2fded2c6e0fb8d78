package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/tools/stack"
)

// The plan itself is tools/stack's (and tested there); the launcher adds
// its configuration.
func TestPlan_EveryServiceGetsTheLauncherLogLevelAndStopsBeforeItIsKilled(t *testing.T) {
	cfg := Config{Addr: "localhost:8080", BinDir: "bin", Runners: 2, LogLevel: "warn",
		ReadyTimeout: time.Minute, StopTimeout: 15 * time.Second}
	backends, gw := plan(cfg, "127.0.0.1:7777", strings.Repeat("s", 64), make([]int, stack.Count(cfg.Runners)))
	if len(backends)+1 != stack.Count(cfg.Runners) {
		t.Fatalf("%d processes for %d runners", len(backends)+1, cfg.Runners)
	}
	for _, s := range append(backends, gw) {
		env := map[string]string{}
		for _, kv := range s.Env {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		if env[daemon.EnvLogLevel] != "warn" || env[daemon.EnvRedisAddr] != "127.0.0.1:7777" {
			t.Errorf("%s: log level %q, Redis %q", s.Name, env[daemon.EnvLogLevel], env[daemon.EnvRedisAddr])
		}
		// The service must finish its own shutdown before the launcher
		// kills it.
		if d, err := time.ParseDuration(env[daemon.EnvShutdownTimeout]); err != nil || d <= 0 || d >= cfg.StopTimeout {
			t.Errorf("%s: shutdown timeout %q is not within the 15s stop timeout", s.Name, env[daemon.EnvShutdownTimeout])
		}
	}
}

// On a Redis Cluster (one the launcher starts, or -redis-cluster) every
// service is told to use a cluster client; on one Redis none is.
func TestPlan_AClusterReachesEveryService(t *testing.T) {
	for _, cfg := range []Config{{ClusterMasters: 3}, {Redis: "10.0.0.5:6379", RedisCluster: true}, {}} {
		cfg.Runners, cfg.LogLevel, cfg.StopTimeout = 1, "info", 15*time.Second
		backends, gw := plan(cfg, "127.0.0.1:7777", strings.Repeat("s", 64), make([]int, stack.Count(cfg.Runners)))
		for _, s := range append(backends, gw) {
			got := slices.Contains(s.Env, daemon.EnvRedisCluster+"=true")
			if want := cfg.clusterMode(); got != want {
				t.Errorf("%+v: %s has the cluster setting %t, want %t", cfg, s.Name, got, want)
			}
		}
	}
}
