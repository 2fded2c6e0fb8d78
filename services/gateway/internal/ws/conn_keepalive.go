package ws

import (
	"context"
	"errors"
	"time"

	"github.com/pulka/pulka/services/gateway/internal/hub"
	"github.com/pulka/pulka/services/gateway/internal/presence"
)

// startKeepalive pings the peer every PingInterval and keeps the presence
// entries alive. A runtime timer, not a goroutine: an idle connection holds
// no stack for it (a goroutine's stack was a third of an idle connection's
// memory, issue 24); each ping runs on the goroutine its timer starts.
//
// The chain holds one count of c.background from here until it ends,
// released exactly once under pingMu: by the connection's end when it
// stops a timer still waiting, or by the ping that finds the end (or fails).
func (c *conn) startKeepalive() {
	c.background.Add(1)
	c.pingMu.Lock()
	c.pinger = time.AfterFunc(c.s.cfg.PingInterval, c.ping)
	c.pingMu.Unlock()
	context.AfterFunc(c.ctx, func() {
		c.pingMu.Lock()
		stopped := c.pinger.Stop()
		c.pingMu.Unlock()
		if stopped {
			c.background.Done()
		}
	})
}

// ping checks the peer answers, refreshes the presence entries, and sets
// the next ping; the chain ends with the connection or a ping unanswered.
//
// A peer that sent a frame since the last ping was alive then, as a pong
// would show: it is not asked. A playing client sends every few seconds, so
// it is pinged only when it falls silent — one wake-up of the gateway and
// one of the client less per interval (issue 24: at 4,000 connections and a
// 20 s interval the pings were 5 % of the gateway's CPU). A peer that
// dies just after a frame is found by the ping one interval later, or by a
// write that cannot finish: at most two intervals and the timeout.
func (c *conn) ping() {
	var err error
	if !c.heard.Swap(false) {
		ctx, cancel := context.WithTimeout(c.ctx, c.s.cfg.PingTimeout)
		err = c.ws.Ping(ctx)
		cancel()
	}
	if err != nil && c.ctx.Err() == nil {
		c.fail(ClosePolicy, "no pong", false)
	}
	if err == nil {
		c.refreshPresence()
	}
	c.pingMu.Lock()
	defer c.pingMu.Unlock()
	if err != nil || c.ctx.Err() != nil {
		c.background.Done()
		return
	}
	c.pinger.Reset(c.s.cfg.PingInterval)
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
