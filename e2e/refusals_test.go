package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/cards/cardpb"

	runnerv1 "github.com/pulka/pulka/pkg/gen/pulka/runner/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/wire"
)

// isMove accepts the events that are moves of the game.
func isMove(ev *tablev1.Event) bool {
	return ev.GetCardPlayed() != nil || ev.GetBidMade() != nil || ev.GetTrumpChosen() != nil
}

func moveSeat(ev *tablev1.Event) uint32 {
	switch {
	case ev.GetCardPlayed() != nil:
		return ev.GetCardPlayed().GetSeat()
	case ev.GetBidMade() != nil:
		return ev.GetBidMade().GetSeat()
	}
	return ev.GetTrumpChosen().GetSeat()
}

func byServer(ev *tablev1.Event) bool {
	return ev.GetCardPlayed().GetByServer() || ev.GetBidMade().GetByServer() || ev.GetTrumpChosen().GetByServer()
}

// TestTimer_ExpiryMakesExactlyOneServerMove: at a Japanese table whose
// players do not move, each move timer (the runner's 1.5 s) that runs out
// makes exactly one server move for the seat it was started for, no
// earlier than its deadline and from a logged tick; nothing moves for a
// seat whose timer has not run out. The declarer then resigns and the
// record (with the resignation) replays to the sheet the players got.
func TestTimer_ExpiryMakesExactlyOneServerMove(t *testing.T) {
	t.Parallel()
	s := shared
	var tableID string
	s.dumpOnFailure(t, &tableID)
	clients := seatPlayers(t, s, tableSpec{japanese: true, name: "e2e timer"}, []session{s.guest(t), s.guest(t)}, &tableID)
	var log []logEntry
	eventually(t, 4*moveTimeout+5*time.Second, "two timer expiries", func() bool {
		log = mustReadLog(t, s.Redis(), tableID)
		n := 0
		for _, e := range log {
			if isMove(e.Ev) {
				n++
			}
		}
		return n >= 2
	})
	// Stop the table: the declarer resigns (any seat may, whoever's turn).
	c := clients[0]
	c.send(map[string]any{"type": "resign", "table": tableID, "cmd": "resign"})
	for _, c := range clients {
		c.awaitEvent(0, 10*time.Second, tableID, "the end of the match", gameEnded)
	}
	log = mustReadLog(t, s.Redis(), tableID)

	var timer *tablev1.TimerStarted
	expired := 0
	for _, e := range log {
		// A move may carry the next timer (Event.timer): the move is
		// checked against the timer before it, then the new one runs.
		next := wire.TimerOf(e.Ev)
		if !isMove(e.Ev) {
			if next != nil {
				timer = next
			}
			continue
		}
		if timer == nil {
			t.Fatalf("a move without a running timer (a second move for one expiry?): %s", describe(e.ID, e.Ev))
		}
		deadline := timer.GetDeadline().AsTime()
		switch {
		case !byServer(e.Ev):
			t.Errorf("a player moved although no player sent a move: %s", describe(e.ID, e.Ev))
		case moveSeat(e.Ev) != timer.GetSeat():
			t.Errorf("the server moved for seat %d, the timer ran for seat %d: %s", moveSeat(e.Ev), timer.GetSeat(), describe(e.ID, e.Ev))
		case e.Ev.GetOccurredAt().AsTime().Before(deadline):
			t.Errorf("the server moved at %v, before the deadline %v", e.Ev.GetOccurredAt().AsTime(), deadline)
		}
		// The move opens its step, and that step is a tick at or after the
		// deadline (the runner's clock, logged).
		if e.Input == nil || e.Input.GetKind() != runnerv1.InputKind_INPUT_KIND_TICK {
			t.Errorf("the timer move is not a logged tick step: %s", describe(e.ID, e.Ev))
		} else if at := e.Input.GetAt().AsTime(); at.Before(deadline) {
			t.Errorf("the tick at %v is before the deadline %v", at, deadline)
		}
		if late := e.Ev.GetOccurredAt().AsTime().Sub(deadline); late > time.Second {
			t.Logf("the server moved %v after the deadline (a loaded machine?)", late)
		}
		expired++
		timer = next // exactly one move per expiry: a second one finds no timer, or the next seat's
	}
	if expired < 2 {
		t.Errorf("%d server moves, want at least 2", expired)
	}
	end := log[len(log)-1].Ev
	if g := end.GetGameEnded(); g == nil || g.GetReason() != tablev1.GameEndReason_GAME_END_REASON_RESIGNED {
		t.Errorf("the match did not end with the resignation: %s", describe(log[len(log)-1].ID, end))
	}
	g := verifyGame(t, s, tableID, clients)
	if g.res.Winner != 1 {
		t.Errorf("the replay's winner is seat %d, want 1 (seat 0 resigned)", g.res.Winner)
	}
}

