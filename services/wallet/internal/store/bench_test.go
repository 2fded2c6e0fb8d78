package store_test

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/services/wallet/internal/store"
)

// BenchmarkTransfers measures idempotent transfers on one Redis: every
// operation is a hold (the pot's script and the account's) or a release
// (the account's), each with its own id, from many goroutines on distinct
// accounts. transfers/s counts operations; scripts/s the scripts they ran.
// aof=true runs Redis with appendfsync always. inflight is the operations
// in flight: 64 was the wallet's most while its order key was the command
// shard, 128 is its default workers (it orders by account and table now);
// with fsync always, each of Redis's event-loop turns waits for one fsync
// whatever it wrote, so more operations in flight are more per fsync.
func BenchmarkTransfers(b *testing.B) {
	for _, c := range []struct {
		aof      bool
		flushers int
		inflight int
	}{
		{false, 0, 64}, {false, store.DefaultFlushers, 64},
		{true, 0, 64}, {true, store.DefaultFlushers, 64},
		{true, store.DefaultFlushers, 128}, {true, store.DefaultFlushers, 256},
	} {
		aof := c.aof
		b.Run(fmt.Sprintf("aof=%t/flushers=%d/inflight=%d", c.aof, c.flushers, c.inflight), func(b *testing.B) {
			var opts []redistest.Option
			if aof {
				opts = append(opts, redistest.WithPersistence())
			}
			srv := redistest.Start(b, opts...)
			rdb := srv.Client(b, func(o *redis.Options) { o.PoolSize = 128 })
			st := store.New(rdb, time.Now, c.flushers)
			ctx := context.Background()
			var next, scripts atomic.Int64
			// RunParallel runs parallelism × GOMAXPROCS goroutines.
			b.SetParallelism(max(c.inflight/runtime.GOMAXPROCS(0), 1))
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				a := fmt.Sprintf("bench-%d", next.Add(1))
				if _, err := st.Open(ctx, store.Op{ID: "open", Digest: "o", Account: a}, 1_000_000); err != nil {
					b.Error(err)
					return
				}
				for i := 0; pb.Next(); i++ {
					table := fmt.Sprintf("t-%s-%d", a, i/2)
					op := store.Op{ID: fmt.Sprintf("op-%d", i), Digest: "d", Account: a}
					var o store.Outcome
					var err error
					if i%2 == 0 {
						o, err = st.Hold(ctx, op, table, "", lobbyv1.Game_GAME_CLASSIC, 10)
						scripts.Add(2)
					} else {
						o, err = st.Release(ctx, op, table)
						scripts.Add(1)
					}
					if err != nil || !o.Accepted() {
						b.Errorf("%v %v", o, err)
						return
					}
				}
			})
			d := time.Since(start).Seconds()
			b.ReportMetric(float64(b.N)/d, "transfers/s")
			b.ReportMetric(float64(scripts.Load())/d, "scripts/s")
		})
	}
}
