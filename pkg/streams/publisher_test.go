package streams_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
)

func TestPublish_TrimsApproximatelyToRetentionPerStream(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	pub := streams.NewPublisher(rdb, streams.WithRetention(func(stream string) int64 {
		if streams.StreamClass(stream) == "pulka:{*}:ev" {
			return 100
		}
		return 0 // commands: keep everything
	}))
	events, cmds := streams.TableEvents("x"), streams.TableCommands("x")
	var batch []streams.Entry
	for i := 0; i < 2000; i++ {
		batch = append(batch, streams.Entry{Stream: events}, streams.Entry{Stream: cmds})
	}
	if _, err := pub.PublishBatch(ctx, batch); err != nil {
		t.Fatal(err)
	}
	ne, _ := rdb.XLen(ctx, events).Result()
	nc, _ := rdb.XLen(ctx, cmds).Result()
	// "~" trims whole radix-tree nodes (100 entries by default), so the
	// length stays near, not at, the limit.
	if ne < 100 || ne > 300 {
		t.Errorf("events length %d, want about 100", ne)
	}
	if nc != 2000 {
		t.Errorf("commands length %d, want 2000 (no retention)", nc)
	}
}

func TestPublishBatch_ReturnsIDsInOrderAndStoresFields(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	pub := streams.NewPublisher(rdb)
	s := streams.TableCommands("b")
	entries := make([]streams.Entry, 50)
	for i := range entries {
		entries[i] = streams.Entry{Stream: s, Data: []byte{byte(i), 0, 255}, Header: map[string]string{"type": "move", "n": strconv.Itoa(i)}}
	}
	ids, err := pub.PublishBatch(ctx, entries)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := streams.ReadAfter(ctx, rdb, s, "0", 100)
	if err != nil || len(msgs) != 50 {
		t.Fatalf("read back %d: %v", len(msgs), err)
	}
	for i, m := range msgs {
		if m.ID != ids[i] || m.Header["n"] != strconv.Itoa(i) || m.Header["type"] != "move" || string(m.Data) != string([]byte{byte(i), 0, 255}) {
			t.Fatalf("entry %d = %+v (id %s)", i, m, ids[i])
		}
		if _, leaked := m.Header["traceparent"]; leaked {
			t.Fatalf("trace fields leaked into Header")
		}
	}
}

// pipelineCounter counts round trips (pipelines and single commands).
type pipelineCounter struct{ trips, cmds atomic.Int64 }

func (p *pipelineCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (p *pipelineCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		p.trips.Add(1)
		p.cmds.Add(1)
		return next(ctx, cmd)
	}
}
func (p *pipelineCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		p.trips.Add(1)
		p.cmds.Add(int64(len(cmds)))
		return next(ctx, cmds)
	}
}

func TestBatcher_CoalescesConcurrentPublishesIntoFewerRoundTrips(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t, func(o *redis.Options) { o.PoolSize = 4 })
	ctx := ctxT(t)
	var pc pipelineCounter
	rdb.AddHook(&pc)
	b := streams.NewPublisher(rdb).NewBatcher(ctx, 64, 1)
	const callers, each = 32, 50
	var wg sync.WaitGroup
	ids := make(chan string, callers*each)
	for c := 0; c < callers; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			s := streams.TableCommands(strconv.Itoa(c % 4))
			for i := 0; i < each; i++ {
				id, err := b.Publish(ctx, streams.Entry{Stream: s})
				if err != nil {
					t.Error(err)
					return
				}
				ids <- s + "/" + id
			}
		}(c)
	}
	wg.Wait()
	b.Close()
	close(ids)
	uniq := map[string]bool{}
	for id := range ids {
		uniq[id] = true
	}
	if len(uniq) != callers*each {
		t.Fatalf("%d distinct IDs, want %d", len(uniq), callers*each)
	}
	var total int64
	for c := 0; c < 4; c++ {
		n, _ := rdb.XLen(ctx, streams.TableCommands(strconv.Itoa(c))).Result()
		total += n
	}
	if total != callers*each {
		t.Fatalf("%d entries stored, want %d", total, callers*each)
	}
	if trips := pc.trips.Load(); trips >= callers*each/2 {
		t.Errorf("%d round trips for %d publishes: not coalesced", trips, callers*each)
	}
	if _, err := b.Publish(ctx, streams.Entry{Stream: "x"}); !errors.Is(err, streams.ErrClosed) {
		t.Errorf("publish after Close: %v, want ErrClosed", err)
	}
}

// Callers send each other's entries (there is no sending goroutine): with
// tiny batches, two pipelines in flight and many callers, every call must
// still be answered with its own entry's ID, and Close must wait for queued
// calls.
func TestBatcher_CallersSendEachOthersEntriesAndEveryCallIsAnswered(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	b := streams.NewPublisher(rdb, streams.WithMaxLen(0)).NewBatcher(ctx, 2, 2)
	const callers, each = 48, 40
	stream := streams.TableCommands("send-each-other")
	var wg sync.WaitGroup
	got := make(chan [2]string, callers*each)
	for c := 0; c < callers; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				data := strconv.Itoa(c) + "/" + strconv.Itoa(i)
				id, err := b.Publish(ctx, streams.Entry{Stream: stream, Data: []byte(data)})
				if err != nil {
					t.Error(err)
					return
				}
				got <- [2]string{id, data}
			}
		}(c)
	}
	wg.Wait()
	b.Close()
	close(got)
	stored, err := rdb.XRange(ctx, stream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]string{}
	for _, m := range stored {
		byID[m.ID], _ = m.Values[streams.FieldData].(string)
	}
	n := 0
	for g := range got {
		n++
		if byID[g[0]] != g[1] {
			t.Fatalf("call with %q got ID %s, which holds %q", g[1], g[0], byID[g[0]])
		}
	}
	if n != callers*each || len(stored) != callers*each {
		t.Fatalf("%d answers, %d entries, want %d", n, len(stored), callers*each)
	}
}

// With entry bells a batch is one script run; an entry that cannot go in
// (its key holds another type) fails alone, as a pipelined XADD would, and
// the others are appended and rung.
func TestPublishBatch_EntryBellsFailOnlyTheEntryThatCannotGoIn(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	bad := streams.TableEvents("not-a-stream")
	if err := rdb.Set(ctx, bad, "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	good := streams.TableEvents("good")
	col := followed(t, rdb, good, "0")
	pub := streams.NewPublisher(rdb, streams.WithEntryBells())
	ids, err := pub.PublishBatch(ctx, []streams.Entry{{Stream: good, Data: []byte("1")}, {Stream: bad, Data: []byte("x")}, {Stream: good, Data: []byte("2")}})
	if err == nil || !strings.Contains(err.Error(), "WRONGTYPE") || !strings.Contains(err.Error(), bad) {
		t.Fatalf("err = %v, want the WRONGTYPE of %s", err, bad)
	}
	if ids[0] == "" || ids[1] != "" || ids[2] == "" {
		t.Fatalf("ids = %q, want the two good entries' only", ids)
	}
	eventually(t, 2*time.Second, "the good entries", func() bool { return col.datas(good) == "1,2" })
}
