package streams

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/periodic"
)

// claimLoop reclaims messages left pending longer than min-idle by any
// consumer (a dead one, or this one after a handler error).
func (c *Consumer) claimLoop(ctx context.Context) {
	periodic.Every(ctx, c.cfg.claimInterval, func(ctx context.Context) {
		streams := c.reg.all()
		for len(streams) > 0 && ctx.Err() == nil {
			n := min(len(streams), 500)
			if err := c.claimBatch(ctx, streams[:n]); err != nil && ctx.Err() == nil {
				c.cfg.logger.Warn("streams: reclaim failed", "group", c.group, "err", err)
				break
			}
			streams = streams[n:]
		}
	})
}

func (c *Consumer) claimBatch(ctx context.Context, streams []string) error {
	c.ackMu.Lock()
	locked := true
	unlock := func() {
		if locked {
			locked = false
			c.ackMu.Unlock()
		}
	}
	defer unlock()
	pipe := c.rdb.Pipeline()
	cmds := make([]*redis.XAutoClaimCmd, len(streams))
	for i, s := range streams {
		cmds[i] = pipe.XAutoClaim(ctx, &redis.XAutoClaimArgs{
			Stream: s, Group: c.group, Consumer: c.name, MinIdle: c.cfg.minIdle, Start: "0-0", Count: c.cfg.claimCount,
		})
	}
	if _, err := pipe.Exec(ctx); err != nil && !isOnlyCommandErrors(cmds, err) {
		return err
	}
	type claimed struct {
		stream string
		msgs   []redis.XMessage
	}
	// Messages we still hold (queued, running or awaiting their ack) are
	// dropped from the reply; the rest are ours to deliver from now on.
	var got []claimed
	var lost []string
	for i, cmd := range cmds {
		msgs, _, err := cmd.Result()
		if redis.HasErrorPrefix(err, "NOGROUP") {
			lost = append(lost, streams[i])
			continue
		}
		if err != nil || len(msgs) == 0 {
			continue
		}
		if fresh := c.trackNew(streams[i], msgs); len(fresh) > 0 {
			got = append(got, claimed{streams[i], fresh})
		}
	}
	unlock()
	if len(lost) > 0 {
		_ = c.ensureGroups(ctx, lost, c.cfg.startID)
	}
	if len(got) == 0 {
		return nil
	}
	// XAUTOCLAIM does not say how often each entry was delivered; XPENDING
	// does, and the dead-letter decision needs it.
	pipe = c.rdb.Pipeline()
	pend := make([]*redis.XPendingExtCmd, len(got))
	for i, g := range got {
		pend[i] = pipe.XPendingExt(ctx, &redis.XPendingExtArgs{
			Stream: g.stream, Group: c.group, Start: g.msgs[0].ID, End: g.msgs[len(g.msgs)-1].ID,
			Count: int64(len(g.msgs)) + 1000, Consumer: c.name,
		})
	}
	_, _ = pipe.Exec(ctx)
	for i, g := range got {
		counts := map[string]int64{}
		if infos, err := pend[i].Result(); err == nil {
			for _, p := range infos {
				counts[p.ID] = p.RetryCount
			}
		}
		fresh := g.msgs
		for j, xm := range fresh {
			n := counts[xm.ID]
			if n == 0 {
				n = 2 // it was delivered before, or it would not be pending
			}
			c.tel.redelivered.Add(ctx, 1, c.tel.addOpts(g.stream, outcomeNone)...)
			if !c.dispatch(ctx, g.stream, xm, n) {
				c.untrack(g.stream, fresh[j:])
				return nil
			}
		}
	}
	return nil
}
