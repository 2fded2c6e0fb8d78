package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/periodic"
	"github.com/pulka/pulka/services/lobby/internal/domain"
	"github.com/pulka/pulka/services/lobby/internal/store"
)

// sweepBatch bounds the tables one sweep looks at; the next sweep takes
// the rest.
const sweepBatch = 256

// sweepLoop closes idle waiting tables every SweepInterval until ctx ends.
// Every replica sweeps: the revision check of the commit makes two replicas
// expiring one table close it once.
func (s *Service) sweepLoop(ctx context.Context) {
	periodic.Every(ctx, s.opt.Limits.SweepInterval, func(ctx context.Context) {
		if _, err := s.SweepIdle(ctx); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "lobby: sweeping idle tables failed", "err", err)
		}
	})
}

// SweepIdle closes the waiting tables whose idle deadline passed and
// returns how many it closed. Each leaves the list (watchers get a
// table_removed) and stops counting against its players' waiting tables.
func (s *Service) SweepIdle(ctx context.Context) (int, error) {
	now := s.opt.Now()
	ids, err := s.store.DueIdle(ctx, now, sweepBatch)
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, id := range ids {
		closed, err := s.expire(ctx, id, now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if closed {
			n++
		}
	}
	if n > 0 {
		s.m.expired.Add(ctx, int64(n))
		s.log.InfoContext(ctx, "lobby: closed idle waiting tables", "count", n)
	}
	return n, errors.Join(errs...)
}

// expire closes one table if it is still waiting and still idle past its
// deadline; a change since then (a newer revision) leaves it open.
func (s *Service) expire(ctx context.Context, id string, now time.Time) (bool, error) {
	t, rev, err := s.store.Load(ctx, id)
	if errors.Is(err, domain.ErrTableNotFound) {
		return false, s.store.DropIdle(ctx, id)
	}
	if err != nil {
		return false, err
	}
	// Read after the load: a change between the two shows a later
	// deadline here; one after it fails the commit's revision check.
	deadline, ok, err := s.store.IdleDeadline(ctx, id)
	if err != nil || !ok || deadline.After(now) {
		return false, err
	}
	before := t.Summary()
	if t.Expire() != nil {
		return false, s.store.DropIdle(ctx, id) // not waiting: a stale entry
	}
	cmd := &lobbyv1.LobbyCommand{CommandId: fmt.Sprintf("lobby/expire/%s/%d", id, rev)}
	ch, err := s.change(ctx, cmd, before, rev, t, nil)
	if err != nil {
		return false, err
	}
	done, err := s.store.Commit(ctx, ch)
	if errors.Is(err, store.ErrConflict) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if t.Settings.Coins() {
		// Every stake held at the table goes back (sent again by a replica
		// that closed it too: the wallet applies it once).
		s.closeTable(ctx, id)
	}
	// A duplicate: another replica closed it first, with the same id.
	return done.Duplicate == nil, nil
}

// publishSummaries fills in the summary read model of tables written before
// the lobby kept it (store.PublishSummaries), retrying until it succeeds
// once or ctx ends.
func (s *Service) publishSummaries(ctx context.Context) {
	for wait := time.Second; ; wait = min(2*wait, time.Minute) {
		n, err := s.store.PublishSummaries(ctx)
		if err == nil {
			if n > 0 {
				s.log.InfoContext(ctx, "lobby: published the summaries of older tables", "count", n)
			}
			return
		}
		if ctx.Err() != nil {
			return
		}
		s.log.WarnContext(ctx, "lobby: publishing the summaries of older tables failed", "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