// playOf is a play frame for one card of set, a plain card when there is
// one (a joker needs a declaration; "take" fits any follow).
func playOf(set cards.Set) map[string]any {
	if plain := set &^ set.Jokers(); plain != 0 {
		return map[string]any{"type": "play", "card": plain.Cards()[0].String()}
	}
	return map[string]any{"type": "play", "card": set.Cards()[0].String(), "joker": map[string]string{"action": "take"}}
}

// refusal is a command a test expects the table to refuse.
type refusal struct {
	name    string
	from    *client
	msg     map[string]any
	reasons []tablev1.RejectReason
}

// expectRefused sends a table command and checks that the table answers it
// with a MoveRejected addressed to the sender only, carrying one of the
// reasons and a message, outside the history (no id, seq 0), and that the
// log did not grow (the table is unchanged; refusals are not logged).
func expectRefused(t *testing.T, s *stack, tableID string, r refusal) {
	t.Helper()
	ctx := context.Background()
	before, err := s.Redis().XLen(ctx, streams.TableEvents(tableID)).Result()
	if err != nil {
		t.Fatal(err)
	}
	from := r.from.len()
	key := "refuse-" + strings.ReplaceAll(r.name, " ", "-")
	r.msg["cmd"], r.msg["ref"], r.msg["table"] = key, key, tableID
	r.from.send(r.msg)
	ack := r.from.await(from, 10*time.Second, "the ack of "+r.name, func(f *frame) bool {
		return (f.Type == "ack" || f.Type == "error") && f.Ref == key
	})
	if ack.Type != "ack" {
		t.Fatalf("%s: the gateway refused the frame: %s", r.name, ack)
	}
	f := r.from.awaitEvent(from, 10*time.Second, tableID, "the rejection of "+r.name, func(ev *tablev1.Event) bool {
		return ev.GetCausedBy() == ack.Cmd
	})
	rej := f.ev.GetMoveRejected()
	if rej == nil {
		t.Fatalf("%s: the table did not refuse it: %s", r.name, f)
	}
	ok := false
	for _, want := range r.reasons {
		ok = ok || rej.GetReason() == want
	}
	if !ok || rej.GetMessage() == "" {
		t.Errorf("%s: refused with %v %q, want one of %v with a message", r.name, rej.GetReason(), rej.GetMessage(), r.reasons)
	}
	vis := f.ev.GetVisibility()
	if vis.GetAudience() == tablev1.Audience_AUDIENCE_PUBLIC {
		t.Errorf("%s: the rejection is public", r.name)
	}
	if f.ID != "" || f.ev.GetSeq() != 0 {
		t.Errorf("%s: the rejection came as history (id %q, seq %d)", r.name, f.ID, f.ev.GetSeq())
	}
	if after, _ := s.Redis().XLen(ctx, streams.TableEvents(tableID)).Result(); after != before {
		t.Errorf("%s: the log grew from %d to %d entries; a refusal is not logged", r.name, before, after)
	}
}

