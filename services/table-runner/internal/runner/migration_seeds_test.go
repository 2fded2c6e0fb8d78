package runner

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/fairdeal"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/services/table-runner/internal/table"
	"github.com/pulka/pulka/services/table-runner/internal/tablelog"
)

// The rule: a table that moves between HandCommitted and the deal keeps the
// committed server seed and the client seeds it received, takes the missing
// ones after the move, and deals exactly the cards of the key they make.
func TestMigration_MidSeedingKeepsTheCommittedSeedAndDealsTheSameCards(t *testing.T) {
	for _, how := range []leaving{crash, handOver} {
		t.Run(how.String(), func(t *testing.T) { seedsSurviveTheMove(t, how) })
	}
}

func seedsSurviveTheMove(t *testing.T, how leaving) {
	// The seed deadline is as long as the migration tests' timers, so the
	// move happens well inside it.
	p := startPairWith(t, func(o *Options) { o.SeedTimeout = migTimer })
	id := fmt.Sprintf("seeds-%d", how)
	ts := japaneseStart(id, 7, 31, "alice", "bob")
	place(t, p.rdb, ts, "a")
	committed := waitEvent(t, p.rdb, id, "0", 5*time.Second, "hand 0's commitment", isKind("hand_committed"))
	hc := committed.ev.GetHandCommitted()
	if len(hc.GetAwaitedSeats()) != 2 {
		t.Fatalf("awaited seats %v, want both players", hc.GetAwaitedSeats())
	}
	alice, bob := seedOf(0xa1), seedOf(0xb0)
	send(t, p.rdb, id, "alice", clientSeedCmd(0, alice))
	waitEvent(t, p.rdb, id, committed.id, 5*time.Second, "alice's seed", isKind("client_seed_accepted"))

	p.leaveMidway(t, id, how, "seed deadline", hc.GetSeedDeadline().AsTime())
	send(t, p.rdb, id, "bob", clientSeedCmd(0, bob))
	started := waitEvent(t, p.rdb, id, committed.id, 5*time.Second, "the deal", isKind("hand_started"))
	if at := started.ev.GetOccurredAt().AsTime(); !at.Before(hc.GetSeedDeadline().AsTime()) {
		t.Fatalf("dealt at %v, not before the seed deadline %v: bob's seed after the move did not count", at, hc.GetSeedDeadline().AsTime())
	}

	// The server seed committed to before the move is hand 0's: the genesis
	// (table.New, on runner a) holds it.
	steps, err := tablelog.Read(t.Context(), p.rdb, id)
	if err != nil {
		t.Fatal(err)
	}
	genesis, err := table.Restore(steps[0].Genesis)
	if err != nil {
		t.Fatal(err)
	}
	sd, _ := genesis.CurrentSeeds()
	if c, _ := fairdeal.Commit(sd.Hand, sd.Server); !bytes.Equal(c[:], hc.GetCommitment()) {
		t.Fatal("the commitment is not the genesis's server seed's")
	}
	k, err := fairdeal.ShuffleKey(sd.Hand, sd.Server, []fairdeal.ClientSeed{alice, bob})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := fairdeal.Shuffle(k)
	decl := int(started.ev.GetHandStarted().GetDealerSeat())
	want := map[uint32]cards.Set{uint32(decl): cards.SetOf(d[0:3]...), uint32(1 - decl): cards.SetOf(d[3:6]...)}
	dealt := 0
	var epochs []uint64
	for _, e := range eventsAfter(t, p.rdb, id, committed.id) {
		epochs = append(epochs, e.ev.GetEpoch())
		if x := e.ev.GetDealt(); x != nil && e.ev.GetSeq() > started.ev.GetSeq() && dealt < 2 {
			got := cards.Set(0)
			for _, c := range x.GetCards() {
				got = got.With(cards.Card(c - 1))
			}
			if got != want[x.GetSeat()] {
				t.Fatalf("seat %d was dealt %v, the committed seed and both client seeds deal %v", x.GetSeat(), got, want[x.GetSeat()])
			}
			dealt++
		}
	}
	if dealt != 2 || epochs[0] == epochs[len(epochs)-1] {
		t.Fatalf("%d seats dealt; epochs %v (the deal must be the new owner's)", dealt, epochs)
	}

	// Resigning ends the hand: its reveal gives the same seeds.
	send(t, p.rdb, id, "alice", &tablev1.Command{Command: &tablev1.Command_Resign{Resign: &tablev1.ResignCommand{}}})
	rev := waitEvent(t, p.rdb, id, started.id, 5*time.Second, "the reveal", isKind("hand_revealed")).ev.GetHandRevealed()
	if !bytes.Equal(rev.GetServerSeed(), sd.Server[:]) || !bytes.Equal(rev.GetClientSeeds()[0], alice[:]) ||
		!bytes.Equal(rev.GetClientSeeds()[1], bob[:]) || !bytes.Equal(rev.GetCommitment(), hc.GetCommitment()) {
		t.Fatalf("revealed %x", rev)
	}
	checkLog(t, p.rdb, ts, p.opt)
}

func seedOf(b byte) (s fairdeal.ClientSeed) {
	for i := range s {
		s[i] = b ^ byte(i)
	}
	return s
}

func clientSeedCmd(hand uint32, s fairdeal.ClientSeed) *tablev1.Command {
	return &tablev1.Command{Command: &tablev1.Command_ClientSeed{ClientSeed: &tablev1.ClientSeedCommand{
		HandIndex: hand, Seed: s[:]}}}
}
