package service

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/pkg/envnames"
	"github.com/pulka/pulka/pkg/walletclient"
)

// Environment variables of the lobby's own settings; the one a launcher sets
// (the consumer name) is named in pkg/envnames.
const (
	EnvName             = envnames.LobbyName
	EnvConsumers        = "PULKA_LOBBY_CONSUMERS"
	EnvSnapshotInterval = "PULKA_LOBBY_SNAPSHOT_INTERVAL"
	EnvResultTTL        = "PULKA_LOBBY_RESULT_TTL"
	EnvFinishedTTL      = "PULKA_LOBBY_FINISHED_TTL"
	EnvViewMaxLen       = "PULKA_LOBBY_VIEW_MAXLEN"

	EnvMaxWaiting        = "PULKA_LOBBY_MAX_WAITING"
	EnvCreatesPerMinute  = envnames.LobbyCreatesPerMinute
	EnvGuessesPerPlayer  = "PULKA_LOBBY_GUESSES_PER_PLAYER"
	EnvGuessesPerTable   = "PULKA_LOBBY_GUESSES_PER_TABLE"
	EnvGuessWindow       = "PULKA_LOBBY_GUESS_WINDOW"
	EnvWaitingTTL        = "PULKA_LOBBY_WAITING_TTL"
	EnvSweepInterval     = "PULKA_LOBBY_SWEEP_INTERVAL"
	EnvPasswordWorkers   = "PULKA_LOBBY_PASSWORD_WORKERS"
	EnvPasswordQueue     = "PULKA_LOBBY_PASSWORD_QUEUE"
	EnvGuessesPerGuesser = "PULKA_LOBBY_GUESSES_PER_GUESSER"
	EnvCreateQueue       = "PULKA_LOBBY_CREATE_QUEUE"
	EnvCommandsPerMinute = envnames.LobbyCommandsPerMinute
	EnvCoinSitsPerMinute = envnames.LobbyCoinSitsPerMinute
	EnvCoinTables        = "PULKA_LOBBY_COIN_TABLES"
	EnvWalletTimeout     = "PULKA_LOBBY_WALLET_TIMEOUT"
)

// Config is the lobby's configuration: the daemon's base plus its own.
type Config struct {
	daemon.Base
	Name             string
	Consumers        int
	SnapshotInterval time.Duration
	ResultTTL        time.Duration
	FinishedTTL      time.Duration
	ViewMaxLen       int64
	Limits           Limits
	// CoinTables lets players create Domino Coin tables; the lobby then
	// sends the wallet (on the same Redis) holds and releases, waiting
	// WalletTimeout for each answer.
	CoinTables    bool
	WalletTimeout time.Duration
}

