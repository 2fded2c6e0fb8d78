package main

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseConfig_DefaultsRunTwoRunnersOnLocalhost8080FromTheLaunchersDirectory(t *testing.T) {
	c, err := parseConfig(nil, "/opt/pulka/bin/pulka-local", &bytes.Buffer{})
	if err != nil {
		t.Fatalf("parseConfig: %v", err)
	}
	want := Config{
		Addr: "localhost:8080", BinDir: "/opt/pulka/bin", Runners: 2, LogLevel: "info",
		ReadyTimeout: time.Minute, StopTimeout: 15 * time.Second,
	}
	if c != want {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
}

func TestParseConfig_FlagsSetEveryField(t *testing.T) {
	args := []string{
		"-addr", "0.0.0.0:9000", "-bin-dir", "/tmp/b", "-redis", "redis.local:6380", "-runners", "3",
		"-allow-runner-exit", "-log-level", "debug", "-raw-logs", "-ready-timeout", "5s", "-stop-timeout", "3s",
	}
	c, err := parseConfig(args, "/x/pulka-local", &bytes.Buffer{})
	if err != nil {
		t.Fatalf("parseConfig: %v", err)
	}
	want := Config{
		Addr: "0.0.0.0:9000", BinDir: "/tmp/b", Redis: "redis.local:6380", Runners: 3, AllowRunnerExit: true,
		LogLevel: "debug", RawLogs: true, ReadyTimeout: 5 * time.Second, StopTimeout: 3 * time.Second,
	}
	if c != want {
		t.Fatalf("got %+v\nwant %+v", c, want)
	}
}

func TestParseConfig_HelpStrayArgumentsAndUnknownFlags(t *testing.T) {
	var out bytes.Buffer
	if _, err := parseConfig([]string{"-h"}, "/x/pulka-local", &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: want flag.ErrHelp, got %v", err)
	}
	for _, flagName := range []string{"-addr", "-redis", "-embedded-redis", "-runners", "-stop-timeout"} {
		if !strings.Contains(out.String(), flagName) {
			t.Errorf("usage does not mention %s:\n%s", flagName, out.String())
		}
	}
	for _, args := range [][]string{{"extra"}, {"-no-such-flag"}, {"-runners", "many"}} {
		if _, err := parseConfig(args, "/x/pulka-local", &bytes.Buffer{}); !errors.Is(err, ErrConfig) {
			t.Errorf("%q: want ErrConfig, got %v", args, err)
		}
	}
}

func TestConfigValidate(t *testing.T) {
	good := func() Config {
		return Config{Addr: "localhost:8080", BinDir: "bin", Runners: 2, LogLevel: "info",
			ReadyTimeout: time.Minute, StopTimeout: 15 * time.Second}
	}
	cases := []struct {
		name   string
		change func(*Config)
		bad    string // substring of the error; "" means valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"every interface", func(c *Config) { c.Addr = ":8080" }, ""},
		{"existing redis", func(c *Config) { c.Redis = "10.0.0.5:6379" }, ""},
		{"one runner", func(c *Config) { c.Runners = 1 }, ""},
		{"runner exits with two runners", func(c *Config) { c.AllowRunnerExit = true }, ""},
		{"addr without port", func(c *Config) { c.Addr = "localhost" }, "-addr"},
		{"addr on port 0", func(c *Config) { c.Addr = "localhost:0" }, "must be 1..65535"},
		{"redis without port", func(c *Config) { c.Redis = "redis" }, "-redis"},
		{"redis and embedded", func(c *Config) { c.Redis = "r:6379"; c.EmbeddedRedis = true }, "exclude each other"},
		{"no bin dir", func(c *Config) { c.BinDir = "" }, "-bin-dir"},
		{"no runners", func(c *Config) { c.Runners = 0 }, "-runners"},
		{"too many runners", func(c *Config) { c.Runners = 9 }, "-runners"},
		{"runner exits with one runner", func(c *Config) { c.Runners = 1; c.AllowRunnerExit = true }, "-allow-runner-exit"},
		{"bad log level", func(c *Config) { c.LogLevel = "loud" }, "-log-level"},
		{"no ready timeout", func(c *Config) { c.ReadyTimeout = 0 }, "-ready-timeout"},
		{"stop timeout too short", func(c *Config) { c.StopTimeout = 500 * time.Millisecond }, "-stop-timeout"},
		{"an existing cluster", func(c *Config) { c.Redis = "10.0.0.5:6379"; c.RedisCluster = true }, ""},
		{"a cluster of its own", func(c *Config) { c.ClusterMasters = 3; c.ClusterReplicas = 1 }, ""},
		{"cluster without redis", func(c *Config) { c.RedisCluster = true }, "-redis-cluster needs -redis"},
		{"two masters", func(c *Config) { c.ClusterMasters = 2 }, "at least 3 masters"},
		{"too many masters", func(c *Config) { c.ClusterMasters = 10 }, "-cluster-masters must be"},
		{"negative replicas", func(c *Config) { c.ClusterMasters = 3; c.ClusterReplicas = -1 }, "-cluster-replicas 0.."},
		{"cluster and redis", func(c *Config) { c.ClusterMasters = 3; c.Redis = "r:6379" }, "excludes -redis"},
		{"replicas without masters", func(c *Config) { c.ClusterReplicas = 1 }, "-cluster-replicas needs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := good()
			tc.change(&c)
			err := c.Validate()
			switch {
			case tc.bad == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case tc.bad != "" && (!errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.bad)):
				t.Fatalf("want ErrConfig containing %q, got %v", tc.bad, err)
			}
		})
	}
}

func TestConfigValidate_ReportsEveryProblemAtOnce(t *testing.T) {
	err := Config{Addr: "x", Runners: 0, LogLevel: "?", StopTimeout: 0}.Validate()
	for _, want := range []string{"-addr", "-bin-dir", "-runners", "-log-level", "-ready-timeout", "-stop-timeout"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not mention %s", err, want)
		}
	}
}

func TestCheckBinaries_NamesEveryMissingOneAndSaysMakeBuild(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"lobby", "wallet", "gateway"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// Present but not executable counts as missing.
	if err := os.WriteFile(filepath.Join(dir, "scoring"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := checkBinaries(dir)
	if !errors.Is(err, ErrConfig) {
		t.Fatalf("want ErrConfig, got %v", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "scoring, table-runner missing") || !strings.Contains(msg, "make build") {
		t.Fatalf("error does not name scoring and table-runner and say make build: %v", err)
	}
	if err := os.Chmod(filepath.Join(dir, "scoring"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "table-runner"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := checkBinaries(dir); err != nil {
		t.Fatalf("all present: %v", err)
	}
}
