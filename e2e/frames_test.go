package e2e

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/cards/cardpb"
	"github.com/pulka/pulka/pkg/classic"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// seating is who holds each seat after each log entry, derived from the
// log as docs/protocol.md says gateways derive it: GameStarted,
// PlayerSeated, PlayerLeft and SeatTakenByBot in stream order; a seat a bot
// plays belongs to nobody.
func seating(log []logEntry) [][classic.Seats]string {
	out := make([][classic.Seats]string, len(log))
	var cur [classic.Seats]string
	for i, e := range log {
		switch ev := e.Ev.GetEvent().(type) {
		case *tablev1.Event_GameStarted:
			cur = [classic.Seats]string{}
			for _, sp := range ev.GameStarted.GetSeats() {
				if !sp.GetBot() {
					cur[sp.GetSeat()] = sp.GetPlayerId()
				}
			}
		case *tablev1.Event_PlayerSeated:
			cur[ev.PlayerSeated.GetSeat().GetSeat()] = ev.PlayerSeated.GetSeat().GetPlayerId()
		case *tablev1.Event_PlayerLeft:
			cur[ev.PlayerLeft.GetSeat()] = ""
		case *tablev1.Event_SeatTakenByBot:
			cur[ev.SeatTakenByBot.GetSeat()] = ""
		}
		out[i] = cur
	}
	return out
}

// handIndex is the hand each log entry belongs to (-1 before the first).
func handIndex(log []logEntry) []int {
	out := make([]int, len(log))
	h := -1
	for i, e := range log {
		if hs, ok := e.Ev.GetEvent().(*tablev1.Event_HandStarted); ok {
			h = int(hs.HandStarted.GetHandIndex())
		}
		out[i] = h
	}
	return out
}

// allowed says whether the player may receive log entry i.
func allowed(ev *tablev1.Event, seats [classic.Seats]string, player string) bool {
	v := ev.GetVisibility()
	switch v.GetAudience() {
	case tablev1.Audience_AUDIENCE_PUBLIC:
		return true
	case tablev1.Audience_AUDIENCE_SEAT:
		return v.GetSeat() < classic.Seats && seats[v.GetSeat()] == player
	case tablev1.Audience_AUDIENCE_PLAYER:
		return v.GetPlayerId() == player
	}
	return false
}

// stripped is an event as gateways forward it: without the fields only
// services need (docs/protocol.md).
func stripped(ev *tablev1.Event) *tablev1.Event {
	c := proto.Clone(ev).(*tablev1.Event)
	c.Trace, c.Epoch, c.CommandEntryId = nil, 0, ""
	return c
}

