package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/streams"
)

type profiles struct{ cpu, heap, block, mutex string }

// sample is one handled message: when it was due (its paced send time), when
// the publish call started, and when its handler started, as offsets from
// epoch.
type sample struct{ due, call, handled int64 }

type recorder struct {
	// epoch is the zero of the timestamps carried in the messages. Offsets
	// from it are monotonic (time.Since on a time.Now value), so a
	// wall-clock step during a run cannot distort a latency.
	epoch   time.Time
	mu      sync.Mutex
	samples []sample
}

// since is the time since the epoch.
func (r *recorder) since() int64 { return int64(time.Since(r.epoch)) }

func (r *recorder) record(header func(string) string) {
	now := r.since()
	due, _ := strconv.ParseInt(header("due"), 10, 64)
	call, _ := strconv.ParseInt(header("ts"), 10, 64)
	r.mu.Lock()
	r.samples = append(r.samples, sample{due, call, now})
	r.mu.Unlock()
}

func (r *recorder) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.samples)
}

// publisher is the publishing half of an implementation under test; the
// consuming half calls rec for every message it hands to its handler.
type publisher interface {
	publish(ctx context.Context, stream string, payload []byte, call, due int64) error
	close()
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "load average unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "load average unknown"
	}
	return "load average " + strings.Join(f[:3], " ")
}

// latencyRuns runs the paced latency measurement through the library, raw
// go-redis, or both alternating (raw first), with optional profiles of the
// whole sequence.
func latencyRuns(ctx context.Context, rdb *redis.Client, cfg config, payload []byte) (err error) {
	stop, err := startProfiles(cfg.profiles)
	if err != nil {
		return err
	}
	defer func() {
		if e := stop(); e != nil && err == nil {
			err = e
		}
	}()
	impls := strings.Split(strings.ReplaceAll(cfg.impl, "both", "raw,lib"), ",")
	all := map[string][]result{}
	for round := 0; round < cfg.rounds; round++ {
		for _, impl := range impls {
			res, err := latency(ctx, rdb, cfg, payload, impl, fmt.Sprintf("%s%d-", impl, round))
			if err != nil {
				return err
			}
			res.print()
			all[impl] = append(all[impl], res)
			if err := rdb.FlushAll(ctx).Err(); err != nil {
				return err
			}
		}
	}
	if cfg.rounds > 1 {
		fmt.Println("\nall rounds pooled (GC counts of later rounds are lower: the samples kept for this grow the heap; compare GC with one round per process):")
		for _, impl := range impls {
			pooled := result{impl: impl}
			for _, r := range all[impl] {
				pooled.fromCall = append(pooled.fromCall, r.fromCall...)
				pooled.fromDue = append(pooled.fromDue, r.fromDue...)
			}
			slices.Sort(pooled.fromCall)
			slices.Sort(pooled.fromDue)
			fmt.Printf("  %s  publish call→handler %s\n", impl, quantiles(pooled.fromCall))
			fmt.Printf("  %s  due time→handler     %s\n", impl, quantiles(pooled.fromDue))
		}
		// A stall of the whole machine in one round moves the pooled tail;
		// the median round shows what a typical round looked like.
		fmt.Println("\nper round, publish call→handler (median round in brackets):")
		for _, impl := range impls {
			for _, q := range []float64{0.5, 0.99, 0.999} {
				var per []time.Duration
				for _, r := range all[impl] {
					per = append(per, quantile(r.fromCall, q))
				}
				sorted := slices.Clone(per)
				slices.Sort(sorted)
				var b strings.Builder
				for _, d := range per {
					fmt.Fprintf(&b, " %s", d.Round(time.Microsecond))
				}
				fmt.Printf("  %-7s p%-5g%s  [%s]\n", impl, q*100, b.String(), sorted[len(sorted)/2].Round(time.Microsecond))
			}
		}
	}
	return nil
}

func startProfiles(p profiles) (stop func() error, err error) {
	var cpu *os.File
	if p.cpu != "" {
		if cpu, err = os.Create(p.cpu); err != nil {
			return nil, err
		}
		if err := pprof.StartCPUProfile(cpu); err != nil {
			return nil, err
		}
	}
	if p.block != "" {
		runtime.SetBlockProfileRate(int(10 * time.Microsecond))
	}
	if p.mutex != "" {
		runtime.SetMutexProfileFraction(5)
	}
	return func() error {
		var errs []error
		if cpu != nil {
			pprof.StopCPUProfile()
			errs = append(errs, cpu.Close())
		}
		write := func(name, file string) {
			if file == "" {
				return
			}
			f, err := os.Create(file)
			if err != nil {
				errs = append(errs, err)
				return
			}
			errs = append(errs, pprof.Lookup(name).WriteTo(f, 0), f.Close())
		}
		write("allocs", p.heap)
		write("block", p.block)
		write("mutex", p.mutex)
		return errors.Join(errs...)
	}, nil
}

