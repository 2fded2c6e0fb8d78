package scorer_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/services/scoring/internal/scorer"
	"github.com/pulka/pulka/services/scoring/internal/sheetstore"
)

func load(t *testing.T, env map[string]string, args ...string) (scorer.Config, error) {
	t.Helper()
	var c scorer.Config
	err := daemon.Load(&c, "scoring", args, func(k string) string { return env[k] }, &bytes.Buffer{})
	return c, err
}

func TestConfig_DefaultsAreValid(t *testing.T) {
	c, err := load(t, nil)
	if err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if c.Group != "scoring" || c.Consumer == "" || c.Store.GameTTL != sheetstore.DefaultGameTTL {
		t.Fatalf("defaults %+v", c)
	}
}

func TestConfig_Validate(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		bad  string
	}{
		{"env sets the group", map[string]string{"PULKA_SCORING_GROUP": "g2"}, nil, ""},
		{"empty group", nil, []string{"-group="}, "group is empty"},
		{"empty consumer", nil, []string{"-consumer="}, "consumer is empty"},
		{"tiny reclaim idle", nil, []string{"-reclaim-idle=1ms"}, "reclaim-idle"},
		{"no deliveries", nil, []string{"-max-deliveries=0"}, "max-deliveries"},
		{"dedupe shorter than redeliveries", nil, []string{"-dedupe-ttl=10s"}, "redelivery window"},
		{"zero game ttl", map[string]string{"PULKA_SCORING_GAME_TTL": "0s"}, nil, "game-ttl"},
		{"negative history ttl", nil, []string{"-history-ttl=-1h"}, "history-ttl"},
		{"no history", nil, []string{"-history-per-player=0"}, "history-per-player"},
		{"no workers", nil, []string{"-workers=0"}, "workers 0"},
		{"bad base too", nil, []string{"-redis-addr=", "-group="}, "redis-addr"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.env, tc.args...)
			switch {
			case tc.bad == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case tc.bad != "" && (!errors.Is(err, daemon.ErrConfig) || !strings.Contains(err.Error(), tc.bad)):
				t.Fatalf("want ErrConfig mentioning %q, got %v", tc.bad, err)
			}
		})
	}
}

func TestRun_ScoresAGameUnderTheDaemonAndStopsCleanly(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	cfg, err := load(t, map[string]string{daemon.EnvRedisAddr: srv.Addr(), daemon.EnvAdminAddr: "127.0.0.1:0"},
		"-consumer", "test-1", "-shutdown-timeout", "5s")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := make(chan *daemon.Daemon, 1)
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.Options{Name: "scoring", Config: cfg.Base, LogWriter: io.Discard},
			func(ctx context.Context, d *daemon.Daemon) error { started <- d; return cfg.Run(ctx, d) })
	}()
	var d *daemon.Daemon
	select {
	case d = <-started:
	case err := <-done:
		t.Fatalf("Run: %v", err)
	}
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + d.AdminAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	eventually(t, 10*time.Second, "ready", func() bool { code, _ := get("/readyz"); return code == http.StatusOK })
	if _, body := get("/readyz"); !strings.Contains(body, `"consumer":"ok"`) {
		t.Fatalf("readiness does not include the consumer: %s", body)
	}

	publish(t, rdb, ninesInputs("t1", "g1", names)...)
	eventually(t, 10*time.Second, "standings", func() bool {
		return rdb.XLen(context.Background(), scoringclient.StandingsStream).Val() == 1 && settled(context.Background(), rdb)
	})
	_, metrics := get("/metrics")
	for _, m := range []string{`pulka_scoring_inputs_total{kind="hand"`, `result="stored"} 16`,
		"pulka_scoring_games_finished_total", "pulka_streams_consumed_total", "pulka_redis_pool_connections"} {
		if !strings.Contains(metrics, m) {
			t.Errorf("/metrics lacks %s:\n%s", m, metrics)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run after stop: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the service did not stop")
	}
}

func TestRun_WaitsForRedisInsteadOfFailing(t *testing.T) {
	srv := redistest.Start(t)
	srv.Kill()
	cfg, err := load(t, map[string]string{daemon.EnvRedisAddr: srv.Addr(), daemon.EnvAdminAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	started := make(chan *daemon.Daemon, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.Options{Name: "scoring", Config: cfg.Base, LogWriter: io.Discard},
			func(ctx context.Context, d *daemon.Daemon) error { started <- d; return cfg.Run(ctx, d) })
	}()
	d := <-started
	time.Sleep(300 * time.Millisecond)
	if err := d.Ready(ctx); err == nil {
		t.Fatal("ready without Redis")
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "ready once Redis is back", func() bool { return d.Ready(ctx) == nil })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
}
