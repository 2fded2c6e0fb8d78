package runner

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/assign"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/services/table-runner/internal/table"
	"github.com/pulka/pulka/services/table-runner/internal/tablelog"
)

func isMove(e *tablev1.Event) bool {
	k := kindOf(e)
	return k == "trump_chosen" || k == "card_played" || k == "bid_made"
}

// plan computes n legal commands ahead on a copy of the driver's shadow game.
func plan(d *jDriver, n int) (players []string, cmds []*tablev1.Command) {
	d.sync()
	g := d.g.Clone()
	for range n {
		if g.Over() || g.AwaitingDeal() {
			break
		}
		seat := g.ToMove()
		m, _ := japanese.Bot{}.Choose(g, seat)
		if _, err := g.Apply(m, nil); err != nil {
			d.t.Fatal(err)
		}
		players = append(players, d.players[seat])
		cmds = append(cmds, commandOf(m))
	}
	return players, cmds
}

func TestRunner_FullInboxStopsReadingTheTableAndLosesNothing(t *testing.T) {
	_, rdb := startRedis(t)
	gate := make(chan struct{})
	var openGate sync.Once
	release := func() { openGate.Do(func() { close(gate) }) }
	blocked := make(chan struct{}, 1)
	var closedGate bool
	opt := testOptions("r1")
	opt.Inbox = 2
	opt.beforeApply = func(_ string, in table.Input) {
		if in.Kind == table.InputCommand && !closedGate {
			closedGate = true
			blocked <- struct{}{}
			<-gate
		}
	}
	r := startRunner(t, rdb, opt)
	// Registered after the runner's own cleanup, so it runs first: a test
	// that fails before opening the gate must not leave the table's
	// goroutine, and with it the runner's stop, waiting on it for ever.
	t.Cleanup(release)
	ts := japaneseStart("j1", 21, 21, "alice", "bob")
	place(t, rdb, ts, "r1")
	d := newJDriver(t, rdb, ts)
	first := waitEvent(t, rdb, "j1", "0", 5*time.Second, "the first timer", hasTimer)
	stream := streams.TableCommands("j1")
	// The first command must reach the table through the shared reader, not
	// through the catch-up that opens the table (which reads its backlog
	// before the reader follows it): wait until the reader follows it.
	waitFor(t, 5*time.Second, "the reader to follow the new table", func() bool {
		_, ok := r.tailer.Position(stream)
		return ok
	})

	players, cmds := plan(d, 40)
	ids := make([]string, len(cmds))
	ids[0] = send(t, rdb, "j1", players[0], cmds[0])
	<-blocked // the table's goroutine is busy with the first command
	for i := 1; i < len(cmds); i++ {
		ids[i] = send(t, rdb, "j1", players[i], cmds[i])
	}
	waitFor(t, 5*time.Second, "the reader to stop following the full table", func() bool {
		r.mu.Lock()
		s := r.slots["j1"]
		r.mu.Unlock()
		s.mu.Lock()
		defer s.mu.Unlock()
		_, following := r.tailer.Position(stream)
		return s.catchup && !s.inTailer && !following && len(s.inbox) == cap(s.inbox)
	})
	release()

	waitFor(t, 10*time.Second, "every command's move", func() bool {
		n := 0
		for _, e := range eventsAfter(t, rdb, "j1", first.id) {
			if isMove(e.ev) {
				n++
			}
		}
		return n == len(cmds)
	})
	var order []string
	for _, e := range eventsAfter(t, rdb, "j1", first.id) {
		if isMove(e.ev) {
			if byServer(e.ev) {
				t.Fatalf("server move %v", e.ev)
			}
			order = append(order, e.ev.GetCausedBy())
		}
		if kindOf(e.ev) == "move_rejected" {
			t.Fatalf("rejection %v: a command was applied out of order", e.ev)
		}
	}
	if !slices.Equal(order, ids) {
		t.Fatalf("moves caused by %v, want the commands in order %v", order, ids)
	}
	// The reader follows the table again.
	waitFor(t, 5*time.Second, "the reader to follow the table again", func() bool {
		_, ok := r.tailer.Position(stream)
		return ok
	})
	checkLog(t, rdb, ts, opt)
}

