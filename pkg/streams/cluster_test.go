package streams_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
)

// Invariant 6: the same code works on Redis Cluster. A one-node cluster
// refuses cross-slot commands exactly like a real one, so every multi-key
// command the library sends is checked here.
// With entry bells, a batch's entries go in one script run per slot.
func TestCluster_ConsumeTailFenceAndOnceAcrossTableSlots(t *testing.T) {
	t.Run("bare bells", func(t *testing.T) { acrossTableSlots(t) })
	t.Run("entry bells", func(t *testing.T) { acrossTableSlots(t, streams.WithEntryBells()) })
}

func acrossTableSlots(t *testing.T, opts ...streams.Option) {
	srv := redistest.Start(t, redistest.WithCluster())
	rdb := srv.ClusterClient(t)
	ctx := ctxT(t)
	pub := streams.NewPublisher(rdb, opts...)

	const tables = 200
	var names []string
	for i := 0; i < tables; i++ {
		names = append(names, streams.TableCommands(strconv.Itoa(i)))
	}
	var mu sync.Mutex
	handled := map[string]int{}
	c := streams.NewConsumer(rdb, "runners", "r1", func(ctx context.Context, m streams.Message) error {
		if string(m.Data) == "poison" {
			return errors.New("bad move")
		}
		// Effect on the table's keys, deduped under the table's tag.
		id := m.Header["table"]
		eff := (&streams.Effect{}).Do("INCR", "pulka:"+streams.TableTag(id)+":moves")
		if _, err := streams.Once(ctx, rdb, streams.TableDedupe(id, m.ID), time.Hour, m.ID, eff); err != nil {
			return err
		}
		mu.Lock()
		handled[m.Stream]++
		mu.Unlock()
		return nil
	}, fast(streams.WithBatchKeys(64), streams.WithMaxDeliveries(2), streams.WithMinIdle(200*time.Millisecond))...)
	if err := c.Add(ctx, names...); err != nil {
		t.Fatal(err)
	}
	var tmu sync.Mutex
	var tailed []string
	tl := streams.NewTailer(rdb, func(ctx context.Context, m streams.Message) {
		tmu.Lock()
		tailed = append(tailed, string(m.Data))
		tmu.Unlock()
	})
	if err := tl.Add(ctx, streams.TableEvents("0"), "0"); err != nil {
		t.Fatal(err)
	}
	runConsumer(t, c)
	runConsumer(t, tl)

	var entries []streams.Entry
	for i := 0; i < tables; i++ {
		entries = append(entries, streams.Entry{Stream: names[i], Header: map[string]string{"table": strconv.Itoa(i)}})
	}
	entries = append(entries, streams.Entry{Stream: names[7], Data: []byte("poison")})
	if _, err := pub.PublishBatch(ctx, entries); err != nil {
		t.Fatal(err)
	}
	late := streams.TableCommands("late")
	if err := c.Add(ctx, late); err != nil {
		t.Fatal(err)
	}
	if _, err := pub.Publish(ctx, streams.Entry{Stream: late, Header: map[string]string{"table": "late"}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "every table handled", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(handled) == tables+1
	})
	eventually(t, 10*time.Second, "poison dead-lettered", func() bool {
		n, _ := rdb.XLen(ctx, streams.DeadLetter("runners")).Result()
		return n == 1
	})

	// Lease and fenced append on the table's slot.
	ls := streams.NewLeases(rdb, time.Minute)
	old, err := ls.Acquire(ctx, streams.TableLease("0"), "r1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pub.AppendFenced(ctx, old, streams.Entry{Stream: streams.TableEvents("0"), Data: []byte("e1")}); err != nil {
		t.Fatal(err)
	}
	if _, err := ls.Takeover(ctx, streams.TableLease("0"), "r2"); err != nil {
		t.Fatal(err)
	}
	if _, err := pub.AppendFenced(ctx, old, streams.Entry{Stream: streams.TableEvents("0"), Data: []byte("stale")}); !errors.Is(err, streams.ErrStaleEpoch) {
		t.Fatalf("stale append on cluster: %v", err)
	}
	eventually(t, 5*time.Second, "tailed event", func() bool {
		tmu.Lock()
		defer tmu.Unlock()
		return len(tailed) == 1 && tailed[0] == "e1"
	})
	replay, err := streams.ReadAfter(ctx, rdb, streams.TableEvents("0"), "0", 10)
	if err != nil || len(replay) != 1 {
		t.Fatalf("replay on cluster: %v %v", replay, err)
	}
	if n, _ := rdb.Get(ctx, "pulka:"+streams.TableTag("3")+":moves").Int(); n != 1 {
		t.Fatalf("table 3 effect applied %d times", n)
	}
}
