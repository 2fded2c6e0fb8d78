package table

import (
	"errors"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/classic"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/pkg/wire"
)

func TestNew_StartEventsNumberedWithVisibility(t *testing.T) {
	h := newHarness(t, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 7, humans(4))
	got := kinds(h.start)
	// The hand is committed, the four clients' seeds arrive, then it is
	// dealt and the next hand committed ahead; the first bidder's timer
	// rides on that last public event (Event.timer), and the bidder's
	// legal moves follow, to it alone.
	want := []string{"game_started", "hand_committed", "client_seed_accepted", "client_seed_accepted",
		"client_seed_accepted", "client_seed_accepted", "hand_started", "dealt", "dealt", "dealt", "dealt", "trump_turned",
		"hand_committed", "legal_moves"}
	if len(got) != len(want) {
		t.Fatalf("start events %v, want %v", got, want)
	}
	for i, e := range h.start {
		if got[i] != want[i] {
			t.Fatalf("event %d is %s, want %s", i, got[i], want[i])
		}
		if e.GetSeq() != uint64(i+1) || e.GetTableId() != "t1" || e.GetGameId() != h.t.GameID() {
			t.Errorf("event %d: seq %d table %q game %q", i, e.GetSeq(), e.GetTableId(), e.GetGameId())
		}
		aud := e.GetVisibility().GetAudience()
		if d := e.GetDealt(); d != nil {
			if aud != tablev1.Audience_AUDIENCE_SEAT || e.GetVisibility().GetSeat() != d.GetSeat() || len(d.GetCards()) != 1 {
				t.Errorf("dealt %v with visibility %v", d, e.GetVisibility())
			}
		} else if l := e.GetLegalMoves(); l != nil {
			if aud != tablev1.Audience_AUDIENCE_SEAT || e.GetVisibility().GetSeat() != l.GetSeat() || l.GetSeat() != uint32(h.t.eng.toMove()) ||
				l.GetPhase() != tablev1.Phase_PHASE_BID || len(l.GetBids()) == 0 {
				t.Errorf("legal_moves %v with visibility %v", l, e.GetVisibility())
			}
		} else if a := e.GetClientSeedAccepted(); a != nil {
			// Only the seat's own player needs to know its seed was taken.
			if aud != tablev1.Audience_AUDIENCE_SEAT || e.GetVisibility().GetSeat() != a.GetSeat() {
				t.Errorf("client_seed_accepted %v with visibility %v", a, e.GetVisibility())
			}
		} else if aud != tablev1.Audience_AUDIENCE_PUBLIC {
			t.Errorf("event %s visibility %v, want public", got[i], e.GetVisibility())
		}
	}
	for _, e := range h.start[:len(want)-2] {
		if wire.TimerOf(e) != nil {
			t.Errorf("%s carries a timer", kindOf(e))
		}
	}
	ts := h.start[len(want)-2].GetTimer()
	if !ts.GetDeadline().AsTime().Equal(t0.Add(tablesettings.DefaultMoveTimeout)) || ts.GetPhase() != tablev1.Phase_PHASE_BID {
		t.Errorf("timer %v", ts)
	}
	if d, ok := h.t.NextDeadline(); !ok || !d.Equal(t0.Add(tablesettings.DefaultMoveTimeout)) {
		t.Errorf("NextDeadline %v %v", d, ok)
	}
}

func TestNew_RejectsBadSeatsAndSettings(t *testing.T) {
	for name, tc := range map[string]struct {
		s     tablesettings.Settings
		seats []SeatInfo
		want  error
	}{
		"three classic seats":  {classicSet(classic.Standard, 0), humans(3), ErrBadSeats},
		"bot at japanese":      {japaneseSet(11), []SeatInfo{{PlayerID: "a"}, {Bot: true}}, ErrBadSeats},
		"one player two seats": {japaneseSet(11), []SeatInfo{{PlayerID: "a"}, {PlayerID: "a"}}, ErrBadSeats},
		"seat without player":  {japaneseSet(11), []SeatInfo{{PlayerID: "a"}, {}}, ErrBadSeats},
		"bot with a player":    {classicSet(classic.Standard, 0), append(humans(3), SeatInfo{PlayerID: "x", Bot: true}), ErrBadSeats},
		"target 20":            {japaneseSet(20), humans(2), ErrBadSettings},
		"no game":              {tablesettings.Settings{}, humans(2), ErrBadSettings},
		"negative bot delay":   {classicSet(classic.Standard, -time.Second), humans(4), ErrBadSettings},
		"negative seed timeout": {func() tablesettings.Settings {
			s := classicSet(classic.Standard, 0)
			s.SeedTimeout = -time.Second
			return s
		}(), humans(4), ErrBadSettings},
		"seed timeout of days": {func() tablesettings.Settings {
			s := classicSet(classic.Standard, 0)
			s.SeedTimeout = 48 * time.Hour
			return s
		}(), humans(4), ErrBadSettings},
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := New("t", "g", tc.s, tc.seats, t0, entropyOf(1, 0)); !errors.Is(err, tc.want) {
				t.Fatalf("New: %v, want %v", err, tc.want)
			}
		})
	}
}