// expectFrameError sends raw bytes and checks the gateway answers with an
// error frame of code and queues nothing at the table.
func expectFrameError(t *testing.T, s *stack, tableID string, c *client, raw []byte, code string) {
	t.Helper()
	ctx := context.Background()
	cmdBefore, _ := s.Redis().XLen(ctx, streams.TableCommands(tableID)).Result()
	evBefore, _ := s.Redis().XLen(ctx, streams.TableEvents(tableID)).Result()
	from := c.len()
	c.sendRaw(raw)
	f := c.errorFrame(from, "")
	if f.Code != code || f.Message == "" {
		t.Errorf("frame %.60q: error %q %q, want %q with a message", raw, f.Code, f.Message, code)
	}
	// A ping after it: the connection lives, and by its pong the frame was
	// handled.
	c.send(map[string]any{"type": "ping", "ref": "after-" + code})
	c.await(from, 10*time.Second, "pong", func(f *frame) bool { return f.Type == "pong" && f.Ref == "after-"+code })
	cmdAfter, _ := s.Redis().XLen(ctx, streams.TableCommands(tableID)).Result()
	evAfter, _ := s.Redis().XLen(ctx, streams.TableEvents(tableID)).Result()
	if cmdAfter != cmdBefore || evAfter != evBefore {
		t.Errorf("frame %.60q changed the table's streams: commands %d → %d, events %d → %d", raw, cmdBefore, cmdAfter, evBefore, evAfter)
	}
}

