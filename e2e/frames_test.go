package e2e

import (
	"bytes"
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/classic"
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
	pos := make(map[string]int, len(log))
	for i, e := range log {
		pos[e.ID] = i
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
		checked++
		i, ok := pos[f.ID]
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
			got := domainCards(e.Dealt.GetCards())
			if !ownSeat(e.Dealt.GetSeat()) {
				fail(f, "cards dealt to seat %d reached %s (seats %v)", e.Dealt.GetSeat(), player, mySeats)
			} else if ht == nil || got&^ht.private[e.Dealt.GetSeat()] != 0 {
				fail(f, "dealt cards %v are not the pure replay's deal", got)
			}
			own |= got
		case *tablev1.Event_ColumnCardRevealed:
			card := domainCard(e.ColumnCardRevealed.GetCard())
			if !ownSeat(e.ColumnCardRevealed.GetSeat()) {
				fail(f, "a face-down card of seat %d reached %s", e.ColumnCardRevealed.GetSeat(), player)
			} else if ht == nil || !ht.private[e.ColumnCardRevealed.GetSeat()].Has(card) {
				fail(f, "revealed card %v is not the pure replay's", card)
			}
			own = own.With(card)
		case *tablev1.Event_TrumpTurned:
			card := domainCard(e.TrumpTurned.GetCard())
			if ht == nil || card != ht.turned {
				fail(f, "turned card %v is not the pure replay's", card)
			}
			public = public.With(card)
		case *tablev1.Event_ColumnsDealt:
			got := domainCards(e.ColumnsDealt.GetFaceUp())
			if ht == nil || got != ht.faceUp[e.ColumnsDealt.GetSeat()] {
				fail(f, "face-up cards %v are not the pure replay's", got)
			}
			public |= got
		case *tablev1.Event_CardPlayed:
			card := domainCard(e.CardPlayed.GetCard())
			if ht == nil || !ht.held(int(e.CardPlayed.GetSeat())).Has(card) {
				fail(f, "seat %d played %v, which the pure replay never gave it", e.CardPlayed.GetSeat(), card)
			}
			public = public.With(card)
		case *tablev1.Event_ViewSynced:
			got := domainCards(e.ViewSynced.GetView().GetYourHand())
			if len(mySeats) == 0 || ht == nil || got&^ht.held(mySeats[0]) != 0 {
				fail(f, "the synced hand %v is not the player's", got)
			}
			own |= got
			for _, s := range e.ViewSynced.GetView().GetSeats() {
				public |= domainCards(s.GetColumnsFaceUp())
			}
			for _, p := range e.ViewSynced.GetView().GetTrick() {
				public = public.With(domainCard(p.GetCard()))
			}
			if tc := domainCard(e.ViewSynced.GetView().GetTurnedCard()); tc != cards.NoCard {
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