// serverMoves counts the moves (bids, trumps, cards) made by the server.
func serverMoves(evs []*tablev1.Event) (n int, seat int) {
	seat = -1
	for _, e := range evs {
		switch {
		case e.GetBidMade().GetByServer():
			n, seat = n+1, int(e.GetBidMade().GetSeat())
		case e.GetCardPlayed().GetByServer():
			n, seat = n+1, int(e.GetCardPlayed().GetSeat())
		case e.GetTrumpChosen().GetByServer():
			n, seat = n+1, int(e.GetTrumpChosen().GetSeat())
		}
	}
	return n, seat
}

func TestMoveTimer_ExpiryMakesExactlyOneMoveAndTheNextIsThePlayers(t *testing.T) {
	for name, s := range map[string]tablesettings.Settings{
		"classic":  classicSet(classic.Standard, tablesettings.DefaultBotDelay),
		"japanese": japaneseSet(21),
	} {
		t.Run(name, func(t *testing.T) {
			n := s.Game.Seats()
			h := newHarness(t, s, 42, humans(n))
			late := h.t.eng.toMove()
			deadline, _ := h.t.NextDeadline()
			if evs := h.tick(deadline.Add(-time.Nanosecond)); len(evs) != 0 {
				t.Fatalf("a tick before the deadline made %v", kinds(evs))
			}
			evs := h.tick(deadline)
			if moves, seat := serverMoves(evs); moves != 1 || seat != late {
				t.Fatalf("timer expiry made %d server moves (seat %d), want 1 for seat %d: %v", moves, seat, late, kinds(evs))
			}
			if ts, ok := find(evs, wire.TimerOf); !ok ||
				int(ts.GetSeat()) != h.t.eng.toMove() || !ts.GetDeadline().AsTime().Equal(deadline.Add(s.MoveTimeout)) {
				t.Fatalf("no new timer for the next seat: %v", kinds(evs))
			}
			// The others move; when it is the late player's turn again, it
			// is theirs: a timer runs and their command is accepted.
			for steps := 0; h.t.eng.toMove() != late; steps++ {
				if steps > 40 {
					t.Fatal("the late seat never came back to move")
				}
				h.now = h.now.Add(time.Second)
				seat := h.t.eng.toMove()
				evs = h.mustCmd(player(seat), legalCommands(h.t, seat)[0])
			}
			if ts, ok := find(evs, wire.TimerOf); !ok || int(ts.GetSeat()) != late {
				t.Fatalf("the late seat got no timer: %v", kinds(evs))
			}
			h.now = h.now.Add(time.Second)
			evs = h.mustCmd(player(late), legalCommands(h.t, late)[0])
			if moves, _ := serverMoves(evs); moves != 0 {
				t.Fatalf("server moved after the player's own move: %v", kinds(evs))
			}
		})
	}
}

