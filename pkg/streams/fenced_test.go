package streams_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
)

// Many tables appending at once share pipelines, and each table's entries
// still land once, in its own order, with the IDs its calls were given.
func TestFencedBatcher_CoalescesTablesAppendsAndKeepsEachTablesOrder(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t, func(o *redis.Options) { o.PoolSize = 4 })
	ctx := ctxT(t)
	var pc pipelineCounter
	rdb.AddHook(&pc)
	ls := streams.NewLeases(rdb, time.Minute)
	b := streams.NewPublisher(rdb, streams.WithMaxLen(0)).NewFencedBatcher(ctx, 64, 2)
	const tables, steps = 32, 40
	eachTableAtOnce(ctx, t, ls, "fb", tables, func(id string, lease streams.Lease) {
		stream := streams.TableEvents(id)
		var want []string
		for s := 0; s < steps; s++ {
			// Two entries a step, as a move and its trick end.
			d1, d2 := strconv.Itoa(2*s), strconv.Itoa(2*s+1)
			ids, err := b.AppendFenced(ctx, lease, streams.Entry{Stream: stream, Data: []byte(d1)},
				streams.Entry{Stream: stream, Data: []byte(d2)})
			if err != nil || len(ids) != 2 {
				t.Errorf("table %s step %d: %v %v", id, s, ids, err)
				return
			}
			want = append(want, ids[0]+"="+d1, ids[1]+"="+d2)
		}
		msgs, err := rdb.XRange(ctx, stream, "-", "+").Result()
		if err != nil {
			t.Error(err)
			return
		}
		var got []string
		for _, m := range msgs {
			got = append(got, m.ID+"="+m.Values[streams.FieldData].(string))
		}
		if joinSp(got) != joinSp(want) {
			t.Errorf("table %s stream = %v, want %v", id, got, want)
		}
	})
	b.Close()
	if trips := pc.trips.Load(); trips >= tables*steps/2 {
		t.Errorf("%d round trips for %d appends: not coalesced", trips, tables*steps)
	}
	if _, err := b.AppendFenced(ctx, streams.Lease{}, streams.Entry{Stream: "x"}); !errors.Is(err, streams.ErrClosed) {
		t.Errorf("append after Close: %v, want ErrClosed", err)
	}
}

// A stale lease fails its own call only: the other calls of the same
// pipeline append, and the stale one appends nothing.
func TestFencedBatcher_StaleLeaseFailsOnlyItsOwnCall(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	ls := streams.NewLeases(rdb, time.Minute)
	b := streams.NewPublisher(rdb).NewFencedBatcher(ctx, 64, 1)
	old, err := ls.Acquire(ctx, streams.TableLease("stale"), "runner-a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ls.Takeover(ctx, streams.TableLease("stale"), "runner-b"); err != nil {
		t.Fatal(err)
	}
	const fresh = 16
	staleErr := make(chan error, 1)
	go func() {
		_, err := b.AppendFenced(ctx, old, streams.Entry{Stream: streams.TableEvents("stale"), Data: []byte("late")})
		staleErr <- err
	}()
	eachTableAtOnce(ctx, t, ls, "ok", fresh, func(id string, lease streams.Lease) {
		if _, err := b.AppendFenced(ctx, lease, streams.Entry{Stream: streams.TableEvents(id), Data: []byte("m")}); err != nil {
			t.Errorf("table %s: %v", id, err)
		}
	})
	if err := <-staleErr; !errors.Is(err, streams.ErrStaleEpoch) {
		t.Fatalf("stale append: %v, want ErrStaleEpoch", err)
	}
	if n, _ := rdb.XLen(ctx, streams.TableEvents("stale")).Result(); n != 0 {
		t.Fatalf("the stale lease appended %d entries", n)
	}
	for i := 0; i < fresh; i++ {
		if n, _ := rdb.XLen(ctx, streams.TableEvents("ok"+strconv.Itoa(i))).Result(); n != 1 {
			t.Fatalf("table ok%d has %d entries, want 1", i, n)
		}
	}
}

// eachTableAtOnce acquires the lease of n tables named prefix0, prefix1, …
// and runs play for all of them at once, returning when every one is done.
// Every lease is taken before any table plays, so a failed Acquire ends the
// test before a goroutine could report into it after it ended.
func eachTableAtOnce(ctx context.Context, t *testing.T, ls *streams.Leases, prefix string, n int, play func(id string, lease streams.Lease)) {
	t.Helper()
	leases := make([]streams.Lease, n)
	for tb := range leases {
		lease, err := ls.Acquire(ctx, streams.TableLease(prefix+strconv.Itoa(tb)), "runner-a")
		if err != nil {
			t.Fatal(err)
		}
		leases[tb] = lease
	}
	var wg sync.WaitGroup
	for tb, lease := range leases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			play(prefix+strconv.Itoa(tb), lease)
		}()
	}
	wg.Wait()
}