type result struct {
	impl              string
	cfg               config
	total, failed     int
	elapsed           time.Duration
	fromCall, fromDue []time.Duration // sorted
	worst             []sample
	gcs               uint32
	gcPause           time.Duration
	mallocsPerMsg     float64
	load              string
	redis             string
	cpuPerMsg         time.Duration // this process (publishers, consumer, measurement), user+system
	redisCPUPerMsg    time.Duration // redis-server, user+system
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func redisCPU(ctx context.Context, rdb *redis.Client) (time.Duration, error) {
	info, err := rdb.Info(ctx, "cpu").Result()
	if err != nil {
		return 0, err
	}
	var total float64
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (k == "used_cpu_user" || k == "used_cpu_sys") {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return time.Duration(total * float64(time.Second)), nil
}

// commandStats condenses INFO commandstats to "cmd calls×µs/call" per
// command, the Redis side of a run: how many round trips each kind of work
// cost.
func commandStats(info string) string {
	var parts []string
	for _, line := range strings.Split(info, "\n") {
		line = strings.TrimSpace(line)
		name, rest, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		var calls, usecPer string
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "calls":
				calls = v
			case "usec_per_call":
				usecPer = v
			}
		}
		cmd := strings.TrimPrefix(name, "cmdstat_")
		if cmd == "config" || cmd == "info" {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %s×%sµs", cmd, calls, usecPer))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// quantile of sorted durations (0 when there are none).
func quantile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(p*float64(len(d))))]
}

func quantiles(d []time.Duration) string {
	if len(d) == 0 {
		return "no samples"
	}
	q := func(p float64) time.Duration { return quantile(d, p).Round(time.Microsecond) }
	return fmt.Sprintf("p50 %s  p90 %s  p99 %s  p99.9 %s  max %s", q(0.5), q(0.9), q(0.99), q(0.999), d[len(d)-1].Round(time.Microsecond))
}

func (r result) print() {
	fmt.Printf("%s: %d msg/s paced, %d publishers, %d streams; sent %d in %s, handled %d, failed %d; %s\n",
		r.impl, r.cfg.rate, r.cfg.publishers, r.cfg.streams, r.total, r.elapsed.Round(time.Millisecond),
		len(r.fromCall), r.failed, r.load)
	fmt.Printf("  publish call→handler %s\n", quantiles(r.fromCall))
	fmt.Printf("  due time→handler     %s\n", quantiles(r.fromDue))
	fmt.Printf("  redis: %s\n", r.redis)
	fmt.Printf("  per message: %.1f allocations, %s CPU in this process, %s CPU in redis-server; GC: %d cycles, %s total pause\n",
		r.mallocsPerMsg, r.cpuPerMsg.Round(100*time.Nanosecond), r.redisCPUPerMsg.Round(100*time.Nanosecond), r.gcs, r.gcPause.Round(time.Microsecond))
	var b strings.Builder
	for _, s := range r.worst {
		fmt.Fprintf(&b, " %.3fs:%s", time.Duration(s.call).Seconds(), time.Duration(s.handled-s.call).Round(10*time.Microsecond))
	}
	fmt.Printf("  slowest (call time into the run: latency):%s\n", b.String())
}

