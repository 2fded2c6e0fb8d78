package streams

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// delConsumerScript removes a consumer only if it owns no pending message,
// checked atomically: deleting a consumer drops its pending entries, which
// would lose messages it was given after our XINFO look.
var delConsumerScript = redis.NewScript(`
local p = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2])
if #p > 0 then return -1 end
return redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])
`)

// housekeepingLoop samples lag for the metrics and removes dead consumers.
func (c *Consumer) housekeepingLoop(ctx context.Context) {
	lagT := time.NewTicker(c.cfg.lagEvery)
	defer lagT.Stop()
	gcT := time.NewTicker(c.cfg.consumerGCEvery)
	defer gcT.Stop()
	c.sampleLag(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-lagT.C:
			c.sampleLag(ctx)
		case <-gcT.C:
			if _, err := c.RemoveIdleConsumers(ctx, c.cfg.consumerGCIdle); err != nil && ctx.Err() == nil {
				c.cfg.logger.Warn("streams: consumer GC failed", "group", c.group, "err", err)
			}
		}
	}
}

// RemoveIdleConsumers deletes, from every stream read, the group's other
// consumers idle longer than idle that own no pending message. It returns
// how many it removed. Run calls it periodically (WithConsumerGC).
func (c *Consumer) RemoveIdleConsumers(ctx context.Context, idle time.Duration) (int, error) {
	removed := 0
	streams := c.reg.all()
	for len(streams) > 0 {
		n := min(len(streams), 500)
		pipe := c.rdb.Pipeline()
		cmds := make([]*redis.XInfoConsumersCmd, n)
		for i, s := range streams[:n] {
			cmds[i] = pipe.XInfoConsumers(ctx, s, c.group)
		}
		if _, err := pipe.Exec(ctx); err != nil && !isOnlyCommandErrors(cmds, err) {
			return removed, err
		}
		for i, cmd := range cmds {
			infos, err := cmd.Result()
			if err != nil {
				continue
			}
			for _, ci := range infos {
				if ci.Name == c.name || ci.Pending > 0 || ci.Idle < idle {
					continue
				}
				res, err := delConsumerScript.Run(ctx, c.rdb, []string{streams[i]}, c.group, ci.Name).Int64()
				if err != nil {
					return removed, fmt.Errorf("remove consumer %s from %s: %w", ci.Name, streams[i], err)
				}
				if res >= 0 {
					removed++
				}
			}
		}
		streams = streams[n:]
	}
	return removed, nil
}

func (c *Consumer) sampleLag(ctx context.Context) {
	var lag, pending int64
	streams := c.reg.all()
	for len(streams) > 0 {
		n := min(len(streams), 500)
		pipe := c.rdb.Pipeline()
		cmds := make([]*redis.XInfoGroupsCmd, n)
		for i, s := range streams[:n] {
			cmds[i] = pipe.XInfoGroups(ctx, s)
		}
		if _, err := pipe.Exec(ctx); err != nil && !isOnlyCommandErrors(cmds, err) {
			return // keep the previous sample
		}
		for _, cmd := range cmds {
			groups, err := cmd.Result()
			if err != nil {
				continue
			}
			for _, g := range groups {
				if g.Name != c.group {
					continue
				}
				if g.Lag > 0 {
					lag += g.Lag
				}
				pending += g.Pending
			}
		}
		streams = streams[n:]
	}
	c.lag.Store(lag)
	c.pending.Store(pending)
}
