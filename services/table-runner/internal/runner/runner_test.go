package runner

import (
	"context"
	"strconv"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/assign"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/wire"
)

func TestRunner_ClassicGameOfFourBotsFinishesAndEqualsAPureReplay(t *testing.T) {
	_, rdb := startRedis(t)
	opt := testOptions("r1")
	opt.Assigner = true
	startRunner(t, rdb, opt)
	ts := classicStart("c1", 7)
	publishStart(t, rdb, ts)
	end := waitEvent(t, rdb, "c1", "0", 30*time.Second, "the game's end", isKind("game_ended"))

	final, steps := checkLog(t, rdb, ts, opt)
	if !final.Over() {
		t.Fatal("the pure replay of the log did not reach the game's end")
	}
	var replayed *tablev1.Event
	for _, s := range steps {
		for _, ev := range s.Events {
			if kindOf(ev) == "game_ended" {
				replayed = ev
			}
		}
	}
	if !proto.Equal(replayed.GetGameEnded(), end.ev.GetGameEnded()) {
		t.Fatalf("final standings %v, pure replay %v", end.ev.GetGameEnded(), replayed.GetGameEnded())
	}

	// Scoring heard every hand once, exactly as the pure replay has it, and
	// the sheet built from those hands gives the final standings' scores.
	waitFor(t, 5*time.Second, "the game's end on the scoring stream", func() bool {
		_, ok := scoringInputs(t, rdb, final.GameID())["end"]
		return ok
	})
	got := scoringInputs(t, rdb, final.GameID())
	want := pureScoring(final, steps)
	if len(got) != len(want) || len(want) != 24+2 {
		t.Fatalf("scoring got %d inputs, pure replay %d (want 24 hands + start + end)", len(got), len(want))
	}
	var hands []scoring.HandResult
	for i := range 24 {
		k := "hand" + strconv.Itoa(i)
		if !proto.Equal(got[k], want[k]) {
			t.Fatalf("%s: published %v, pure replay %v", k, got[k], want[k])
		}
		var h scoring.HandResult
		for _, s := range got[k].GetHandResult().GetSeats() {
			h.Bids[s.GetSeat()], h.Tricks[s.GetSeat()] = int(s.GetBid()), int(s.GetTricks())
		}
		hands = append(hands, h)
	}
	sheet, err := scoring.Build(final.Settings().Classic, hands)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range end.ev.GetGameEnded().GetPlacings() {
		if int64(sheet.Total[p.GetSeat()]) != p.GetScore() {
			t.Fatalf("seat %d: sheet total %d, final standings %d", p.GetSeat(), sheet.Total[p.GetSeat()], p.GetScore())
		}
	}
	// The game is over: the table is forgotten by the assignment and the
	// lobby was told.
	waitFor(t, 5*time.Second, "the assignment to forget the table", func() bool {
		_, ok, _ := assign.NewStore(rdb).Owner(context.Background(), "c1")
		return !ok
	})
	n, err := rdb.XLen(context.Background(), "pulka:lobby:cmd").Result()
	if err != nil || n != 1 {
		t.Fatalf("lobby commands = %d (%v), want one FinishTable", n, err)
	}
}

func TestRunner_JapaneseMatchDrivenByCommandsFinishesAndEqualsAPureReplay(t *testing.T) {
	_, rdb := startRedis(t)
	opt := testOptions("r1")
	startRunner(t, rdb, opt)
	ts := japaneseStart("j1", 11, 21, "alice", "bob")
	place(t, rdb, ts, "r1")
	d := newJDriver(t, rdb, ts)
	d.play(60 * time.Second)
	t.Logf("match over after %d commands", len(d.sent))

	final, steps := checkLog(t, rdb, ts, opt)
	if !final.Over() {
		t.Fatal("the pure replay did not reach the match's end")
	}
	// Every command the driver sent was applied exactly once, and all of
	// them were moves (none rejected, no server move).
	applied := map[string]bool{}
	for _, s := range steps {
		if s.Input == nil || s.Input.Command == nil {
			continue
		}
		applied[s.Input.Command.GetCommandId()] = true
		for _, ev := range s.Events {
			if kindOf(ev) == "move_rejected" {
				t.Fatalf("command %s rejected: %v", s.Input.Command.GetCommandId(), ev)
			}
		}
	}
	for _, id := range d.sent {
		if !applied[id] {
			t.Fatalf("command %s was sent but is not in the log", id)
		}
	}
	if len(applied) != len(d.sent) || d.moves != len(d.sent) {
		t.Fatalf("%d commands sent, %d applied, %d moves seen", len(d.sent), len(applied), d.moves)
	}
	got := scoringInputs(t, rdb, final.GameID())
	for k, w := range pureScoring(final, steps) {
		if !proto.Equal(got[k], w) {
			t.Fatalf("%s: published %v, pure replay %v", k, got[k], w)
		}
	}
	if _, ok := got["end"].GetInput().(*scoringv1.ScoringInput_GameEnded); !ok {
		t.Fatal("scoring did not hear the match's end")
	}
}

