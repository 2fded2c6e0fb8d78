package streams

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"
)

// ackReq is a handled message waiting for its XACK.
type ackReq struct{ stream, id string }

// ackBuf collects acknowledgements for one pipeline.
type ackBuf struct {
	n   int
	ids map[string][]string
}

func (a *ackBuf) add(r ackReq) {
	if a.ids == nil {
		a.ids = map[string][]string{}
	}
	a.ids[r.stream] = append(a.ids[r.stream], r.id)
	a.n++
}

// maxAckBatch bounds one ack pipeline.
const maxAckBatch = 1024

// ackLoop acknowledges handled messages for all workers: everything queued
// while the previous pipeline was in flight goes in the next one, so under
// load one round trip acknowledges many messages. A failed pipeline is
// retried with backoff while handling goes on; the unacknowledged messages
// keep their slots, so a long outage stops the reading at MaxInFlight.
func (c *Consumer) ackLoop(ctx, hctx context.Context, in <-chan ackReq) {
	var acks ackBuf
	bo := c.cfg.newBackoff()
	for {
		if acks.n == 0 {
			r, ok := <-in
			if !ok {
				return
			}
			acks.add(r)
		}
	drain:
		for acks.n < maxAckBatch {
			select {
			case r, ok := <-in:
				if !ok {
					c.finalFlush(hctx, &acks)
					return
				}
				acks.add(r)
			default:
				break drain
			}
		}
		if err := c.flushAcks(hctx, &acks); err != nil {
			c.cfg.logger.Warn("streams: ack failed, retrying", "group", c.group, "err", err)
			if !sleepCtx(ctx, bo.NextBackOff()) {
				// Shutting down: one last try, then leave them pending.
				c.finalFlush(hctx, &acks)
			}
			continue
		}
		bo.Reset()
	}
}

func (c *Consumer) finalFlush(hctx context.Context, acks *ackBuf) {
	if acks.n == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(hctx), 5*time.Second)
	defer cancel()
	if err := c.flushAcks(ctx, acks); err != nil {
		c.cfg.logger.Warn("streams: final ack failed; messages will be redelivered", "group", c.group, "err", err)
		for s, ids := range acks.ids {
			c.release(s, ids...)
		}
		*acks = ackBuf{}
	}
}

// flushAcks sends the buffered XACKs in one pipeline. Acks whose group is
// gone (NOGROUP after a Redis restart without data) are dropped: there is
// nothing left to acknowledge.
func (c *Consumer) flushAcks(ctx context.Context, acks *ackBuf) error {
	if acks.n == 0 {
		return nil
	}
	c.ackMu.RLock()
	defer c.ackMu.RUnlock()
	type streamAck struct {
		stream string
		cmd    *redis.IntCmd
	}
	pipe := c.rdb.Pipeline()
	cmds := make([]streamAck, 0, len(acks.ids))
	for s, ids := range acks.ids {
		args := make([]any, 0, 3+len(ids))
		args = append(args, "xack", s, c.groupArg)
		for _, id := range ids {
			args = append(args, id)
		}
		cmd := redis.NewIntCmd(ctx, args...)
		_ = pipe.Process(ctx, cmd)
		cmds = append(cmds, streamAck{s, cmd})
	}
	_, _ = pipe.Exec(ctx)
	var firstErr error
	for _, a := range cmds {
		err := a.cmd.Err()
		if err != nil && !redis.HasErrorPrefix(err, "NOGROUP") {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		c.release(a.stream, acks.ids[a.stream]...)
		acks.n -= len(acks.ids[a.stream])
		delete(acks.ids, a.stream)
	}
	return firstErr
}
