package ws

import (
	"context"
	"errors"
	"time"

	"github.com/pulka/pulka/services/gateway/internal/hub"
	"github.com/pulka/pulka/services/gateway/internal/presence"
)

// pingLoop checks the peer answers and keeps the presence entries alive.
func (c *conn) pingLoop() {
	t := time.NewTicker(c.s.cfg.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(c.ctx, c.s.cfg.PingTimeout)
		err := c.ws.Ping(ctx)
		cancel()
		if err != nil {
			c.fail(ClosePolicy, "no pong", false)
			return
		}
		c.refreshPresence()
	}
}

func (c *conn) refreshPresence() {
	if c.claims == nil {
		return
	}
	c.tablesMu.Lock()
	subs := make([]*hub.Subscription, 0, len(c.tables))
	for _, sub := range c.tables {
		subs = append(subs, sub)
	}
	c.tablesMu.Unlock()
	for _, sub := range subs {
		c.refreshAt(sub)
	}
}

// refreshAt keeps the connection's presence at sub's table alive, unless it
// stopped following the table meanwhile. Under presenceMu, an unjoin's
// Disconnect comes after this, never between the check and a Connect, so no
// entry outlives the subscription.
func (c *conn) refreshAt(sub *hub.Subscription) {
	c.presenceMu.Lock()
	defer c.presenceMu.Unlock()
	c.tablesMu.Lock()
	following := c.tables[sub.Table()] == sub
	c.tablesMu.Unlock()
	if !following || c.ctx.Err() != nil {
		return
	}
	err := c.s.deps.Presence.Refresh(c.ctx, sub.Table(), c.claims.PlayerID, c.id)
	switch {
	case errors.Is(err, presence.ErrNotPresent):
		// Swept while alive (this gateway stalled or lost Redis for longer
		// than its beats allow): the table may have been told the player
		// is away, so arrive again, which says back.
		c.arrived(c.ctx, sub)
	case err != nil:
		c.s.deps.Logger.Warn("ws: presence refresh failed", "table", sub.Table(), "err", err)
	}
}
