package ws

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/hub"
	"github.com/pulka/pulka/services/gateway/internal/visibility"
)

// join follows a table, replaying what the client missed.
func (c *conn) join(ref string, m *gatewayv1.Join) error {
	table, lastEventID := m.GetTable(), m.GetLastEventId()
	c.tablesMu.Lock()
	old, rejoin := c.tables[table]
	delete(c.tables, table)
	n := len(c.tables)
	c.tablesMu.Unlock()
	wasMember := false
	if rejoin {
		// A second join resumes afresh: drop the old subscription first so
		// that no event is delivered twice. The connection's presence at
		// the table stays (it still follows the table).
		wasMember = old.Member()
		old.Close()
	} else if n >= c.s.cfg.MaxTables {
		return wire.Errorf(wire.CodeTooMany, "at most %d tables per connection", c.s.cfg.MaxTables)
	}
	ctx, span := c.s.deps.Tracer.Start(c.ctx, "ws join", trace.WithAttributes(attribute.String("table", table)))
	defer span.End()
	// A made-up table id gets nothing: no feed, no presence entry, no
	// reconnect command (each would be a Redis key nobody reads).
	if !rejoin {
		if err := c.s.tables.check(ctx, table); err != nil {
			return err
		}
	}
	pid := c.claims.PlayerID
	sub, res, err := c.s.deps.Hub.Join(ctx, table, pid, lastEventID, c)
	if err != nil && rejoin {
		c.gone(table, wasMember)
	}
	if errors.Is(err, hub.ErrSlow) {
		c.fail(CloseSlowConsumer, closeReasonSlow, false)
		return nil
	}
	if err != nil {
		if c.ctx.Err() != nil {
			return nil
		}
		return err
	}
	// presenceMu from before the subscription is listed until its presence
	// is recorded: the pinger's refresh must not find it in between (and
	// record it twice).
	c.presenceMu.Lock()
	c.tablesMu.Lock()
	c.tables[table] = sub
	c.tablesMu.Unlock()
	if !rejoin {
		c.arrived(ctx, sub)
	}
	c.presenceMu.Unlock()
	var seat *uint32
	if res.Seat != visibility.NoSeat {
		v := uint32(res.Seat)
		seat = &v
	}
	// When the history the client needed is gone, the table resynchronises
	// it: it answers a Reconnect with a ViewSynced for the player.
	if res.Trimmed {
		cmd := wire.ReconnectCommand(table, pid, wire.CommandID(pid, "reconnect-"+randomID()), lastEventID)
		if _, err := c.publish(ctx, cmd); err != nil {
			c.s.deps.Logger.Warn("ws: reconnect command failed", "table", table, "err", err)
		}
	}
	// Last, so that a client told it joined is also counted as present.
	c.send(wire.Joined(table, ref, seat, res.Replayed, res.Trimmed))
	return nil
}

// arrived records the connection's presence at the subscription's table.
func (c *conn) arrived(ctx context.Context, sub *hub.Subscription) {
	first, err := c.s.deps.Presence.Connect(ctx, sub.Table(), c.claims.PlayerID, c.id)
	if err != nil {
		c.s.deps.Logger.Warn("ws: presence connect failed", "table", sub.Table(), "err", err)
	}
	// A player of the table whose first connection arrives is back: that
	// ends their reconnect grace (or gives back a seat a bot took when it
	// ran out).
	if first && sub.Member() {
		if c.s.away.back(sub.Table(), c.claims.PlayerID) {
			c.s.m.awayLimited.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", "cancelled")))
		}
		c.reportPresence(ctx, sub.Table(), PresenceBack)
	}
}

// reportPresence tells the table-runner that this player came back to the
// table or went away (streams.PresenceEntry is the format both sides share).
func (c *conn) reportPresence(ctx context.Context, table, what string) {
	if err := c.s.reportPresence(ctx, table, c.claims.PlayerID, what); err != nil {
		c.s.deps.Logger.Warn("ws: presence report failed", "table", table, "presence", what, "err", err)
	}
}

// PresenceAway and PresenceBack name a presence report in logs and metrics.
const (
	PresenceAway = "away"
	PresenceBack = "back"
)

// unjoin stops following a table and reports presence.
func (c *conn) unjoin(table string) bool {
	c.tablesMu.Lock()
	sub, ok := c.tables[table]
	delete(c.tables, table)
	c.tablesMu.Unlock()
	if !ok {
		return false
	}
	member := sub.Member()
	sub.Close()
	c.gone(table, member)
	return true
}

// gone removes the connection's presence at table; member says whether the
// player has held a seat there.
func (c *conn) gone(table string, member bool) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), 5*time.Second)
	defer cancel()
	c.presenceMu.Lock()
	defer c.presenceMu.Unlock()
	last, err := c.s.deps.Presence.Disconnect(ctx, table, c.claims.PlayerID, c.id)
	if err != nil {
		c.s.deps.Logger.Warn("ws: presence disconnect failed", "table", table, "err", err)
	}
	if last && member {
		// The table starts the player's reconnect grace — at once, unless
		// they keep leaving it (awayLimit).
		if out := c.s.away.away(ctx, table, c.claims.PlayerID); out != awaySent {
			c.s.m.awayLimited.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", out)))
		}
	}
}
