package e2e

import (
	"testing"
	"time"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/wire"
)

// dropMidHand lets c auto-play until `cards` cards of hand `hand` are on the
// table, then drops its connection right after its next move (with
// leadOnly, its next lead) is queued. It returns the id of the last event
// c received.
func dropMidHand(t *testing.T, c *client, tableID string, hand uint32, cards int, leadOnly bool) string {
	t.Helper()
	hs := c.awaitEvent(0, 30*time.Second, tableID, "the hand to drop in", func(ev *tablev1.Event) bool {
		return ev.GetHandStarted() != nil && ev.GetHandStarted().GetHandIndex() == hand
	})
	n := 0
	c.awaitEvent(hs.N, 30*time.Second, tableID, "cards of the hand", func(ev *tablev1.Event) bool {
		if ev.GetCardPlayed() != nil {
			n++
		}
		return n >= cards
	})
	select {
	case <-c.dropAfterNextMove(tableID, leadOnly):
	case <-time.After(30 * time.Second):
		t.Fatalf("%s made no move to drop after", c.name)
	}
	return c.lastEventID(tableID)
}

// aloneWithBots registers a player who creates a classic table (one-minute
// move time, so only a lost command makes the server move), sets its id in
// *tableID, joins it over a WebSocket, fills the other seats with bots and
// starts playing automatically.
func (s *stack) aloneWithBots(t *testing.T, name string, tableID *string) (session, *client) {
	t.Helper()
	a := s.register(t)
	*tableID = s.createTable(t, a, tableSpec{moveTime: time.Minute, name: "e2e " + name})
	c := s.newClient(t, name, a)
	c.connect()
	c.join(*tableID, "")
	s.fillWithBots(t, a, *tableID)
	c.autoPlay(*tableID, true)
	return a, c
}

// waitingFor reports whether the log waits for seat to move: the last
// move timer is for seat and no move came after it (a move carrying a timer
// came before it).
func waitingFor(log []logEntry, seat uint32) bool {
	for i := len(log) - 1; i >= 0; i-- {
		if ts := wire.TimerOf(log[i].Ev); ts != nil {
			return ts.GetSeat() == seat
		}
		switch log[i].Ev.GetEvent().(type) {
		case *tablev1.Event_CardPlayed, *tablev1.Event_BidMade, *tablev1.Event_TrumpChosen, *tablev1.Event_GameEnded:
			return false
		}
	}
	return false
}

// hasEvent reports whether the log has an event pred accepts after index from.
func findEvent(log []logEntry, from int, pred func(*tablev1.Event) bool) int {
	for i := from; i < len(log); i++ {
		if pred(log[i].Ev) {
			return i
		}
	}
	return -1
}