func TestRunner_DuplicateCommandIDHasOneEffect(t *testing.T) {
	_, rdb := startRedis(t)
	startRunner(t, rdb, testOptions("r1"))
	ts := japaneseStart("j1", 3, 11, "alice", "bob")
	place(t, rdb, ts, "r1")
	d := newJDriver(t, rdb, ts)
	notices := listenNotices(t, rdb, "j1")
	timer := waitEvent(t, rdb, "j1", "0", 5*time.Second, "the first timer", hasTimer)
	d.sync()
	seat := d.g.ToMove()
	m, _ := japanese.Bot{}.Choose(d.g, seat)
	c := commandOf(m)
	c.CommandId = "same-id"
	send(t, rdb, "j1", d.players[seat], c)
	c2 := commandOf(m)
	c2.CommandId = "same-id"
	send(t, rdb, "j1", d.players[seat], c2)
	// A later, distinct command shows when both copies have been read.
	marker := send(t, rdb, "j1", "nobody", bidCmd(1))
	notices.wait(t, 5*time.Second, "the marker's rejection", func(e *tablev1.Event) bool { return e.GetCausedBy() == marker })
	moves := 0
	for _, e := range eventsAfter(t, rdb, "j1", timer.id) {
		if e.ev.GetCausedBy() == "same-id" && (kindOf(e.ev) == "trump_chosen" || kindOf(e.ev) == "card_played") {
			moves++
		}
	}
	for _, e := range notices.all() {
		if e.GetCausedBy() == "same-id" {
			t.Fatalf("the repeat was answered: %v", e)
		}
	}
	if moves != 1 {
		t.Fatalf("the command id made %d moves, want 1", moves)
	}
}

func TestRunner_IllegalMoveIsRejectedToTheSenderOnlyAndChangesNothing(t *testing.T) {
	_, rdb := startRedis(t)
	startRunner(t, rdb, testOptions("r1"))
	ts := japaneseStart("j1", 5, 11, "alice", "bob")
	place(t, rdb, ts, "r1")
	d := newJDriver(t, rdb, ts)
	notices := listenNotices(t, rdb, "j1")
	// The first player's legal moves share the entry of the event carrying
	// its timer (wire.FieldLegal): nothing after that entry so far.
	before := waitEvent(t, rdb, "j1", "0", 5*time.Second, "the first player's legal moves",
		func(e *tablev1.Event) bool { return e.GetLegalMoves() != nil })
	d.sync()
	wrong := 1 - d.g.ToMove()
	bad := send(t, rdb, "j1", d.players[wrong], playCmd(8))
	// The answer is a notice on the events' bell (a gateway hands it to the
	// sender), not an event of the log.
	rej := notices.wait(t, 5*time.Second, "the rejection", func(e *tablev1.Event) bool { return e.GetCausedBy() == bad })
	v := rej.GetVisibility()
	if v.GetAudience() != tablev1.Audience_AUDIENCE_PLAYER || v.GetPlayerId() != d.players[wrong] {
		t.Fatalf("rejection visible to %v, want only player %s", v, d.players[wrong])
	}
	if r := rej.GetMoveRejected().GetReason(); r == tablev1.RejectReason_REJECT_REASON_UNSPECIFIED || rej.GetSeq() != 0 {
		t.Fatalf("rejection without a reason, or numbered in the history: %v", rej)
	}
	if after := eventsAfter(t, rdb, "j1", before.id); len(after) != 0 {
		t.Fatalf("a rejected command caused %d events, want none", len(after))
	}
	// The table goes on as if nothing happened: the right player moves.
	d.sync()
	seat := d.g.ToMove()
	m, _ := japanese.Bot{}.Choose(d.g, seat)
	id := send(t, rdb, "j1", d.players[seat], commandOf(m))
	waitEvent(t, rdb, "j1", before.id, 5*time.Second, "the legal move", func(e *tablev1.Event) bool {
		return e.GetCausedBy() == id && (kindOf(e) == "trump_chosen" || kindOf(e) == "card_played")
	})
}

func TestRunner_TimerExpiryMakesExactlyOneServerMove(t *testing.T) {
	_, rdb := startRedis(t)
	startRunner(t, rdb, testOptions("r1"))
	ts := withMoveTime(japaneseStart("j1", 9, 11, "alice", "bob"), 300*time.Millisecond)
	place(t, rdb, ts, "r1")
	first := waitEvent(t, rdb, "j1", "0", 5*time.Second, "the first timer", func(e *tablev1.Event) bool { return wire.TimerOf(e) != nil })
	deadline := wire.TimerOf(first.ev).GetDeadline().AsTime()
	move := waitEvent(t, rdb, "j1", first.id, 5*time.Second, "the timer's move", byServer)
	if at := move.ev.GetOccurredAt().AsTime(); at.Before(deadline) || at.After(deadline.Add(200*time.Millisecond)) {
		t.Fatalf("the timer's move happened at %v, deadline %v", at, deadline)
	}
	// Exactly one server move per expiry: the next one comes only after a
	// new timer ran out, never two for one deadline.
	// (The move itself may carry the next timer.)
	next := move
	if wire.TimerOf(move.ev) == nil {
		next = waitEvent(t, rdb, "j1", move.id, 5*time.Second, "the next timer", func(e *tablev1.Event) bool { return wire.TimerOf(e) != nil })
	}
	n := 0
	for _, e := range eventsAfter(t, rdb, "j1", first.id) {
		if streams.CompareIDs(e.id, next.id) > 0 {
			break
		}
		if byServer(e.ev) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d server moves for one timer expiry", n)
	}
}
