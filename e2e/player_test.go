package e2e

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/coder/websocket"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/cards"
	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/tools/wsclient"
)

// seatModel is what one player knows of a table: tools/wsclient's Model,
// folded only from the event frames this player received, whose legal
// moves follow the rules from that knowledge alone — the test of "legal
// moves chosen from what each client sees" (a rule the model got wrong, or
// a hidden card it would need, shows up as a MoveRejected). Around it, the
// bookkeeping of auto-play: the turn being answered and whether the join's
// replay is over.
type seatModel struct {
	m   *wsclient.Model
	rng cards.RNG
	// turnSeq is the seq of the last event that started a timer: a turn is answered
	// once, with the key "turn-<seq>", so a resend after a reconnect is
	// the same command (applied once by the table).
	turnSeq  uint64
	joined   bool
	answered map[uint64]bool
	// lead: the last move decided leads a trick.
	lead bool
	// script is the moves this seat makes next, in order, before it goes
	// back to random ones (see premiaPlan); offScript is set, and the
	// script dropped, when the table wants a move the script did not plan.
	script    []wsclient.Move
	offScript string
	// planner, when set, gives the script of each hand it plans when the
	// seat first moves in it (see premiaPlanner); scriptHand is that hand.
	planner    *premiaPlanner
	scriptHand int
}

// maxRandomBid is the highest bid random play makes (when it may): low
// bids, so that hands are made, missed and khishti'd alike.
const maxRandomBid = 3

func newSeatModel(table, player string, seed uint64) *seatModel {
	return &seatModel{m: wsclient.NewModel(table, player), rng: cards.NewRNG(seed, 7), answered: map[uint64]bool{}}
}

func (sm *seatModel) observe(ev *tablev1.Event) {
	sm.m.Apply(ev)
	if wire.TimerOf(ev) != nil {
		sm.turnSeq = ev.GetSeq()
	}
}

// decide returns this player's move when it is its turn, the join's replay
// is over and the turn has not been answered yet: the script's next move,
// or a random legal one (bids up to maxRandomBid).
func (sm *seatModel) decide() *gatewayv1.ClientFrame {
	if !sm.joined || !sm.m.MyTurn() || sm.answered[sm.turnSeq] {
		return nil
	}
	legal := sm.m.Legal()
	if len(legal) == 0 {
		return nil
	}
	sm.answered[sm.turnSeq] = true
	if sm.planner != nil && sm.scriptHand != sm.m.HandIndex+1 {
		sm.scriptHand = sm.m.HandIndex + 1
		sm.script = sm.planner.script(sm.m.MySeat, sm.m.HandIndex)
	}
	if mv, ok := sm.scripted(legal); ok {
		return sm.message(mv)
	}
	if sm.m.Phase == tablev1.Phase_PHASE_BID {
		var low []wsclient.Move
		for _, mv := range legal {
			if mv.Tricks <= maxRandomBid {
				low = append(low, mv)
			}
		}
		if len(low) > 0 {
			legal = low
		}
	}
	return sm.message(legal[sm.rng.IntN(len(legal))])
}

// scripted pops the script's next move if it is one of legal.
func (sm *seatModel) scripted(legal []wsclient.Move) (wsclient.Move, bool) {
	if len(sm.script) == 0 {
		return wsclient.Move{}, false
	}
	next := sm.script[0]
	for _, mv := range legal {
		if mv.String() == next.String() {
			sm.script = sm.script[1:]
			return mv, true
		}
	}
	sm.offScript = fmt.Sprintf("the script's next move %q is not legal at event %d (%d moves left unplayed)", next, sm.turnSeq, len(sm.script))
	sm.script = nil
	return wsclient.Move{}, false
}

// message is the command frame of the turn's move mv.
func (sm *seatModel) message(mv wsclient.Move) *gatewayv1.ClientFrame {
	sm.lead = mv.Kind == wsclient.MovePlay && len(sm.m.Trick) == 0
	tc, err := wsclient.MoveCommand(sm.m.TableID, mv)
	if err != nil {
		return nil
	}
	tc.Cmd = "turn-" + strconv.FormatUint(sm.turnSeq, 10)
	return &gatewayv1.ClientFrame{Frame: &gatewayv1.ClientFrame_Command{Command: tc}}
}