// checkFrames checks every frame client c received about table against the
// log and the pure replay's deal (invariant 1, hidden information):
//
//   - every event frame is a log entry, unchanged but for the service-only
//     fields, which the visibility rule lets this player see at that point
//     of the history;
//   - on each connection the event frames are exactly the player's events,
//     in order, from the join's last_event_id on: no gap, no duplicate;
//   - every card in a frame is one the player may know at that moment: a
//     card dealt to its own seat this hand (checked against the deal of the
//     pure replay), or one made public (played, turned, a face-up column
//     card); a Dealt or a column reveal is only ever for the player's seat,
//     and no face-down card appears before it reaches its owner's hand;
//   - no other frame (sheet, lobby, ack, error) names a card at all.
//
// It returns how many event frames it checked and every problem found.
func checkFrames(c *client, tableID string, log []logEntry, hands []handTruth) (int, []string) {
	var problems []string
	// An entry's packed legal moves share its ID (wire.FieldLegal).
	posKey := func(id string, packed bool) string {
		if packed {
			return id + "+legal"
		}
		return id
	}
	pos := make(map[string]int, len(log))
	for i, e := range log {
		pos[posKey(e.ID, e.Packed)] = i
	}
	seats, handAt := seating(log), handIndex(log)
	player := c.ses.Player.ID
	mine := func(i int) []int {
		var out []int
		for s, p := range seats[i] {
			if p == player {
				out = append(out, s)
			}
		}
		return out
	}
	// next[i] is the first entry after i this player may see.
	mayNext := func(after int) int {
		for j := after + 1; j < len(log); j++ {
			if allowed(log[j].Ev, seats[j], player) {
				return j
			}
		}
		return len(log)
	}
	joinFrom := map[int]int{} // conn → log position the first join resumed after (-1: from the start)
	c.mu.Lock()
	for _, j := range c.joins {
		if j.Table != tableID {
			continue
		}
		if _, seen := joinFrom[j.Conn]; seen {
			continue
		}
		joinFrom[j.Conn] = -1
		if j.LastEventID != "" {
			p, ok := pos[j.LastEventID]
			if q, packed := pos[posKey(j.LastEventID, true)]; packed {
				p = q // the entry's legal moves came with it
			}
			if !ok {
				problems = append(problems, fmt.Sprintf("%s joined after %s, which is not in the log", c.name, j.LastEventID))
			}
			joinFrom[j.Conn] = p
		}
	}
	c.mu.Unlock()

	lastOnConn := map[int]int{}
	hand := -2
	var own, public cards.Set
	checked := 0
	fail := func(f *frame, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("%s frame #%d (conn %d) %s: %s", c.name, f.N, f.Conn, f, fmt.Sprintf(format, args...)))
	}
	for _, f := range c.snapshot() {
		if f.Type == "sheet" && f.Table == tableID {
			if cs := cardsIn(f.sheet.ProtoReflect()); len(cs) > 0 {
				fail(f, "a sheet names cards %v", cs)
			}
			continue
		}
		if f.ev == nil || f.Table != tableID {
			if f.ev == nil && bytes.Contains(f.Raw, []byte("CARD_")) {
				fail(f, "a %s frame names a card", f.Type)
			}
			continue
		}
		if f.ID == "" {
			// A refusal: the answer to this player's command, outside the
			// history (no id, seq 0; docs/protocol.md).
			if f.ev.GetMoveRejected() == nil || f.ev.GetSeq() != 0 || f.ev.GetVisibility().GetPlayerId() != player {
				fail(f, "an event without an id that is not a refusal for %s", player)
			}
			if bytes.Contains(f.Raw, []byte(`"CARD_`)) { // a card, not REJECT_REASON_CARD_NOT_AVAILABLE
				fail(f, "a refusal names a card")
			}
			continue
		}
		checked++
		i, ok := pos[posKey(f.ID, f.packed)]
		if !ok {
			fail(f, "the event is not in the log")
			continue
		}
		if !proto.Equal(f.ev, stripped(log[i].Ev)) {
			fail(f, "differs from the log's %s", describe(log[i].ID, stripped(log[i].Ev)))
		}
		if !allowed(log[i].Ev, seats[i], player) {
			fail(f, "sent to %s, who may not see it (seats %v)", player, seats[i])
		}
		prev, ok := lastOnConn[f.Conn]
		if !ok {
			from, joined := joinFrom[f.Conn]
			if !joined {
				from = -1
			}
			prev = from
		}
		if want := mayNext(prev); i != want {
			wantID := "the end"
			if want < len(log) {
				wantID = log[want].ID
			}
			fail(f, "out of order: the next event this player may see is %s", wantID)
		}
		lastOnConn[f.Conn] = i

		// Cards: what the player may know at this point of the hand.
		if handAt[i] != hand {
			hand, own, public = handAt[i], 0, 0
		}
		var ht *handTruth
		if hand >= 0 && hand < len(hands) {
			ht = &hands[hand]
		}
		mySeats := mine(i)
		ownSeat := func(seat uint32) bool {
			for _, s := range mySeats {
				if uint32(s) == seat {
					return true
				}
			}
			return false
		}
		switch e := f.ev.GetEvent().(type) {
		case *tablev1.Event_Dealt:
			got := cardpb.Set(e.Dealt.GetCards())
			switch {
			case !ownSeat(e.Dealt.GetSeat()):
				fail(f, "cards dealt to seat %d reached %s (seats %v)", e.Dealt.GetSeat(), player, mySeats)
			case ht == nil || got&^ht.private[e.Dealt.GetSeat()] != 0:
				fail(f, "dealt cards %v are not the pure replay's deal", got)
			default:
				own |= got
			}
		case *tablev1.Event_ColumnCardRevealed:
			card := cardpb.FromCard(e.ColumnCardRevealed.GetCard())
			switch {
			case !ownSeat(e.ColumnCardRevealed.GetSeat()):
				fail(f, "a face-down card of seat %d reached %s", e.ColumnCardRevealed.GetSeat(), player)
			case ht == nil || !ht.private[e.ColumnCardRevealed.GetSeat()].Has(card):
				fail(f, "revealed card %v is not the pure replay's", card)
			default:
				own = own.With(card)
			}
		case *tablev1.Event_TrumpTurned:
			card := cardpb.FromCard(e.TrumpTurned.GetCard())
			if ht == nil || card != ht.turned {
				fail(f, "turned card %v is not the pure replay's", card)
			} else {
				public = public.With(card)
			}
		case *tablev1.Event_ColumnsDealt:
			got := cardpb.Set(e.ColumnsDealt.GetFaceUp())
			if ht == nil || got != ht.faceUp[e.ColumnsDealt.GetSeat()] {
				fail(f, "face-up cards %v are not the pure replay's", got)
			} else {
				public |= got
			}
		case *tablev1.Event_CardPlayed:
			card := cardpb.FromCard(e.CardPlayed.GetCard())
			if ht == nil || !ht.held(int(e.CardPlayed.GetSeat())).Has(card) {
				fail(f, "seat %d played %v, which the pure replay never gave it", e.CardPlayed.GetSeat(), card)
			} else {
				public = public.With(card)
			}
		case *tablev1.Event_ViewSynced:
			got := cardpb.Set(e.ViewSynced.GetView().GetYourHand())
			if len(mySeats) == 0 || ht == nil || got&^ht.held(mySeats[0]) != 0 {
				fail(f, "the synced hand %v is not the player's", got)
			} else {
				own |= got
			}
			for _, s := range e.ViewSynced.GetView().GetSeats() {
				public |= cardpb.Set(s.GetColumnsFaceUp())
			}
			for _, p := range e.ViewSynced.GetView().GetTrick() {
				public = public.With(cardpb.FromCard(p.GetCard()))
			}
			if tc := cardpb.FromCard(e.ViewSynced.GetView().GetTurnedCard()); tc != cards.NoCard {
				public = public.With(tc)
			}
		}
		for _, card := range cardsIn(f.ev.ProtoReflect()) {
			if !(own | public).Has(card) {
				fail(f, "names %v, which %s may not know (own %v, public %v)", card, player, own, public)
			}
		}
	}
	return checked, problems
}

