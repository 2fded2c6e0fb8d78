package ws

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/apierr"
	"github.com/pulka/pulka/services/gateway/internal/ports"
)

// watchLobby starts or stops pushing the lobby list: a window of the
// newest listed tables that pass the client's filter.
func (c *conn) watchLobby(m *gatewayv1.WatchLobby) error {
	if c.lobbyStop != nil {
		c.lobbyStop()
		<-c.lobbyDone
		c.lobbyStop, c.lobbyDone = nil, nil
	}
	if !m.GetWatch() {
		return nil
	}
	if c.s.deps.Lobby == nil {
		return apierr.ErrUnavailable
	}
	filter := m.GetFilter() // checked by wire.Parse
	limit := c.s.cfg.LobbyWindow
	if l := m.GetLimit(); l > 0 && uint64(l) < uint64(limit) {
		limit = int(l)
	}
	// A watch sent again (a new filter, or a client looping on it) gets its
	// first whole view no sooner than an interval after the last one: one
	// window's worth per interval holds for watches too, not only for the
	// changes of one. A watch replaced before its view went out leaves the
	// slot to the next.
	var wait time.Duration
	if last := c.lobbyViewAt.Load(); last != 0 {
		wait = time.Until(time.Unix(0, last).Add(c.s.cfg.LobbyInterval))
	}
	ctx, cancel := context.WithCancel(c.ctx)
	c.lobbyStop, c.lobbyDone = cancel, make(chan struct{})
	go func(done chan struct{}) {
		defer close(done)
		if wait > 0 {
			t := time.NewTimer(wait)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
		c.lobbyLoop(ctx, c.s.deps.Lobby, filter, limit)
	}(c.lobbyDone)
	return nil
}

// lobbyLoop keeps a watcher's window of the list current. The window is
// the newest `limit` tables that pass filter; the client gets it whole
// (lobby_view), then, at most every LobbyInterval, the difference: an
// upsert for each table that entered the window or changed in it, a
// removal for each that left it. However many tables are listed or change,
// a watcher is sent at most one window's worth per interval (a difference
// larger than half the window is sent as a new lobby_view), so a flood of
// tables cannot fill its send queue.
//
// The frames of one watch are numbered without gaps from the version of
// its first lobby_view (clients check that no frame was lost); they are
// not the lobby's versions, which count changes outside the window too.
func (c *conn) lobbyLoop(ctx context.Context, v ports.LobbyView, filter *lobbyv1.TableFilter, limit int) {
	changed := v.Changed()
	version := v.Version()
	seq := version
	shown := map[string]*lobbyv1.TableSummary{}
	shownMore := false // the More of the client's window
	count := func(typ, reason string) {
		c.s.m.lobbyFrames.Add(ctx, 1, metric.WithAttributes(attribute.String("type", typ), attribute.String("reason", reason)))
	}
	sendView := func(reason string) bool {
		tables, more := v.Page(filter, 0, limit)
		clear(shown)
		for _, t := range tables {
			shown[t.GetTableId()] = t
		}
		shownMore = more
		if reason != "watch" {
			seq++
		}
		count(wire.TypeLobbyView, reason)
		c.lobbyViewAt.Store(time.Now().UnixNano())
		return c.send(wire.LobbyView(&lobbyv1.LobbyView{Version: seq, Tables: tables, More: more}))
	}
	if !sendView("watch") {
		return
	}
	pause := time.NewTimer(0)
	defer pause.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
		// Let the changes of one interval gather into one difference.
		pause.Reset(c.s.cfg.LobbyInterval)
		select {
		case <-ctx.Done():
			return
		case <-pause.C:
		}
		changed = v.Changed()
		_, now, complete := v.Since(version)
		version = now
		if !complete {
			if !sendView("resync") {
				return
			}
			continue
		}
		tables, more := v.Page(filter, 0, limit)
		if more != shownMore {
			// Only a lobby_view carries More: a window that gained or lost
			// tables beyond it is sent whole, or the client would keep
			// offering (or hiding) "more" after the last change.
			if !sendView("more") {
				return
			}
			continue
		}
		var updates []*lobbyv1.LobbyUpdate
		in := make(map[string]bool, len(tables))
		for _, t := range tables {
			in[t.GetTableId()] = true
			// The view replaces a summary on every change: a new pointer
			// is a changed table.
			if shown[t.GetTableId()] != t {
				updates = append(updates, &lobbyv1.LobbyUpdate{Change: &lobbyv1.LobbyUpdate_TableUpserted{TableUpserted: t}})
			}
		}
		for id := range shown {
			if !in[id] {
				updates = append(updates, &lobbyv1.LobbyUpdate{Change: &lobbyv1.LobbyUpdate_TableRemoved{TableRemoved: id}})
			}
		}
		if len(updates) > max(limit/2, 1) {
			if !sendView("batch") {
				return
			}
			continue
		}
		for _, u := range updates {
			seq++
			u.Version = seq
			switch ch := u.GetChange().(type) {
			case *lobbyv1.LobbyUpdate_TableUpserted:
				shown[ch.TableUpserted.GetTableId()] = ch.TableUpserted
			case *lobbyv1.LobbyUpdate_TableRemoved:
				delete(shown, ch.TableRemoved)
			}
			count(wire.TypeLobbyUpdate, "change")
			if !c.send(wire.LobbyUpdate(u)) {
				return
			}
		}
	}
}
