package runner

// The rule these tests prove: "A new owner restores from the snapshot plus
// the log and continues from the same position, timers included." A table
// moves from runner a to runner b while a move timer or a reconnect grace is
// pending, and b must fire it at its ORIGINAL deadline — the one in the log —
// not one counted again from the takeover, and not never.
//
// The numbers: the timer (or grace) lasts migTimer and the owner goes
// migAt of the way into it, so a timer restarted at (or after) the takeover
// would fire at least migAt*migTimer = 2 s after its deadline, and a lost
// one not at all; the tests accept migTolerance = 1.5 s of lateness, which
// covers the restore and the tick's scheduling on a loaded machine (CI runs
// other packages' tests beside these). The takeover itself (heartbeat TTL
// 600 ms, assigner pass 50 ms, poll 30 ms; 0.5–0.8 s measured) must be done
// before the deadline, 3 s after the owner went; the test says so when it is
// not, rather than blame the table.

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/types/known/durationpb"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/table-runner/internal/tablelog"
)

const (
	migTimer     = 5 * time.Second         // the move timer and the reconnect grace of these tables
	migAt        = 0.4                     // how far into it the owner goes
	migTolerance = 1500 * time.Millisecond // accepted lateness; < migAt*migTimer
)

// How runner a lets its table go.
type leaving int

const (
	// crash: a loses Redis at once, as a killed or partitioned process
	// does: no hand-over snapshot, no lease release, no leaving the
	// membership; its heartbeat and lease renewals simply stop, and the
	// assigner moves its tables once its heartbeat expired (taking the
	// table's lease over for b). a's own timer, when it fires, cannot
	// write anything.
	crash leaving = iota
	// handOver: a stops gracefully (snapshot, lease released, membership
	// left), as on SIGTERM.
	handOver
)

func (l leaving) String() string {
	if l == crash {
		return "crash"
	}
	return "graceful hand-over"
}

// ownerPair is two in-process runners, a and b, both running the assigner.
// Runner a talks to Redis through its own client, so that it can be cut
// off alone.
type ownerPair struct {
	rdb  redis.UniversalClient // the test's client
	rdbA *redis.Client         // runner a's only connection to Redis
	a, b *testRunner
	opt  Options
}

func startPair(t *testing.T, botDelay time.Duration) *ownerPair {
	t.Helper()
	return startPairWith(t, func(o *Options) { o.BotDelay = botDelay })
}

// startPairWith is startPair with both runners' options changed by set.
func startPairWith(t *testing.T, set func(*Options)) *ownerPair {
	t.Helper()
	srv, rdb := startRedis(t)
	p := &ownerPair{rdb: rdb, rdbA: srv.Client(t)}
	oa, ob := testOptions("a"), testOptions("b")
	oa.Assigner, ob.Assigner = true, true
	set(&oa)
	set(&ob)
	p.opt = oa
	p.a = startRunner(t, p.rdbA, oa)
	p.b = startRunner(t, srv.Client(t), ob)
	ctx := context.Background()
	// Both must be members before a table is placed on a: a leader that
	// does not see a yet would move a's table at once.
	waitFor(t, 5*time.Second, "both runners to be members", func() bool {
		return p.a.Ready(ctx) == nil && p.b.Ready(ctx) == nil
	})
	return p
}

// leave makes runner a let go of its tables, the given way.
func (p *ownerPair) leave(t *testing.T, how leaving) {
	t.Helper()
	switch how {
	case crash:
		if err := p.rdbA.Close(); err != nil {
			t.Fatal(err)
		}
	case handOver:
		p.a.stop()
	}
}

// leaveMidway lets runner a go (how) migAt into the timer or grace (what)
// due at deadline, waits for runner b to own table id, and returns when a
// went. After a hand-over it checks that the snapshot holds the deadline.
func (p *ownerPair) leaveMidway(t *testing.T, id string, how leaving, what string, deadline time.Time) time.Time {
	t.Helper()
	started := deadline.Add(-migTimer)
	time.Sleep(time.Until(started.Add(time.Duration(migAt * float64(migTimer)))))
	left := time.Now()
	p.leave(t, how)
	if how == handOver {
		checkRestorable(t, p.rdb, id, true, deadline)
	}
	took := p.waitNewOwner(t, id, deadline)
	t.Logf("%v %v into the %v %s; runner b holds the lease %v later",
		how, left.Sub(started).Round(time.Millisecond), migTimer, what, took.Sub(left).Round(time.Millisecond))
	return left
}

