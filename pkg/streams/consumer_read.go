package streams

import (
	"context"
	"errors"
	"runtime"
	"time"

	"github.com/redis/go-redis/v9"
)

// shard is one reading goroutine: a blocking multi-key XREADGROUP over its
// batch of streams plus its private wake stream. It only reads and hands
// messages over; it never waits for a handler or an ack.
func (c *Consumer) shard(ctx context.Context, i int) {
	wk := wakeKey(c.group, c.name, i)
	bo := c.cfg.newBackoff()
	wakeReady := false
	var (
		keys []string
		ver  uint64
		read *redis.XStreamSliceCmd
	)
	for ctx.Err() == nil {
		newKeys, _, newVer, changed, ok := c.reg.shardKeysSince(i, false, ver)
		if !ok {
			return
		}
		if changed {
			keys, ver, read = newKeys, newVer, nil
		}
		if !wakeReady && !c.cluster {
			if err := c.ensureGroups(ctx, []string{wk}, "$"); err != nil {
				c.cfg.logger.Warn("streams: create wake stream", "key", wk, "err", err)
				sleepCtx(ctx, bo.NextBackOff())
				continue
			}
			_ = c.rdb.Expire(ctx, wk, 24*time.Hour).Err()
			wakeReady = true
		}
		if !c.waitCapacity(ctx) {
			return
		}
		var res []redis.XStream
		var err error
		if c.cluster {
			res, err = c.pollSlots(ctx, keys)
		} else {
			if read == nil {
				read = c.prepareRead(ctx, keys, wk)
			}
			err = c.rdb.Process(ctx, read)
			if err == nil {
				res = read.Val()
			}
		}
		switch {
		case errors.Is(err, redis.Nil) || (err == nil && len(res) == 0):
			bo.Reset()
			if c.cluster {
				idleWait(ctx, c.reg.changes(), c.cfg.pollInterval)
			}
			continue
		case redis.HasErrorPrefix(err, "NOGROUP"):
			// Redis restarted without our data (or a key was deleted):
			// recreate every group of the batch, then read again.
			c.cfg.logger.Warn("streams: group missing, recreating", "group", c.group, "err", err)
			if e := c.ensureGroups(ctx, keys, c.cfg.startID); e != nil {
				sleepCtx(ctx, bo.NextBackOff())
			}
			wakeReady = false
			continue
		case err != nil:
			if ctx.Err() != nil {
				return
			}
			c.cfg.logger.Warn("streams: read failed, retrying", "group", c.group, "err", err)
			sleepCtx(ctx, bo.NextBackOff())
			continue
		}
		bo.Reset()
		dispatched := false
		for _, xs := range res {
			if xs.Stream == wk {
				ids := make([]string, len(xs.Messages))
				for j, m := range xs.Messages {
					ids[j] = m.ID
				}
				_ = c.rdb.XAck(ctx, wk, c.group, ids...).Err()
				continue
			}
			// Track the whole read at once: a message waiting here for a
			// free worker must already count as held, or the reclaim loop
			// could take it as idle and deliver it a second time.
			fresh := c.trackNew(xs.Stream, xs.Messages)
			for j, xm := range fresh {
				if !c.dispatch(ctx, xs.Stream, xm, 1) {
					c.untrack(xs.Stream, fresh[j:])
					return
				}
				dispatched = true
			}
		}
		if dispatched {
			// Let the workers just readied start their handlers before this
			// goroutine writes its next read: that write is a system call of
			// tens of microseconds on a busy machine, and the readied worker
			// would otherwise wait behind it. A reader that handles inline
			// has no such wait. With a core idle, that core picks this
			// goroutine up again at once.
			runtime.Gosched()
		}
	}
}

// prepareRead builds a shard's blocking XREADGROUP once per key set, to be
// sent again and again with Process. go-redis's XReadGroup boxes every
// argument into an interface on each call: two allocations per stream per
// read, which at a message or two per read (a paced load spread over many
// tables) were most of the consumer's garbage and GC cycles. The command is
// built by queueing it on a pipeline that is never executed, so go-redis
// still gives it the read timeout of a blocking command; re-processing one
// command is what go-redis's own retries do. A reply overwrites the previous
// value, and the value is only read after a successful round trip.
func (c *Consumer) prepareRead(ctx context.Context, keys []string, wake string) *redis.XStreamSliceCmd {
	args := make([]string, 0, 2*(len(keys)+1))
	args = append(args, keys...)
	args = append(args, wake)
	for range len(keys) + 1 {
		args = append(args, ">")
	}
	pipe := c.rdb.Pipeline()
	cmd := pipe.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group: c.group, Consumer: c.name, Streams: args, Count: c.cfg.count, Block: c.cfg.block,
	})
	pipe.Discard()
	return cmd
}

// pollSlots is the read of a shard on Redis Cluster, where one command may
// only name keys of one slot: one non-blocking XREADGROUP per slot, all in
// one pipeline (go-redis splits it per node). Streams of one slot (a shared
// tag) are still read together.
func (c *Consumer) pollSlots(ctx context.Context, keys []string) ([]redis.XStream, error) {
	groups := slotGroups(keys)
	pipe := c.rdb.Pipeline()
	cmds := make([]*redis.XStreamSliceCmd, len(groups))
	for i, g := range groups {
		args := make([]string, 0, 2*len(g))
		args = append(args, g...)
		for range g {
			args = append(args, ">")
		}
		cmds[i] = pipe.XReadGroup(ctx, &redis.XReadGroupArgs{Group: c.group, Consumer: c.name, Streams: args, Count: c.cfg.count, Block: -1})
	}
	_, _ = pipe.Exec(ctx)
	var out []redis.XStream
	var nogroup []string
	for i, cmd := range cmds {
		res, err := cmd.Result()
		switch {
		case errors.Is(err, redis.Nil):
		case redis.HasErrorPrefix(err, "NOGROUP"):
			nogroup = append(nogroup, groups[i]...)
		case err != nil:
			return out, err
		default:
			out = append(out, res...)
		}
	}
	if len(nogroup) > 0 {
		if err := c.ensureGroups(ctx, nogroup, c.cfg.startID); err != nil {
			return out, err
		}
	}
	return out, nil
}

// waitCapacity blocks while MaxInFlight messages are unfinished.
func (c *Consumer) waitCapacity(ctx context.Context) bool {
	select {
	case c.slots <- struct{}{}:
		<-c.slots
		return true
	case <-ctx.Done():
		return false
	}
}

func (c *Consumer) dispatch(ctx context.Context, stream string, xm redis.XMessage, deliveries int64) bool {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	m := toMessage(stream, xm, deliveries)
	key := stream
	if c.cfg.orderKey != nil {
		key = c.cfg.orderKey(m)
	}
	select {
	case c.work[workerOf(key, len(c.work))] <- m:
		return true
	case <-ctx.Done():
		<-c.slots
		return false
	}
}

// workerOf picks the worker of an order key, by default the stream (FNV-1a
// of its name), so one stream's (one key's) messages are handled in order
// by one worker.
func workerOf(stream string, workers int) int {
	h := uint32(2166136261)
	for i := 0; i < len(stream); i++ {
		h ^= uint32(stream[i])
		h *= 16777619
	}
	return int(h % uint32(workers))
}