// latency publishes at a fixed rate (open loop: every message has a due
// time, and a late publisher does not push the schedule back) and records,
// for every handled message, the time from the publish call and from its due
// time to the start of its handler.
func latency(ctx context.Context, rdb *redis.Client, cfg config, payload []byte, impl, prefix string) (result, error) {
	names := tableNames(prefix, cfg.streams)
	total := int(float64(cfg.rate) * cfg.duration.Seconds())
	rec := &recorder{epoch: time.Now(), samples: make([]sample, 0, total)}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	pubImpl, consImpl := impl, impl
	switch impl {
	case "rawpub":
		pubImpl, consImpl = "raw", "lib"
	case "rawcons":
		pubImpl, consImpl = "lib", "raw"
	}
	var consumerDone <-chan struct{}
	var err error
	if consImpl == "lib" {
		consumerDone, err = startLibConsumer(runCtx, rdb, cfg, names, rec)
	} else {
		consumerDone, err = startRawConsumer(runCtx, rdb, names, rec)
	}
	if err != nil {
		return result{}, err
	}
	var b publisher
	if pubImpl == "lib" {
		b = libPublisher{streams.NewPublisher(rdb).NewBatcher(runCtx, 128, cfg.flushers)}
	} else {
		b = newRawPublisher(runCtx, rdb, cfg.flushers)
	}
	time.Sleep(200 * time.Millisecond)

	load := loadAverage()
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		return result{}, err
	}
	redisCPU0, err := redisCPU(ctx, rdb)
	if err != nil {
		return result{}, err
	}
	cpu0 := processCPU()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	interval := time.Duration(float64(time.Second) * float64(cfg.publishers) / float64(cfg.rate))
	start := time.Now()
	var wg sync.WaitGroup
	var failed atomic.Int64
	for p := 0; p < cfg.publishers; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for k := 0; ; k++ {
				i := k*cfg.publishers + p
				if i >= total {
					return
				}
				due := start.Add(time.Duration(k) * interval).Add(time.Duration(p) * interval / time.Duration(cfg.publishers))
				if d := time.Until(due); d > 0 {
					time.Sleep(d)
				}
				if err := b.publish(ctx, names[i%len(names)], payload, rec.since(), int64(due.Sub(rec.epoch))); err != nil {
					failed.Add(1)
				}
			}
		}(p)
	}
	wg.Wait()
	elapsed := time.Since(start)
	deadline := time.Now().Add(10 * time.Second)
	for rec.len() < total-int(failed.Load()) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	var ms1 runtime.MemStats
	runtime.ReadMemStats(&ms1)
	cpu1 := processCPU()
	stats, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return result{}, err
	}
	redisCPU1, err := redisCPU(ctx, rdb)
	if err != nil {
		return result{}, err
	}
	b.close()
	cancel()
	<-consumerDone

	rec.mu.Lock()
	defer rec.mu.Unlock()
	res := result{impl: impl, cfg: cfg, total: total, failed: int(failed.Load()), elapsed: elapsed, load: load, redis: commandStats(stats),
		gcs: ms1.NumGC - ms0.NumGC, gcPause: time.Duration(ms1.PauseTotalNs - ms0.PauseTotalNs)}
	if n := len(rec.samples); n > 0 {
		res.mallocsPerMsg = float64(ms1.Mallocs-ms0.Mallocs) / float64(n)
		res.cpuPerMsg = (cpu1 - cpu0) / time.Duration(n)
		res.redisCPUPerMsg = (redisCPU1 - redisCPU0) / time.Duration(n)
	}
	for _, s := range rec.samples {
		res.fromCall = append(res.fromCall, time.Duration(s.handled-s.call))
		res.fromDue = append(res.fromDue, time.Duration(s.handled-s.due))
	}
	slices.Sort(res.fromCall)
	slices.Sort(res.fromDue)
	worst := slices.Clone(rec.samples)
	slices.SortFunc(worst, func(a, b sample) int { return int((b.handled - b.call) - (a.handled - a.call)) })
	res.worst = worst[:min(len(worst), 12)]
	for i := range res.worst {
		res.worst[i].call -= int64(start.Sub(rec.epoch))
		res.worst[i].handled -= int64(start.Sub(rec.epoch))
	}
	return res, nil
}

// libPublisher is the library's Batcher.
type libPublisher struct{ bt *streams.Batcher }

func (l libPublisher) publish(ctx context.Context, stream string, payload []byte, call, due int64) error {
	_, err := l.bt.Publish(ctx, streams.Entry{Stream: stream, Data: payload,
		Header: map[string]string{"ts": strconv.FormatInt(call, 10), "due": strconv.FormatInt(due, 10)}})
	return err
}

func (l libPublisher) close() { l.bt.Close() }

// startLibConsumer runs the library's Consumer (WithStartID("$")).
func startLibConsumer(ctx context.Context, rdb *redis.Client, cfg config, names []string, rec *recorder) (<-chan struct{}, error) {
	c := streams.NewConsumer(rdb, "lat", "c1", func(_ context.Context, m streams.Message) error {
		rec.record(func(k string) string { return m.Header[k] })
		return nil
	}, streams.WithStartID("$"), streams.WithWorkers(cfg.workers), streams.WithBatchKeys(cfg.batchKeys))
	if err := c.Add(ctx, names...); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(ctx) }()
	return done, nil
}

