package streams

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// worker handles one worker's messages in order. Acks go to the acker, so a
// worker never waits on Redis between two handlers: a message arriving while
// the previous one's ack is in flight starts at once.
func (c *Consumer) worker(ctx, hctx context.Context, ch <-chan Message) {
	for m := range ch {
		if ctx.Err() != nil {
			// Shutting down: do not start new work; the message stays
			// pending and another consumer reclaims it.
			c.release(m.Stream, m.ID)
			continue
		}
		if c.handle(hctx, m) {
			c.acks <- ackReq{m.Stream, m.ID}
		}
	}
}

// handle runs the handler for one delivery and reports whether to ack it.
func (c *Consumer) handle(ctx context.Context, m Message) bool {
	if m.Deliveries > c.cfg.maxDeliveries {
		// Delivered this often without an ack: its handler keeps crashing
		// or hanging the consumer. Do not run it again.
		c.deadLetter(ctx, m, fmt.Sprintf("delivered %d times without acknowledgement (limit %d)", m.Deliveries, c.cfg.maxDeliveries))
		return false
	}
	sctx, span := c.tel.startConsume(ctx, m, c.group)
	start := time.Now()
	err := c.callHandler(sctx, m)
	c.tel.handlerTime.Record(sctx, seconds(time.Since(start)), c.tel.recordOpts(m.Stream, outcomeNone)...)
	endSpan(span, err)
	if err == nil {
		c.tel.consumed.Add(sctx, 1, c.tel.addOpts(m.Stream, outcomeOK)...)
		return true
	}
	c.tel.consumed.Add(sctx, 1, c.tel.addOpts(m.Stream, outcomeError)...)
	if m.Deliveries >= c.cfg.maxDeliveries {
		c.deadLetter(ctx, m, err.Error())
		return false
	}
	c.cfg.logger.Warn("streams: handler failed; will redeliver", "stream", m.Stream, "id", m.ID,
		"deliveries", m.Deliveries, "err", err)
	// Leave it pending and stop keeping it alive: the reclaim loop delivers
	// it again once it has been idle for the min-idle time.
	c.release(m.Stream, m.ID)
	return false
}

// callHandler turns a handler panic into an error so one bad message cannot
// take the consumer down.
func (c *Consumer) callHandler(ctx context.Context, m Message) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("handler panic: %v", r)
		}
	}()
	return c.handler(ctx, m)
}

// deadLetter copies the message with its error and origin to the dead-letter
// stream and acknowledges it. Both commands go in one MULTI on a single
// Redis; on Cluster (different slots) they are pipelined, and a crash in
// between can leave a duplicate dead-letter entry (never a lost message).
func (c *Consumer) deadLetter(ctx context.Context, m Message, reason string) {
	values := []interface{}{
		"stream", m.Stream, "id", m.ID, "group", c.group, "consumer", c.name,
		"deliveries", strconv.FormatInt(m.Deliveries, 10), "error", reason, FieldData, m.Data,
	}
	for k, v := range m.Header {
		values = append(values, "h:"+k, v)
	}
	for _, k := range m.trace.Keys() {
		values = append(values, k, m.trace.Get(k))
	}
	var pipe redis.Pipeliner
	if c.cluster {
		pipe = c.rdb.Pipeline()
	} else {
		pipe = c.rdb.TxPipeline()
	}
	pipe.XAdd(ctx, &redis.XAddArgs{Stream: c.dlq, MaxLen: c.cfg.deadLetterLen, Approx: true, Values: values})
	pipe.XAck(ctx, m.Stream, c.group, m.ID)
	c.ackMu.RLock()
	_, err := pipe.Exec(ctx)
	c.release(m.Stream, m.ID)
	c.ackMu.RUnlock()
	if err != nil {
		c.cfg.logger.Error("streams: dead-letter failed; message stays pending", "stream", m.Stream, "id", m.ID, "err", err)
		return
	}
	c.tel.deadLettered.Add(ctx, 1, c.tel.addOpts(m.Stream, outcomeNone)...)
	c.cfg.logger.Warn("streams: message dead-lettered", "stream", m.Stream, "id", m.ID, "deliveries", m.Deliveries, "reason", reason)
}