// doctored returns a copy of client c whose frames are edit(frames): a
// client that received what the edit says, for checking the checker.
func doctored(c *client, edit func([]*frame) []*frame) *client {
	c.mu.Lock()
	joins := append([]joinRecord(nil), c.joins...)
	c.mu.Unlock()
	frames := c.snapshot()
	cp := make([]*frame, len(frames))
	for i, f := range frames {
		g := *f
		if f.ev != nil {
			g.ev = proto.Clone(f.ev).(*tablev1.Event)
		}
		cp[i] = &g
	}
	return &client{name: c.name + "(doctored)", ses: c.ses, frames: edit(cp), joins: joins, changed: make(chan struct{})}
}

// wantProblem runs the checker on a doctored client and reports whether
// some problem contains want.
func wantProblem(t *testing.T, what string, c *client, g *finished, want string) {
	t.Helper()
	_, problems := checkFrames(c, g.table, g.log, g.hands)
	for _, p := range problems {
		if strings.Contains(p, want) {
			return
		}
	}
	t.Errorf("the frame checker misses %s: no problem says %q among %d: %v", what, want, len(problems), problems)
}

// checkTheChecker feeds the frame checker three leaks it must catch, made
// from a real game's frames: another seat's Dealt delivered to c, an
// opponent's hidden card put into a public event, and c's own deal
// replaced by the opponent's cards.
func checkTheChecker(t *testing.T, g *finished, c *client) {
	t.Helper()
	mySeat := -1
	for _, sp := range g.log[0].Ev.GetGameStarted().GetSeats() {
		if sp.GetPlayerId() == c.ses.Player.ID {
			mySeat = int(sp.GetSeat())
		}
	}
	other := -1
	for i, e := range g.log {
		if d := e.Ev.GetDealt(); d != nil && int(d.GetSeat()) != mySeat {
			other = i
			break
		}
	}
	if mySeat < 0 || other < 0 {
		t.Fatalf("no other seat's deal in the log (my seat %d)", mySeat)
	}
	e := g.log[other]
	wantProblem(t, "another seat's Dealt", doctored(c, func(fs []*frame) []*frame {
		for i, f := range fs {
			if f.ev != nil && f.ev.GetSeq() > e.Ev.GetSeq() {
				leak := &frame{N: -1, Conn: f.Conn, Type: "event", Table: g.table, ID: e.ID, ev: stripped(e.Ev), Raw: []byte("doctored")}
				return append(fs[:i:i], append([]*frame{leak}, fs[i:]...)...)
			}
		}
		return fs
	}), g, "may not see it")

	// A card another seat was dealt, shown in someone else's CardPlayed
	// before its owner played it.
	leaked := false
	hiddenCase := doctored(c, func(fs []*frame) []*frame {
		for _, d := range g.log {
			dealt := d.Ev.GetDealt()
			if dealt == nil || int(dealt.GetSeat()) == mySeat {
				continue
			}
			hidden := dealt.GetCards()[0]
			for _, f := range fs {
				p := f.ev.GetCardPlayed()
				if f.ev == nil || f.ev.GetSeq() <= d.Ev.GetSeq() || p == nil {
					continue
				}
				if p.GetSeat() == dealt.GetSeat() && p.GetCard() == hidden {
					break // played by its owner: public from here on
				}
				if p.GetSeat() != dealt.GetSeat() {
					p.Card, leaked = hidden, true // as if the table showed it early
					return fs
				}
			}
		}
		return fs
	})
	if !leaked {
		t.Fatal("found no CardPlayed to put a hidden card in")
	}
	wantProblem(t, "a hidden card in a public event", hiddenCase, g, "may not know")

	// Another seat's unplayed card among the legal moves riding on one of
	// the player's event frames.
	legalLeak := false
	legalCase := doctored(c, func(fs []*frame) []*frame {
		at := map[string]int{}
		for i, e := range g.log {
			if e.Packed {
				at[e.ID] = i
			}
		}
		for _, f := range fs {
			i, ok := at[f.ID]
			if !f.packed || !ok || len(f.ev.GetLegalMoves().GetPlays()) == 0 {
				continue
			}
			start := i
			for start > 0 && g.log[start].Ev.GetHandStarted() == nil {
				start--
			}
			played := map[commonv1.Card]bool{}
			for _, e := range g.log[start:i] {
				if p := e.Ev.GetCardPlayed(); p != nil {
					played[p.GetCard()] = true
				}
			}
			for _, e := range g.log[start:i] {
				if d := e.Ev.GetDealt(); d != nil && int(d.GetSeat()) != mySeat {
					for _, card := range d.GetCards() {
						if !played[card] {
							f.ev.GetLegalMoves().GetPlays()[0].Card, legalLeak = card, true
							return fs
						}
					}
				}
			}
		}
		return fs
	})
	if !legalLeak {
		t.Fatal("found no legal moves on a frame to put a hidden card in")
	}
	wantProblem(t, "another seat's card among the player's legal moves", legalCase, g, "may not know")

	// Japanese: the player's own face-down card shown before it reached
	// the player's hand.
	for i, r := range g.log {
		rev := r.Ev.GetColumnCardRevealed()
		if rev == nil || int(rev.GetSeat()) != mySeat {
			continue
		}
		start := i
		for start > 0 && g.log[start].Ev.GetHandStarted() == nil {
			start--
		}
		early := false
		faceDown := doctored(c, func(fs []*frame) []*frame {
			for _, f := range fs {
				p := f.ev.GetCardPlayed()
				if p != nil && int(p.GetSeat()) != mySeat && f.ev.GetSeq() > g.log[start].Ev.GetSeq() && f.ev.GetSeq() < r.Ev.GetSeq() {
					p.Card, early = rev.GetCard(), true
					return fs
				}
			}
			return fs
		})
		if early {
			wantProblem(t, "a face-down card shown before its reveal", faceDown, g, "may not know")
		}
		break
	}

	wantProblem(t, "a deal that is not the player's", doctored(c, func(fs []*frame) []*frame {
		for _, f := range fs {
			if d := f.ev.GetDealt(); d != nil && f.ev.GetSeq() > e.Ev.GetSeq() {
				d.Cards = e.Ev.GetDealt().GetCards()
				break
			}
		}
		return fs
	}), g, "not the pure replay's deal")
}
