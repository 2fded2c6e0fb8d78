package streams_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
)

func publishN(t *testing.T, pub *streams.Publisher, stream string, from, to int) []string {
	t.Helper()
	var ids []string
	for i := from; i < to; i++ {
		id, err := pub.Publish(context.Background(), streams.Entry{Stream: stream, Data: []byte(strconv.Itoa(i))})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func datas(ms []streams.Message) string {
	s := ""
	for i, m := range ms {
		if i > 0 {
			s += ","
		}
		s += string(m.Data)
	}
	return s
}

func TestReadAfter_ReturnsEverythingAfterIDExclusive(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	stream := streams.TableEvents("r")
	ids := publishN(t, streams.NewPublisher(rdb), stream, 0, 5)
	cases := []struct {
		after string
		count int64
		want  string
	}{
		{"0", 100, "0,1,2,3,4"},
		{"", 2, "0,1"},
		{ids[1], 100, "2,3,4"},
		{ids[4], 100, ""},
	}
	for _, tc := range cases {
		got, err := streams.ReadAfter(ctx, rdb, stream, tc.after, tc.count)
		if err != nil {
			t.Fatal(err)
		}
		if datas(got) != tc.want {
			t.Errorf("after %q: %q, want %q", tc.after, datas(got), tc.want)
		}
	}
	none, err := streams.ReadAfter(ctx, rdb, streams.TableEvents("missing"), "0", 10)
	if err != nil || len(none) != 0 {
		t.Fatalf("missing stream: %v %v", none, err)
	}
}

func TestReadAfter_TrimmedHistoryIsAnErrorNotAHole(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	stream := streams.TableEvents("trim")
	ids := publishN(t, streams.NewPublisher(rdb, streams.WithMaxLen(0)), stream, 0, 10)
	if err := rdb.XTrimMaxLen(ctx, stream, 5).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := streams.ReadAfter(ctx, rdb, stream, ids[2], 100); !errors.Is(err, streams.ErrTrimmed) {
		t.Fatalf("after a trimmed ID: %v, want ErrTrimmed", err)
	}
	if _, err := streams.ReadAfter(ctx, rdb, stream, "0", 100); !errors.Is(err, streams.ErrTrimmed) {
		t.Fatalf("full replay of a trimmed stream: %v, want ErrTrimmed", err)
	}
	got, err := streams.ReadAfter(ctx, rdb, stream, ids[6], 100)
	if err != nil || datas(got) != "7,8,9" {
		t.Fatalf("after a kept ID: %q %v", datas(got), err)
	}
}

func TestTailer_FollowsManyStreamsFromTheirPositions(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	pub := streams.NewPublisher(rdb)
	a, b, c := streams.TableEvents("a"), streams.TableEvents("b"), streams.TableEvents("c")
	idsA := publishN(t, pub, a, 0, 3)
	publishN(t, pub, b, 0, 3)

	var mu sync.Mutex
	got := map[string][]streams.Message{}
	tl := streams.NewTailer(rdb, func(ctx context.Context, m streams.Message) {
		mu.Lock()
		got[m.Stream] = append(got[m.Stream], m)
		mu.Unlock()
	}, streams.WithBatchKeys(2), streams.WithBlock(5*time.Second))
	if err := tl.Add(ctx, a, idsA[0]); err != nil { // a reconnecting client saw 0
		t.Fatal(err)
	}
	if err := tl.Add(ctx, b, "$"); err != nil { // only new entries
		t.Fatal(err)
	}
	stop := runConsumer(t, tl)
	publishN(t, pub, a, 3, 5)
	publishN(t, pub, b, 3, 4)
	// c is added at run time, in a second batch (batch size 2).
	if err := tl.Add(ctx, c, "0"); err != nil {
		t.Fatal(err)
	}
	publishN(t, pub, c, 0, 2)
	snapshot := func(s string) string { mu.Lock(); defer mu.Unlock(); return datas(got[s]) }
	eventually(t, 3*time.Second, "all streams", func() bool {
		return snapshot(a) == "1,2,3,4" && snapshot(b) == "3" && snapshot(c) == "0,1"
	})
	if pos, ok := tl.Position(a); !ok || pos != lastID(t, rdb, a) {
		t.Errorf("Position(a) = %s %v, want the last delivered ID", pos, ok)
	}
	tl.Remove(ctx, a)
	if _, ok := tl.Position(a); ok {
		t.Errorf("removed stream still has a position")
	}
	time.Sleep(100 * time.Millisecond)
	publishN(t, pub, a, 5, 6)
	publishN(t, pub, c, 2, 3)
	eventually(t, 3*time.Second, "c after removal of a", func() bool { return snapshot(c) == "0,1,2" })
	if snapshot(a) != "1,2,3,4" {
		t.Errorf("removed stream still delivered: %s", snapshot(a))
	}
	start := time.Now()
	stop()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("tailer shutdown took %s with 5s blocking reads", d)
	}
}

func lastID(t *testing.T, rdb *redis.Client, stream string) string {
	t.Helper()
	m, err := rdb.XRevRangeN(context.Background(), stream, "+", "-", 1).Result()
	if err != nil || len(m) != 1 {
		t.Fatalf("last entry of %s: %v", stream, err)
	}
	return m[0].ID
}

// A table paused and resumed at an earlier position while the reader is still
// delivering an old batch of its stream: the old batch must stop, and the
// stream is read again from the position it was re-added at. Before the
// compare-and-set advance, the old batch moved the new position past entries
// the resumed reader never saw.
func TestTailer_ReAddAtEarlierPositionDuringDeliveryLosesNothing(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	pub := streams.NewPublisher(rdb)
	s := streams.TableEvents("pause")
	ids := publishN(t, pub, s, 0, 6)

	var mu sync.Mutex
	var got []string
	resumed := false
	var afterResume []string
	blocked, release := make(chan struct{}), make(chan struct{})
	tl := streams.NewTailer(rdb, func(ctx context.Context, m streams.Message) {
		if string(m.Data) == "2" && !resumed {
			close(blocked)
			<-release
		}
		mu.Lock()
		got = append(got, string(m.Data))
		if resumed {
			afterResume = append(afterResume, string(m.Data))
		}
		mu.Unlock()
	}, streams.WithBlock(time.Second), streams.WithCount(100))
	if err := tl.Add(ctx, s, "0"); err != nil {
		t.Fatal(err)
	}
	stop := runConsumer(t, tl)
	defer stop()
	<-blocked
	// The consumer pauses the stream and resumes it after entry 0, the last
	// one it had applied (it dropped 1 while paused, as the table-runner does).
	tl.Remove(ctx, s)
	mu.Lock()
	resumed = true
	mu.Unlock()
	if err := tl.Add(ctx, s, ids[0]); err != nil {
		t.Fatal(err)
	}
	close(release)
	eventually(t, 3*time.Second, "entries after the resume position", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(afterResume) >= 5 && afterResume[len(afterResume)-1] == "5"
	})
	mu.Lock()
	defer mu.Unlock()
	seen := map[string]bool{}
	for _, d := range afterResume {
		seen[d] = true
	}
	for _, want := range []string{"1", "2", "3", "4", "5"} {
		if !seen[want] {
			t.Fatalf("after resuming at entry 0, entry %s was never delivered (after resume: %v, all: %v)", want, afterResume, got)
		}
	}
}
