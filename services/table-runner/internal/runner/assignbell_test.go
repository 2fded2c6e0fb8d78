package runner

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/assign"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/streams"
)

// A table placed on a runner, or moved to it, is opened at once: the
// assignment rings the runner's bell (assign.RunnerBell) and the runner
// reads its set then, not at its next poll. The poll here is 20 s, so only
// the bell can open the table within the test's 3 s; likewise a table moved
// away is closed at once.
func TestRunner_ATableAssignedHereOpensAtOnceNotAtTheNextPoll(t *testing.T) {
	_, rdb := startRedis(t)
	ctx := context.Background()
	opt := testOptions("r1")
	opt.PollInterval, opt.HeartbeatTTL = 20*time.Second, time.Minute
	r1 := startRunner(t, rdb, opt)
	waitFor(t, 5*time.Second, "the runner to be a member", func() bool { return r1.Ready(ctx) == nil })
	// The first poll and the subscription's first wake-up are over.
	time.Sleep(300 * time.Millisecond)

	ts := classicStart("bell1", 7, "p1", "p2", "p3", "p4") // players: nothing moves, the game stays open
	placed := time.Now()
	place(t, rdb, ts, "r1")
	waitEvent(t, rdb, "bell1", "0", 3*time.Second, "the table's genesis", func(*tablev1.Event) bool { return true })
	t.Logf("placed → genesis appended: %v (poll interval %v)", time.Since(placed).Round(time.Millisecond), opt.PollInterval)
	if !slices.Contains(r1.Tables(), "bell1") {
		t.Fatalf("tables %v, want bell1", r1.Tables())
	}

	if ok, err := assign.NewStore(rdb).Move(ctx, streams.Lease{}, "bell1", "r1", "elsewhere"); err != nil || !ok {
		t.Fatal(ok, err)
	}
	waitFor(t, 3*time.Second, "the table moved away to close", func() bool { return len(r1.Tables()) == 0 })
}

// A runner fenced on a table (its lease taken over: in production, the
// runner was cut off from Redis and the table moved) backs off reopening
// it while the assignment still names it. Once the table is elsewhere that
// back-off is forgotten: when the table is moved back here — the assigner
// having taken the lease over for this runner — it opens at once, not when
// the back-off ends (a poll interval, 2 s here, doubling with each failure
// up to 5 s: the tail of the partition measurement, where the runners took
// turns being cut off and each table came back to a runner fenced on it).
func TestRunner_ATableMovedBackAfterAFenceOpensAtOnce(t *testing.T) {
	_, rdb := startRedis(t)
	ctx := context.Background()
	opt := testOptions("r1")
	opt.PollInterval, opt.HeartbeatTTL, opt.LeaseTTL = 2*time.Second, 6*time.Second, 3*time.Second
	r1 := startRunner(t, rdb, opt)
	waitFor(t, 5*time.Second, "the runner to be a member", func() bool { return r1.Ready(ctx) == nil })
	place(t, rdb, classicStart("back1", 7, "p1", "p2", "p3", "p4"), "r1")
	waitEvent(t, rdb, "back1", "0", 3*time.Second, "the table's genesis", func(*tablev1.Event) bool { return true })

	// Another runner's lease on the table: r1's next renewal is refused.
	leases := streams.NewLeases(rdb, time.Minute)
	if _, err := leases.Takeover(ctx, streams.TableLease("back1"), "r2"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 3*time.Second, "the fenced table to close", func() bool { return len(r1.Tables()) == 0 })
	fenced := time.Now()
	store := assign.NewStore(rdb)
	if ok, err := store.Move(ctx, streams.Lease{}, "back1", "r1", "r2"); err != nil || !ok {
		t.Fatal(ok, err)
	}
	time.Sleep(300 * time.Millisecond) // r1, woken by the bell, reads its set without the table

	// Moved back, as the assigner does it: the lease first, then the record.
	l, err := leases.Takeover(ctx, streams.TableLease("back1"), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := store.Move(ctx, streams.Lease{}, "back1", "r2", "r1"); err != nil || !ok {
		t.Fatal(ok, err)
	}
	moved := time.Now()
	waitFor(t, time.Second, "the table moved back to open", func() bool {
		cur, ok, err := leases.Current(ctx, streams.TableLease("back1"))
		return err == nil && ok && cur.Owner == "r1" && cur.Epoch > l.Epoch && slices.Contains(r1.Tables(), "back1")
	})
	t.Logf("fenced → moved away and back in %v → reopened with a new epoch: %v",
		moved.Sub(fenced).Round(time.Millisecond), time.Since(moved).Round(time.Millisecond))
}
