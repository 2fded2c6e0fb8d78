package table

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/fairdeal"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/pkg/wire"
)

func seedCmd(hand uint32, seed []byte) *tablev1.Command {
	return &tablev1.Command{Command: &tablev1.Command_ClientSeed{ClientSeed: &tablev1.ClientSeedCommand{HandIndex: hand, Seed: seed}}}
}

func seedBytes(b byte) []byte { return bytes.Repeat([]byte{b}, fairdeal.SeedSize) }

// A classic table of four humans, nobody's seed sent yet.
func seedingTable(t *testing.T) *harness {
	t.Helper()
	h := newHarnessSeeding(t, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 5, humans(4), false)
	if got := kinds(h.start); len(got) != 2 || got[1] != "hand_committed" {
		t.Fatalf("start events %v, want game_started hand_committed", got)
	}
	return h
}

func TestSeeding_HandCommittedAwaitsTheSeatedHumansWhoAreHereAndRunsNoTimer(t *testing.T) {
	seats := humans(4)
	seats[2] = SeatInfo{Bot: true, Name: "Bot"}
	h := newHarnessSeeding(t, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 5, seats, false)
	hc := h.start[1].GetHandCommitted()
	if hc.GetHandIndex() != 0 || len(hc.GetCommitment()) != 32 || !hc.GetSeedDeadline().AsTime().Equal(t0.Add(tablesettings.DefaultSeedTimeout)) {
		t.Fatalf("hand_committed %v", hc)
	}
	if got := hc.GetAwaitedSeats(); len(got) != 3 || got[0] != 0 || got[1] != 1 || got[2] != 3 {
		t.Fatalf("awaited seats %v, want 0 1 3 (seat 2 is a bot)", got)
	}
	if d, ok := h.t.NextDeadline(); !ok || !d.Equal(t0.Add(tablesettings.DefaultSeedTimeout)) || h.t.View(0).GetDeadline() != nil {
		t.Fatalf("next deadline %v %v, want the seed deadline and no move timer", d, ok)
	}
	if h.t.eng.toMove() != -1 {
		t.Fatal("somebody is to move before the deal")
	}
}

// p1 goes away after hand 1 was committed ahead (awaiting every seat):
// when hand 0 ends, hand 1 no longer waits for p1's seed (it deals once the
// others' are in), and hand 2, committed ahead at hand 1's deal, does not
// await p1 at all.
func TestSeeding_AnAwayPlayerIsNotAwaitedAtTheNextHand(t *testing.T) {
	h := newHarnessSeeding(t, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 5, humans(4), false)
	for s := range 4 {
		h.mustCmd(player(s), seedCmd(0, seedBytes(byte(s+1))))
	}
	if !h.t.nx.active || h.t.nx.index != 1 || h.t.nx.awaited != 0b1111 {
		t.Fatalf("hand 1 committed ahead: %+v, want awaiting every seat", h.t.nx)
	}
	if _, err := h.apply(Away("p1", t0)); err != nil {
		t.Fatal(err)
	}
	var next *tablev1.HandCommitted
	for next == nil && !h.t.Over() {
		if h.t.sd.waiting() {
			if h.t.sd.index != 1 || h.t.sd.awaited != 0b1101 {
				t.Fatalf("hand %d waits for seats %04b with p1 away, want hand 1 and 1101", h.t.sd.index, h.t.sd.awaited)
			}
			for _, s := range []int{0, 2, 3} {
				for _, e := range h.mustCmd(player(s), seedCmd(1, seedBytes(byte(s+5)))) {
					if hc := e.GetHandCommitted(); hc != nil {
						next = hc
					}
				}
			}
			continue
		}
		s := h.t.eng.toMove()
		h.mustCmd(player(s), legalCommands(h.t, s)[0])
	}
	if h.t.sd.index != 1 || h.t.sd.waiting() {
		t.Fatal("hand 1 was not dealt on the seeds of the seats that are here")
	}
	if got := next.GetAwaitedSeats(); next.GetHandIndex() != 2 || len(got) != 3 || got[0] != 0 || got[1] != 2 || got[2] != 3 {
		t.Fatalf("hand %d awaits %v with p1 away, want 0 2 3", next.GetHandIndex(), got)
	}
}

