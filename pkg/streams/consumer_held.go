package streams

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/periodic"
)

// heldKey names a message this consumer holds. One flat set rather than a
// set per stream: with a message or two per stream in flight, a per-stream
// set was made and dropped for nearly every message.
type heldKey struct{ stream, id string }

// trackNew marks messages as held by this consumer and returns those that
// were not held already (a reclaim can return a message we still hold).
func (c *Consumer) trackNew(stream string, msgs []redis.XMessage) []redis.XMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, m := range msgs {
		if _, held := c.inflight[heldKey{stream, m.ID}]; held {
			// Rare (reclaims only): filter into a new slice.
			fresh := append([]redis.XMessage(nil), msgs[:i]...)
			for _, m := range msgs[i+1:] {
				if _, held := c.inflight[heldKey{stream, m.ID}]; !held {
					fresh = append(fresh, m)
				}
			}
			for _, m := range fresh {
				c.inflight[heldKey{stream, m.ID}] = struct{}{}
			}
			return fresh
		}
	}
	for _, m := range msgs {
		c.inflight[heldKey{stream, m.ID}] = struct{}{}
	}
	return msgs
}

// untrack forgets messages that were tracked but never dispatched.
func (c *Consumer) untrack(stream string, msgs []redis.XMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range msgs {
		delete(c.inflight, heldKey{stream, m.ID})
	}
}

// release forgets finished (or abandoned) messages and frees their slots.
func (c *Consumer) release(stream string, ids ...string) {
	c.mu.Lock()
	for _, id := range ids {
		delete(c.inflight, heldKey{stream, id})
	}
	c.mu.Unlock()
	for range ids {
		<-c.slots
	}
}

// keepAliveLoop resets the idle time of messages this consumer holds (queued
// or running), so a healthy but busy consumer is not robbed of them.
// XCLAIM ... JUSTID does not count as a delivery.
func (c *Consumer) keepAliveLoop(ctx context.Context) {
	periodic.Every(ctx, max(c.cfg.minIdle/3, 10*time.Millisecond), c.keepAlive)
}

// keepAlive resets the idle time of the messages held now.
func (c *Consumer) keepAlive(ctx context.Context) {
	c.mu.Lock()
	held := map[string][]string{}
	for k := range c.inflight {
		held[k.stream] = append(held[k.stream], k.id)
	}
	c.mu.Unlock()
	if len(held) == 0 {
		return
	}
	pipe := c.rdb.Pipeline()
	for s, ids := range held {
		pipe.XClaimJustID(ctx, &redis.XClaimArgs{Stream: s, Group: c.group, Consumer: c.name, MinIdle: 0, Messages: ids})
	}
	_, _ = pipe.Exec(ctx)
}