// TestRefusals_ChangeNothingButAPrivateRejection plays the start of a
// Japanese hand by hand: out-of-turn, wrong-phase, not-held, first card
// from a column and (when the hand allows one) a follow-rule breach are
// each refused with a reason, privately, and change nothing; a command
// sent again with the same idempotency key is applied once; malformed,
// unknown, invalid and oversized frames and commands for a table not
// joined get a clear error and reach no stream; a frame past the hard
// limit closes the connection with 1009. Everything the two players saw
// passes the hidden-information checks, and the log, which holds no rejection,
// replays purely.
func TestRefusals_ChangeNothingButAPrivateRejection(t *testing.T) {
	t.Parallel()
	s := shared
	var tableID string
	s.dumpOnFailure(t, &tableID)
	clients := seatPlayers(t, s, tableSpec{japanese: true, moveTime: time.Minute, name: "e2e refusals"}, []session{s.guest(t), s.guest(t)}, &tableID)
	hs := clients[0].awaitEvent(0, 15*time.Second, tableID, "the first hand", func(ev *tablev1.Event) bool { return ev.GetHandStarted() != nil })
	declarer := int(hs.ev.GetHandStarted().GetDealerSeat())
	d, o := clients[declarer], clients[1-declarer]
	d.awaitEvent(0, 10*time.Second, tableID, "the declarer's timer", func(ev *tablev1.Event) bool { return wire.TimerOf(ev) != nil })

	expectRefused(t, s, tableID, refusal{name: "trump out of turn", from: o,
		msg: map[string]any{"type": "trump", "suit": "H"}, reasons: []tablev1.RejectReason{tablev1.RejectReason_REJECT_REASON_NOT_YOUR_TURN}})
	dm := d.model(tableID)
	expectRefused(t, s, tableID, refusal{name: "card before trump", from: d,
		msg: playOf(dm.hand), reasons: []tablev1.RejectReason{tablev1.RejectReason_REJECT_REASON_WRONG_PHASE}})
	expectRefused(t, s, tableID, refusal{name: "bid in Japanese", from: d,
		msg: map[string]any{"type": "bid", "tricks": 2}, reasons: []tablev1.RejectReason{tablev1.RejectReason_REJECT_REASON_WRONG_PHASE}})

	// The same command twice: applied once.
	ctx := context.Background()
	from := d.len()
	trump := map[string]any{"type": "trump", "table": tableID, "suit": "S", "cmd": "trump-once"}
	d.send(trump)
	d.awaitEvent(from, 10*time.Second, tableID, "trump chosen", func(ev *tablev1.Event) bool { return ev.GetTrumpChosen() != nil })
	// Wait for the declarer's next timer: the step (trump, the rest of the
	// deal, the timer) is complete in the log.
	d.awaitEvent(from, 10*time.Second, tableID, "the timer after trump", func(ev *tablev1.Event) bool { return wire.TimerOf(ev) != nil })
	afterTrump, _ := s.Redis().XLen(ctx, streams.TableEvents(tableID)).Result()
	from = d.len()
	d.send(trump)
	ack := d.await(from, 10*time.Second, "the ack of the repeat", func(f *frame) bool { return f.Type == "ack" })
	if !strings.HasSuffix(ack.Cmd, "/trump-once") {
		t.Errorf("the repeat was acked as %q", ack.Cmd)
	}
	// A refused command after it in the same stream: when its rejection
	// arrives the table has read the repeat too.
	expectRefused(t, s, tableID, refusal{name: "play out of turn", from: o,
		msg:     playOf(o.model(tableID).hand),
		reasons: []tablev1.RejectReason{tablev1.RejectReason_REJECT_REASON_NOT_YOUR_TURN}})
	if n, _ := s.Redis().XLen(ctx, streams.TableEvents(tableID)).Result(); n != afterTrump {
		t.Errorf("the repeated command changed the log: %d entries after the trump, %d now (a rejection is not logged)", afterTrump, n)
	}
	if steps := commandSteps(mustReadLog(t, s.Redis(), tableID)); steps[ack.Cmd] != 1 {
		t.Errorf("command %s applied %d times, want once", ack.Cmd, steps[ack.Cmd])
	}

	dm = d.model(tableID)
	expectRefused(t, s, tableID, refusal{name: "card not held", from: d,
		msg: map[string]any{"type": "play", "card": unusedCard(dm).String()}, reasons: []tablev1.RejectReason{tablev1.RejectReason_REJECT_REASON_CARD_NOT_AVAILABLE}})
	// The declarer leads a legal card that is not a joker — one of a suit
	// the follower holds along with other suits when there is one (the
	// test sees both hands), so that the follow rule can be broken.
	leads := (dm.legal &^ dm.hand.Jokers()).Cards()
	lead := leads[0]
	fh := o.model(tableID).hand &^ cards.Jokers
	for _, c := range leads {
		if fh.OfSuit(c.Suit()) != 0 && fh&^cards.SuitMask(c.Suit()) != 0 {
			lead = c
			break
		}
	}
	d.send(map[string]any{"type": "play", "table": tableID, "card": lead.String(), "cmd": "lead"})
	o.awaitEvent(0, 10*time.Second, tableID, "the lead", func(ev *tablev1.Event) bool {
		return ev.GetCardPlayed() != nil && cardpb.FromCard(ev.GetCardPlayed().GetCard()) == lead
	})
	o.awaitEvent(0, 10*time.Second, tableID, "the follower's timer", func(ev *tablev1.Event) bool {
		ts := wire.TimerOf(ev)
		return ts != nil && int(ts.GetSeat()) == 1-declarer && ts.GetPhase() == tablev1.Phase_PHASE_PLAY
	})
	om := o.model(tableID)
	if om.faceUp == 0 {
		t.Fatal("the follower has no face-up column card")
	}
	expectRefused(t, s, tableID, refusal{name: "first card from a column", from: o,
		msg: playOf(om.faceUp), reasons: []tablev1.RejectReason{tablev1.RejectReason_REJECT_REASON_FIRST_CARD_FROM_HAND}})
	if bad := (om.hand &^ om.legal &^ om.hand.Jokers()).Cards(); len(bad) > 0 {
		expectRefused(t, s, tableID, refusal{name: "follow rule", from: o,
			msg: map[string]any{"type": "play", "card": bad[0].String()},
			reasons: []tablev1.RejectReason{tablev1.RejectReason_REJECT_REASON_MUST_FOLLOW_SUIT,
				tablev1.RejectReason_REJECT_REASON_MUST_TRUMP, tablev1.RejectReason_REJECT_REASON_MUST_PLAY_HIGHEST}})
	} else {
		t.Logf("every card of the follower's hand is legal on %v: no follow-rule refusal to try", lead)
	}

	// Frames the gateway refuses before anything reaches a stream.
	big := fmt.Sprintf(`{"ping":{},"pad":"%s"}`, strings.Repeat("x", 5000))
	for _, fe := range []struct {
		raw  string
		code string
	}{
		{`{not json`, "bad_json"},
		{`{"fly":{}}`, "unknown_type"},
		{`{"command":{"table":"` + tableID + `","bid":{"tricks":10}}}`, "invalid_message"},
		{`{"command":{"table":"` + tableID + `","play":{"card":99}}}`, "invalid_card"},
		{`{"command":{"table":"` + tableID + `","play":{"card":"CARD_JOKER_1"}}}`, "invalid_joker"},
		{`{"command":{"table":"` + tableID + `","trump":{}}}`, "invalid_suit"},
		{`{"command":{"table":"aaaaaaaaaaaaaaaaaaaaaaaaaa","play":{"card":"CARD_ACE_OF_SPADES"}}}`, "not_joined"},
		{big, "too_big"},
	} {
		expectFrameError(t, s, tableID, o, []byte(fe.raw), fe.code)
	}

	// Past the hard limit (16 × the 4 KiB limit) the connection is closed
	// with 1009; a watcher's connection is used, not a player's.
	w := s.newClient(t, "refusals-watcher", s.guest(t))
	w.connect()
	w.join(tableID, "")
	w.sendRaw([]byte(fmt.Sprintf(`{"ping":{},"pad":"%s"}`, strings.Repeat("x", 70_000))))
	eventually(t, 10*time.Second, "the oversized frame to close the connection", func() bool {
		closed, _ := w.isClosed()
		return closed
	})
	if _, err := w.isClosed(); closeStatus(err) != websocket.StatusMessageTooBig {
		t.Errorf("closed with %v, want 1009", err)
	}

	// The follower now plays a legal card; then the declarer resigns to end
	// the match, and the whole log is checked.
	om = o.model(tableID)
	follow := playOf(om.legal)
	follow["table"], follow["cmd"] = tableID, "follow"
	o.send(follow)
	o.awaitEvent(0, 10*time.Second, tableID, "the follower's card", func(ev *tablev1.Event) bool {
		return ev.GetCardPlayed() != nil && int(ev.GetCardPlayed().GetSeat()) == 1-declarer
	})
	d.send(map[string]any{"type": "resign", "table": tableID, "cmd": "resign"})
	for _, c := range clients {
		c.awaitEvent(0, 10*time.Second, tableID, "the end of the match", gameEnded)
	}
	g := verifyGame(t, s, tableID, append(clients, w))
	if n := len(rejections(g.log)); n != 0 {
		t.Errorf("%d rejections in the log; refusals are not logged", n)
	}
}