func TestSeeding_TheLastAwaitedSeedDealsAtOnce(t *testing.T) {
	h := seedingTable(t)
	for s := range 3 {
		evs := h.mustCmd(player(s), seedCmd(0, seedBytes(byte(s+1))))
		if got := kinds(evs); len(got) != 1 || got[0] != "client_seed_accepted" || evs[0].GetClientSeedAccepted().GetSeat() != uint32(s) {
			t.Fatalf("seed of seat %d: %v", s, got)
		}
	}
	evs := h.mustCmd(player(3), seedCmd(0, seedBytes(4)))
	if got := kinds(evs); len(got) < 3 || got[0] != "client_seed_accepted" || got[1] != "hand_started" {
		t.Fatalf("the last seed: %v, want the deal after it", got)
	}
	sd, _ := h.t.CurrentSeeds()
	for s, c := range sd.Clients {
		if !bytes.Equal(c[:], seedBytes(byte(s+1))) {
			t.Fatalf("seat %d's seed is %x", s, c)
		}
	}
}

func TestSeeding_RefusedSeedsGoToTheirSenderAndChangeNothingElse(t *testing.T) {
	h := seedingTable(t)
	h.mustCmd("p0", seedCmd(0, seedBytes(1)))
	for name, c := range map[string]struct {
		from string
		cmd  *tablev1.Command
		want tablev1.RejectReason
	}{
		"a second seed of a seat": {"p0", seedCmd(0, seedBytes(2)), tablev1.RejectReason_REJECT_REASON_NOT_ALLOWED},
		"a seed for another hand": {"p1", seedCmd(1, seedBytes(2)), tablev1.RejectReason_REJECT_REASON_WRONG_PHASE},
		"a seed of 31 bytes":      {"p1", seedCmd(0, seedBytes(2)[:31]), tablev1.RejectReason_REJECT_REASON_MALFORMED},
		"a seed of 33 bytes":      {"p1", seedCmd(0, append(seedBytes(2), 0)), tablev1.RejectReason_REJECT_REASON_MALFORMED},
		"a watcher's seed":        {"stranger", seedCmd(0, seedBytes(2)), tablev1.RejectReason_REJECT_REASON_NOT_SEATED},
		"no seed at all":          {"p1", seedCmd(0, nil), tablev1.RejectReason_REJECT_REASON_MALFORMED},
	} {
		t.Run(name, func(t *testing.T) {
			// A refusal is outside the history and changes nothing, the
			// seeding included (mustReject compares the whole snapshot).
			mustReject(t, h, c.from, c.cmd, c.want, nil)
		})
	}
}

func TestSeeding_TheDeadlineDealsWithoutTheMissingSeeds(t *testing.T) {
	h := seedingTable(t)
	h.mustCmd("p2", seedCmd(0, seedBytes(7)))
	if evs := h.tick(t0.Add(tablesettings.DefaultSeedTimeout - 1)); len(evs) != 0 {
		t.Fatalf("dealt before the deadline: %v", kinds(evs))
	}
	evs := h.tick(t0.Add(tablesettings.DefaultSeedTimeout))
	if got := kinds(evs); got[0] != "hand_started" || wire.TimerOf(evs[len(evs)-2]) == nil || got[len(got)-1] != "legal_moves" {
		t.Fatalf("at the deadline: %v, want the deal, the first move timer and its legal moves", got)
	}
	sd, _ := h.t.CurrentSeeds()
	want := []fairdeal.ClientSeed{fairdeal.NoClientSeed, fairdeal.NoClientSeed, fairdeal.ClientSeed(seedBytes(7)), fairdeal.NoClientSeed}
	for s := range want {
		if sd.Clients[s] != want[s] {
			t.Fatalf("seat %d contributes %x", s, sd.Clients[s])
		}
	}
	if _, err := h.cmd("p0", seedCmd(0, seedBytes(1))); rejectOf(err) != tablev1.RejectReason_REJECT_REASON_WRONG_PHASE {
		t.Fatalf("a seed after the deal: %v, want WRONG_PHASE", err)
	}
}

