// Command streambench measures the streams library on a throw-away
// redis-server: the redis-benchmark XADD ceiling, publish throughput of the
// library beside raw go-redis at the same batch size, consume throughput,
// and publish→handler latency at a paced rate.
//
//	go run ./streams/cmd/streambench -rate 10000 -duration 10s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "streambench:", err)
		os.Exit(1)
	}
}

type config struct {
	batch      int
	messages   int
	rate       int
	duration   time.Duration
	streams    int
	publishers int
	payload    int
	workers    int
	flushers   int
	skip       bool
}

func run() error {
	var cfg config
	flag.IntVar(&cfg.batch, "batch", 16, "entries per pipeline in the throughput runs")
	flag.IntVar(&cfg.messages, "messages", 200_000, "messages per throughput run")
	flag.IntVar(&cfg.rate, "rate", 10_000, "paced publish rate of the latency run (messages/s)")
	flag.DurationVar(&cfg.duration, "duration", 10*time.Second, "length of the latency run")
	flag.IntVar(&cfg.streams, "streams", 100, "streams (tables) the latency and consume runs spread over")
	flag.IntVar(&cfg.publishers, "publishers", 8, "concurrent publishers in the latency run")
	flag.IntVar(&cfg.payload, "payload", 64, "payload bytes per message")
	flag.IntVar(&cfg.workers, "workers", streams.DefaultWorkers, "consumer workers in the latency run")
	flag.IntVar(&cfg.flushers, "flushers", 2, "Batcher pipelines in flight in the latency run")
	flag.BoolVar(&cfg.skip, "latency-only", false, "skip redis-benchmark and the throughput runs")
	flag.Parse()

	srv, err := redistest.Launch()
	if err != nil {
		return err
	}
	defer srv.Stop()
	rdb := srv.NewClient(func(o *redis.Options) { o.PoolSize = 64 })
	ctx := context.Background()
	fmt.Printf("redis-server on %s; GOMAXPROCS=%s\n\n", srv.Addr(), os.Getenv("GOMAXPROCS"))

	if cfg.skip {
		return latency(ctx, rdb, cfg, make([]byte, cfg.payload))
	}
	if line, err := redisBenchmark(srv.Port(), cfg.batch); err != nil {
		fmt.Println("redis-benchmark:", err)
	} else {
		fmt.Println(line)
	}

	payload := make([]byte, cfg.payload)
	raw, err := rawPublish(ctx, rdb, cfg, payload)
	if err != nil {
		return err
	}
	lib, err := libPublish(ctx, rdb, cfg, payload)
	if err != nil {
		return err
	}
	fmt.Printf("publish, batch %d: raw go-redis %.0f msg/s, library %.0f msg/s (library/raw = %.2f)\n",
		cfg.batch, raw, lib, lib/raw)

	cons, err := consumeThroughput(ctx, rdb, cfg, payload)
	if err != nil {
		return err
	}
	fmt.Printf("consume (1 consumer, %d streams, handle+ack): %.0f msg/s\n", cfg.streams, cons)

	return latency(ctx, rdb, cfg, payload)
}

var benchLine = regexp.MustCompile(`([0-9.]+) requests per second`)

// redisBenchmark runs the server's own XADD benchmark: the ceiling no client
// library can beat on this machine.
func redisBenchmark(port, pipeline int) (string, error) {
	args := []string{"-p", strconv.Itoa(port), "-n", "100000", "-P", strconv.Itoa(pipeline), "-q",
		"XADD", "rb-bench", "MAXLEN", "~", "10000", "*", "data", strings.Repeat("x", 64)}
	out, err := exec.Command("redis-benchmark", args...).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("%w: %s", err, out)
	}
	m := benchLine.FindAllStringSubmatch(string(out), -1)
	if len(m) == 0 {
		return "", errors.New("no result in: " + string(out))
	}
	return fmt.Sprintf("redis-benchmark %s: %s XADD/s", strings.Join(args, " "), m[len(m)-1][1]), nil
}

func rawPublish(ctx context.Context, rdb *redis.Client, cfg config, payload []byte) (float64, error) {
	start := time.Now()
	for i := 0; i < cfg.messages; i += cfg.batch {
		pipe := rdb.Pipeline()
		for j := 0; j < cfg.batch; j++ {
			pipe.XAdd(ctx, &redis.XAddArgs{Stream: "raw-bench", MaxLen: streams.DefaultMaxLen, Approx: true,
				Values: []interface{}{"data", payload}})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			return 0, err
		}
	}
	return float64(cfg.messages) / time.Since(start).Seconds(), nil
}

