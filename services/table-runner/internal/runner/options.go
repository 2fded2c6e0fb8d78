package runner

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/services/table-runner/internal/table"
)

// Options configure a Runner. Zero values take the defaults below.
type Options struct {
	// ID names this runner in the membership, the assignment and the
	// table leases. Required; unique among live runners.
	ID string

	// MoveTimeout and ReconnectGrace apply to tables whose settings leave
	// them unset; BotDelay to every table this runner creates. They are
	// stored in the table's state, so a new owner keeps them.
	MoveTimeout    time.Duration // default tablesettings.DefaultMoveTimeout (20 s)
	ReconnectGrace time.Duration // default tablesettings.DefaultReconnectGrace (60 s)
	BotDelay       time.Duration // default tablesettings.DefaultBotDelay; negative means 0
	// SeedTimeout is how long a committed hand waits for the seated
	// players' client seeds before it is dealt without the missing ones
	// (docs/fair-play.md); every table this runner creates keeps it.
	SeedTimeout time.Duration // default tablesettings.DefaultSeedTimeout (3 s)

	// Inbox is each table's inbox size (default 64). When it is full the
	// shared reader stops handing the table commands and the table reads
	// its backlog from Redis itself once it has room (see docs).
	Inbox int
	// Capacity is the most tables this runner takes (0: no limit).
	Capacity int

	// HeartbeatTTL: a runner whose heartbeat is older is dead and its
	// tables move (default 3 s; beats every third of it).
	HeartbeatTTL time.Duration
	// LeaseTTL is the table leases' TTL (default 10 s; renewed every
	// third of it). A migration does not wait for it: the assigner takes
	// the lease over.
	LeaseTTL time.Duration
	// PollInterval is how often the runner reads its assigned tables
	// (default 250 ms).
	PollInterval time.Duration

	// Assigner runs the leader-elected assigner in this process.
	Assigner         bool
	LeaderTTL        time.Duration // default 3 s
	ReconcileEvery   time.Duration // default 500 ms
	StartClaimIdle   time.Duration // start messages a dead leader held are reclaimed after this (default 2 s)
	FinishedTTL      time.Duration // a finished table's keys live this long (default 1 h)
	EventMaxLen      int64         // approximate event stream length (default 0: never trimmed)
	CommandTrim      int           // handled commands left in a command stream before a trim (default DefaultCommandTrim)
	ScoringMaxLen    int64         // approximate length of the scoring input stream (default 100 000)
	ShutdownHandover time.Duration // bound on snapshot + release per table at shutdown (default 3 s)

	Logger         *slog.Logger
	MeterProvider  metric.MeterProvider
	TracerProvider trace.TracerProvider

	// beforeApply, when set (tests), runs on a table's goroutine before
	// every input it applies.
	beforeApply func(tableID string, in table.Input)
}

func (o Options) withDefaults() (Options, error) {
	if o.ID == "" {
		return o, errors.New("runner: an ID is required")
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.MoveTimeout, tablesettings.DefaultMoveTimeout)
	def(&o.ReconnectGrace, tablesettings.DefaultReconnectGrace)
	def(&o.SeedTimeout, tablesettings.DefaultSeedTimeout)
	switch {
	case o.BotDelay == 0:
		o.BotDelay = tablesettings.DefaultBotDelay
	case o.BotDelay < 0:
		o.BotDelay = 0
	}
	if o.Inbox <= 0 {
		o.Inbox = 64
	}
	def(&o.HeartbeatTTL, 3*time.Second)
	def(&o.LeaseTTL, 10*time.Second)
	def(&o.PollInterval, 250*time.Millisecond)
	def(&o.LeaderTTL, 3*time.Second)
	def(&o.ReconcileEvery, 500*time.Millisecond)
	def(&o.StartClaimIdle, 2*time.Second)
	def(&o.FinishedTTL, time.Hour)
	def(&o.ShutdownHandover, 3*time.Second)
	if o.ScoringMaxLen <= 0 {
		o.ScoringMaxLen = 100_000
	}
	if o.CommandTrim <= 0 {
		o.CommandTrim = DefaultCommandTrim
	}
	if o.EventMaxLen < 0 {
		return o, fmt.Errorf("runner: negative event stream length %d", o.EventMaxLen)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MeterProvider == nil {
		o.MeterProvider = noop.NewMeterProvider()
	}
	if o.TracerProvider == nil {
		o.TracerProvider = tracenoop.NewTracerProvider()
	}
	return o, nil
}
