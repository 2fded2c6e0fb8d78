package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/pkg/envnames"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// Environment variables of the runner's own settings; those a launcher or a
// test sets are named in pkg/envnames.
const (
	EnvID             = envnames.RunnerID
	EnvMoveTimeout    = envnames.RunnerMoveTimeout
	EnvReconnectGrace = envnames.RunnerReconnectGrace
	EnvBotDelay       = envnames.RunnerBotDelay
	EnvSeedTimeout    = envnames.RunnerSeedTimeout
	EnvInbox          = "PULKA_RUNNER_INBOX"
	EnvCapacity       = envnames.RunnerCapacity
	EnvHeartbeatTTL   = envnames.RunnerHeartbeatTTL
	EnvLeaseTTL       = envnames.RunnerLeaseTTL
	EnvPollInterval   = envnames.RunnerPollInterval
	EnvAssigner       = envnames.RunnerAssigner
	EnvLeaderTTL      = envnames.RunnerLeaderTTL
	EnvReconcile      = envnames.RunnerReconcileInterval
	EnvFinishedTTL    = "PULKA_RUNNER_FINISHED_TTL"
	EnvEventMaxLen    = "PULKA_RUNNER_EVENT_MAXLEN"
	EnvCommandTrim    = "PULKA_RUNNER_COMMAND_TRIM"
)

// Config is the runner's configuration: the daemon's base plus its own.
type Config struct {
	daemon.Base
	ID             string
	MoveTimeout    time.Duration
	ReconnectGrace time.Duration
	BotDelay       time.Duration
	SeedTimeout    time.Duration
	Inbox          int
	Capacity       int
	HeartbeatTTL   time.Duration
	LeaseTTL       time.Duration
	PollInterval   time.Duration
	Assigner       bool
	LeaderTTL      time.Duration
	Reconcile      time.Duration
	FinishedTTL    time.Duration
	EventMaxLen    int64
	CommandTrim    int
}