// TestReconnect_ResumingWithTheLastEventIDGivesExactlyTheMissedEvents: a
// player of a nines table (two players, two bots) loses its connection
// right after a move in the middle of a hand; the other player and the
// bots play on until the table waits for it. It reconnects with the id of
// the last event it received: the replay is exactly the events after that
// id it may see (count and ids compared with the event stream), then the
// live ones (PlayerBack first among them), with no gap or duplicate at the
// seam, and the game finishes with every move of the players' seats made
// by their commands.
func TestReconnect_ResumingWithTheLastEventIDGivesExactlyTheMissedEvents(t *testing.T) {
	t.Parallel()
	s := shared
	var tableID string
	s.dumpOnFailure(t, &tableID)
	a, b := s.guest(t), s.guest(t)
	sp := tableSpec{moveTime: time.Minute, grace: time.Minute, name: "e2e reconnect"}
	tableID = s.createTable(t, a, sp)
	ca, cb := s.newClient(t, "reconnect-a", a), s.newClient(t, "reconnect-b", b)
	for _, c := range []*client{ca, cb} {
		c.connect()
		c.join(tableID, "")
	}
	s.sit(t, b, tableID, 1, "")
	s.fillWithBots(t, a, tableID)
	ca.autoPlay(tableID, true)
	cb.autoPlay(tableID, true)

	// After a lead, the three others play before it is the player's turn again.
	lastID := dropMidHand(t, ca, tableID, 1, 6, true)
	var log []logEntry
	eventually(t, 20*time.Second, "the table to wait for the dropped player", func() bool {
		log = mustReadLog(t, s.Redis(), tableID)
		away := findEvent(log, 0, func(ev *tablev1.Event) bool { return ev.GetPlayerAway().GetPlayerId() == a.Player.ID })
		return away >= 0 && waitingFor(log, 0)
	})
	seats := seating(log)
	// missed are the events, frames the entries: a seat's legal moves
	// packed into an entry ride on its frame (and the e2e client records
	// them as a frame of their own with the entry's ID).
	var missed []string
	frames := 0
	after := false
	for i, e := range log {
		if after && e.ID != lastID && allowed(e.Ev, seats[i], a.Player.ID) {
			missed = append(missed, e.ID)
			if !e.Packed {
				frames++
			}
		}
		after = after || e.ID == lastID
	}
	if len(missed) < 3 {
		t.Fatalf("only %d events happened while the player was away; the test wants some", len(missed))
	}

	from := ca.len()
	ca.connect()
	joined := ca.join(tableID, lastID)
	if joined.Replayed != frames || joined.HistoryTrimmed {
		t.Errorf("joined after %s: replayed %d (trimmed %v), the stream has %d entries for the player after it",
			lastID, joined.Replayed, joined.HistoryTrimmed, frames)
	}
	var got []string
	for _, f := range ca.snapshot()[from:] {
		if f.ev != nil && f.Table == tableID && len(got) < len(missed) {
			got = append(got, f.ID)
		}
	}
	for i := range missed {
		if i >= len(got) || got[i] != missed[i] {
			t.Fatalf("replayed events %v, want exactly the missed %v", got, missed)
		}
	}
	ca.autoPlay(tableID, true) // the drop turned it off; the pending turn is answered now
	// The return is live: PlayerBack follows the missed events (it may
	// come before or after joined, which the gateway sends once the
	// player counts as present).
	ca.awaitEvent(from, 10*time.Second, tableID, "PlayerBack", func(ev *tablev1.Event) bool {
		return ev.GetPlayerBack().GetPlayerId() == a.Player.ID
	})

	for _, c := range []*client{ca, cb} {
		c.awaitEvent(0, 60*time.Second, tableID, "the end of the game", gameEnded)
	}
	g := verifyGame(t, s, tableID, []*client{ca, cb})
	// Bots move by_server; the players' moves are all theirs, each once.
	steps := commandSteps(g.log)
	for _, c := range []*client{ca, cb} {
		for _, id := range c.commandsSent(tableID) {
			if steps[id] != 1 {
				t.Errorf("command %s is in the log %d times, want once", id, steps[id])
			}
		}
	}
	if r := rejections(g.log); len(r) != 0 {
		t.Errorf("%d commands refused, the first: %s", len(r), describe(r[0].ID, r[0].Ev))
	}
	if r := refusalsReceived([]*client{ca, cb}, tableID); len(r) != 0 {
		t.Errorf("%d commands refused, the first: %s", len(r), r[0])
	}
	for _, e := range g.log {
		// The players' seats (0 and 1) never waited for their one-minute
		// timer: no command of theirs was lost across the reconnect.
		if isMove(e.Ev) && byServer(e.Ev) && moveSeat(e.Ev) < 2 {
			t.Errorf("the server moved for a player: %s", describe(e.ID, e.Ev))
		}
		if tm := e.Ev.GetSeatTakenByBot(); tm != nil && tm.GetReason() == tablev1.BotReason_BOT_REASON_GRACE_EXPIRED {
			t.Errorf("a bot took a seat although the player came back in time: %s", describe(e.ID, e.Ev))
		}
	}
}