func TestBotDelay_BotMovesOnlyWhenItsDelayHasPassed(t *testing.T) {
	const delay = 700 * time.Millisecond
	seats := []SeatInfo{{PlayerID: "p0", Name: "Ana"}, {Bot: true, Name: "Bot 1"}, {Bot: true, Name: "Bot 2"}, {Bot: true, Name: "Bot 3"}}
	h := newHarness(t, classicSet(classic.Standard, delay), 3, seats)
	turnSince := t0
	for step := 0; step < 120 && !h.t.Over(); step++ {
		seat := h.t.eng.toMove()
		if seat == 0 {
			h.now = h.now.Add(1500 * time.Millisecond)
			turnSince = h.now
			h.mustCmd("p0", legalCommands(h.t, 0)[0])
			continue
		}
		d, ok := h.t.NextDeadline()
		if !ok || !d.Equal(turnSince.Add(delay)) {
			t.Fatalf("step %d: bot %d deadline %v, want %v", step, seat, d, turnSince.Add(delay))
		}
		if evs := h.tick(d.Add(-time.Millisecond)); len(evs) != 0 {
			t.Fatalf("bot moved before its delay: %v", kinds(evs))
		}
		evs := h.tick(d)
		if moves, who := serverMoves(evs); moves != 1 || who != seat {
			t.Fatalf("step %d: %d server moves by %d, want 1 by bot %d: %v", step, moves, who, seat, kinds(evs))
		}
		if count(evs, "timer_started") > 0 && h.t.eng.toMove() != 0 {
			t.Fatalf("a timer started for a bot: %v", kinds(evs))
		}
		turnSince = d
	}
}

func TestBotDelayZero_WholeClassicGameOfBotsInOneApply(t *testing.T) {
	for _, v := range []classic.Variant{classic.Standard, classic.Nines} {
		t.Run(v.String(), func(t *testing.T) {
			seats := make([]SeatInfo, 4)
			for i := range seats {
				seats[i] = SeatInfo{Bot: true, Name: "Bot"}
			}
			h := newHarness(t, classicSet(v, 0), 11, seats)
			if d, ok := h.t.NextDeadline(); !ok || !d.Equal(t0) {
				t.Fatalf("NextDeadline %v %v, want now", d, ok)
			}
			evs := h.tick(t0)
			if !h.t.Over() {
				t.Fatal("one tick did not finish a game of bots")
			}
			ended, ok := find(evs, (*tablev1.Event).GetGameEnded)
			if !ok || ended.GetReason() != tablev1.GameEndReason_GAME_END_REASON_COMPLETED || len(ended.GetPlacings()) != 4 {
				t.Fatalf("game ended %v", ended)
			}
			if got := count(evs, "hand_ended"); got != v.Hands() {
				t.Fatalf("%d hands ended, want %d", got, v.Hands())
			}
			if got := count(evs, "pulka_ended"); got != classic.Pulkas {
				t.Fatalf("%d pulkas ended, want 4", got)
			}
			if _, ok := h.t.NextDeadline(); ok {
				t.Fatal("a finished game still has a deadline")
			}
			if evs := h.tick(t0.Add(time.Hour)); len(evs) != 0 {
				t.Fatalf("a tick after the end made %v", kinds(evs))
			}
		})
	}
}

