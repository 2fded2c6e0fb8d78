package table

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/fairdeal"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

func seedCmd(hand uint32, seed []byte) *tablev1.Command {
	return &tablev1.Command{Command: &tablev1.Command_ClientSeed{ClientSeed: &tablev1.ClientSeedCommand{HandIndex: hand, Seed: seed}}}
}

func seedBytes(b byte) []byte { return bytes.Repeat([]byte{b}, fairdeal.SeedSize) }

// A classic table of four humans, nobody's seed sent yet.
func seedingTable(t *testing.T) *harness {
	t.Helper()
	h := newHarnessSeeding(t, classicSet(classic.Standard, DefaultBotDelay), 5, humans(4), false)
	if got := kinds(h.start); len(got) != 2 || got[1] != "hand_committed" {
		t.Fatalf("start events %v, want game_started hand_committed", got)
	}
	return h
}

func TestSeeding_HandCommittedAwaitsTheSeatedHumansWhoAreHereAndRunsNoTimer(t *testing.T) {
	seats := humans(4)
	seats[2] = SeatInfo{Bot: true, Name: "Bot"}
	h := newHarnessSeeding(t, classicSet(classic.Standard, DefaultBotDelay), 5, seats, false)
	hc := h.start[1].GetHandCommitted()
	if hc.GetHandIndex() != 0 || len(hc.GetCommitment()) != 32 || !hc.GetSeedDeadline().AsTime().Equal(t0.Add(DefaultSeedTimeout)) {
		t.Fatalf("hand_committed %v", hc)
	}
	if got := hc.GetAwaitedSeats(); len(got) != 3 || got[0] != 0 || got[1] != 1 || got[2] != 3 {
		t.Fatalf("awaited seats %v, want 0 1 3 (seat 2 is a bot)", got)
	}
	if d, ok := h.t.NextDeadline(); !ok || !d.Equal(t0.Add(DefaultSeedTimeout)) || h.t.View(0).GetDeadline() != nil {
		t.Fatalf("next deadline %v %v, want the seed deadline and no move timer", d, ok)
	}
	if h.t.eng.toMove() != -1 {
		t.Fatal("somebody is to move before the deal")
	}
}

func TestSeeding_AnAwayPlayerIsNotAwaitedAtTheNextHand(t *testing.T) {
	h := newHarness(t, classicSet(classic.Standard, DefaultBotDelay), 5, humans(4))
	if _, err := h.apply(Away("p1", t0)); err != nil {
		t.Fatal(err)
	}
	var next *tablev1.HandCommitted
	for next == nil && !h.t.Over() {
		s := h.t.eng.toMove()
		for _, e := range h.mustCmd(player(s), legalCommands(h.t, s)[0]) {
			if hc := e.GetHandCommitted(); hc != nil {
				next = hc
			}
		}
	}
	if got := next.GetAwaitedSeats(); next.GetHandIndex() != 1 || len(got) != 3 || got[0] != 0 || got[1] != 2 || got[2] != 3 {
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
	if evs := h.tick(t0.Add(DefaultSeedTimeout - 1)); len(evs) != 0 {
		t.Fatalf("dealt before the deadline: %v", kinds(evs))
	}
	evs := h.tick(t0.Add(DefaultSeedTimeout))
	if got := kinds(evs); got[0] != "hand_started" || TimerOf(evs[len(evs)-1]) == nil {
		t.Fatalf("at the deadline: %v, want the deal and the first move timer", got)
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
	next := uint32(0)
	ended := false
	for i, e := range evs {
		switch {
		case e.GetHandCommitted() != nil:
			if e.GetHandCommitted().GetHandIndex() != next || len(e.GetHandCommitted().GetAwaitedSeats()) != 0 ||
				evs[i+1].GetHandStarted() == nil {
				t.Fatalf("event %d: %v, want hand %d committed and dealt at once", i, e, next)
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
	if next != 16 {
		t.Fatalf("%d hands revealed, want 16", next)
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
