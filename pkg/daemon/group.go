package daemon

import (
	"fmt"
	"os"
	"time"

	"github.com/pulka/pulka/pkg/envnames"
	"github.com/pulka/pulka/pkg/streams"
)

// ConsumerGroup is a service's membership of a consumer group, configured
// the same way in every service that consumes one: -group, -consumer,
// -reclaim-idle and -max-deliveries, with environment variables under the
// service's prefix.
type ConsumerGroup struct {
	// Group is the consumer group; every replica joins it.
	Group string
	// Consumer is this replica's name in the group; stable across restarts
	// of the same pod (the default is the host name, i.e. the pod name).
	Consumer string
	// ReclaimIdle is how long a message may stay unacknowledged before
	// another replica takes it over (its consumer died).
	ReclaimIdle time.Duration
	// MaxDeliveries moves a message that failed this often to the
	// dead-letter stream.
	MaxDeliveries int64
}

// RegisterFlags declares the flags; env is the service's environment
// prefix (envnames.ScoringPrefix, say), reads names what the group reads.
func (g *ConsumerGroup) RegisterFlags(f *Flags, env, group, reads string, maxDeliveries int64) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = group
	}
	f.String(&g.Group, "group", env+"GROUP", group, "consumer group on "+reads)
	f.String(&g.Consumer, "consumer", env+envnames.ConsumerSuffix, host, "this replica's consumer name (unique per replica)")
	f.Duration(&g.ReclaimIdle, "reclaim-idle", env+"RECLAIM_IDLE", streams.DefaultMinIdle,
		"idle time after which another replica takes over an unacknowledged message")
	f.Int64(&g.MaxDeliveries, "max-deliveries", env+"MAX_DELIVERIES", maxDeliveries,
		"deliveries of a failing message before it is dead-lettered")
}

// Validate lists the problems (each wraps ErrConfig).
func (g *ConsumerGroup) Validate() []error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrConfig}, args...)...))
	}
	if g.Group == "" {
		bad("group is empty")
	}
	if g.Consumer == "" {
		bad("consumer is empty")
	}
	if g.ReclaimIdle < 100*time.Millisecond {
		bad("reclaim-idle %s is below 100ms: healthy consumers would rob each other", g.ReclaimIdle)
	}
	if g.MaxDeliveries < 1 {
		bad("max-deliveries %d must be at least 1", g.MaxDeliveries)
	}
	return errs
}

// Options are the consumer's options that follow from the configuration.
func (g *ConsumerGroup) Options() []streams.Option {
	return []streams.Option{streams.WithMinIdle(g.ReclaimIdle), streams.WithMaxDeliveries(g.MaxDeliveries)}
}