func TestSeeding_BotsOnlyDealAtOnceAndEveryHandIsRevealedAfterItsEnd(t *testing.T) {
	bots := make([]SeatInfo, 4)
	for i := range bots {
		bots[i] = SeatInfo{Bot: true, Name: "Bot"}
	}
	h := newHarness(t, classicSet(classic.Nines, 0), 3, bots)
	evs := append(append([]*tablev1.Event(nil), h.start...), h.tick(t0)...)
	if !h.t.Over() {
		t.Fatal("a game of bots with no delay did not end in one tick")
	}
	// Hand 0 is committed and dealt at once; every later hand is committed
	// right after the deal of the hand before it (a hand ahead) and dealt
	// right after that hand's reveal; no hand is committed after the last.
	next, committed := uint32(0), uint32(0)
	ended := false
	for i, e := range evs {
		switch {
		case e.GetHandCommitted() != nil:
			hc := e.GetHandCommitted()
			afterDeal := i > 0 && (evs[i-1].GetTrumpTurned() != nil || evs[i-1].GetDealt() != nil)
			if hc.GetHandIndex() != committed || len(hc.GetAwaitedSeats()) != 0 ||
				(committed == 0 && evs[i+1].GetHandStarted() == nil) || (committed > 0 && (!afterDeal || hc.GetSeedDeadline() != nil)) {
				t.Fatalf("event %d: %v, want hand %d committed (hand 0 dealt at once, the others after the deal before)", i, e, committed)
			}
			committed++
		case e.GetHandStarted() != nil:
			if e.GetHandStarted().GetHandIndex() != next || committed != next+1 || (next > 0 && evs[i-1].GetHandRevealed() == nil) {
				t.Fatalf("event %d: hand %d dealt, want hand %d right after the reveal before it", i, e.GetHandStarted().GetHandIndex(), next)
			}
		case e.GetHandEnded() != nil:
			ended = true
		case e.GetHandRevealed() != nil:
			if !ended || e.GetHandRevealed().GetHandIndex() != next {
				t.Fatalf("event %d: hand %d revealed before its end", i, e.GetHandRevealed().GetHandIndex())
			}
			ended = false
			next++
		}
	}
	if next != 16 || committed != 16 {
		t.Fatalf("%d hands revealed and %d committed, want 16", next, committed)
	}
}

func TestSeeding_AStepThatMustCommitAHandWithoutEntropyFails(t *testing.T) {
	_, _, err := New("t", "g", classicSet(classic.Standard, 0), humans(4), t0, Entropy{})
	if !errors.Is(err, ErrNoEntropy) {
		t.Fatalf("New without entropy: %v, want ErrNoEntropy", err)
	}
}

func TestSeeding_SnapshotMidSeedingKeepsTheSeeds(t *testing.T) {
	h := seedingTable(t)
	h.mustCmd("p1", seedCmd(0, seedBytes(9)))
	r, err := Restore(state(t, h.t))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := h.t.CurrentSeeds()
	b, _ := r.CurrentSeeds()
	if a.Server != b.Server || a.Clients[1] != b.Clients[1] || a.Dealt || b.Dealt || r.sd != h.t.sd {
		t.Fatal("the restored table lost the seeding")
	}
	at := t0.Add(time.Second)
	in := CommandInput(&tablev1.Command{CommandId: "x", PlayerId: "p0", Command: seedCmd(0, seedBytes(3)).Command}, h.entry(), at)
	in.Entropy = entropyOf(5, 1000)
	e1, _ := h.t.Apply(in)
	e2, _ := r.Apply(in)
	if len(e1) != 1 || !bytes.Equal(marshalEvents(t, e1)[0], marshalEvents(t, e2)[0]) || !bytes.Equal(state(t, h.t), state(t, r)) {
		t.Fatal("the restored table goes on differently")
	}
}