// seen is a snapshot of what a player knows, for tests that pick moves by
// hand.
type seen struct {
	seat   int
	hand   cards.Set
	faceUp cards.Set // Japanese: the player's face-up column cards
	legal  cards.Set // the cards it may play now
}

// model returns what the client's player knows of table now.
func (c *client) model(table string) seen {
	c.mu.Lock()
	defer c.mu.Unlock()
	sm := c.models[table]
	if sm == nil {
		return seen{seat: -1}
	}
	v := seen{seat: sm.m.MySeat, hand: sm.m.Hand, legal: sm.m.Playable()}
	if sm.m.MySeat >= 0 && sm.m.MySeat < len(sm.m.Columns) {
		for _, card := range sm.m.Columns[sm.m.MySeat] {
			if card.Valid() {
				v.faceUp = v.faceUp.With(card)
			}
		}
	}
	return v
}

func (c *client) seatModel(table string) *seatModel {
	sm := c.models[table]
	if sm == nil {
		seed := uint64(len(c.name))*7919 + uint64(c.name[len(c.name)-1])
		sm = newSeatModel(table, c.ses.Player.ID, seed)
		c.models[table] = sm
	}
	return sm
}

// observe feeds an event frame to the table's model; c.mu is held. A move
// the model decides on is written by the caller after the lock is released.
func (c *client) observe(wc *wsConn, f *frame) *gatewayv1.ClientFrame {
	sm := c.seatModel(f.Table)
	sm.observe(f.ev)
	if !c.auto[f.Table] || c.cur != wc {
		return nil
	}
	return sm.decide()
}

// wake marks table joined on the connection and returns a pending move;
// c.mu is held.
func (c *client) wake(wc *wsConn, table string) *gatewayv1.ClientFrame {
	sm := c.seatModel(table)
	sm.joined = c.cur == wc
	if !c.auto[table] || !sm.joined {
		return nil
	}
	return sm.decide()
}

// autoPlay turns auto-play on or off for table; turning it on answers a
// turn that is already pending.
func (c *client) autoPlay(table string, on bool) {
	c.mu.Lock()
	c.auto[table] = on
	var msg *gatewayv1.ClientFrame
	wc := c.cur
	if on && wc != nil {
		if sm := c.models[table]; sm != nil && sm.joined {
			msg = sm.decide()
		}
	}
	c.mu.Unlock()
	c.write(context.Background(), wc, msg)
}

// write sends a move decided by the model (from the reader goroutine, so
// failures are reported with Errorf: Fatal may only stop the test's own
// goroutine).
func (c *client) write(ctx context.Context, wc *wsConn, msg *gatewayv1.ClientFrame) {
	if msg == nil || wc == nil {
		return
	}
	b, err := proto.Marshal(msg)
	if err != nil {
		c.t.Errorf("%s: %v", c.name, err)
		return
	}
	tc := msg.GetCommand()
	c.mu.Lock()
	c.sent = append(c.sent, sentCommand{Table: tc.GetTable(), Key: tc.GetCmd(), Move: prototext.Format(tc), Lead: c.seatModel(tc.GetTable()).lead})
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := wc.ws.Write(ctx, websocket.MessageBinary, b); err != nil {
		// The connection may be closing under a test's disconnect: the
		// move is then simply not sent, as with a real client.
		c.mu.Lock()
		gone := c.cur != wc
		c.mu.Unlock()
		if !gone {
			c.t.Errorf("%s: write a move: %v", c.name, err)
		}
	}
}

// commandsSent returns the full command ids (player/key) of the moves the
// client sent to table.
func (c *client) commandsSent(table string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, s := range c.sent {
		if s.Table == table {
			out = append(out, wire.CommandID(c.ses.Player.ID, s.Key))
		}
	}
	return out
}
