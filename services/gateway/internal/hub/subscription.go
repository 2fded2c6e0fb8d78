package hub

import (
	"context"
	"errors"
	"fmt"

	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/visibility"
)

// Subscription is one connection following one table.
type Subscription struct {
	hub    *Hub
	feed   *feed
	player string
	sink   Sink

	// Guarded by feed.mu.
	pending  bool   // replay running: live events go to buf
	buf      []item // live events that arrived during the replay
	overflow bool   // buf hit the limit
	after    string // last event id the client has been given (or skipped)
	closed   bool
	// joinSeat is the player's seat as of joinAt, the last event the join's
	// replay folded. The replay reads the stream itself and may run ahead of
	// the feed: until the feed folds joinAt, its seats are older than what
	// this client was shown (a client answering a replayed HandCommitted
	// would be refused as seatless).
	joinSeat int
	joinAt   string
}

// Joined says how a join went.
type Joined struct {
	// Seat is the player's seat after the replay, or visibility.NoSeat.
	Seat int
	// Replayed counts the past events sent (those the player may see).
	Replayed int
	// Trimmed is true when the events after the client's last event id are
	// no longer in the stream: nothing was replayed, live events follow, and
	// the client must resynchronise from a view (ViewSynced).
	Trimmed bool
	// LastID is the last event id the client is now up to date with.
	LastID string
}

// Join makes sink follow table for player: first the events after lastID
// ("" for the table's whole history) that the player may see, then the live
// ones, with no gap and no duplicate at the seam. The sink gets frames only
// through Send; Join returns once the replay is queued.
func (h *Hub) Join(ctx context.Context, table, player, lastID string, sink Sink) (*Subscription, Joined, error) {
	if err := h.checkJoinable(ctx, table); err != nil {
		return nil, Joined{}, err
	}
	f, err := h.acquire(ctx, table)
	if err != nil {
		return nil, Joined{}, err
	}
	s := &Subscription{hub: h, feed: f, player: player, sink: sink, pending: true}
	start := lastID
	if start == "" {
		start = "0-0"
	}
	f.mu.Lock()
	f.subs[s] = struct{}{}
	// Start folding the seating from a position the feed has already seen,
	// so its checkpoints are complete up to there.
	from := start
	if streams.CompareIDs(from, f.pos) > 0 {
		from = f.pos
	}
	seats := f.seatsAt(from)
	f.mu.Unlock()

	res, err := h.replay(ctx, s, start, from, &seats)
	if err != nil {
		s.Close()
		return nil, Joined{}, err
	}
	h.sendLatestSheet(ctx, s)
	return s, res, nil
}

// sendLatestSheet gives a new watcher the table's current score sheet. A live
// update may overtake it; SheetUpdate.version tells the client which is newer.
func (h *Hub) sendLatestSheet(ctx context.Context, s *Subscription) {
	xs, err := h.rdb.XRevRangeN(ctx, s.feed.sheetStream, "+", "-", 1).Result()
	if err != nil || len(xs) == 0 {
		return
	}
	if frame, ok := h.sheetFrame(s.feed.table, xs[0].ID, xdata(xs[0])); ok {
		s.sink.Send(frame)
	}
}