// TestSeeding_TheViewCarriesTheCommitmentAndTheSeedsReceived: a client
// that resynchronises from a view (history trimmed) has seen neither the
// HandCommitted nor the ClientSeedAccepted events; the view gives it the
// commitment, the awaited seats, the seed deadline and the seats already
// seeded while the hand waits, the commitment alone once dealt, and
// nothing secret.
func TestSeeding_TheViewCarriesTheCommitmentAndTheSeedsReceived(t *testing.T) {
	h := seedingTable(t)
	hc := h.start[1].GetHandCommitted()
	h.mustCmd(player(1), seedCmd(0, seedBytes(9)))
	for _, seat := range []int{1, -1} {
		v := h.t.View(seat)
		c := v.GetCommitted()
		if c.GetHandIndex() != 0 || !bytes.Equal(c.GetCommitment(), hc.GetCommitment()) || !c.GetSeedDeadline().AsTime().Equal(hc.GetSeedDeadline().AsTime()) ||
			len(c.GetAwaitedSeats()) != 4 || len(v.GetSeededSeats()) != 1 || v.GetSeededSeats()[0] != 1 {
			t.Fatalf("seat %d's view while seeding: committed %v, seeded %v", seat, c, v.GetSeededSeats())
		}
	}
	for s := range 4 {
		if s != 1 {
			h.mustCmd(player(s), seedCmd(0, seedBytes(byte(s+1))))
		}
	}
	v := h.t.View(0)
	if c := v.GetCommitted(); !bytes.Equal(c.GetCommitment(), hc.GetCommitment()) || c.GetSeedDeadline() != nil || len(v.GetSeededSeats()) != 0 {
		t.Fatalf("the view once dealt: committed %v, seeded %v", c, v.GetSeededSeats())
	}
	sd, _ := h.t.CurrentSeeds()
	raw, err := proto.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := sd.Key()
	if bytes.Contains(raw, sd.Server[:]) || bytes.Contains(raw, k[:]) {
		t.Fatal("the view carries the server seed or the key")
	}
}

// seedTaken reports whether evs accept a client seed, in an event of its
// own or riding on a move.
func seedTaken(evs []*tablev1.Event) bool {
	for _, e := range evs {
		if e.GetClientSeedAccepted() != nil || e.GetSeedAccepted() != nil {
			return true
		}
	}
	return false
}

// withSeed makes c carry seat's client seed for hand.
func withSeed(c *tablev1.Command, hand uint32, seed []byte) *tablev1.Command {
	c.AttachedSeed = &tablev1.ClientSeedCommand{HandIndex: hand, Seed: seed}
	return c
}

