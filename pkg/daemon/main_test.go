package daemon

import (
	"bytes"
	"context"
	"errors"
	"runtime/debug"
	"testing"

	"github.com/pulka/pulka/pkg/redistest"
)

func TestMain_ExitCodes(t *testing.T) {
	srv := redistest.Start(t)
	getenv := func(k string) string {
		return map[string]string{EnvRedisAddr: srv.Addr(), EnvAdminAddr: "127.0.0.1:0"}[k]
	}
	ok := func(context.Context, *Daemon) error { return nil }
	fail := func(context.Context, *Daemon) error { return errors.New("cannot start") }
	cases := []struct {
		name string
		args []string
		run  RunFunc
		want int
	}{
		{"clean stop", nil, ok, 0},
		{"help", []string{"-help"}, ok, 0},
		{"bad flag value", []string{"-shutdown-timeout", "0s"}, ok, 2},
		{"unknown flag", []string{"-frobnicate"}, ok, 2},
		{"service fails", nil, fail, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			var base Base
			if got := mainContext(context.Background(), "svc", &base, tc.args, getenv, &stderr, tc.run); got != tc.want {
				t.Fatalf("exit code %d, want %d; stderr:\n%s", got, tc.want, stderr.String())
			}
		})
	}
}

// Main holds the Go runtime under 90 % of the container's memory limit.
func TestMain_SetsTheRuntimesMemoryLimitFromTheContainers(t *testing.T) {
	srv := redistest.Start(t)
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	getenv := func(k string) string {
		return map[string]string{EnvRedisAddr: srv.Addr(), EnvAdminAddr: "127.0.0.1:0", EnvMemoryLimit: "1000000000"}[k]
	}
	var seen int64
	run := func(context.Context, *Daemon) error { seen = debug.SetMemoryLimit(-1); return nil }
	var stderr bytes.Buffer
	var base Base
	if got := mainContext(context.Background(), "svc", &base, nil, getenv, &stderr, run); got != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", got, stderr.String())
	}
	if seen != 900000000 {
		t.Fatalf("the runtime's memory limit while running: %d, want 900000000", seen)
	}
}
