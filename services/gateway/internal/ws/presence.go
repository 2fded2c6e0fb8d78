package ws

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/services/gateway/internal/presence"
)

// deadAfterBeats is how many beats an instance may miss before the others
// take it for dead and sweep its connections.
const deadAfterBeats = 3

// KeepPresence beats for this gateway every PresenceBeat and sweeps the
// connections of gateways that stopped beating, telling their tables that
// the players left without a connection are away: a gateway killed with its
// connections open (SIGKILL, a lost node) said goodbye for none of them, so
// without the sweep no table would start their reconnect grace. It returns
// when ctx ends; if no connection is open by then (Shutdown closed them
// all, each saying goodbye), the gateway leaves, and nobody sweeps it.
//
// The beat has a goroutine of its own, so that a long sweep cannot make
// this gateway look dead. And a gateway sweeps only once its own beat has
// been current for a whole deadAfter: when Redis comes back from an outage,
// every gateway's beat has lapsed, and the first to reach Redis must not
// take all the others for dead before they had the time to beat. A failed
// beat followed by one in time does not reset that (Redis timing out now
// and then must not stop every sweep).
func (s *Server) KeepPresence(ctx context.Context) error {
	beat := s.cfg.PresenceBeat
	deadAfter := deadAfterBeats * beat
	var mu sync.Mutex
	// current since healthySince: every beat since came before the
	// previous one's lapsed; lastBeat is the last that succeeded.
	var healthySince, lastBeat time.Time
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(beat)
		defer t.Stop()
		for {
			err := s.deps.Presence.Beat(ctx, deadAfter)
			if err == nil {
				now := time.Now()
				mu.Lock()
				if lastBeat.IsZero() || now.Sub(lastBeat) >= deadAfter {
					healthySince = now // it had lapsed
				}
				lastBeat = now
				mu.Unlock()
			}
			if err != nil && ctx.Err() == nil {
				s.deps.Logger.Warn("ws: presence beat failed", "err", err)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	t := time.NewTicker(beat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			if s.Open() == 0 {
				s.leavePresence(ctx)
			}
			return nil
		case <-t.C:
		}
		mu.Lock()
		ready := !lastBeat.IsZero() && time.Since(lastBeat) < deadAfter && time.Since(healthySince) >= deadAfter
		mu.Unlock()
		if !ready {
			continue
		}
		n, err := s.deps.Presence.Sweep(ctx, deadAfter, func(g presence.Gone) error {
			return s.reportPresence(ctx, g.Table, g.Player, PresenceAway)
		})
		if n > 0 {
			s.deps.Logger.Info("ws: swept the connections of gateways that stopped", "connections", n)
			s.m.swept.Add(ctx, int64(n))
		}
		if err != nil && ctx.Err() == nil {
			s.deps.Logger.Warn("ws: presence sweep failed", "err", err)
		}
	}
}

// reportPresence tells the table's runner that player came back to table
// or went away (what: PresenceBack or PresenceAway), for a connection of
// theirs or for a sweep of a dead gateway's.
func (s *Server) reportPresence(ctx context.Context, table, player, what string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := s.deps.Publisher.Publish(ctx, streams.PresenceEntry(table, player, what == PresenceAway)); err != nil {
		return err
	}
	s.m.presence.Add(ctx, 1, metric.WithAttributes(attribute.String("presence", what)))
	return nil
}

// leavePresence takes this gateway out of the beating ones: with no
// connection open there is nothing to sweep.
func (s *Server) leavePresence(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	left, err := s.deps.Presence.Leave(ctx)
	switch {
	case err != nil:
		s.deps.Logger.Warn("ws: presence leave failed", "err", err)
	case !left:
		s.deps.Logger.Warn("ws: connections still listed after they closed; leaving them to be swept")
	}
}