// TestSeeding_SeedsRideOnMovesAndTheNextHandIsDealtAsTheHandBeforeEnds:
// hand 1 is committed a hand ahead, at hand 0's deal, without a seed
// deadline; each seat's first move of hand 0 carries its seed for hand 1,
// accepted to that seat only and caused by the move; the move that ends
// hand 0 deals hand 1 in the same step, after hand 0's reveal, with no
// seed command at all; and hand 1's reveal lists the seeds that rode on the
// moves.
func TestSeeding_SeedsRideOnMovesAndTheNextHandIsDealtAsTheHandBeforeEnds(t *testing.T) {
	h := newHarness(t, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 5, humans(4))
	last := h.start[len(h.start)-2].GetHandCommitted() // before the first bidder's legal moves
	if last.GetHandIndex() != 1 || last.GetSeedDeadline() != nil || len(last.GetAwaitedSeats()) != 4 {
		t.Fatalf("the start's last event %v, want hand 1 committed ahead, every seat awaited, no deadline", last)
	}
	sent := map[int]bool{}
	var ending []*tablev1.Event
	for h.t.sd.index == 0 && !h.t.Over() {
		s := h.t.eng.toMove()
		c := legalCommands(h.t, s)[0]
		if !sent[s] {
			withSeed(c, 1, seedBytes(byte(0x40+s)))
		}
		evs := h.mustCmd(player(s), c)
		if !sent[s] {
			sent[s] = true
			// The acceptance rides on the move's own public event: no
			// event of its own, and no timer_started after one.
			acc := evs[0].GetSeedAccepted()
			if acc.GetHandIndex() != 1 || acc.GetSeat() != uint32(s) || acc == nil || evs[0].GetCausedBy() != c.GetCommandId() ||
				evs[0].GetVisibility().GetAudience() != tablev1.Audience_AUDIENCE_PUBLIC ||
				slices.Contains(kinds(evs), "client_seed_accepted") || slices.Contains(kinds(evs), "timer_started") {
				t.Fatalf("seat %d's move with its seed: %v (%v), want the acceptance of hand 1's seed on the move's event", s, kinds(evs), acc)
			}
		}
		ending = evs
	}
	got := kinds(ending)
	at := func(k string) int { return slices.Index(got, k) }
	if at("hand_ended") < 0 || at("hand_revealed") < at("hand_ended") || at("hand_started") != at("hand_revealed")+1 ||
		ending[at("hand_started")].GetHandStarted().GetHandIndex() != 1 {
		t.Fatalf("the move that ends hand 0: %v, want its end, its reveal and hand 1's deal in the same step", got)
	}
	for _, l := range h.log {
		if l.in.Kind == InputCommand && l.in.Command.GetClientSeed() != nil && l.in.Command.GetClientSeed().GetHandIndex() == 1 {
			t.Fatal("a seed command of its own for hand 1")
		}
	}
	// Play hand 1 to its end: its reveal lists the seeds of the moves.
	for h.t.sd.index == 1 && !h.t.Over() {
		s := h.t.eng.toMove()
		for _, e := range h.mustCmd(player(s), legalCommands(h.t, s)[0]) {
			if r := e.GetHandRevealed(); r != nil && r.GetHandIndex() == 1 {
				for seat, cs := range r.GetClientSeeds() {
					if !bytes.Equal(cs, seedBytes(byte(0x40+seat))) {
						t.Fatalf("hand 1 reveals seat %d's seed %x", seat, cs)
					}
				}
				return
			}
		}
	}
	t.Fatal("hand 1 was not revealed")
}

// TestSeeding_AnAttachedSeedNeverRefusesAGoodMove: a seed the table does not
// await (another hand's, a second one of the seat) is ignored and the move
// stands; a malformed one refuses the whole move, which changes nothing; a
// refused move takes no seed.
func TestSeeding_AnAttachedSeedNeverRefusesAGoodMove(t *testing.T) {
	h := newHarness(t, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 5, humans(4))
	s := h.t.eng.toMove()
	good := legalCommands(h.t, s)[0]

	// A malformed seed: the move is refused and not played.
	mustReject(t, h, player(s), withSeed(proto.CloneOf(good), 1, seedBytes(1)[:31]), tablev1.RejectReason_REJECT_REASON_MALFORMED, nil)
	// An illegal move with a good seed: refused, and the seed not taken.
	bad := bidCmd(99)
	mustReject(t, h, player(s), withSeed(bad, 1, seedBytes(1)), tablev1.RejectReason_REJECT_REASON_INVALID_BID, nil)
	if h.t.nx.got != 0 {
		t.Fatal("a refused move's seed was taken")
	}
	// A seed for a hand not committed: ignored, the move stands.
	evs := h.mustCmd(player(s), withSeed(proto.CloneOf(good), 2, seedBytes(1)))
	if seedTaken(evs) || h.t.nx.got != 0 || h.t.eng.toMove() == s {
		t.Fatalf("a move with another hand's seed: %v, want the move alone", kinds(evs))
	}
	// The seat's seed for hand 1 on its own, then a second one riding on a
	// move: the second is ignored, the first stays.
	s2 := h.t.eng.toMove()
	h.mustCmd(player(s2), seedCmd(1, seedBytes(7)))
	evs = h.mustCmd(player(s2), withSeed(legalCommands(h.t, s2)[0], 1, seedBytes(8)))
	if seedTaken(evs) || h.t.nx.clients[s2] != fairdeal.ClientSeed(seedBytes(7)) {
		t.Fatalf("a second seed riding on a move: %v, seat's seed %x", kinds(evs), h.t.nx.clients[s2])
	}
}

