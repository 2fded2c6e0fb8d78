package streams_test

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
)

var benchPayload = make([]byte, 64)

// redisCPU starts counting the Redis server's CPU time (INFO cpu: user +
// system); the returned func reports it per op as "redis-µs/op". On a
// machine whose speed wanders, the server's share of a benchmark is the
// steadier figure to compare two ways of writing by.
func redisCPU(ctx context.Context, b *testing.B, rdb *redis.Client) (report func()) {
	b.Helper()
	read := func() float64 {
		info, err := rdb.Info(ctx, "cpu").Result()
		if err != nil {
			b.Fatal(err)
		}
		var total float64
		for _, line := range strings.Split(info, "\n") {
			for _, field := range []string{"used_cpu_sys:", "used_cpu_user:"} {
				if v, ok := strings.CutPrefix(strings.TrimSpace(line), field); ok {
					f, err := strconv.ParseFloat(v, 64)
					if err != nil {
						b.Fatal(err)
					}
					total += f
				}
			}
		}
		return total
	}
	start := read()
	return func() { b.ReportMetric((read()-start)*1e6/float64(b.N), "redis-µs/op") }
}

// BenchmarkPublish compares the library's PublishBatch with raw go-redis
// pipelined XADDs of the same batch size and retention (the goal: within
// 20%). One op is one message.
func BenchmarkPublish(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	ctx := context.Background()
	for _, batch := range []int{1, 16, 128} {
		stream := streams.TableCommands("bench")
		b.Run("raw/batch="+strconv.Itoa(batch), func(b *testing.B) {
			b.ReportAllocs()
			defer redisCPU(ctx, b, rdb)()
			for i := 0; i < b.N; i += batch {
				pipe := rdb.Pipeline()
				for j := 0; j < batch; j++ {
					pipe.XAdd(ctx, &redis.XAddArgs{Stream: stream, MaxLen: streams.DefaultMaxLen, Approx: true,
						Values: []interface{}{"data", benchPayload}})
				}
				if _, err := pipe.Exec(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
		for _, lib := range []struct {
			name string
			opts []streams.Option
		}{{"lib", nil}, {"lib-entry-bells", []streams.Option{streams.WithEntryBells()}}} {
			b.Run(lib.name+"/batch="+strconv.Itoa(batch), func(b *testing.B) {
				b.ReportAllocs()
				defer redisCPU(ctx, b, rdb)()
				pub := streams.NewPublisher(rdb, lib.opts...)
				entries := make([]streams.Entry, batch)
				for j := range entries {
					entries[j] = streams.Entry{Stream: stream, Data: benchPayload}
				}
				for i := 0; i < b.N; i += batch {
					if _, err := pub.PublishBatch(ctx, entries); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
			})
		}
	}
}

// BenchmarkBatcher measures concurrent single publishes coalesced by the
// Batcher.
func BenchmarkBatcher(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	b.Run("bare-bells", func(b *testing.B) { benchBatcher(b, rdb) })
	b.Run("entry-bells", func(b *testing.B) { benchBatcher(b, rdb, streams.WithEntryBells()) })
}

func benchBatcher(b *testing.B, rdb *redis.Client, opts ...streams.Option) {
	ctx := context.Background()
	bt := streams.NewPublisher(rdb, opts...).NewBatcher(ctx, 128, 2)
	defer bt.Close()
	stream := streams.TableCommands("bench")
	b.SetParallelism(16)
	b.ReportAllocs()
	b.ResetTimer()
	defer redisCPU(ctx, b, rdb)()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := bt.Publish(ctx, streams.Entry{Stream: stream, Data: benchPayload}); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkBatcher_LoneCall is the light-load case: one caller at a time,
// so every call is its own pipeline. "direct" is Publisher.Publish on the
// same server; the Batcher should cost no more than it (no hand-over to a
// sending goroutine and back).
func BenchmarkBatcher_LoneCall(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	ctx := context.Background()
	pub := streams.NewPublisher(rdb)
	bt := pub.NewBatcher(ctx, 128, 2)
	defer bt.Close()
	e := streams.Entry{Stream: streams.TableCommands("bench"), Data: benchPayload}
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := pub.Publish(ctx, e); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("batcher", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := bt.Publish(ctx, e); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAppendFenced is a runner's tables appending their steps at once
// (64 tables, each waiting for its own append before the next, as a table's
// goroutine does): "direct" is one script run a call (Publisher), "batcher"
// pipelines concurrent calls (FencedBatcher). One op is one append.
func BenchmarkAppendFenced(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	ctx := context.Background()
	pub := streams.NewPublisher(rdb)
	ls := streams.NewLeases(rdb, time.Hour)
	const tables = 64
	leases, events := make([]streams.Lease, tables), make([]string, tables)
	for i := range leases {
		id := "bf" + strconv.Itoa(i)
		l, err := ls.Acquire(ctx, streams.TableLease(id), "bench")
		if err != nil {
			b.Fatal(err)
		}
		leases[i], events[i] = l, streams.TableEvents(id)
	}
	fb := pub.NewFencedBatcher(ctx, 64, 2)
	defer fb.Close()
	rich := streams.NewPublisher(rdb, streams.WithEntryBells())
	rfb := rich.NewFencedBatcher(ctx, 64, 2)
	defer rfb.Close()
	for _, c := range []struct {
		name   string
		append func(context.Context, streams.Lease, ...streams.Entry) ([]string, error)
		header map[string]string
	}{{"direct", pub.AppendFenced, nil}, {"batcher", fb.AppendFenced, nil}, {"batcher-entry-bells", rfb.AppendFenced, nil},
		// A step as a runner appends it: the event, its packed legal moves,
		// the input and a trace context.
		{"batcher-entry-bells-step", rfb.AppendFenced, map[string]string{"legal": strings.Repeat("l", 40),
			"input": strings.Repeat("i", 300), "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var next atomic.Int64
			b.SetParallelism(max(1, tables/runtime.GOMAXPROCS(0)))
			b.ReportAllocs()
			defer redisCPU(ctx, b, rdb)()
			b.RunParallel(func(pb *testing.PB) {
				i := int(next.Add(1)-1) % tables
				l, e := leases[i], streams.Entry{Stream: events[i], Data: benchPayload, Header: c.header}
				for pb.Next() {
					if _, err := c.append(ctx, l, e); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
		})
	}
}

// BenchmarkConsume measures handled-and-acked messages per second of one
// consumer over 100 streams (messages published beforehand).
func BenchmarkConsume(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	ctx := context.Background()
	const nStreams = 100
	names := make([]string, nStreams)
	for i := range names {
		names[i] = streams.TableCommands("c" + strconv.Itoa(i))
	}
	pub := streams.NewPublisher(rdb, streams.WithMaxLen(0))
	entries := make([]streams.Entry, 0, 1000)
	for i := 0; i < b.N; i++ {
		entries = append(entries, streams.Entry{Stream: names[i%nStreams], Data: benchPayload})
		if len(entries) == cap(entries) || i == b.N-1 {
			if _, err := pub.PublishBatch(ctx, entries); err != nil {
				b.Fatal(err)
			}
			entries = entries[:0]
		}
	}
	var n atomic.Int64
	done := make(chan struct{})
	c := streams.NewConsumer(rdb, "bench", "c1", func(context.Context, streams.Message) error {
		if n.Add(1) == int64(b.N) {
			close(done)
		}
		return nil
	})
	if err := c.Add(ctx, names...); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	runCtx, cancel := context.WithCancel(ctx)
	go func() { _ = c.Run(runCtx) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		b.Fatalf("consumed %d of %d", n.Load(), b.N)
	}
	b.StopTimer()
	cancel()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// BenchmarkPublishToHandler is the paced-latency path one message at a time:
// publish to one of 100 streams, wait until the handler has it. ns/op is the
// unloaded publish→handler round trip and allocs/op everything the process
// allocates for one message (publish, read, dispatch, handle, ack), in the
// regime of a real paced load where a read returns one or two messages and
// the fixed cost of a read over many streams is paid per message. "raw" is
// plain go-redis of the same shape (XADD; one goroutine with a blocking
// multi-key XREADGROUP, handler inline; XACKs from a second goroutine).
func BenchmarkPublishToHandler(b *testing.B) {
	const nStreams = 100
	names := make([]string, nStreams)
	for i := range names {
		names[i] = streams.TableCommands("p2h" + strconv.Itoa(i))
	}
	b.Run("raw", func(b *testing.B) {
		srv := redistest.Start(b)
		rdb := srv.Client(b)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		for _, s := range names {
			if err := rdb.XGroupCreateMkStream(ctx, s, "g", "$").Err(); err != nil {
				b.Fatal(err)
			}
		}
		handled := make(chan struct{}, 1)
		acks := make(chan redis.XStream, 1024)
		go func() {
			args := append(append([]string(nil), names...), make([]string, nStreams)...)
			for i := range nStreams {
				args[nStreams+i] = ">"
			}
			for ctx.Err() == nil {
				res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: args,
					Count: streams.DefaultCount, Block: time.Second}).Result()
				if err != nil {
					continue
				}
				for _, xs := range res {
					for range xs.Messages {
						handled <- struct{}{}
					}
					acks <- xs
				}
			}
		}()
		go func() {
			for {
				select {
				case <-ctx.Done():
					return
				case xs := <-acks:
					ids := make([]string, len(xs.Messages))
					for i, m := range xs.Messages {
						ids[i] = m.ID
					}
					_ = rdb.XAck(ctx, xs.Stream, "g", ids...).Err()
				}
			}
		}()
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: names[i%nStreams], MaxLen: streams.DefaultMaxLen, Approx: true,
				Values: []interface{}{streams.FieldData, benchPayload}}).Err(); err != nil {
				b.Fatal(err)
			}
			<-handled
		}
	})
	b.Run("lib", func(b *testing.B) {
		srv := redistest.Start(b)
		rdb := srv.Client(b)
		ctx, cancel := context.WithCancel(context.Background())
		handled := make(chan struct{}, 1)
		c := streams.NewConsumer(rdb, "g", "c", func(context.Context, streams.Message) error {
			handled <- struct{}{}
			return nil
		}, streams.WithStartID("$"))
		if err := c.Add(ctx, names...); err != nil {
			b.Fatal(err)
		}
		done := make(chan struct{})
		go func() { defer close(done); _ = c.Run(ctx) }()
		defer func() { cancel(); <-done }()
		pub := streams.NewPublisher(rdb)
		time.Sleep(100 * time.Millisecond) // the shard's first read is blocking
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := pub.Publish(ctx, streams.Entry{Stream: names[i%nStreams], Data: benchPayload}); err != nil {
				b.Fatal(err)
			}
			<-handled
		}
	})
}

// BenchmarkTailPublishToHandler is a gateway's fan-out path one event at a
// time: a Tailer following 10 or 1000 event streams, one entry published to
// one of them, until the handler has it. allocs/op is what the whole process
// allocates per event (publish and tail read).
func BenchmarkTailPublishToHandler(b *testing.B) {
	for _, nStreams := range []int{10, 1000} {
		b.Run("bare-bells/streams="+strconv.Itoa(nStreams), func(b *testing.B) { benchTailPublishToHandler(b, nStreams) })
		b.Run("entry-bells/streams="+strconv.Itoa(nStreams), func(b *testing.B) {
			benchTailPublishToHandler(b, nStreams, streams.WithEntryBells())
		})
	}
}

func benchTailPublishToHandler(b *testing.B, nStreams int, opts ...streams.Option) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	ctx, cancel := context.WithCancel(context.Background())
	names := make([]string, nStreams)
	handled := make(chan struct{}, 1)
	tl := streams.NewTailer(rdb, func(context.Context, streams.Message) { handled <- struct{}{} })
	for i := range names {
		names[i] = streams.TableEvents("tail" + strconv.Itoa(i))
		if err := tl.Add(ctx, names[i], "0"); err != nil {
			b.Fatal(err)
		}
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = tl.Run(ctx) }()
	defer func() { cancel(); <-done }()
	pub := streams.NewPublisher(rdb, opts...)
	time.Sleep(100 * time.Millisecond)
	b.ReportAllocs()
	b.ResetTimer()
	defer redisCPU(ctx, b, rdb)()
	for i := 0; i < b.N; i++ {
		if _, err := pub.Publish(ctx, streams.Entry{Stream: names[i%nStreams], Data: benchPayload}); err != nil {
			b.Fatal(err)
		}
		<-handled
	}
}