// rawPublisher and startRawConsumer are the same shape in plain go-redis
// with nothing else: callers queue XADDs that `flushers` goroutines send as
// pipelines (as the Batcher does); one goroutine reads all streams with a
// blocking multi-key XREADGROUP, runs the handler inline and hands the IDs
// to an acker that sends XACKs in pipelines. No wake stream, workers,
// tracing, metrics, reclaim or in-flight tracking.
type rawPublisher struct {
	rdb  *redis.Client
	reqs chan *rawReq
	wg   sync.WaitGroup
}

type rawReq struct {
	stream    string
	payload   []byte
	call, due int64
	done      chan error
}

func startRawConsumer(ctx context.Context, rdb *redis.Client, names []string, rec *recorder) (<-chan struct{}, error) {
	const group, consumer = "lat", "c1"
	pipe := rdb.Pipeline()
	for _, s := range names {
		pipe.XGroupCreateMkStream(ctx, s, group, "$")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, err
	}
	acks := make(chan map[string][]string, 1024)
	done := make(chan struct{})
	var consumers sync.WaitGroup
	consumers.Add(2)
	go func() {
		defer consumers.Done()
		defer close(acks)
		args := make([]string, 0, 2*len(names))
		args = append(args, names...)
		for range names {
			args = append(args, ">")
		}
		for ctx.Err() == nil {
			res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: group, Consumer: consumer, Streams: args,
				Count: streams.DefaultCount, Block: streams.DefaultBlock}).Result()
			if err != nil {
				continue
			}
			batch := map[string][]string{}
			for _, xs := range res {
				for _, xm := range xs.Messages {
					rec.record(func(k string) string { s, _ := xm.Values[k].(string); return s })
					batch[xs.Stream] = append(batch[xs.Stream], xm.ID)
				}
			}
			acks <- batch
		}
	}()
	go func() {
		defer consumers.Done()
		actx := context.WithoutCancel(ctx)
		for batch := range acks {
		drain:
			for {
				select {
				case more, ok := <-acks:
					if !ok {
						break drain
					}
					for s, ids := range more {
						batch[s] = append(batch[s], ids...)
					}
				default:
					break drain
				}
			}
			pipe := rdb.Pipeline()
			for s, ids := range batch {
				pipe.XAck(actx, s, group, ids...)
			}
			_, _ = pipe.Exec(actx)
		}
	}()
	go func() { consumers.Wait(); close(done) }()
	return done, nil
}

func newRawPublisher(ctx context.Context, rdb *redis.Client, flushers int) *rawPublisher {
	r := &rawPublisher{rdb: rdb, reqs: make(chan *rawReq, 128*flushers)}
	for i := 0; i < flushers; i++ {
		r.wg.Add(1)
		go r.flushLoop(context.WithoutCancel(ctx))
	}
	return r
}

func (r *rawPublisher) publish(_ context.Context, stream string, payload []byte, call, due int64) error {
	req := &rawReq{stream: stream, payload: payload, call: call, due: due, done: make(chan error, 1)}
	r.reqs <- req
	return <-req.done
}

func (r *rawPublisher) flushLoop(ctx context.Context) {
	defer r.wg.Done()
	batch := make([]*rawReq, 0, 128)
	for req := range r.reqs {
		batch = append(batch[:0], req)
	fill:
		for len(batch) < cap(batch) {
			select {
			case req, ok := <-r.reqs:
				if !ok {
					break fill
				}
				batch = append(batch, req)
			default:
				break fill
			}
		}
		pipe := r.rdb.Pipeline()
		cmds := make([]*redis.StringCmd, len(batch))
		for i, q := range batch {
			cmds[i] = pipe.XAdd(ctx, &redis.XAddArgs{Stream: q.stream, MaxLen: streams.DefaultMaxLen, Approx: true,
				Values: []interface{}{streams.FieldData, q.payload, "ts", strconv.FormatInt(q.call, 10), "due", strconv.FormatInt(q.due, 10)}})
		}
		_, _ = pipe.Exec(ctx)
		for i, q := range batch {
			q.done <- cmds[i].Err()
		}
	}
}

func (r *rawPublisher) close() {
	close(r.reqs)
	r.wg.Wait()
}
