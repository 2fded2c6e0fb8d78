package service

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/pkg/redistest"
)

func loadConfig(t *testing.T, env map[string]string, args ...string) (*Config, error) {
	t.Helper()
	var cfg Config
	err := daemon.Load(&cfg, "lobby", args, func(k string) string { return env[k] }, io.Discard)
	return &cfg, err
}

func TestConfig_DefaultsAndEnvironment(t *testing.T) {
	cfg, err := loadConfig(t, map[string]string{EnvConsumers: "4", EnvSnapshotInterval: "250ms"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Consumers != 4 || cfg.SnapshotInterval != 250*time.Millisecond || cfg.ResultTTL != 24*time.Hour || cfg.ViewMaxLen != 10_000 {
		t.Fatalf("config %+v", cfg)
	}
	if cfg.Limits != DefaultLimits() {
		t.Fatalf("limits %+v, want the defaults %+v", cfg.Limits, DefaultLimits())
	}
	if !cfg.CoinTables || cfg.WalletTimeout != 5*time.Second {
		t.Fatalf("coin tables %v, wallet timeout %v; want on, 5s", cfg.CoinTables, cfg.WalletTimeout)
	}
	if cfg, err := loadConfig(t, map[string]string{EnvCoinTables: "false", EnvWalletTimeout: "0s"}); err != nil || cfg.CoinTables {
		t.Fatalf("coin tables off (the wallet timeout unused): %+v %v", cfg, err)
	}
	cfg, err = loadConfig(t, map[string]string{EnvMaxWaiting: "5", EnvCreatesPerMinute: "30", EnvGuessesPerPlayer: "2",
		EnvGuessesPerTable: "9", EnvGuessWindow: "30s", EnvWaitingTTL: "2m", EnvSweepInterval: "1s",
		EnvPasswordWorkers: "4", EnvPasswordQueue: "8", EnvGuessesPerGuesser: "7", EnvCreateQueue: "3",
		EnvCommandsPerMinute: "60", EnvCoinSitsPerMinute: "2"})
	if err != nil {
		t.Fatal(err)
	}
	want := Limits{WaitingPerPlayer: 5, CreatesPerMinute: 30, GuessesPerPlayer: 2, GuessesPerTable: 9, GuessWindow: 30 * time.Second,
		WaitingTTL: 2 * time.Minute, SweepInterval: time.Second, PasswordWorkers: 4, PasswordQueue: 8,
		GuessesPerGuesser: 7, CreateQueue: 3, CommandsPerMinute: 60, CoinSitsPerMinute: 2}
	if cfg.Limits != want {
		t.Fatalf("limits from the environment %+v, want %+v", cfg.Limits, want)
	}
}

func TestConfig_InvalidValuesAreRefused(t *testing.T) {
	for _, args := range [][]string{
		{"-consumers", "0"},
		{"-snapshot-interval", "1ms"},
		{"-result-ttl", "10s"},
		{"-finished-ttl", "0s"},
		{"-view-maxlen", "5"},
		{"-max-waiting", "0"},
		{"-creates-per-minute", "0"},
		{"-commands-per-minute", "0"},
		{"-commands-per-minute", "1000001"},
		{"-coin-sits-per-minute", "-1"},
		{"-guesses-per-player", "-1"},
		{"-guesses-per-table", "0"},
		{"-guess-window", "10ms"},
		{"-waiting-ttl", "0s"},
		{"-sweep-interval", "1ms"},
		{"-waiting-ttl", "1m", "-sweep-interval", "2m"},
		{"-password-workers", "0"},
		{"-password-workers", "65"},
		{"-password-queue", "0"},
		{"-wallet-timeout", "10ms"},
		{"-wallet-timeout", "2m"},
	} {
		if _, err := loadConfig(t, nil, args...); !errors.Is(err, daemon.ErrConfig) {
			t.Errorf("%v: err = %v", args, err)
		}
	}
}

func TestRun_ServesReadinessAndMetrics(t *testing.T) {
	srv := redistest.Start(t)
	cfg, err := loadConfig(t, map[string]string{daemon.EnvRedisAddr: srv.Addr(), daemon.EnvAdminAddr: "127.0.0.1:0"}, "-name", "test")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	admin := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.Options{Name: "lobby", Config: cfg.Base, LogWriter: io.Discard}, func(ctx context.Context, d *daemon.Daemon) error {
			admin <- d.AdminAddr()
			return cfg.Run(ctx, d)
		})
	}()
	addr := "http://" + <-admin
	get := func(path string) (int, string) {
		resp, err := http.Get(addr + path)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	deadline := time.Now().Add(5 * time.Second)
	for code, _ := get("/readyz"); code != http.StatusOK; code, _ = get("/readyz") {
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never OK (last %d)", code)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// One command through the running service shows up in the metrics.
	e := &env{t: t, srv: srv, rdb: srv.Client(t)}
	e.client = newTestClient(srv)
	e.run(e.client.Run)
	e.mustCreate("host", classic(), "", true)
	if code, body := get("/metrics"); code != http.StatusOK || !strings.Contains(body, "pulka_lobby_commands_total") {
		t.Fatalf("/metrics %d:\n%s", code, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}