// TestPassword_WrongTablePasswordIsRefused: a table with a password refuses
// a seat without it or with a wrong one (403 wrong_password, the seat stays
// free), and gives it with the right one.
func TestPassword_WrongTablePasswordIsRefused(t *testing.T) {
	t.Parallel()
	s := shared
	host, guest := s.guest(t), s.guest(t)
	tableID := s.createTable(t, host, tableSpec{password: "open sesame", name: "e2e password"})
	seatFree := func() bool {
		for _, seat := range s.tableSummary(t, guest.Token, tableID).GetSeats() {
			if seat.GetIndex() == 1 {
				return seat.GetPlayerId() == ""
			}
		}
		return true
	}
	path := "/api/v1/tables/" + tableID + "/sit"
	s.wantError(t, http.StatusForbidden, "wrong_password", http.MethodPost, path, guest.Token, map[string]any{"seat": 1, "password": "open sesam"})
	s.wantError(t, http.StatusForbidden, "wrong_password", http.MethodPost, path, guest.Token, map[string]any{"seat": 1})
	if !seatFree() {
		t.Fatal("a refused sit took the seat")
	}
	s.sit(t, guest, tableID, 1, "open sesame")
	if seatFree() {
		t.Error("the sit with the right password did not take the seat")
	}
}