func TestGraceExpiry_ClassicBotTakesTheSeatAndBackGivesItBack(t *testing.T) {
	h := newHarness(t, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 5, humans(4))
	away := (h.t.eng.toMove() + 1) % 4 // not the first to move
	evs, err := h.apply(Away(player(away), t0))
	pa, ok := find(evs, (*tablev1.Event).GetPlayerAway)
	if err != nil || !ok || int(pa.GetSeat()) != away || !pa.GetGraceDeadline().AsTime().Equal(t0.Add(tablesettings.DefaultReconnectGrace)) {
		t.Fatalf("away: %v %v", kinds(evs), err)
	}
	if !h.t.View(0).GetSeats()[away].GetAway() {
		t.Fatal("view does not show the seat away")
	}
	grace := t0.Add(tablesettings.DefaultReconnectGrace)
	if _, err := h.apply(Back(player(away), t0)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.apply(Away(player(away), t0)); err != nil {
		t.Fatal(err)
	}
	if d, _ := h.t.NextDeadline(); !d.Equal(t0.Add(tablesettings.DefaultMoveTimeout)) {
		t.Fatalf("NextDeadline %v: the timer comes before the grace", d)
	}
	// Everyone else moves in time; the away seat's timer moves for it.
	for h.now.Before(grace.Add(-3 * time.Second)) {
		h.now = h.now.Add(2 * time.Second)
		if seat := h.t.eng.toMove(); seat != away {
			h.mustCmd(player(seat), legalCommands(h.t, seat)[0])
		} else {
			h.tick(h.now)
		}
	}
	if got := count(flatten(h.log), "seat_taken_by_bot"); got != 0 {
		t.Fatal("a bot took the seat before the grace ran out")
	}
	evs = h.tick(grace)
	bot, ok := find(evs, (*tablev1.Event).GetSeatTakenByBot)
	if !ok || int(bot.GetSeat()) != away || bot.GetReason() != tablev1.BotReason_BOT_REASON_GRACE_EXPIRED {
		t.Fatalf("grace expiry: %v", kinds(evs))
	}
	if h.t.View(away).GetSeats()[away].GetPlayer().GetBot() != true {
		t.Fatal("view does not show the bot")
	}
	if got := h.t.HeldFor(away); got != player(away) {
		t.Fatalf("HeldFor(%d) = %q, want %q: the bot keeps the seat for its player", away, got, player(away))
	}
	if _, err := h.cmd(player(away), bidCmd(0)); rejectOf(err) != tablev1.RejectReason_REJECT_REASON_NOT_SEATED {
		t.Fatalf("a move while the bot plays: %v", err)
	}
	// The bot plays the seat: run until it has moved once.
	for moved := false; !moved; {
		h.now = h.now.Add(time.Second)
		if seat := h.t.eng.toMove(); seat != away {
			h.mustCmd(player(seat), legalCommands(h.t, seat)[0])
			continue
		}
		d, _ := h.t.NextDeadline()
		if d.After(h.now.Add(tablesettings.DefaultBotDelay)) {
			t.Fatalf("the bot waits for a move timer: deadline %v", d)
		}
		n, who := serverMoves(h.tick(d))
		moved = n == 1 && who == away
	}
	evs, err = h.apply(Back(player(away), h.now))
	seated, ok := find(evs, (*tablev1.Event).GetPlayerSeated)
	if err != nil || !ok || seated.GetSeat().GetPlayerId() != player(away) || seated.GetSeat().GetBot() {
		t.Fatalf("back after the grace: %v %v", kinds(evs), err)
	}
	if got := h.t.HeldFor(away); got != "" {
		t.Fatalf("HeldFor(%d) = %q once the player is back", away, got)
	}
}

func flatten(log []logged) []*tablev1.Event {
	var out []*tablev1.Event
	for _, l := range log {
		out = append(out, l.evs...)
	}
	return out
}

func TestGraceExpiry_JapaneseMatchIsForfeited(t *testing.T) {
	h := newHarness(t, japaneseSet(21), 5, humans(2))
	if _, err := h.apply(Away("p1", t0.Add(time.Second))); err != nil {
		t.Fatal(err)
	}
	grace := t0.Add(time.Second + tablesettings.DefaultReconnectGrace)
	evs := h.tick(grace)
	ended, ok := find(evs, (*tablev1.Event).GetGameEnded)
	if !ok || ended.GetReason() != tablev1.GameEndReason_GAME_END_REASON_FORFEITED {
		t.Fatalf("grace expiry: %v", kinds(evs))
	}
	if p := ended.GetPlacings(); p[0].GetSeat() != 0 || p[0].GetPlace() != 1 || p[1].GetSeat() != 1 || p[1].GetPlace() != 2 {
		t.Fatalf("placings %v", p)
	}
	if _, ok := h.t.NextDeadline(); ok || !h.t.Over() {
		t.Fatal("the match goes on")
	}
	if _, err := h.cmd("p0", bidCmd(0)); rejectOf(err) != tablev1.RejectReason_REJECT_REASON_GAME_OVER {
		t.Fatal("no error")
	}
}

func TestBackBeforeGrace_NoBotAndNoForfeit(t *testing.T) {
	for name, s := range map[string]tablesettings.Settings{
		"classic":  classicSet(classic.Standard, tablesettings.DefaultBotDelay),
		"japanese": japaneseSet(21),
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, s, 9, humans(s.Game.Seats()))
			if _, err := h.apply(Away("p1", t0)); err != nil {
				t.Fatal(err)
			}
			evs, err := h.apply(Back("p1", t0.Add(tablesettings.DefaultReconnectGrace-time.Nanosecond)))
			if err != nil || count(evs, "player_back") != 1 {
				t.Fatalf("back: %v %v", kinds(evs), err)
			}
			// A second report changes nothing and says nothing.
			if evs, _ := h.apply(Back("p1", h.now)); len(evs) != 0 {
				t.Fatalf("second back: %v", kinds(evs))
			}
			evs = h.tick(t0.Add(tablesettings.DefaultReconnectGrace))
			if count(evs, "seat_taken_by_bot")+count(evs, "game_ended") != 0 {
				t.Fatalf("the grace fired after the player came back: %v", kinds(evs))
			}
		})
	}
}