// TestGrace_ClassicSeatGoesToABotAndTheGameGoesOn: a classic player (with
// three bots) drops mid-hand and stays away. When the reconnect grace (the
// runner's 2 s) runs out, a bot takes the seat — not before the grace
// deadline — and the game is played to its end; the sheet equals the pure
// replay and the player finds the game in their history.
func TestGrace_ClassicSeatGoesToABotAndTheGameGoesOn(t *testing.T) {
	t.Parallel()
	s := shared
	var tableID string
	s.dumpOnFailure(t, &tableID)
	a, ca := s.aloneWithBots(t, "grace-classic", &tableID)
	dropMidHand(t, ca, tableID, 0, 5, false)

	var log []logEntry
	eventually(t, 60*time.Second, "the game to end without the player", func() bool {
		log = mustReadLog(t, s.Redis(), tableID)
		return findEvent(log, 0, gameEnded) >= 0
	})
	away := findEvent(log, 0, func(ev *tablev1.Event) bool { return ev.GetPlayerAway().GetPlayerId() == a.Player.ID })
	if away < 0 {
		t.Fatal("no PlayerAway for the dropped player")
	}
	deadline := log[away].Ev.GetPlayerAway().GetGraceDeadline().AsTime()
	if g := deadline.Sub(log[away].Ev.GetOccurredAt().AsTime()); g != reconnectGrace {
		t.Errorf("grace of %v, want the runner's %v", g, reconnectGrace)
	}
	bot := findEvent(log, away, func(ev *tablev1.Event) bool { return ev.GetSeatTakenByBot() != nil })
	if bot < 0 {
		t.Fatal("no SeatTakenByBot after the grace")
	}
	tb := log[bot].Ev
	if tb.GetSeatTakenByBot().GetSeat() != 0 || tb.GetSeatTakenByBot().GetReason() != tablev1.BotReason_BOT_REASON_GRACE_EXPIRED {
		t.Errorf("want seat 0 taken for an expired grace: %s", describe(log[bot].ID, tb))
	}
	if at := tb.GetOccurredAt().AsTime(); at.Before(deadline) {
		t.Errorf("the bot took the seat at %v, before the grace deadline %v", at, deadline)
	}
	// After the bot took over, its moves are the server's and the game went
	// on: the seat's later moves exist and are all by_server.
	later := 0
	for _, e := range log[bot:] {
		if p := e.Ev.GetCardPlayed(); p != nil && p.GetSeat() == 0 {
			later++
			if !p.GetByServer() {
				t.Errorf("seat 0 moved by a player after the bot took it: %s", describe(e.ID, e.Ev))
			}
		}
	}
	if later == 0 {
		t.Error("seat 0 never moved after the bot took it")
	}
	verifyGame(t, s, tableID, []*client{ca})
}

// TestGrace_JapanesePlayerWhoStaysAwayLosesTheMatch: a Japanese player
// drops mid-hand and stays away past the grace; the match ends at the
// grace deadline, forfeited by that player, who is last in the standings
// and on the final sheet's standings whatever the score.
func TestGrace_JapanesePlayerWhoStaysAwayLosesTheMatch(t *testing.T) {
	t.Parallel()
	s := shared
	var tableID string
	s.dumpOnFailure(t, &tableID)
	a, b := s.guest(t), s.guest(t)
	clients := seatPlayers(t, s, tableSpec{japanese: true, moveTime: time.Minute, name: "e2e grace japanese"}, []session{a, b}, &tableID)
	for _, c := range clients {
		c.autoPlay(tableID, true)
	}
	dropMidHand(t, clients[0], tableID, 0, 7, false)
	end := clients[1].awaitEvent(0, 30*time.Second, tableID, "the end of the match", gameEnded)
	ge := end.ev.GetGameEnded()
	if ge.GetReason() != tablev1.GameEndReason_GAME_END_REASON_FORFEITED {
		t.Fatalf("the match ended with %v, want a forfeit", ge.GetReason())
	}
	for _, p := range ge.GetPlacings() {
		if p.GetSeat() == 0 && p.GetPlace() != 2 {
			t.Errorf("the player who stayed away is placed %d", p.GetPlace())
		}
	}
	log := mustReadLog(t, s.Redis(), tableID)
	away := findEvent(log, 0, func(ev *tablev1.Event) bool { return ev.GetPlayerAway().GetPlayerId() == a.Player.ID })
	if away < 0 {
		t.Fatal("no PlayerAway")
	}
	deadline := log[away].Ev.GetPlayerAway().GetGraceDeadline().AsTime()
	if at := end.ev.GetOccurredAt().AsTime(); at.Before(deadline) {
		t.Errorf("the match ended at %v, before the grace deadline %v", at, deadline)
	}
	g := verifyGame(t, s, tableID, clients)
	if g.res.Winner != 1 {
		t.Errorf("the pure replay's winner is seat %d, want 1", g.res.Winner)
	}
}
