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
