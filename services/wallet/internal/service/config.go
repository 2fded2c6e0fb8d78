package service

import (
	"errors"
	"fmt"
	"time"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/pkg/envnames"
	"github.com/pulka/pulka/services/wallet/internal/ledger"
)

// Config is the wallet service's configuration: the daemon's base plus the
// consumer, the grants and the reconciliation. Every flag has a
// PULKA_WALLET_* environment variable (-help lists them).
type Config struct {
	daemon.Base
	// ConsumerGroup: the group on the command shards and scoring's
	// standings every replica joins, this replica's name, reclaim and
	// dead-letter settings.
	daemon.ConsumerGroup
	// Workers handle messages in parallel (one account's, one table's in
	// order: OrderKey): the wallet's operations in flight, which its
	// throughput on an fsync-always Redis follows (docs/benchmarks.md).
	Workers int

	SignupGrant int64
	DailyBonus  int64
	// TimeZone is the zone of the daily bonus's calendar day.
	TimeZone string
	// PotTTL keeps a resolved table's pot this long (0: for ever).
	PotTTL time.Duration

	// AuditInterval is how often the reconciliation runs (0: never on its own).
	AuditInterval time.Duration
	// StalePotAge: the audit reports pots open longer (no game lasts that long).
	StalePotAge time.Duration
	// RepairGrace is how old an unfinished settlement or release must be
	// before the reconciliation finishes it.
	RepairGrace time.Duration
}

// RegisterFlags declares the flags.
func (c *Config) RegisterFlags(f *daemon.Flags) {
	c.Base.RegisterFlags(f)
	// Redis failures are retried longer than scoring's: a settlement that
	// is dead-lettered waits for the reconciliation.
	c.ConsumerGroup.RegisterFlags(f, envnames.WalletPrefix, "wallet", "the command shards and scoring's standings", 20)
	f.Int(&c.Workers, "workers", "PULKA_WALLET_WORKERS", 128, "messages handled in parallel (one account's, one table's in order)")
	f.Int64(&c.SignupGrant, "signup-grant", "PULKA_WALLET_SIGNUP_GRANT", DefaultSignupGrant, "coins a new account gets")
	f.Int64(&c.DailyBonus, "daily-bonus", "PULKA_WALLET_DAILY_BONUS", DefaultDailyBonus, "coins of the daily bonus")
	f.String(&c.TimeZone, "time-zone", "PULKA_WALLET_TIME_ZONE", DefaultLocation, "time zone of the daily bonus's calendar day")
	f.Duration(&c.PotTTL, "pot-ttl", "PULKA_WALLET_POT_TTL", DefaultPotTTL, "how long a resolved table's pot is kept (0: for ever)")
	f.Duration(&c.AuditInterval, "audit-interval", "PULKA_WALLET_AUDIT_INTERVAL", 5*time.Minute,
		"how often the reconciliation runs (0: only on demand)")
	f.Duration(&c.StalePotAge, "stale-pot-age", "PULKA_WALLET_STALE_POT_AGE", DefaultStalePotAge,
		"the audit reports a table whose pot stays open longer (no game lasts that long)")
	f.Duration(&c.RepairGrace, "repair-grace", "PULKA_WALLET_REPAIR_GRACE", time.Minute,
		"age of an unfinished settlement or release the reconciliation finishes")
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
	for name, n := range map[string]int64{"signup-grant": c.SignupGrant, "daily-bonus": c.DailyBonus} {
		if n < 0 || n > ledger.MaxAmount {
			bad("%s %d is not in 0..%d", name, n, int64(ledger.MaxAmount))
		}
	}
	if _, err := time.LoadLocation(c.TimeZone); err != nil {
		bad("time-zone %q: %v", c.TimeZone, err)
	}
	if c.PotTTL < 0 || c.AuditInterval < 0 || c.StalePotAge < 0 {
		bad("pot-ttl, audit-interval and stale-pot-age may not be negative")
	}
	if c.RepairGrace < c.ReclaimIdle {
		// A younger resolution may still be running on a live replica;
		// finishing it too is harmless, but wasteful.
		bad("repair-grace %s is shorter than reclaim-idle %s", c.RepairGrace, c.ReclaimIdle)
	}
	return errors.Join(errs...)
}