// scriptForgetter empties Redis's script cache (through another client)
// just before every pipeline and every lone EVALSHA its client sends, as a
// Redis restart between two round trips would; pipelines counts the
// pipelines of more than one command that met it.
type scriptForgetter struct {
	other     *redis.Client
	pipelines atomic.Int64
}

func (f *scriptForgetter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (f *scriptForgetter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "evalsha" {
			if err := f.other.ScriptFlush(ctx).Err(); err != nil {
				return err
			}
		}
		return next(ctx, cmd)
	}
}
func (f *scriptForgetter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 1 {
			f.pipelines.Add(1)
		}
		if err := f.other.ScriptFlush(ctx).Err(); err != nil {
			return err
		}
		return next(ctx, cmds)
	}
}

// Every round trip of appends meets NOSCRIPT, lone calls and pipelines of
// many tables' calls alike: each call runs again with the script loaded,
// and every entry lands exactly once, in its table's order.
func TestFencedBatcher_EveryRoundTripMeetingNOSCRIPTStillAppendsOnce(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t, func(o *redis.Options) { o.PoolSize = 4 })
	ctx := ctxT(t)
	f := &scriptForgetter{other: srv.Client(t)}
	rdb.AddHook(f)
	ls := streams.NewLeases(srv.Client(t), time.Minute)
	pub := streams.NewPublisher(rdb, streams.WithEntryBells())
	b := pub.NewFencedBatcher(ctx, 64, 1)
	const tables, steps = 16, 10
	eachTableAtOnce(ctx, t, ls, "nos", tables, func(id string, lease streams.Lease) {
		for i := 0; i < steps; i++ {
			e := streams.Entry{Stream: streams.TableEvents(id), Data: []byte(strconv.Itoa(i)), Header: map[string]string{"step": strconv.Itoa(i)}}
			if _, err := b.AppendFenced(ctx, lease, e); err != nil {
				t.Errorf("table %s step %d: %v", id, i, err)
				return
			}
		}
	})
	// A lone call, unbatched.
	lone, err := ls.Acquire(ctx, streams.TableLease("lone"), "runner-a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pub.AppendFenced(ctx, lone, streams.Entry{Stream: streams.TableEvents("lone"), Data: []byte("x")}); err != nil {
		t.Fatalf("lone append: %v", err)
	}
	// Entries with bells (one script run for the batch).
	batch := []streams.Entry{{Stream: streams.TableCommands("b1"), Data: []byte("c1")}, {Stream: streams.TableCommands("b2"), Data: []byte("c2")}}
	if _, err := pub.PublishBatch(ctx, batch); err != nil {
		t.Fatalf("publish batch: %v", err)
	}
	for _, e := range batch {
		if n, _ := rdb.XLen(ctx, e.Stream).Result(); n != 1 {
			t.Fatalf("%s has %d entries, want 1", e.Stream, n)
		}
	}
	if f.pipelines.Load() == 0 {
		t.Fatal("no pipeline of several calls met NOSCRIPT: the test did not cover them")
	}
	for tb := 0; tb < tables; tb++ {
		got, err := rdb.XRange(ctx, streams.TableEvents("nos"+strconv.Itoa(tb)), "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != steps {
			t.Fatalf("table nos%d has %d entries, want %d", tb, len(got), steps)
		}
		for i, m := range got {
			if m.Values[streams.FieldData] != strconv.Itoa(i) || m.Values["step"] != strconv.Itoa(i) {
				t.Fatalf("table nos%d entry %d is %v", tb, i, m.Values)
			}
		}
	}
	if n, _ := rdb.XLen(ctx, streams.TableEvents("lone")).Result(); n != 1 {
		t.Fatalf("the lone append left %d entries, want 1", n)
	}
}

// Redis forgets scripts when it restarts: pipelined appends that meet
// NOSCRIPT run the script again (it did not run), and land exactly once.
func TestFencedBatcher_ScriptCacheFlushedAppendsOnce(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	ls := streams.NewLeases(rdb, time.Minute)
	b := streams.NewPublisher(rdb).NewFencedBatcher(ctx, 64, 1)
	lease, err := ls.Acquire(ctx, streams.TableLease("flush"), "runner-a")
	if err != nil {
		t.Fatal(err)
	}
	stream := streams.TableEvents("flush")
	for i := 0; i < 3; i++ {
		if err := rdb.ScriptFlush(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := b.AppendFenced(ctx, lease, streams.Entry{Stream: stream, Data: []byte(strconv.Itoa(i))}); err != nil {
			t.Fatalf("append %d after SCRIPT FLUSH: %v", i, err)
		}
	}
	if n, _ := rdb.XLen(ctx, stream).Result(); n != 3 {
		t.Fatalf("%d entries, want 3", n)
	}
}