func libPublish(ctx context.Context, rdb *redis.Client, cfg config, payload []byte) (float64, error) {
	pub := streams.NewPublisher(rdb)
	entries := make([]streams.Entry, cfg.batch)
	for j := range entries {
		entries[j] = streams.Entry{Stream: "lib-bench", Data: payload}
	}
	start := time.Now()
	for i := 0; i < cfg.messages; i += cfg.batch {
		if _, err := pub.PublishBatch(ctx, entries); err != nil {
			return 0, err
		}
	}
	return float64(cfg.messages) / time.Since(start).Seconds(), nil
}

func tableNames(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = streams.TableCommands(prefix + strconv.Itoa(i))
	}
	return names
}

func consumeThroughput(ctx context.Context, rdb *redis.Client, cfg config, payload []byte) (float64, error) {
	names := tableNames("ct", cfg.streams)
	pub := streams.NewPublisher(rdb, streams.WithMaxLen(0))
	entries := make([]streams.Entry, 0, 1000)
	for i := 0; i < cfg.messages; i++ {
		entries = append(entries, streams.Entry{Stream: names[i%len(names)], Data: payload})
		if len(entries) == cap(entries) || i == cfg.messages-1 {
			if _, err := pub.PublishBatch(ctx, entries); err != nil {
				return 0, err
			}
			entries = entries[:0]
		}
	}
	var n atomic.Int64
	done := make(chan struct{})
	c := streams.NewConsumer(rdb, "bench", "c1", func(context.Context, streams.Message) error {
		if n.Add(1) == int64(cfg.messages) {
			close(done)
		}
		return nil
	})
	if err := c.Add(ctx, names...); err != nil {
		return 0, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	go func() { _ = c.Run(runCtx) }()
	select {
	case <-done:
	case <-time.After(5 * time.Minute):
		return 0, fmt.Errorf("consumed only %d of %d", n.Load(), cfg.messages)
	}
	return float64(cfg.messages) / time.Since(start).Seconds(), nil
}

// latency publishes at a fixed rate (open loop: each message has a
// scheduled send time, so a slow round trip delays the next sends instead of
// hiding them) and records publish-call-start → handler-start.
func latency(ctx context.Context, rdb *redis.Client, cfg config, payload []byte) error {
	names := tableNames("lat", cfg.streams)
	var mu sync.Mutex
	lat := make([]time.Duration, 0, cfg.rate*int(cfg.duration.Seconds()+1))
	c := streams.NewConsumer(rdb, "lat", "c1", func(_ context.Context, m streams.Message) error {
		sent, _ := strconv.ParseInt(m.Header["ts"], 10, 64)
		d := time.Since(time.Unix(0, sent))
		mu.Lock()
		lat = append(lat, d)
		mu.Unlock()
		return nil
	}, streams.WithStartID("$"), streams.WithWorkers(cfg.workers))
	if err := c.Add(ctx, names...); err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = c.Run(runCtx) }()
	time.Sleep(200 * time.Millisecond)

	bt := streams.NewPublisher(rdb).NewBatcher(ctx, 128, cfg.flushers)
	defer bt.Close()
	total := int(float64(cfg.rate) * cfg.duration.Seconds())
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
				e := streams.Entry{Stream: names[i%len(names)], Data: payload,
					Header: map[string]string{"ts": strconv.FormatInt(time.Now().UnixNano(), 10)}}
				if _, err := bt.Publish(ctx, e); err != nil {
					failed.Add(1)
				}
			}
		}(p)
	}
	wg.Wait()
	elapsed := time.Since(start)
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(lat)
		mu.Unlock()
		if n >= total-int(failed.Load()) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	slices.Sort(lat)
	q := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	fmt.Printf("latency at %d msg/s paced (%d publishers via Batcher(%d flushers), %d streams, 1 consumer with %d workers): sent %d in %s (%.0f msg/s), handled %d, failed %d\n",
		cfg.rate, cfg.publishers, cfg.flushers, cfg.streams, cfg.workers, total, elapsed.Round(time.Millisecond), float64(total)/elapsed.Seconds(), len(lat), failed.Load())
	fmt.Printf("  publish→handler p50 %s  p90 %s  p99 %s  p99.9 %s  max %s\n",
		q(0.50).Round(time.Microsecond), q(0.90).Round(time.Microsecond), q(0.99).Round(time.Microsecond),
		q(0.999).Round(time.Microsecond), lat[len(lat)-1].Round(time.Microsecond))
	return nil
}
