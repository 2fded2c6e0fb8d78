package streams_test

import (
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

func TestLeases_AcquireHeldTakeoverRenewRelease(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	ls := streams.NewLeases(rdb, time.Minute)
	key := streams.TableLease("7")

	a, err := ls.Acquire(ctx, key, "runner-a")
	if err != nil {
		t.Fatal(err)
	}
	holder, err := ls.Acquire(ctx, key, "runner-b")
	if !errors.Is(err, streams.ErrLeaseHeld) {
		t.Fatalf("second owner got %v, want ErrLeaseHeld", err)
	}
	if holder.Owner != "runner-a" || holder.Epoch != a.Epoch {
		t.Fatalf("held error describes %+v, want %+v", holder, a)
	}
	if err := ls.Renew(ctx, a); err != nil {
		t.Fatalf("holder cannot renew: %v", err)
	}
	b, err := ls.Takeover(ctx, key, "runner-b")
	if err != nil {
		t.Fatal(err)
	}
	if b.Epoch <= a.Epoch {
		t.Fatalf("takeover epoch %d not above %d", b.Epoch, a.Epoch)
	}
	if err := ls.Renew(ctx, a); !errors.Is(err, streams.ErrStaleEpoch) {
		t.Fatalf("old owner renew: %v, want ErrStaleEpoch", err)
	}
	if err := ls.Release(ctx, a); !errors.Is(err, streams.ErrStaleEpoch) {
		t.Fatalf("old owner release: %v, want ErrStaleEpoch", err)
	}
	cur, ok, err := ls.Current(ctx, key)
	if err != nil || !ok || cur != b {
		t.Fatalf("current = %+v %v %v, want %+v", cur, ok, err, b)
	}
	if err := ls.Release(ctx, b); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := ls.Current(ctx, key); ok {
		t.Fatalf("lease still held after release")
	}
	// The epoch counter survives release: the next owner is fenced above.
	c, err := ls.Acquire(ctx, key, "runner-a")
	if err != nil {
		t.Fatal(err)
	}
	if c.Epoch <= b.Epoch {
		t.Fatalf("epoch after release %d not above %d", c.Epoch, b.Epoch)
	}
}

func TestLeases_ExpiredLeaseCanBeTakenAndOldEpochIsStale(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	ls := streams.NewLeases(rdb, 100*time.Millisecond)
	key := streams.TableLease("exp")
	a, err := ls.Acquire(ctx, key, "a")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	pub := streams.NewPublisher(rdb)
	if _, err := pub.AppendFenced(ctx, a, streams.Entry{Stream: streams.TableEvents("exp")}); !errors.Is(err, streams.ErrStaleEpoch) {
		t.Fatalf("append with expired lease: %v, want ErrStaleEpoch", err)
	}
	b, err := ls.Acquire(ctx, key, "b")
	if err != nil {
		t.Fatalf("expired lease not free: %v", err)
	}
	if b.Epoch <= a.Epoch {
		t.Fatalf("epoch did not grow: %d → %d", a.Epoch, b.Epoch)
	}
}

func TestAppendFenced_StaleEpochCannotAppendCurrentCan(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	ls := streams.NewLeases(rdb, time.Minute)
	pub := streams.NewPublisher(rdb)
	id := "42"
	old, err := ls.Acquire(ctx, streams.TableLease(id), "runner-a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pub.AppendFenced(ctx, old, streams.Entry{Stream: streams.TableEvents(id), Data: []byte("a1")}); err != nil {
		t.Fatalf("current owner cannot append: %v", err)
	}
	cur, err := ls.Takeover(ctx, streams.TableLease(id), "runner-b")
	if err != nil {
		t.Fatal(err)
	}
	_, err = pub.AppendFenced(ctx, old,
		streams.Entry{Stream: streams.TableEvents(id), Data: []byte("stale")},
		streams.Entry{Stream: streams.TableSnapshot(id) + ":log", Data: []byte("stale")})
	if !errors.Is(err, streams.ErrStaleEpoch) {
		t.Fatalf("stale append: %v, want ErrStaleEpoch", err)
	}
	ids, err := pub.AppendFenced(ctx, cur,
		streams.Entry{Stream: streams.TableEvents(id), Data: []byte("b1")},
		streams.Entry{Stream: streams.TableEvents(id), Data: []byte("b2")})
	if err != nil || len(ids) != 2 {
		t.Fatalf("current append: %v %v", ids, err)
	}
	msgs, err := rdb.XRange(ctx, streams.TableEvents(id), "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		got = append(got, m.Values["data"].(string))
	}
	if want := "a1 b1 b2"; joinSp(got) != want {
		t.Fatalf("stream = %q, want %q", joinSp(got), want)
	}
	if n, _ := rdb.Exists(ctx, streams.TableSnapshot(id)+":log").Result(); n != 0 {
		t.Fatalf("a refused multi-entry append wrote part of its entries")
	}
}

// Many writers race across a lease change. Because the epoch check and the
// append are one script, once the new owner's first entry is in the stream
// no entry of the old epoch may follow it.
func TestAppendFenced_NoStaleAppendLandsAfterNewEpochsFirstAppend(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t, func(o *redis.Options) { o.PoolSize = 32 })
	ctx := ctxT(t)
	ls := streams.NewLeases(rdb, time.Minute)
	pub := streams.NewPublisher(rdb, streams.WithMaxLen(0))
	const id = "race"
	stream := streams.TableEvents(id)
	for round := 0; round < 5; round++ {
		old, err := ls.Takeover(ctx, streams.TableLease(id), "old")
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var staleRefused, oldOK atomic.Int64
		stopOld := make(chan struct{})
		for g := 0; g < 16; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stopOld:
						return
					default:
					}
					_, err := pub.AppendFenced(ctx, old, streams.Entry{Stream: stream,
						Header: map[string]string{"epoch": strconv.FormatInt(old.Epoch, 10)}})
					switch {
					case err == nil:
						oldOK.Add(1)
					case errors.Is(err, streams.ErrStaleEpoch):
						staleRefused.Add(1)
					default:
						t.Error(err)
						return
					}
				}
			}()
		}
		// The takeover must land while the old writers are appending: wait
		// for their first appends (on a busy machine under -race a fixed
		// pause was sometimes too short for any), then a little more.
		eventually(t, 5*time.Second, "the old writers' first appends", func() bool { return oldOK.Load() > 0 })
		time.Sleep(20 * time.Millisecond)
		cur, err := ls.Takeover(ctx, streams.TableLease(id), "new")
		if err != nil {
			t.Fatal(err)
		}
		var nw sync.WaitGroup
		for g := 0; g < 4; g++ {
			nw.Add(1)
			go func() {
				defer nw.Done()
				for k := 0; k < 20; k++ {
					if _, err := pub.AppendFenced(ctx, cur, streams.Entry{Stream: stream,
						Header: map[string]string{"epoch": strconv.FormatInt(cur.Epoch, 10)}}); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		nw.Wait()
		// Let the old writers keep hammering a little after the change.
		time.Sleep(20 * time.Millisecond)
		close(stopOld)
		wg.Wait()
		if oldOK.Load() == 0 || staleRefused.Load() == 0 {
			t.Fatalf("round %d did not race: %d old appends, %d refused", round, oldOK.Load(), staleRefused.Load())
		}
		msgs, err := rdb.XRange(ctx, stream, "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		newSeen := false
		curEpoch := strconv.FormatInt(cur.Epoch, 10)
		for _, m := range msgs {
			ep := m.Values["epoch"].(string)
			if ep == curEpoch {
				newSeen = true
			} else if newSeen && ep == strconv.FormatInt(old.Epoch, 10) {
				t.Fatalf("round %d: entry %s of stale epoch %s after the new epoch's first append", round, m.ID, ep)
			}
		}
		if !newSeen {
			t.Fatalf("round %d: no entry of the new epoch", round)
		}
		if err := rdb.Del(ctx, stream).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

func joinSp(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

// RenewAll renews what the caller still holds and names each lease it
// lost, in one pipeline, also after the server forgot its scripts.
func TestLeases_RenewAllRenewsHeldAndReportsLostOnes(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	ls := streams.NewLeases(rdb, 2*time.Second)
	other := streams.NewLeases(rdb, time.Minute)
	var held []streams.Lease
	for i := 0; i < 300; i++ { // more than one pipeline's worth
		l, err := ls.Acquire(ctx, streams.TableLease("r"+strconv.Itoa(i)), "runner-a")
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
	}
	// Two are taken over by another runner.
	for _, i := range []int{7, 280} {
		if _, err := other.Takeover(ctx, held[i].Key, "runner-b"); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.ScriptFlush(ctx).Err(); err != nil { // as after a Redis restart
		t.Fatal(err)
	}
	time.Sleep(1200 * time.Millisecond) // past half the TTL
	errs := ls.RenewAll(ctx, held)
	for i, err := range errs {
		lost := i == 7 || i == 280
		switch {
		case lost && !errors.Is(err, streams.ErrStaleEpoch):
			t.Fatalf("lease %d was taken over; RenewAll said %v, want ErrStaleEpoch", i, err)
		case !lost && err != nil:
			t.Fatalf("lease %d: %v", i, err)
		}
	}
	time.Sleep(1200 * time.Millisecond) // past the first TTL: only renewed ones are left
	for i, l := range held {
		cur, ok, err := ls.Current(ctx, l.Key)
		if err != nil {
			t.Fatal(err)
		}
		want := "runner-a"
		if i == 7 || i == 280 {
			want = "runner-b"
		}
		if !ok || cur.Owner != want {
			t.Fatalf("lease %d after RenewAll: %+v %v, want owner %s", i, cur, ok, want)
		}
	}
}

// The script walks its arguments entry by entry: entries with different
// numbers of fields, to different streams, with and without MAXLEN, each
// land with exactly their own fields, and the IDs come back in order.
func TestAppendFenced_EntriesOfEveryShapeLandWithTheirOwnFields(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	lease, err := streams.NewLeases(rdb, time.Minute).Acquire(ctx, streams.TableLease("shapes"), "runner-a")
	if err != nil {
		t.Fatal(err)
	}
	evs, other := streams.TableEvents("shapes"), streams.TableSnapshot("shapes")+":log"
	pub := streams.NewPublisher(rdb, streams.WithRetention(func(s string) int64 {
		if s == evs {
			return 0 // keep everything: no MAXLEN
		}
		return 100
	}))
	entries := []streams.Entry{
		{Stream: evs, Data: []byte("e1"), Header: map[string]string{"input": "i1", "x": "y"}},
		{Stream: other, Data: []byte("o1")},
		{Stream: evs, Data: []byte("e2")},
	}
	ids, err := pub.AppendFenced(ctx, lease, entries...)
	if err != nil || len(ids) != 3 {
		t.Fatalf("append: %v %v", ids, err)
	}
	for i, e := range entries {
		msgs, err := rdb.XRange(ctx, e.Stream, ids[i], ids[i]).Result()
		if err != nil || len(msgs) != 1 {
			t.Fatalf("entry %d: %v %v", i, msgs, err)
		}
		want := map[string]any{streams.FieldData: string(e.Data)}
		for k, v := range e.Header {
			want[k] = v
		}
		if got := msgs[0].Values; len(got) != len(want) {
			t.Fatalf("entry %d has fields %v, want %v", i, got, want)
		} else {
			for k, v := range want {
				if got[k] != v {
					t.Fatalf("entry %d has fields %v, want %v", i, got, want)
				}
			}
		}
	}
	if n, _ := rdb.XLen(ctx, evs).Result(); n != 2 {
		t.Fatalf("%s has %d entries, want 2", evs, n)
	}
}