func TestRunner_StaleOwnerCannotAppendAfterTheLeaseMoved(t *testing.T) {
	_, rdb := startRedis(t)
	ctx := context.Background()
	opt := testOptions("r1")
	r := startRunner(t, rdb, opt)
	ts := japaneseStart("j1", 4, 21, "alice", "bob")
	place(t, rdb, ts, "r1")
	d := newJDriver(t, rdb, ts)
	waitEvent(t, rdb, "j1", "0", 5*time.Second, "the first timer", hasTimer)
	leases := streams.NewLeases(rdb, time.Minute)
	old, ok, err := leases.Current(ctx, streams.TableLease("j1"))
	if err != nil || !ok || old.Owner != "r1" {
		t.Fatalf("lease = %+v, %v, %v", old, ok, err)
	}
	// Another owner takes the table over (as the assigner does for a
	// migration); r1 is not told.
	taken, err := leases.Takeover(ctx, streams.TableLease("j1"), "r2")
	if err != nil {
		t.Fatal(err)
	}
	before, _ := rdb.XLen(ctx, streams.TableEvents("j1")).Result()
	d.sync()
	seat := d.g.ToMove()
	m, _ := japanese.Bot{}.Choose(d.g, seat)
	id := send(t, rdb, "j1", d.players[seat], commandOf(m))
	waitFor(t, 5*time.Second, "r1 to drop the table it no longer owns", func() bool {
		return !slices.Contains(r.Tables(), "j1")
	})
	// r1 applied the command in memory and was refused: nothing of it is
	// in the log.
	time.Sleep(200 * time.Millisecond)
	after, _ := rdb.XLen(ctx, streams.TableEvents("j1")).Result()
	if after != before {
		t.Fatalf("the event stream grew from %d to %d entries after the takeover", before, after)
	}
	// Neither can the stale owner write a snapshot.
	err = tablelog.WriteSnapshot(ctx, rdb, old, "j1", tablelog.Snapshot{EventID: "1-1", Table: []byte("x")})
	if !errors.Is(err, streams.ErrStaleEpoch) {
		t.Fatalf("stale snapshot write = %v, want ErrStaleEpoch", err)
	}
	// When the new owner lets go, r1 (still assigned) opens the table again
	// from the log, and the refused command is applied — once.
	if err := leases.Release(ctx, taken); err != nil {
		t.Fatal(err)
	}
	ev := waitEvent(t, rdb, "j1", "0", 5*time.Second, "the command's move", func(e *tablev1.Event) bool {
		return e.GetCausedBy() == id && isMove(e)
	})
	if ev.ev.GetEpoch() <= uint64(taken.Epoch) {
		t.Fatalf("the move was written with epoch %d, not above the takeover's %d", ev.ev.GetEpoch(), taken.Epoch)
	}
	checkLog(t, rdb, ts, opt)
}

func TestRunner_GracefulStopHandsTablesOverWithASnapshot(t *testing.T) {
	_, rdb := startRedis(t)
	ctx := context.Background()
	o1, o2 := testOptions("r1"), testOptions("r2")
	o1.Assigner, o2.Assigner = true, true
	o1.BotDelay, o2.BotDelay = 4*time.Millisecond, 4*time.Millisecond
	r1 := startRunner(t, rdb, o1)
	r2 := startRunner(t, rdb, o2)
	waitFor(t, 5*time.Second, "both runners to be members", func() bool {
		return r1.Ready(ctx) == nil && r2.Ready(ctx) == nil
	})
	ts := classicStart("c1", 99)
	publishStart(t, rdb, ts)
	waitFor(t, 5*time.Second, "the table to open", func() bool {
		return len(r1.Tables())+len(r2.Tables()) == 1
	})
	owner, other := r1, r2
	if len(r2.Tables()) == 1 {
		owner, other = r2, r1
	}
	waitEvent(t, rdb, "c1", "0", 10*time.Second, "the third hand", func(e *tablev1.Event) bool {
		return e.GetHandStarted() != nil && e.GetHandStarted().GetHandIndex() == 2
	})
	stopped := time.Now()
	owner.stop()
	snap, err := rdb.Get(ctx, streams.TableSnapshot("c1")).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	s, err := tablelog.ParseSnapshot(snap)
	if err != nil {
		t.Fatal(err)
	}
	// The hand-over snapshot includes the stopped owner's last event.
	var oldEpoch uint64
	last := ""
	for _, e := range allEvents(t, rdb, "c1") {
		if e.id == s.EventID {
			oldEpoch = e.ev.GetEpoch()
		}
		if oldEpoch != 0 && e.ev.GetEpoch() == oldEpoch {
			last = e.id
		}
	}
	if last == "" || s.EventID != last {
		t.Fatalf("hand-over snapshot at %q, the stopped owner's last event is %q", s.EventID, last)
	}
	next := waitEvent(t, rdb, "c1", last, 5*time.Second, "the next move", isMove)
	t.Logf("hand-over: next move %v after the owner stopped", time.Since(stopped).Round(time.Millisecond))
	if !slices.Contains(other.Tables(), "c1") {
		t.Fatalf("the table is not on the other runner")
	}
	if next.ev.GetEpoch() <= oldEpoch {
		t.Fatalf("the new owner wrote with epoch %d, not above %d", next.ev.GetEpoch(), oldEpoch)
	}
	waitEvent(t, rdb, "c1", last, 20*time.Second, "the game's end", isKind("game_ended"))
	checkLog(t, rdb, ts, o1)
	if _, ok, _ := assign.NewStore(rdb).Owner(ctx, "c1"); ok {
		waitFor(t, 2*time.Second, "the finished table to leave the assignment", func() bool {
			_, ok, _ := assign.NewStore(rdb).Owner(ctx, "c1")
			return !ok
		})
	}
}

