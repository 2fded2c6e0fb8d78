package scorer

import (
	"errors"
	"fmt"
	"os"
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

	// Group is the consumer group on HandsStream; every replica joins it.
	Group string
	// Consumer is this replica's name in the group; stable across restarts
	// of the same pod (the default is the host name, i.e. the pod name).
	Consumer string
	// ReclaimIdle is how long an input may stay unacknowledged before
	// another replica takes it over (its consumer died).
	ReclaimIdle time.Duration
	// MaxDeliveries moves an input that failed this often to the
	// dead-letter stream.
	MaxDeliveries int64

	// Store tunes retention: game TTL, dedupe TTLs, stream lengths, history.
	Store sheetstore.WriterOptions
}

// RegisterFlags declares the flags.
func (c *Config) RegisterFlags(f *daemon.Flags) {
	c.Base.RegisterFlags(f)
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "scoring"
	}
	f.String(&c.Group, "group", "PULKA_SCORING_GROUP", "scoring", "consumer group on "+scoringclient.HandsStream)
	f.String(&c.Consumer, "consumer", envnames.ScoringConsumer, host, "this replica's consumer name (unique per replica)")
	f.Duration(&c.ReclaimIdle, "reclaim-idle", "PULKA_SCORING_RECLAIM_IDLE", streams.DefaultMinIdle,
		"idle time after which another replica takes over an unacknowledged input")
	f.Int64(&c.MaxDeliveries, "max-deliveries", "PULKA_SCORING_MAX_DELIVERIES", streams.DefaultMaxDeliveries,
		"deliveries of a failing input before it is dead-lettered")
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
	errs := []error{c.Base.Validate()}
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{daemon.ErrConfig}, args...)...))
	}
	if c.Group == "" {
		bad("group is empty")
	}
	if c.Consumer == "" {
		bad("consumer is empty")
	}
	if c.ReclaimIdle < 100*time.Millisecond {
		bad("reclaim-idle %s is below 100ms: healthy consumers would rob each other", c.ReclaimIdle)
	}
	if c.MaxDeliveries < 1 {
		bad("max-deliveries %d must be at least 1", c.MaxDeliveries)
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
