package e2e

import (
	"slices"
	"testing"
	"time"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/tools/stack/stacktest"
)

// TestGatewayKill_ItsPlayersGetTheirGraceAndThenABot: a classic player (with
// three bots) is connected through the stack's only gateway, which is
// SIGKILLed mid-hand: no connection says goodbye, so no "away" comes from
// it. A new gateway starts (as a pod's replacement would), takes the dead
// one for dead after three missed beats, and reports its player away: the
// table starts the reconnect grace, then a bot takes the seat and the game
// goes on. When the player reconnects through the new gateway, they get the
// seat back, with exactly the events it missed, and plays the game to its
// end. The lobby's summary of the table shows each change.
func TestGatewayKill_ItsPlayersGetTheirGraceAndThenABot(t *testing.T) {
	t.Parallel()
	s := startStack(t, "gwkill", 1)
	var tableID string
	s.dumpOnFailure(t, &tableID)
	a, ca := s.aloneWithBots(t, "gwkill", &tableID)
	hs := ca.awaitEvent(0, 30*time.Second, tableID, "the first hand", func(ev *tablev1.Event) bool {
		return ev.GetHandStarted() != nil
	})
	played := 0
	ca.awaitEvent(hs.N, 30*time.Second, tableID, "a few cards", func(ev *tablev1.Event) bool {
		if ev.GetCardPlayed() != nil {
			played++
		}
		return played >= 5
	})

	gw := s.Processes()
	var gateway *stacktest.Process
	for _, svc := range gw {
		if svc.Binary == "gateway" {
			gateway = svc
		}
	}
	if gateway == nil {
		t.Fatal("the stack has no gateway")
	}
	ca.autoPlay(tableID, false)
	gateway.Kill()
	killedAt := time.Now()
	lastID := ca.lastEventID(tableID)
	if _, err := s.Start("gateway"); err != nil { // another process, on another port: the stack's URL now
		t.Fatal(err)
	}

	var log []logEntry
	eventually(t, 30*time.Second, "a bot in the seat of the killed gateway's player", func() bool {
		log = mustReadLog(t, s.Redis(), tableID)
		return findEvent(log, 0, func(ev *tablev1.Event) bool { return ev.GetSeatTakenByBot() != nil }) >= 0
	})
	away := findEvent(log, 0, func(ev *tablev1.Event) bool { return ev.GetPlayerAway().GetPlayerId() == a.Player.ID })
	if away < 0 {
		t.Fatal("no PlayerAway for the player of the killed gateway")
	}
	awayAt := log[away].Ev.GetOccurredAt().AsTime()
	t.Logf("PlayerAway %v after the SIGKILL of the gateway", awayAt.Sub(killedAt).Round(time.Millisecond))
	if awayAt.Before(killedAt) {
		t.Errorf("the player was away at %v, before the kill at %v", awayAt, killedAt)
	}
	deadline := log[away].Ev.GetPlayerAway().GetGraceDeadline().AsTime()
	if g := deadline.Sub(awayAt); g != reconnectGrace {
		t.Errorf("grace of %v, want the runner's %v", g, reconnectGrace)
	}
	bot := findEvent(log, away, func(ev *tablev1.Event) bool { return ev.GetSeatTakenByBot() != nil })
	tb := log[bot].Ev.GetSeatTakenByBot()
	if tb.GetSeat() != 0 || tb.GetReason() != tablev1.BotReason_BOT_REASON_GRACE_EXPIRED {
		t.Errorf("want seat 0 taken for an expired grace: %s", describe(log[bot].ID, log[bot].Ev))
	}
	if at := log[bot].Ev.GetOccurredAt().AsTime(); at.Before(deadline) {
		t.Errorf("the bot took the seat at %v, before the grace deadline %v", at, deadline)
	}
	if n := countEvents(log, func(ev *tablev1.Event) bool { return ev.GetPlayerAway() != nil }); n != 1 {
		t.Errorf("%d PlayerAway events, want 1", n)
	}
	eventually(t, 30*time.Second, "the bot to play seat 0", func() bool {
		log = mustReadLog(t, s.Redis(), tableID)
		return findEvent(log, bot, func(ev *tablev1.Event) bool {
			return ev.GetCardPlayed().GetSeat() == 0 && ev.GetCardPlayed().GetByServer()
		}) >= 0
	})

	// The lobby shows the bot in the seat, playing it for the player (who
	// still owns it), and later the player again.
	eventually(t, 10*time.Second, "the lobby to show a bot in seat 0", func() bool {
		st := s.tableSummary(t, a.Token, tableID).GetSeats()[0]
		return st.GetBot() && st.GetPlayerId() == a.Player.ID
	})

	// Back through the new gateway, another process, with the last event
	// seen through the old one: the seat is the player's again.
	from := ca.len()
	ca.connect()
	ca.join(tableID, lastID)
	ca.autoPlay(tableID, true)
	ca.awaitEvent(from, 30*time.Second, tableID, "the seat given back", func(ev *tablev1.Event) bool {
		sp := ev.GetPlayerSeated().GetSeat()
		return sp != nil && sp.GetSeat() == 0 && sp.GetPlayerId() == a.Player.ID
	})
	eventually(t, 10*time.Second, "the lobby to show the player in seat 0 again", func() bool {
		st := s.tableSummary(t, a.Token, tableID).GetSeats()[0]
		return !st.GetBot() && st.GetPlayerId() == a.Player.ID
	})
	ca.awaitEvent(from, 60*time.Second, tableID, "the end of the game", gameEnded)
	g := verifyGame(t, s, tableID, []*client{ca})

	// The new connection got every event after lastID the player may see,
	// in order, without a gap or a repeat at the seam of replay and live.
	seats := seating(g.log)
	var want []string
	after := false
	for i, e := range g.log {
		// (A packed event shares its host's ID: after lastID means after both.)
		if after && e.ID != lastID && allowed(e.Ev, seats[i], a.Player.ID) {
			want = append(want, e.ID)
		}
		after = after || e.ID == lastID
	}
	var got []string
	for _, f := range ca.snapshot()[from:] {
		if f.ev != nil && f.Table == tableID {
			got = append(got, f.ID)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("after %s the new gateway sent %d events, the log has %d for the player:\ngot  %v\nwant %v",
			lastID, len(got), len(want), got, want)
	}
}

func countEvents(log []logEntry, pred func(*tablev1.Event) bool) int {
	n := 0
	for _, e := range log {
		if pred(e.Ev) {
			n++
		}
	}
	return n
}