// RegisterFlags declares the base flags and the lobby's.
func (c *Config) RegisterFlags(f *daemon.Flags) {
	c.Base.RegisterFlags(f)
	f.String(&c.Name, "name", EnvName, "", "this replica's consumer name in the lobby group (default: the host name, i.e. the pod name)")
	f.Int(&c.Consumers, "consumers", EnvConsumers, 2, "commands handled at once by this replica")
	f.Duration(&c.SnapshotInterval, "snapshot-interval", EnvSnapshotInterval, time.Second, "how often the LobbyView snapshot is refreshed when the list changed")
	f.Duration(&c.ResultTTL, "result-ttl", EnvResultTTL, 24*time.Hour, "how long a command's result is kept to answer repeats (its dedupe window)")
	f.Duration(&c.FinishedTTL, "finished-ttl", EnvFinishedTTL, time.Hour, "how long a finished table stays readable by its link")
	f.Int64(&c.ViewMaxLen, "view-maxlen", EnvViewMaxLen, 10_000, "approximate length of the view stream (must cover the updates between two snapshots)")
	f.Bool(&c.CoinTables, "coin-tables", EnvCoinTables, true, "allow Domino Coin tables (the wallet service must run on the same Redis)")
	f.Duration(&c.WalletTimeout, "wallet-timeout", EnvWalletTimeout, walletclient.DefaultTimeout, "how long a sit-down at a coin table waits for the wallet to hold the stake")
	d, l := DefaultLimits(), &c.Limits
	f.Int(&l.WaitingPerPlayer, "max-waiting", EnvMaxWaiting, d.WaitingPerPlayer, "waiting tables one player may host or sit at")
	f.Int(&l.CreatesPerMinute, "creates-per-minute", EnvCreatesPerMinute, d.CreatesPerMinute, "tables one player may create in any minute")
	f.Int(&l.CommandsPerMinute, "commands-per-minute", EnvCommandsPerMinute, d.CommandsPerMinute, "lobby commands of any kind (create, sit, stand, leave, bots) one player may send in any minute")
	f.Int(&l.CoinSitsPerMinute, "coin-sits-per-minute", EnvCoinSitsPerMinute, d.CoinSitsPerMinute, "stakes one player may have the wallet hold (sit-downs at Domino Coin tables) in any minute")
	f.Int(&l.GuessesPerPlayer, "guesses-per-player", EnvGuessesPerPlayer, d.GuessesPerPlayer, "password guesses one player may make at one table per -guess-window")
	f.Int(&l.GuessesPerTable, "guesses-per-table", EnvGuessesPerTable, d.GuessesPerTable, "password guesses everybody together may make at one table per -guess-window")
	f.Int(&l.GuessesPerGuesser, "guesses-per-guesser", EnvGuessesPerGuesser, d.GuessesPerGuesser, "password guesses one player may make at all tables together per -guess-window")
	f.Duration(&l.GuessWindow, "guess-window", EnvGuessWindow, d.GuessWindow, "the window of the password-guess limits")
	f.Duration(&l.WaitingTTL, "waiting-ttl", EnvWaitingTTL, d.WaitingTTL, "a waiting table nobody changes for this long is closed")
	f.Duration(&l.SweepInterval, "sweep-interval", EnvSweepInterval, d.SweepInterval, "how often idle waiting tables are looked for")
	f.Int(&l.PasswordWorkers, "password-workers", EnvPasswordWorkers, d.PasswordWorkers, "goroutines hashing table passwords, off the command consumers")
	f.Int(&l.PasswordQueue, "password-queue", EnvPasswordQueue, d.PasswordQueue, "password sit-downs that may wait for a worker; more are refused at once")
	f.Int(&l.CreateQueue, "create-queue", EnvCreateQueue, d.CreateQueue, "table creations with a password that may wait for a worker (a queue of their own, served first); more are refused at once")
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	errs := []error{c.Base.Validate()}
	if c.Consumers < 1 || c.Consumers > 64 {
		errs = append(errs, fmt.Errorf("%w: -consumers must be 1..64, not %d", daemon.ErrConfig, c.Consumers))
	}
	if c.SnapshotInterval < 10*time.Millisecond {
		errs = append(errs, fmt.Errorf("%w: -snapshot-interval must be at least 10ms", daemon.ErrConfig))
	}
	if c.ResultTTL < time.Minute {
		errs = append(errs, fmt.Errorf("%w: -result-ttl must be at least 1m (it must outlast redeliveries)", daemon.ErrConfig))
	}
	if c.FinishedTTL <= 0 {
		errs = append(errs, fmt.Errorf("%w: -finished-ttl must be positive", daemon.ErrConfig))
	}
	if c.ViewMaxLen < 100 {
		errs = append(errs, fmt.Errorf("%w: -view-maxlen must be at least 100", daemon.ErrConfig))
	}
	if c.CoinTables && (c.WalletTimeout < 100*time.Millisecond || c.WalletTimeout > time.Minute) {
		errs = append(errs, fmt.Errorf("%w: -wallet-timeout must be 100ms..1m, not %v", daemon.ErrConfig, c.WalletTimeout))
	}
	l := c.Limits
	for _, n := range []struct {
		flag string
		v    int
	}{
		{"max-waiting", l.WaitingPerPlayer}, {"creates-per-minute", l.CreatesPerMinute},
		{"guesses-per-player", l.GuessesPerPlayer}, {"guesses-per-table", l.GuessesPerTable},
		{"password-workers", l.PasswordWorkers}, {"password-queue", l.PasswordQueue},
		{"guesses-per-guesser", l.GuessesPerGuesser}, {"create-queue", l.CreateQueue},
		{"commands-per-minute", l.CommandsPerMinute}, {"coin-sits-per-minute", l.CoinSitsPerMinute},
	} {
		if n.v < 1 || n.v > 1_000_000 {
			errs = append(errs, fmt.Errorf("%w: -%s must be 1..1000000, not %d", daemon.ErrConfig, n.flag, n.v))
		}
	}
	if l.PasswordWorkers > 64 {
		errs = append(errs, fmt.Errorf("%w: -password-workers must be at most 64 (each hash holds 19 MiB)", daemon.ErrConfig))
	}
	if l.GuessWindow < time.Second {
		errs = append(errs, fmt.Errorf("%w: -guess-window must be at least 1s", daemon.ErrConfig))
	}
	if l.WaitingTTL < time.Second {
		errs = append(errs, fmt.Errorf("%w: -waiting-ttl must be at least 1s", daemon.ErrConfig))
	}
	if l.SweepInterval < 10*time.Millisecond || l.SweepInterval > l.WaitingTTL {
		errs = append(errs, fmt.Errorf("%w: -sweep-interval must be 10ms..-waiting-ttl", daemon.ErrConfig))
	}
	return errors.Join(errs...)
}

// Run is the lobby's daemon.RunFunc for this configuration.
func (c *Config) Run(ctx context.Context, d *daemon.Daemon) error {
	name := c.Name
	if name == "" {
		h, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("lobby: consumer name: %w", err)
		}
		name = h
	}
	opt := Options{
		Name: name, Consumers: c.Consumers, SnapshotInterval: c.SnapshotInterval, Limits: c.Limits,
		Logger: d.Logger, MeterProvider: d.Telemetry.MeterProvider, TracerProvider: d.Telemetry.TracerProvider,
	}
	opt.Store.ResultTTL, opt.Store.FinishedTTL, opt.Store.ViewMaxLen = c.ResultTTL, c.FinishedTTL, c.ViewMaxLen
	var wallet *walletclient.Client
	if c.CoinTables {
		wallet = walletclient.NewClient(d.Redis, walletclient.Options{
			Timeout: c.WalletTimeout, Logger: d.Logger, TracerProvider: d.Telemetry.TracerProvider})
		opt.Wallet = wallet
	}
	s, err := New(d.Redis, opt)
	if err != nil {
		return err
	}
	d.AddReadyCheck("lobby", s.Ready)
	d.Started()
	if wallet == nil {
		return s.Run(ctx)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	werr := make(chan error, 1)
	go func() { werr <- wallet.Run(ctx) }()
	err = s.Run(ctx)
	cancel()
	if e := <-werr; e != nil && !errors.Is(e, context.Canceled) {
		err = errors.Join(err, e)
	}
	return err
}