// RegisterFlags declares the base flags and the runner's.
func (c *Config) RegisterFlags(f *daemon.Flags) {
	c.Base.RegisterFlags(f)
	f.String(&c.ID, "id", EnvID, "", "this runner's id in the membership and the table leases (default: host name and process id)")
	f.Duration(&c.MoveTimeout, "move-timeout", EnvMoveTimeout, tablesettings.DefaultMoveTimeout, "time for one move when the table's settings give none")
	f.Duration(&c.ReconnectGrace, "reconnect-grace", EnvReconnectGrace, tablesettings.DefaultReconnectGrace, "time an away player has to come back when the table's settings give none")
	f.Duration(&c.BotDelay, "bot-delay", EnvBotDelay, tablesettings.DefaultBotDelay, "how long a bot waits before its move (0: at once)")
	f.Duration(&c.SeedTimeout, "seed-timeout", EnvSeedTimeout, tablesettings.DefaultSeedTimeout, "how long a committed hand waits for the players' client seeds before it is dealt without the missing ones")
	f.Int(&c.Inbox, "inbox", EnvInbox, 64, "commands queued per table before the table reads its backlog from Redis itself")
	f.Int(&c.Capacity, "capacity", EnvCapacity, 0, "most tables this runner takes (0: no limit)")
	f.Duration(&c.HeartbeatTTL, "heartbeat-ttl", EnvHeartbeatTTL, 3*time.Second, "a runner silent for this long is dead and its tables move")
	f.Duration(&c.LeaseTTL, "lease-ttl", EnvLeaseTTL, 10*time.Second, "TTL of the table leases (renewed every third of it)")
	f.Duration(&c.PollInterval, "poll-interval", EnvPollInterval, 250*time.Millisecond, "how often the runner reads its assigned tables")
	f.Bool(&c.Assigner, "assigner", EnvAssigner, true, "take part in the election of the assigner that places and moves tables")
	f.Duration(&c.LeaderTTL, "leader-ttl", EnvLeaderTTL, 3*time.Second, "TTL of the assigner's leader lease")
	f.Duration(&c.Reconcile, "reconcile-interval", EnvReconcile, 500*time.Millisecond, "how often the assigner leader moves tables off dead runners")
	f.Duration(&c.FinishedTTL, "finished-ttl", EnvFinishedTTL, time.Hour, "how long a finished table's streams and snapshot are kept")
	f.Int(&c.CommandTrim, "command-trim", EnvCommandTrim, DefaultCommandTrim, "handled commands a table leaves in its command stream before trimming them (refusals and hand ends trim at once)")
	f.Int64(&c.EventMaxLen, "event-maxlen", EnvEventMaxLen, 0, "approximate length a table's event stream is trimmed to (0: never; it must exceed the events of one hand)")
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	errs := []error{c.Base.Validate()}
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{daemon.ErrConfig}, args...)...))
	}
	if c.ID != "" && strings.ContainsAny(c.ID, "{}, \t\r\n") {
		bad("-id %q must not contain braces, commas or spaces", c.ID)
	}
	if c.MoveTimeout <= 0 || c.MoveTimeout > 24*time.Hour || c.ReconnectGrace <= 0 || c.ReconnectGrace > 24*time.Hour {
		bad("-move-timeout and -reconnect-grace must be within (0, 24h]")
	}
	if c.BotDelay < 0 || c.BotDelay > time.Minute {
		bad("-bot-delay must be within [0, 1m]")
	}
	if c.SeedTimeout < time.Millisecond || c.SeedTimeout > time.Minute {
		bad("-seed-timeout must be within [1ms, 1m]")
	}
	if c.Inbox < 1 || c.Inbox > 1<<16 {
		bad("-inbox must be 1..65536, not %d", c.Inbox)
	}
	if c.Capacity < 0 {
		bad("-capacity must not be negative")
	}
	if c.HeartbeatTTL < 100*time.Millisecond || c.LeaseTTL < 100*time.Millisecond || c.LeaderTTL < 100*time.Millisecond {
		bad("-heartbeat-ttl, -lease-ttl and -leader-ttl must be at least 100ms")
	}
	if c.PollInterval < time.Millisecond || c.Reconcile < time.Millisecond {
		bad("-poll-interval and -reconcile-interval must be at least 1ms")
	}
	if c.PollInterval >= c.HeartbeatTTL {
		bad("-poll-interval must be shorter than -heartbeat-ttl")
	}
	if c.FinishedTTL <= 0 {
		bad("-finished-ttl must be positive")
	}
	if c.CommandTrim < 1 || c.CommandTrim > 100_000 {
		bad("-command-trim must be 1..100000")
	}
	if c.EventMaxLen < 0 || (c.EventMaxLen > 0 && c.EventMaxLen < 10_000) {
		bad("-event-maxlen must be 0 or at least 10000 (a restore needs the events after the last snapshot)")
	}
	return errors.Join(errs...)
}

// Options turns the configuration into runner options for daemon d.
func (c *Config) Options(d *daemon.Daemon) (Options, error) {
	id := c.ID
	if id == "" {
		h, err := os.Hostname()
		if err != nil {
			return Options{}, fmt.Errorf("runner: id: %w", err)
		}
		id = h + "-" + strconv.Itoa(os.Getpid())
	}
	botDelay := c.BotDelay
	if botDelay == 0 {
		botDelay = -1 // Options' zero means the default; the flag's 0 means at once
	}
	return Options{
		ID: id, MoveTimeout: c.MoveTimeout, ReconnectGrace: c.ReconnectGrace, BotDelay: botDelay, SeedTimeout: c.SeedTimeout,
		Inbox: c.Inbox, Capacity: c.Capacity, HeartbeatTTL: c.HeartbeatTTL, LeaseTTL: c.LeaseTTL,
		PollInterval: c.PollInterval, Assigner: c.Assigner, LeaderTTL: c.LeaderTTL, ReconcileEvery: c.Reconcile,
		FinishedTTL: c.FinishedTTL, EventMaxLen: c.EventMaxLen, CommandTrim: c.CommandTrim,
		Logger: d.Logger, MeterProvider: d.Telemetry.MeterProvider, TracerProvider: d.Telemetry.TracerProvider,
	}, nil
}

// Run is the runner's daemon.RunFunc for this configuration.
func (c *Config) Run(ctx context.Context, d *daemon.Daemon) error {
	opt, err := c.Options(d)
	if err != nil {
		return err
	}
	r, err := New(d.Redis, opt)
	if err != nil {
		return err
	}
	d.AddReadyCheck("table-runner", r.Ready)
	d.Started()
	return r.Run(ctx)
}
