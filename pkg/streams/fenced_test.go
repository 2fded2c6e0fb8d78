package streams_test

import (
	"errors"
	"strconv"
	"sync"
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
	var wg sync.WaitGroup
	for tb := 0; tb < tables; tb++ {
		id := "fb" + strconv.Itoa(tb)
		lease, err := ls.Acquire(ctx, streams.TableLease(id), "runner-a")
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
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
		}()
	}
	wg.Wait()
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
	var wg sync.WaitGroup
	staleErr := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := b.AppendFenced(ctx, old, streams.Entry{Stream: streams.TableEvents("stale"), Data: []byte("late")})
		staleErr <- err
	}()
	for i := 0; i < fresh; i++ {
		id := "ok" + strconv.Itoa(i)
		lease, err := ls.Acquire(ctx, streams.TableLease(id), "runner-a")
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := b.AppendFenced(ctx, lease, streams.Entry{Stream: streams.TableEvents(id), Data: []byte("m")}); err != nil {
				t.Errorf("table %s: %v", id, err)
			}
		}()
	}
	wg.Wait()
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