// replay sends the events in (start, end of stream] — folding the seating
// from `from` ≤ start — then the live events held meanwhile, and switches
// the subscription to live delivery.
func (h *Hub) replay(ctx context.Context, s *Subscription, start, from string, seats *visibility.Seats) (Joined, error) {
	f := s.feed
	res := Joined{}
	after := from
	send := s.sink.Send
	if w, ok := s.sink.(WaitSink); ok {
		send = func(frame *wire.Frame) bool { return w.SendWait(ctx, frame) }
	}
	for {
		msgs, err := streams.ReadAfter(ctx, h.rdb, f.evStream, after, h.pageSize)
		if errors.Is(err, streams.ErrTrimmed) {
			return h.goLiveTrimmed(s)
		}
		if err != nil {
			return Joined{}, fmt.Errorf("hub: replay %s: %w", f.table, err)
		}
		for _, m := range msgs {
			after = m.ID
			it, ok := h.entry(f.table, m)
			if !ok {
				continue
			}
			seats.Apply(it.ev)
			if streams.CompareIDs(m.ID, start) <= 0 {
				continue // the client has it; folded only for the seating
			}
			frame := it.frameFor(visibility.Viewer{PlayerID: s.player, Seat: seats.SeatOf(s.player)})
			if frame == nil {
				continue
			}
			if !send(frame) {
				if ctx.Err() != nil {
					return Joined{}, ctx.Err()
				}
				h.slow.Add(ctx, 1)
				return Joined{}, ErrSlow
			}
			res.Replayed++
		}
		if int64(len(msgs)) < h.pageSize {
			break
		}
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	if s.overflow {
		h.slow.Add(ctx, 1)
		return Joined{}, ErrSlow
	}
	last := after
	if n := len(s.buf); n > 0 && streams.CompareIDs(s.buf[n-1].id, last) > 0 {
		last = s.buf[n-1].id
	}
	if streams.CompareIDs(last, start) < 0 {
		// Every id a client was sent is in the stream (appended before
		// anyone hears of it), so the replay reached it. Refused before
		// anything held is sent: the join leaves nothing behind.
		return Joined{}, fmt.Errorf("%w: %w", ErrAhead,
			wire.Errorf(wire.CodeInvalid, "last_event_id %s is past table %s's last event (%s)", start, f.table, last))
	}
	for _, it := range s.buf {
		if streams.CompareIDs(it.id, after) <= 0 {
			continue // the replay read it already
		}
		after = it.id
		seats.Apply(it.ev)
		if streams.CompareIDs(it.id, start) <= 0 {
			continue // the client has it; folded only for the seating
		}
		if frame := it.frameFor(visibility.Viewer{PlayerID: s.player, Seat: seats.SeatOf(s.player)}); frame != nil {
			if !s.sink.Send(frame) {
				h.slow.Add(ctx, 1)
				return Joined{}, ErrSlow
			}
			res.Replayed++
		}
	}
	s.buf, s.pending, s.after = nil, false, after
	res.Seat, res.LastID = seats.SeatOf(s.player), after
	s.joinSeat, s.joinAt = res.Seat, after
	return res, nil
}

// goLiveTrimmed starts live delivery from the feed's current position when
// the client's history is gone. Events held during the attempt are dropped
// too: the client resynchronises from a ViewSynced, which the table sends
// after the gateway's Reconnect, so it comes after this position.
func (h *Hub) goLiveTrimmed(s *Subscription) (Joined, error) {
	f := s.feed
	f.mu.Lock()
	defer f.mu.Unlock()
	s.buf, s.pending, s.after = nil, false, f.pos
	return Joined{Seat: f.seats.SeatOf(s.player), Trimmed: true, LastID: f.pos}, nil
}

// Seat is the seat the player holds now at the subscription's table, or
// visibility.NoSeat.
func (s *Subscription) Seat() int {
	s.feed.mu.Lock()
	defer s.feed.mu.Unlock()
	if s.feed.gone {
		return visibility.NoSeat
	}
	if s.joinAt != "" && streams.CompareIDs(s.feed.pos, s.joinAt) < 0 {
		return s.joinSeat
	}
	return s.feed.seats.SeatOf(s.player)
}

// Member reports whether the player has held a seat at the table at any
// point of its history (a bot may play it now): the table cares about such
// a player's presence, not about a watcher's.
func (s *Subscription) Member() bool {
	s.feed.mu.Lock()
	defer s.feed.mu.Unlock()
	if s.feed.gone {
		return false // a report would recreate the table's command stream
	}
	_, ok := s.feed.members[s.player]
	return ok
}

// Table is the table followed.
func (s *Subscription) Table() string { return s.feed.table }

// Close stops the subscription. It is safe to call more than once.
func (s *Subscription) Close() {
	f := s.feed
	f.mu.Lock()
	if s.closed {
		f.mu.Unlock()
		return
	}
	s.closed = true
	delete(f.subs, s)
	s.buf = nil
	f.mu.Unlock()
	s.hub.release(f)
}