func TestRunner_PresenceReportsStartAndEndTheGrace(t *testing.T) {
	_, rdb := startRedis(t)
	ctx := context.Background()
	startRunner(t, rdb, testOptions("r1"))
	ts := classicStart("c1", 1, "alice")
	place(t, rdb, ts, "r1")
	first := waitEvent(t, rdb, "c1", "0", 5*time.Second, "the game's start", isKind("game_started"))
	pub := streams.NewPublisher(rdb)
	report := func(away bool) {
		if _, err := pub.Publish(ctx, streams.PresenceEntry("c1", "alice", away)); err != nil {
			t.Fatal(err)
		}
	}
	report(true)
	away := waitEvent(t, rdb, "c1", first.id, 5*time.Second, "PlayerAway", isKind("player_away"))
	if away.ev.GetPlayerAway().GetPlayerId() != "alice" || away.ev.GetPlayerAway().GetGraceDeadline() == nil {
		t.Fatalf("away event %v", away.ev)
	}
	report(false)
	waitEvent(t, rdb, "c1", away.id, 5*time.Second, "PlayerBack", isKind("player_back"))
}

func TestRunner_UnplayableStartIsAbandonedNotRetriedForever(t *testing.T) {
	_, rdb := startRedis(t)
	ctx := context.Background()
	startRunner(t, rdb, testOptions("r1"))
	ts := japaneseStart("j1", 1, 21, "alice")
	ts.Seats = append(ts.Seats, seatsOf(nil, 1)...) // a bot at a Japanese table
	place(t, rdb, ts, "r1")
	waitFor(t, 5*time.Second, "the assignment to drop the table", func() bool {
		_, ok, _ := assign.NewStore(rdb).Owner(ctx, "j1")
		return !ok
	})
	if n, _ := rdb.XLen(ctx, "pulka:lobby:cmd").Result(); n != 1 {
		t.Fatalf("lobby commands = %d, want the FinishTable", n)
	}
	if n, _ := rdb.XLen(ctx, streams.TableEvents("j1")).Result(); n != 0 {
		t.Fatalf("an unplayable table logged %d events", n)
	}
}

// A seat that changes hands in a running game is reported to the lobby, so
// the list shows who plays it: a bot when the grace runs out, the player
// again when they come back.
func TestRunner_SeatChangesDuringTheGameAreToldToTheLobby(t *testing.T) {
	rdb, bot := aliceOutOfGrace(t)
	ctx := context.Background()
	pub := streams.NewPublisher(rdb)
	if _, err := pub.Publish(ctx, streams.PresenceEntry("c1", "alice", false)); err != nil {
		t.Fatal(err)
	}
	back := waitEvent(t, rdb, "c1", bot.id, 5*time.Second, "alice back in her seat", isKind("player_seated"))

	var changes []*lobbyv1.SeatChanged
	waitFor(t, 5*time.Second, "two SeatChanged lobby commands", func() bool {
		changes = seatChanges(t, rdb)
		return len(changes) >= 2
	})
	seat := bot.ev.GetSeatTakenByBot().GetSeat()
	want := []*lobbyv1.SeatChanged{
		{TableId: "c1", Seat: seat, PlayerId: "alice", Bot: true, EventSeq: bot.ev.GetSeq()},
		{TableId: "c1", Seat: seat, PlayerId: "alice", DisplayName: back.ev.GetPlayerSeated().GetSeat().GetDisplayName(), EventSeq: back.ev.GetSeq()},
	}
	if len(changes) != 2 || !proto.Equal(changes[0], want[0]) || !proto.Equal(changes[1], want[1]) {
		t.Fatalf("SeatChanged commands %v, want %v", changes, want)
	}
}

// A player who leaves a seat a bot plays for them (their grace ran out) makes
// it the bot's for good: the lobby hears so, although no SeatTakenByBot
// comes (the bot is there already).
func TestRunner_LeavingASeatABotHoldsIsToldToTheLobby(t *testing.T) {
	rdb, bot := aliceOutOfGrace(t)
	send(t, rdb, "c1", "alice", &tablev1.Command{Command: &tablev1.Command_Leave{Leave: &tablev1.LeaveCommand{}}})
	left := waitEvent(t, rdb, "c1", bot.id, 5*time.Second, "alice leaving", isKind("player_left"))
	var last *lobbyv1.SeatChanged
	waitFor(t, 5*time.Second, "the SeatChanged of the leave", func() bool {
		for _, sc := range seatChanges(t, rdb) {
			if sc.GetEventSeq() == left.ev.GetSeq() {
				last = sc
			}
		}
		return last != nil
	})
	want := &lobbyv1.SeatChanged{TableId: "c1", Seat: left.ev.GetPlayerLeft().GetSeat(), Bot: true, EventSeq: left.ev.GetSeq()}
	if !proto.Equal(last, want) {
		t.Fatalf("SeatChanged %v, want %v", last, want)
	}
}

