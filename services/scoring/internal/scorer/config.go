package scorer

import (
	"errors"
	"fmt"
	"time"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/pkg/envnames"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/services/scoring/internal/sheetstore"
)

// Config is the scoring service's configuration: the daemon's base plus the
// consumer and retention settings. Every flag has a PULKA_SCORING_*
// environment variable (-help lists them).
type Config struct {
	daemon.Base
	// ConsumerGroup: the group on HandsStream every replica joins, this
	// replica's name, reclaim and dead-letter settings.
	daemon.ConsumerGroup
	// Workers handle inputs in parallel (one table's in order: OrderKey).
	Workers int

	// Store tunes retention: game TTL, dedupe TTLs, stream lengths, history.
	Store sheetstore.WriterOptions
}

// DefaultWorkers is how many inputs a replica handles at once. Each input
// is a few round trips to Redis, mostly waiting (with appendfsync always,
// for the disk): more in flight share Redis's fsyncs and event-loop turns.
const DefaultWorkers = 32

// ConsumerOptions are the consumer's options from the configuration: the
// group's reclaim and dead-letter settings, the workers, and the order by
// table (OrderKey).
func (c *Config) ConsumerOptions() []streams.Option {
	return append(c.Options(), streams.WithWorkers(c.Workers), streams.WithOrderKey(OrderKey))
}

// RegisterFlags declares the flags.
func (c *Config) RegisterFlags(f *daemon.Flags) {
	c.Base.RegisterFlags(f)
	c.ConsumerGroup.RegisterFlags(f, envnames.ScoringPrefix, "scoring", scoringclient.HandsStream, streams.DefaultMaxDeliveries)
	f.Int(&c.Workers, "workers", "PULKA_SCORING_WORKERS", DefaultWorkers, "inputs handled in parallel (one table's in order)")
	f.Duration(&c.Store.GameTTL, "game-ttl", "PULKA_SCORING_GAME_TTL", sheetstore.DefaultGameTTL,
		"how long a game's inputs and live sheet are kept after their last change")
	f.Duration(&c.Store.DedupeTTL, "dedupe-ttl", "PULKA_SCORING_DEDUPE_TTL", sheetstore.DefaultDedupeTTL,
		"how long an input's dedupe key is kept (must outlast every redelivery)")
	f.Duration(&c.Store.StandingsDedupeTTL, "standings-dedupe-ttl", "PULKA_SCORING_STANDINGS_DEDUPE_TTL",
		sheetstore.DefaultStandingsDedupeTTL, "how long a game's standings are guarded against a second publication")
	f.Int64(&c.Store.SheetStreamLen, "sheet-stream-len", "PULKA_SCORING_SHEET_STREAM_LEN", sheetstore.DefaultSheetStreamLen,
		"approximate length of each table's sheet stream")
	f.Int64(&c.Store.StandingsStreamLen, "standings-stream-len", "PULKA_SCORING_STANDINGS_STREAM_LEN",
		sheetstore.DefaultStandingsStreamLen, "approximate length of "+scoringclient.StandingsStream)
	f.Int64(&c.Store.HistoryPerPlayer, "history-per-player", "PULKA_SCORING_HISTORY_PER_PLAYER",
		sheetstore.DefaultHistoryPerPlayer, "finished games kept in each player's history list")
	f.Duration(&c.Store.HistoryTTL, "history-ttl", "PULKA_SCORING_HISTORY_TTL", 0,
		"expire finished games after this long (0: keep them)")
}

// Validate reports every problem at once.
func (c *Config) Validate() error {
	errs := append([]error{c.Base.Validate()}, c.ConsumerGroup.Validate()...)
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{daemon.ErrConfig}, args...)...))
	}
	if c.Workers < 1 {
		bad("workers %d must be at least 1", c.Workers)
	}
	for name, d := range map[string]time.Duration{
		"game-ttl": c.Store.GameTTL, "dedupe-ttl": c.Store.DedupeTTL, "standings-dedupe-ttl": c.Store.StandingsDedupeTTL,
	} {
		if d <= 0 {
			bad("%s %s must be positive", name, d)
		}
	}
	// A dedupe key that expires while its input can still be redelivered
	// would let the input through twice.
	if redeliverable := c.ReclaimIdle * time.Duration(c.MaxDeliveries+1); c.Store.DedupeTTL > 0 && c.Store.DedupeTTL < redeliverable {
		bad("dedupe-ttl %s is shorter than the redelivery window %s", c.Store.DedupeTTL, redeliverable)
	}
	for name, n := range map[string]int64{
		"sheet-stream-len": c.Store.SheetStreamLen, "standings-stream-len": c.Store.StandingsStreamLen,
		"history-per-player": c.Store.HistoryPerPlayer,
	} {
		if n < 1 {
			bad("%s %d must be at least 1", name, n)
		}
	}
	if c.Store.HistoryTTL < 0 {
		bad("history-ttl %s is negative", c.Store.HistoryTTL)
	}
	return errors.Join(errs...)
}
