package operator_test

import (
	"errors"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/services/operator/internal/operator"
)

func TestConfigValidate(t *testing.T) {
	good := func() operator.Config {
		return operator.Config{
			Base: daemon.Base{RedisAddr: "localhost:6379", AdminAddr: "127.0.0.1:9090", PProf: daemon.PProfLoopback, ShutdownTimeout: time.Second},
			Pool: "games/runners", LeaderElect: true, LeaseDuration: 15 * time.Second,
			AssignLeaderTTL: 3 * time.Second, Reconcile: 500 * time.Millisecond,
		}
	}
	if err := func() error { c := good(); return c.Validate() }(); err != nil {
		t.Fatalf("good config refused: %v", err)
	}
	if err := func() error { c := good(); c.Namespace = "games"; return c.Validate() }(); err != nil {
		t.Fatalf("pool in its namespace refused: %v", err)
	}
	for _, tc := range []struct {
		name   string
		mutate func(*operator.Config)
	}{
		{"pool without a namespace", func(c *operator.Config) { c.Pool = "runners" }},
		{"pool with an empty name", func(c *operator.Config) { c.Pool = "games/" }},
		{"pool with two slashes", func(c *operator.Config) { c.Pool = "a/b/c" }},
		{"id with a brace", func(c *operator.Config) { c.ID = "op{1}" }},
		{"lease shorter than a second", func(c *operator.Config) { c.LeaseDuration = 100 * time.Millisecond }},
		{"assigner lease too short", func(c *operator.Config) { c.AssignLeaderTTL = time.Millisecond }},
		{"no reconcile interval", func(c *operator.Config) { c.Reconcile = 0 }},
		{"pool outside the namespace", func(c *operator.Config) { c.Namespace = "other" }},
	} {
		c := good()
		tc.mutate(&c)
		if err := c.Validate(); !errors.Is(err, daemon.ErrConfig) {
			t.Errorf("%s: Validate() = %v, want ErrConfig", tc.name, err)
		}
	}
}