// waitNewOwner waits until runner b holds the table's lease and returns
// the moment it was seen; it fails the test (as too slow to tell anything)
// when that is not before the deadline the table must keep.
func (p *ownerPair) waitNewOwner(t *testing.T, tableID string, deadline time.Time) time.Time {
	t.Helper()
	ctx := context.Background()
	leases := streams.NewLeases(p.rdb, time.Minute)
	var at time.Time
	waitFor(t, time.Until(deadline)+5*time.Second, "runner b to take the table's lease", func() bool {
		l, ok, err := leases.Current(ctx, streams.TableLease(tableID))
		if err == nil && ok && l.Owner == "b" {
			at = time.Now()
			return true
		}
		return false
	})
	if !at.Before(deadline) {
		t.Fatalf("runner b took the table %v after the deadline it must keep: the takeover is too slow here to tell a kept deadline from a restarted one",
			at.Sub(deadline).Round(time.Millisecond))
	}
	return at
}

// checkOnTime fails the test unless what happened at `at` happened at the
// original deadline: not before it, and at most migTolerance after it.
func checkOnTime(t *testing.T, what string, at, deadline, left time.Time) {
	t.Helper()
	late := at.Sub(deadline)
	t.Logf("%s at %v after its original deadline (the old owner went %v before it)",
		what, late.Round(time.Millisecond), deadline.Sub(left).Round(time.Millisecond))
	if late < 0 {
		t.Fatalf("%s %v BEFORE its deadline %v", what, -late, deadline)
	}
	if late > migTolerance {
		t.Fatalf("%s %v after its original deadline %v (allowed %v): the new owner did not keep the deadline from the log (restarted at the takeover, it would be at least %v late)",
			what, late.Round(time.Millisecond), deadline, migTolerance, left.Add(migTimer).Sub(deadline).Round(time.Millisecond))
	}
}

// followLogged applies every move logged after the driver's position to its
// shadow game.
func (d *jDriver) followLogged() {
	d.t.Helper()
	for _, e := range eventsAfter(d.t, d.rdb, d.table, d.after) {
		d.after = e.id
		if err := d.follow(e.ev); err != nil {
			d.t.Fatal(err)
		}
	}
}

