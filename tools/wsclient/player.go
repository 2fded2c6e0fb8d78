package wsclient

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/wire"
)

// ErrTooManyRejections is returned when the table refused the player's
// moves many times in a row: the model and the table disagree.
var ErrTooManyRejections = errors.New("wsclient: the table keeps refusing this player's moves")

// Player plays one seat of one table by itself over a Conn: it joins the
// table, folds every event into Model and, whenever the seat is to move,
// sends the move Choose picks. After a reconnect it waits for the table to
// be joined again and sends the same move again with the same key (the key
// is the seq of the last event seen, so a resent move is never applied
// twice).
type Player struct {
	Conn  *Conn
	Table string
	// Model is folded from the table's events; nil means a new one.
	Model *Model
	// Choose picks the move; nil means Model.Choose.
	Choose func(*Model) (Move, bool)
	// BeforeMove, when set, runs before each move is sent and may wait (a
	// paced load generator hands out send slots with it). It returns the
	// instant the move counts from (zero: now).
	BeforeMove func(ctx context.Context) (time.Time, error)
	// OnSend, when set, is told of each move just before it is sent: its
	// command id (the caused_by of its events) and the instant it counts
	// from. A move sent again (same key) is told again.
	OnSend func(cmdID string, m Move, at time.Time)
	// OnFrame, when set, sees every frame after the model has folded it.
	OnFrame func(Frame)
}

// maxRejectionsInARow bounds how often the table may refuse before the
// player gives up.
const maxRejectionsInARow = 8

// Run joins the table (from the connection's last event id of it) and plays
// until the game ends (nil), ctx ends, or the connection ends for good.
func (p *Player) Run(ctx context.Context) error {
	if p.Model == nil {
		p.Model = NewModel(p.Table, p.Conn.Player().ID)
	}
	m := p.Model
	choose := p.Choose
	if choose == nil {
		choose = (*Model).Choose
	}
	joinRef, err := p.Conn.Join(ctx, p.Table, p.Conn.LastEventID(p.Table))
	if err != nil {
		return err
	}
	joined := false
	sentAt := ^uint64(0) // the LastSeq at which the current move was sent
	rejections := 0
	var lastRejected string
	for {
		f, err := p.Conn.Next(ctx)
		if err != nil {
			return err
		}
		switch f.Type {
		case wire.TypeEvent:
			if f.Table != p.Table {
				break
			}
			before, seqBefore := m.Rejected, m.LastSeq
			m.Apply(f.Event)
			if sentAt == seqBefore && sentAt != ^uint64(0) && !turnEvent(f.Event) {
				// Nothing the move was chosen from changed (a seed taken,
				// a hand committed or revealed, a presence change): the
				// move sent is still the answer, and its echo is on the
				// way. Choosing again would send a second move.
				sentAt = m.LastSeq
			}
			if m.Rejected != before && f.Event.GetCausedBy() != "" {
				rejections++
				lastRejected = f.Event.GetMoveRejected().GetMessage()
				if rejections >= maxRejectionsInARow {
					return fmt.Errorf("%w: %s", ErrTooManyRejections, lastRejected)
				}
			} else if f.Event.GetCausedBy() == lastCmd(p.Conn, m, sentAt) {
				rejections = 0
			}
		case wire.TypeJoined:
			if f.Table == p.Table && (f.Ref == joinRef || !joined) {
				joined = true
			}
		case TypeReconnected:
			// The table is joined again by the connection; wait for it, then
			// resend whatever is still due (same key: applied once).
			joined, sentAt = false, ^uint64(0)
			joinRef = ""
		case wire.TypeError:
			switch {
			case f.Ref == joinRef:
				return fmt.Errorf("wsclient: join %s: %w", p.Table, f.Err)
			case IsCode(f.Err, wire.CodeRateLimited) && sentAt != ^uint64(0):
				// The gateway dropped the move (more frames per second than
				// it takes): wait for its bucket to refill a little, then
				// send the same move with the same key.
				if err := sleep(ctx, rateLimitPause); err != nil {
					return err
				}
				sentAt = ^uint64(0)
			}
		}
		if p.OnFrame != nil {
			p.OnFrame(f)
		}
		if m.Over {
			return nil
		}
		if !joined || !m.MyTurn() || sentAt == m.LastSeq {
			continue
		}
		mv, ok := choose(m)
		if !ok {
			continue
		}
		if rejections > 0 {
			// The chosen move was refused: try the others in turn.
			if legal := m.Legal(); len(legal) > 0 {
				mv = legal[rejections%len(legal)]
			}
		}
		at := time.Now()
		if p.BeforeMove != nil {
			if at, err = p.BeforeMove(ctx); err != nil {
				return err
			}
			if at.IsZero() {
				at = time.Now()
			}
		}
		sentAt = m.LastSeq
		if p.OnSend != nil {
			// Told before the frame is written: the events it causes may
			// reach another connection before Move returns.
			p.OnSend(wire.CommandID(p.Conn.Player().ID, moveKey(sentAt)), mv, at)
		}
		_, err = p.Conn.Move(ctx, p.Table, mv, moveKey(sentAt))
		if errors.Is(err, ErrDisconnected) {
			sentAt = ^uint64(0) // sent again once joined again
			continue
		}
		if err != nil {
			return err
		}
	}
}

// turnEvent reports whether ev may change whose turn it is or what may be
// played; the seeding and presence events never do.
func turnEvent(ev *tablev1.Event) bool {
	switch ev.GetEvent().(type) {
	case *tablev1.Event_ClientSeedAccepted, *tablev1.Event_HandCommitted, *tablev1.Event_HandRevealed,
		*tablev1.Event_PlayerAway, *tablev1.Event_PlayerBack:
		return ev.GetTimer() != nil
	}
	return true
}

// rateLimitPause is the wait after a rate_limited refusal: one token of the
// gateway's default bucket (20 frames/s) plus a margin.
const rateLimitPause = 60 * time.Millisecond

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// moveKey is the idempotency key of the move made after event seq.
func moveKey(seq uint64) string { return "s" + strconv.FormatUint(seq, 10) }

// lastCmd is the command id of the move sent at sentAt.
func lastCmd(c *Conn, _ *Model, sentAt uint64) string {
	if sentAt == ^uint64(0) {
		return ""
	}
	return wire.CommandID(c.Player().ID, moveKey(sentAt))
}