// An away report read after the player has a live connection again (their
// "back" came first, from another gateway) is stale: the table keeps the
// player present. Once no connection is left, an away starts the grace.
func TestRunner_AnAwayWhileThePlayerIsConnectedIsSkipped(t *testing.T) {
	_, rdb := startRedis(t)
	ctx := context.Background()
	startRunner(t, rdb, testOptions("r1"))
	place(t, rdb, classicStart("c1", 1, "alice"), "r1")
	first := waitEvent(t, rdb, "c1", "0", 5*time.Second, "the game's start", isKind("game_started"))
	key := streams.TablePresence("c1", "alice")
	if err := rdb.ZAdd(ctx, key, redis.Z{Score: float64(time.Now().Add(time.Minute).UnixMilli()), Member: "conn-on-gateway-c"}).Err(); err != nil {
		t.Fatal(err)
	}
	pub := streams.NewPublisher(rdb)
	notices := listenNotices(t, rdb, "c1")
	stale, err := pub.Publish(ctx, streams.PresenceEntry("c1", "alice", true))
	if err != nil {
		t.Fatal(err)
	}
	// The table reads its command stream in order: once it has answered a
	// command sent after the stale report, it has handled that report.
	// (The answer is a refusal: a notice on the events' bell, not logged.)
	marker := send(t, rdb, "c1", "alice", playCmd(8))
	notices.wait(t, 5*time.Second, "the rejection", func(e *tablev1.Event) bool { return e.GetCausedBy() == marker })
	if err := rdb.Del(ctx, key).Err(); err != nil { // that connection closes too
		t.Fatal(err)
	}
	real, err := pub.Publish(ctx, streams.PresenceEntry("c1", "alice", true))
	if err != nil {
		t.Fatal(err)
	}
	waitEvent(t, rdb, "c1", first.id, 5*time.Second, "PlayerAway", isKind("player_away"))
	steps, err := tablelog.Read(ctx, rdb, "c1")
	if err != nil {
		t.Fatal(err)
	}
	var logged []string
	for _, st := range steps {
		if in := st.Input; in != nil && in.Kind == table.InputAway {
			logged = append(logged, in.EntryID)
		}
	}
	if !slices.Equal(logged, []string{real}) {
		t.Fatalf("away inputs logged from entries %v, want only the second report %s (not the stale %s)", logged, real, stale)
	}
}

// seatChanges lists the SeatChanged commands the lobby's stream holds, each
// checked to come from the runner.
func seatChanges(t *testing.T, rdb redis.UniversalClient) []*lobbyv1.SeatChanged {
	t.Helper()
	xs, err := rdb.XRange(context.Background(), "pulka:lobby:cmd", "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var out []*lobbyv1.SeatChanged
	for _, x := range xs {
		var cmd lobbyv1.LobbyCommand
		if err := proto.Unmarshal([]byte(x.Values[streams.FieldData].(string)), &cmd); err != nil {
			t.Fatal(err)
		}
		if sc := cmd.GetSeatChanged(); sc != nil {
			if cmd.GetPlayerId() != "" || !strings.HasPrefix(cmd.GetCommandId(), "table-runner:seat:") {
				t.Fatalf("a SeatChanged sent as %q with id %q", cmd.GetPlayerId(), cmd.GetCommandId())
			}
			out = append(out, sc)
		}
	}
	return out
}

// aliceOutOfGrace runs a classic table "c1" of alice and three bots with a
// 100 ms grace, reports alice away and returns once a bot took her seat.
func aliceOutOfGrace(t *testing.T) (redis.UniversalClient, loggedEvent) {
	t.Helper()
	_, rdb := startRedis(t)
	opt := testOptions("r1")
	opt.ReconnectGrace = 100 * time.Millisecond
	startRunner(t, rdb, opt)
	place(t, rdb, classicStart("c1", 1, "alice"), "r1")
	first := waitEvent(t, rdb, "c1", "0", 5*time.Second, "the game's start", isKind("game_started"))
	if _, err := streams.NewPublisher(rdb).Publish(context.Background(), streams.PresenceEntry("c1", "alice", true)); err != nil {
		t.Fatal(err)
	}
	return rdb, waitEvent(t, rdb, "c1", first.id, 5*time.Second, "a bot in alice's seat", isKind("seat_taken_by_bot"))
}