// sync follows the log until the shadow game's current hand is dealt. The
// driver sends no client seeds (a late one would be refused and show in the
// log), so a hand is dealt at its seed deadline.
func (d *jDriver) sync() {
	d.t.Helper()
	d.followLogged()
	for until := time.Now().Add(5 * time.Second); d.g.AwaitingDeal(); d.followLogged() {
		if time.Now().After(until) {
			d.t.Fatalf("hand %d was not dealt", d.g.Hand())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// moveNow sends the shadow bot's move for the seat to move, as that seat's
// player's command, waits until the table applied it and returns the
// command id and the move's event.
func (d *jDriver) moveNow() (string, loggedEvent) {
	d.t.Helper()
	d.sync()
	seat := d.g.ToMove()
	m, ok := japanese.Bot{}.Choose(d.g, seat)
	if !ok {
		d.t.Fatalf("no move for seat %d", seat)
	}
	id := send(d.t, d.rdb, d.table, d.players[seat], commandOf(m))
	ev := waitEvent(d.t, d.rdb, d.table, d.after, 5*time.Second, "the move of command "+id, func(e *tablev1.Event) bool {
		return e.GetCausedBy() == id && isMove(e)
	})
	if byServer(ev.ev) {
		d.t.Fatalf("command %s: a server move %v", id, ev.ev)
	}
	d.followLogged()
	return id, ev
}

// intoSecondHand plays the match's whole first hand (so a snapshot is
// written at its end) and the trump and first card of the second (so the
// log goes on after the snapshot).
func (d *jDriver) intoSecondHand() {
	d.t.Helper()
	for d.g.Hand() == 0 {
		if d.g.Over() {
			d.t.Fatal("the match ended in its first hand")
		}
		d.moveNow()
	}
	d.moveNow()
	d.moveNow()
}

// lastTimer is the move timer the table's log started last.
func lastTimer(t *testing.T, rdb redis.UniversalClient, tableID string) (*tablev1.TimerStarted, loggedEvent) {
	t.Helper()
	var timer *tablev1.TimerStarted
	var at loggedEvent
	for _, e := range allEvents(t, rdb, tableID) {
		if tm := wire.TimerOf(e.ev); tm != nil {
			timer, at = tm, e
		}
	}
	if timer == nil {
		t.Fatal("the log started no move timer")
	}
	return timer, at
}

// checkRestorable proves that what the next owner restores from — the
// snapshot plus the log after it, or the genesis plus the whole log — holds
// the pending deadline.
func checkRestorable(t *testing.T, rdb redis.UniversalClient, tableID string, fromSnapshot bool, deadline time.Time) {
	t.Helper()
	st, err := tablelog.Restore(context.Background(), rdb, tableID)
	if err != nil {
		t.Fatal(err)
	}
	if st.FromSnapshot != fromSnapshot {
		t.Fatalf("restore from snapshot %t, want %t", st.FromSnapshot, fromSnapshot)
	}
	if at, ok := st.Table.NextDeadline(); !ok || !at.Equal(deadline) {
		t.Fatalf("the restored table's next deadline is %v (%t), the log's is %v", at, ok, deadline)
	}
	t.Logf("the next owner restores from snapshot %t plus %d logged steps", st.FromSnapshot, st.Steps)
}

func TestRunner_MoveTimerSurvivesAnOwnerCrashAndFiresAtItsOriginalDeadline(t *testing.T) {
	moveTimerSurvivesTheMove(t, crash)
}

func TestRunner_MoveTimerSurvivesAGracefulHandOverAndFiresAtItsOriginalDeadline(t *testing.T) {
	moveTimerSurvivesTheMove(t, handOver)
}

// moveTimerSurvivesTheMove: a Japanese match of two humans on runner a,
// a hand and two moves in, waits for a move nobody makes. migAt into the
// timer, a lets go (how). Runner b must make exactly one server move for
// the timer's seat, at the timer's logged deadline; then the next seat's
// player has a fresh, full timer and their own move is applied as theirs.
func moveTimerSurvivesTheMove(t *testing.T, how leaving) {
	p := startPair(t, time.Millisecond)
	const id = "j1"
	ts := withMoveTime(japaneseStart(id, 77, 31, "alice", "bob"), migTimer)
	place(t, p.rdb, ts, "a")
	d := newJDriver(t, p.rdb, ts)
	d.intoSecondHand()

	timer, timerEv := lastTimer(t, p.rdb, id)
	if int(timer.GetSeat()) != d.g.ToMove() {
		t.Fatalf("the last timer is seat %d's, seat %d is to move", timer.GetSeat(), d.g.ToMove())
	}
	deadline := timer.GetDeadline().AsTime()
	oldEpoch := timerEv.ev.GetEpoch()
	if how == crash {
		// a dies with the snapshot of the first hand's end and the log
		// after it: b restores from both.
		checkRestorable(t, p.rdb, id, true, deadline)
	}

	left := p.leaveMidway(t, id, how, "timer", deadline)

	move := waitEvent(t, p.rdb, id, timerEv.id, time.Until(deadline)+2*migTimer,
		"the server move of the timer due at "+deadline.Format(time.StampMilli)+" (lost by the new owner?)", byServer)
	at := move.ev.GetOccurredAt().AsTime()
	checkOnTime(t, "the timer's server move", at, deadline, left)
	if seat, _ := moveSeat(move.ev); seat != timer.GetSeat() {
		t.Fatalf("the server move is seat %d's, the timer seat %d's", seat, timer.GetSeat())
	}
	if move.ev.GetEpoch() <= oldEpoch {
		t.Fatalf("the server move was written with epoch %d, not above the old owner's %d", move.ev.GetEpoch(), oldEpoch)
	}
	if !slices.Contains(p.b.Tables(), id) {
		t.Fatal("the table is not open on runner b")
	}

	// The next move is a player's again, with a full timer from the server
	// move; the player makes it and it is theirs.
	next := move
	if wire.TimerOf(move.ev) == nil {
		next = waitEvent(t, p.rdb, id, move.id, 5*time.Second, "the next timer", func(e *tablev1.Event) bool { return wire.TimerOf(e) != nil })
	}
	nt := wire.TimerOf(next.ev)
	if got := nt.GetDeadline().AsTime().Sub(at); got != migTimer {
		t.Fatalf("the next timer runs %v from the server move, want %v", got, migTimer)
	}
	d.followLogged()
	if int(nt.GetSeat()) != d.g.ToMove() {
		t.Fatalf("the next timer is seat %d's, seat %d is to move", nt.GetSeat(), d.g.ToMove())
	}
	cmd, mine := d.moveNow()
	if seat, _ := moveSeat(mine.ev); seat != nt.GetSeat() || mine.ev.GetCausedBy() != cmd {
		t.Fatalf("the player's move %v", mine.ev)
	}

	// One server move in the whole log: the old owner's timer wrote
	// nothing, the new owner fired it once.
	n := 0
	for _, e := range allEvents(t, p.rdb, id) {
		if byServer(e.ev) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d server moves in the log, want 1", n)
	}
	checkLog(t, p.rdb, ts, p.opt)
}

// withGrace sets the table's own reconnect grace.
func withGrace(ts *lobbyv1.TableStarted, d time.Duration) *lobbyv1.TableStarted {
	ts.Settings.ReconnectGrace = durationpb.New(d)
	return ts
}

// awayNow reports the player away and returns the PlayerAway event.
func awayNow(t *testing.T, rdb redis.UniversalClient, tableID, player, after string) loggedEvent {
	t.Helper()
	if _, err := streams.NewPublisher(rdb).Publish(context.Background(), streams.PresenceEntry(tableID, player, true)); err != nil {
		t.Fatal(err)
	}
	away := waitEvent(t, rdb, tableID, after, 5*time.Second, player+" away", isKind("player_away"))
	if away.ev.GetPlayerAway().GetPlayerId() != player || away.ev.GetPlayerAway().GetGraceDeadline() == nil {
		t.Fatalf("away event %v", away.ev)
	}
	return away
}

// TestRunner_ClassicReconnectGraceSurvivesAnOwnerCrashAndGivesTheSeatToABotAtItsOriginalDeadline:
// alice (with three bots) is to move on runner a and goes away; migAt into
// her grace a crashes. Runner b, restoring from the genesis and the log,
// gives her seat to a bot at the grace's logged deadline, the bot plays her
// move, and she gets her seat back when she returns.
func TestRunner_ClassicReconnectGraceSurvivesAnOwnerCrashAndGivesTheSeatToABotAtItsOriginalDeadline(t *testing.T) {
	p := startPair(t, 100*time.Millisecond)
	ctx := context.Background()
	const id = "c1"
	ts := withGrace(classicStart(id, 5, "alice"), migTimer)
	place(t, p.rdb, ts, "a")
	mine := waitEvent(t, p.rdb, id, "0", 10*time.Second, "alice's turn", func(e *tablev1.Event) bool {
		tm := wire.TimerOf(e)
		return tm != nil && tm.GetSeat() == 0
	})
	away := awayNow(t, p.rdb, id, "alice", mine.id)
	deadline := away.ev.GetPlayerAway().GetGraceDeadline().AsTime()
	oldEpoch := away.ev.GetEpoch()
	// Nothing of the first hand has ended: b restores from the genesis and
	// the whole log.
	checkRestorable(t, p.rdb, id, false, deadline)

	left := p.leaveMidway(t, id, crash, "grace", deadline)

	bot := waitEvent(t, p.rdb, id, away.id, time.Until(deadline)+2*migTimer,
		"the bot to take alice's seat at the grace's end (lost by the new owner?)", isKind("seat_taken_by_bot"))
	checkOnTime(t, "the bot taking alice's seat", bot.ev.GetOccurredAt().AsTime(), deadline, left)
	if sb := bot.ev.GetSeatTakenByBot(); sb.GetSeat() != 0 || sb.GetReason() != tablev1.BotReason_BOT_REASON_GRACE_EXPIRED {
		t.Fatalf("seat taken by bot %v", bot.ev)
	}
	if bot.ev.GetEpoch() <= oldEpoch {
		t.Fatalf("the seat change was written with epoch %d, not above the old owner's %d", bot.ev.GetEpoch(), oldEpoch)
	}
	// Between the away and the bot, nothing happened: alice's move waited
	// for her (the move timer is a minute).
	for _, e := range eventsAfter(t, p.rdb, id, away.id) {
		if e.id == bot.id {
			break
		}
		t.Fatalf("%s before the grace ran out: %v", kindOf(e.ev), e.ev)
	}
	// The bot plays her seat, on behalf of alice: she takes it back.
	played := waitEvent(t, p.rdb, id, bot.id, 5*time.Second, "the bot's move in alice's seat", func(e *tablev1.Event) bool {
		s, ok := moveSeat(e)
		return ok && s == 0
	})
	if _, err := streams.NewPublisher(p.rdb).Publish(ctx, streams.PresenceEntry(id, "alice", false)); err != nil {
		t.Fatal(err)
	}
	back := waitEvent(t, p.rdb, id, played.id, 5*time.Second, "alice back in her seat", isKind("player_seated"))
	if sp := back.ev.GetPlayerSeated().GetSeat(); sp.GetSeat() != 0 || sp.GetPlayerId() != "alice" || sp.GetBot() {
		t.Fatalf("seated %v", back.ev)
	}
	n := 0
	for _, e := range allEvents(t, p.rdb, id) {
		if kindOf(e.ev) == "seat_taken_by_bot" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d seat_taken_by_bot in the log, want 1", n)
	}
	checkLog(t, p.rdb, ts, p.opt)
}

// TestRunner_JapaneseReconnectGraceSurvivesAnOwnerCrashAndForfeitsAtItsOriginalDeadline:
// a hand and two moves into a match on runner a, alice goes away; migAt
// into her grace a crashes. Runner b, restoring from the snapshot and the
// log, ends the match at the grace's logged deadline: alice forfeits, bob
// wins.
func TestRunner_JapaneseReconnectGraceSurvivesAnOwnerCrashAndForfeitsAtItsOriginalDeadline(t *testing.T) {
	p := startPair(t, time.Millisecond)
	const id = "j1"
	ts := withGrace(japaneseStart(id, 78, 31, "alice", "bob"), migTimer)
	place(t, p.rdb, ts, "a")
	d := newJDriver(t, p.rdb, ts)
	d.intoSecondHand()
	away := awayNow(t, p.rdb, id, "alice", d.after)
	deadline := away.ev.GetPlayerAway().GetGraceDeadline().AsTime()
	oldEpoch := away.ev.GetEpoch()
	checkRestorable(t, p.rdb, id, true, deadline)

	left := p.leaveMidway(t, id, crash, "grace", deadline)

	end := waitEvent(t, p.rdb, id, away.id, time.Until(deadline)+2*migTimer,
		"the match's end at the grace's end (lost by the new owner?)", isKind("game_ended"))
	checkOnTime(t, "the forfeit", end.ev.GetOccurredAt().AsTime(), deadline, left)
	ge := end.ev.GetGameEnded()
	if ge.GetReason() != tablev1.GameEndReason_GAME_END_REASON_FORFEITED {
		t.Fatalf("the match ended %v, want a forfeit", ge.GetReason())
	}
	if pl := ge.GetPlacings(); len(pl) != 2 || pl[0].GetPlace() != 1 || pl[0].GetPlayerId() != "bob" || pl[1].GetPlayerId() != "alice" {
		t.Fatalf("placings %v, want bob first", pl)
	}
	if end.ev.GetEpoch() <= oldEpoch {
		t.Fatalf("the match's end was written with epoch %d, not above the old owner's %d", end.ev.GetEpoch(), oldEpoch)
	}
	for _, e := range eventsAfter(t, p.rdb, id, away.id) {
		if isMove(e.ev) {
			t.Fatalf("a move after alice went away: %v", e.ev)
		}
	}
	checkLog(t, p.rdb, ts, p.opt)
}
