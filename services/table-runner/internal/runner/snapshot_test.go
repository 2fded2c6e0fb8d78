package runner

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/services/table-runner/internal/table"
	"github.com/pulka/pulka/services/table-runner/internal/tablelog"
)

// handEnds counts the hand_ended events in a table's log. It runs on the
// table's goroutine (no testing.T there): a read error counts as none.
func handEnds(rdb redis.UniversalClient, tableID string) int {
	xs, err := rdb.XRange(context.Background(), streams.TableEvents(tableID), "-", "+").Result()
	if err != nil {
		return 0
	}
	n := 0
	for _, x := range xs {
		s, _ := x.Values[streams.FieldData].(string)
		ev := &tablev1.Event{}
		if proto.Unmarshal([]byte(s), ev) == nil && ev.GetHandEnded() != nil {
			n++
		}
	}
	return n
}

// TestRunner_SnapshotsAtEveryHandBoundary checks the rule that a table's
// state is snapshotted at least at every hand boundary, while the table
// runs (not only when it is handed over). A classic game of four bots is
// stalled, through the beforeApply hook, right before the first input
// after each of its first two hands ended — i.e. after the step that ended
// the hand returned, snapshot included. There the snapshot must exist and
// record the last event of that step, hold the state the whole log
// replays to, and restoring must start from it and replay nothing.
func TestRunner_SnapshotsAtEveryHandBoundary(t *testing.T) {
	_, rdb := startRedis(t)
	ctx := context.Background()
	const id = "c1"

	var allowed atomic.Int64 // the table stalls once the log holds this many hand ends
	allowed.Store(1)
	stalled := make(chan int, 1) // the hand ends in the log when the table stalled
	resume := make(chan struct{})
	done := make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(done) }) }
	opt := testOptions("r1")
	opt.beforeApply = func(tableID string, _ table.Input) {
		select {
		case <-done:
			return
		default:
		}
		n := handEnds(rdb, tableID)
		if n < int(allowed.Load()) {
			return
		}
		stalled <- n
		select {
		case <-resume:
			allowed.Store(int64(n) + 1)
		case <-done:
		}
	}
	r := startRunner(t, rdb, opt)
	// Registered after the runner's own cleanup, so it runs first: a
	// stalled table must not keep the runner's stop waiting for ever.
	t.Cleanup(release)
	ts := classicStart(id, 42)
	place(t, rdb, ts, "r1")

	var prev string // the previous boundary's snapshot
	for hand := 1; hand <= 2; hand++ {
		select {
		case n := <-stalled:
			if n != hand {
				t.Fatalf("the table stalled with %d hand ends in its log, want %d", n, hand)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("hand %d did not end within 10 s", hand)
		}
		// The table is still open on its runner: no hand-over snapshot.
		if !slices.Contains(r.Tables(), id) {
			t.Fatalf("hand %d: the table is no longer open on its runner", hand)
		}

		steps, err := tablelog.Read(ctx, rdb, id)
		if err != nil {
			t.Fatal(err)
		}
		// The boundary step: the one whose events hold this hand's end. The
		// table stalled right after it, so it is the log's last step.
		bi := slices.IndexFunc(steps, func(s tablelog.Step) bool {
			return slices.ContainsFunc(s.Events, func(e *tablev1.Event) bool {
				return e.GetHandEnded() != nil && e.GetHandEnded().GetHandIndex() == uint32(hand-1)
			})
		})
		if bi < 0 {
			t.Fatalf("hand %d: no hand_ended with hand index %d in the log", hand, hand-1)
		}
		boundary := steps[bi]
		if bi != len(steps)-1 {
			t.Fatalf("hand %d: the log goes on %d steps after the hand's end", hand, len(steps)-1-bi)
		}
		var endID string
		for i, e := range boundary.Events {
			if e.GetHandEnded() != nil {
				endID = boundary.IDs[i]
			}
		}

		// (1) A snapshot exists after the hand ended.
		raw, err := rdb.Get(ctx, streams.TableSnapshot(id)).Bytes()
		if errors.Is(err, redis.Nil) {
			t.Fatalf("hand %d ended (event %s) and the table has no snapshot: not snapshotted at the hand boundary", hand, endID)
		}
		if err != nil {
			t.Fatal(err)
		}
		snap, err := tablelog.ParseSnapshot(raw)
		if err != nil {
			t.Fatal(err)
		}
		// (2) It was taken at the boundary: it includes the hand's end and
		// every event of the step that ended it.
		if streams.CompareIDs(snap.EventID, endID) < 0 {
			t.Fatalf("hand %d: the snapshot is at event %s, before the hand's end %s", hand, snap.EventID, endID)
		}
		if snap.EventID != boundary.LastID() {
			t.Fatalf("hand %d: the snapshot is at event %s, want the boundary step's last event %s", hand, snap.EventID, boundary.LastID())
		}
		if prev != "" && streams.CompareIDs(snap.EventID, prev) <= 0 {
			t.Fatalf("hand %d: the snapshot did not advance from %s (now %s)", hand, prev, snap.EventID)
		}
		prev = snap.EventID
		// It holds the state the whole log replays to.
		pure, err := tablelog.Verify(steps)
		if err != nil {
			t.Fatalf("pure replay of the log: %v", err)
		}
		want, err := pure.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(snap.Table, want) {
			t.Fatalf("hand %d: the snapshot's state differs from the pure replay of the log", hand)
		}

		// (3) Restoring starts from the snapshot and replays nothing (the
		// log ends at the snapshot); without it, it would replay all of it.
		st, err := tablelog.Restore(ctx, rdb, id)
		if err != nil {
			t.Fatal(err)
		}
		if !st.FromSnapshot || st.Steps != 0 || st.EventID != boundary.LastID() {
			t.Fatalf("hand %d: restore from snapshot %t, %d steps replayed (the log has %d), at %s; want from the snapshot, 0 steps, at %s",
				hand, st.FromSnapshot, st.Steps, len(steps), st.EventID, boundary.LastID())
		}
		if last := boundary.Events[len(boundary.Events)-1]; st.Table.Seq() != last.GetSeq() {
			t.Fatalf("hand %d: restored seq %d, the boundary's last event has %d", hand, st.Table.Seq(), last.GetSeq())
		}
		t.Logf("hand %d: snapshot at %s (step %d of %d), restore replays %d steps", hand, snap.EventID, bi+1, len(steps), st.Steps)

		if hand < 2 {
			resume <- struct{}{} // (4) on to the second hand's end
		}
	}
	release()
}