// TestSeeding_TheHandAheadSurvivesASnapshotAndShowsInTheView: mid-hand, the
// hand committed ahead (with a seed taken) restores from the snapshot, goes
// on identically, and shows in every view as next_committed without any
// secret.
func TestSeeding_TheHandAheadSurvivesASnapshotAndShowsInTheView(t *testing.T) {
	h := newHarness(t, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 5, humans(4))
	s := h.t.eng.toMove()
	h.mustCmd(player(s), withSeed(legalCommands(h.t, s)[0], 1, seedBytes(3)))
	r, err := Restore(state(t, h.t))
	if err != nil {
		t.Fatal(err)
	}
	if r.nx != h.t.nx || !r.ahead {
		t.Fatal("the restored table lost the hand committed ahead")
	}
	for _, seat := range []int{s, -1} {
		v := h.t.View(seat)
		n := v.GetNextCommitted()
		if n.GetHandIndex() != 1 || !bytes.Equal(n.GetCommitment(), h.t.nx.commit[:]) || n.GetSeedDeadline() != nil ||
			len(n.GetAwaitedSeats()) != 4 || len(v.GetNextSeededSeats()) != 1 || v.GetNextSeededSeats()[0] != uint32(s) ||
			v.GetCommitted().GetHandIndex() != 0 || len(v.GetSeededSeats()) != 0 {
			t.Fatalf("seat %d's view: next %v seeded %v", seat, n, v.GetNextSeededSeats())
		}
		raw, err := proto.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, h.t.nx.server[:]) || bytes.Contains(raw, h.t.sd.server[:]) {
			t.Fatal("the view carries a server seed")
		}
	}
	s2 := h.t.eng.toMove()
	c := withSeed(legalCommands(h.t, s2)[0], 1, seedBytes(4))
	c.CommandId, c.PlayerId = "x", player(s2)
	in := CommandInput(c, h.entry(), h.now)
	in.Entropy = entropyOf(5, 1000)
	e1, _ := h.t.Apply(in)
	e2, _ := r.Apply(in)
	if len(e1) == 0 || !slices.EqualFunc(marshalEvents(t, e1), marshalEvents(t, e2), bytes.Equal) || !bytes.Equal(state(t, h.t), state(t, r)) {
		t.Fatal("the restored table goes on differently")
	}
}

// A client seed sent on its own for the hand committed ahead, while a hand
// is played, leaves the turn's timer alone: rescheduling on it gave the
// player to move a whole new move time (and wrote a timer and legal moves)
// whenever any seated player sent their seed. The seed is accepted, to its
// seat only.
func TestSeeding_ASeedForTheNextHandLeavesTheTurnsTimerAlone(t *testing.T) {
	h := newHarness(t, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 5, humans(4))
	mover := h.t.eng.toMove()
	deadline, _ := h.t.NextDeadline()
	h.now = h.now.Add(10 * time.Second)
	for s := range 4 { // the mover's own seed and the others'
		evs := h.mustCmd(player(s), seedCmd(1, seedBytes(byte(0x50+s))))
		if got := kinds(evs); len(got) != 1 || got[0] != "client_seed_accepted" ||
			evs[0].GetVisibility().GetAudience() != tablev1.Audience_AUDIENCE_SEAT || evs[0].GetVisibility().GetSeat() != uint32(s) {
			t.Fatalf("seat %d's seed for the next hand: %v, want its acceptance alone, to its seat", s, got)
		}
		if d, _ := h.t.NextDeadline(); !d.Equal(deadline) || h.t.eng.toMove() != mover {
			t.Fatalf("after seat %d's seed the turn runs to %v, want %v", s, d, deadline)
		}
	}
}
