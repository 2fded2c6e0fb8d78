// Command streambench measures the streams library on a throw-away
// redis-server: the redis-benchmark XADD ceiling, publish throughput of the
// library beside raw go-redis at the same batch size, consume throughput,
// and publish→handler latency at a paced rate.
//
//	cd tools && go run ./cmd/streambench -rate 10000 -duration 10s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
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
	batchKeys  int
	flushers   int
	skip       bool
	impl       string
	rounds     int
	profiles   profiles
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
	flag.IntVar(&cfg.batchKeys, "batchkeys", streams.DefaultBatchKeys, "streams per XREADGROUP of the library consumer in the latency run (the raw consumer reads all streams in one)")
	flag.IntVar(&cfg.flushers, "flushers", 2, "Batcher pipelines in flight in the latency run")
	flag.BoolVar(&cfg.skip, "latency-only", false, "skip redis-benchmark and the throughput runs")
	flag.StringVar(&cfg.impl, "impl", "both", "latency runs, alternating: lib (the library), raw (plain go-redis of the same shape), both (= raw,lib), rawpub (raw publisher + library consumer), rawcons (library publisher + raw consumer)")
	flag.IntVar(&cfg.rounds, "rounds", 1, "latency rounds per implementation (alternating raw and lib with -impl both)")
	flag.StringVar(&cfg.profiles.cpu, "cpuprofile", "", "write a CPU profile of the latency runs to this file")
	flag.StringVar(&cfg.profiles.heap, "memprofile", "", "write an allocation profile (after the latency runs) to this file")
	flag.StringVar(&cfg.profiles.block, "blockprofile", "", "write a blocking profile of the latency runs to this file")
	flag.StringVar(&cfg.profiles.mutex, "mutexprofile", "", "write a mutex contention profile of the latency runs to this file")
	flag.Parse()
	for _, impl := range strings.Split(cfg.impl, ",") {
		switch impl {
		case "lib", "raw", "both", "rawpub", "rawcons":
		default:
			return fmt.Errorf("-impl %q: want a comma-separated list of lib, raw, both (= raw,lib), rawpub (raw publisher, library consumer), rawcons (library publisher, raw consumer)", cfg.impl)
		}
	}

	srv, err := redistest.Launch()
	if err != nil {
		return err
	}
	defer srv.Stop()
	rdb := srv.NewClient(func(o *redis.Options) { o.PoolSize = 64 })
	ctx := context.Background()
	fmt.Printf("redis-server on %s; GOMAXPROCS=%d, NumCPU=%d; %s\n\n", srv.Addr(), runtime.GOMAXPROCS(0), runtime.NumCPU(), loadAverage())

	if cfg.skip {
		return latencyRuns(ctx, rdb, cfg, make([]byte, cfg.payload))
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

	return latencyRuns(ctx, rdb, cfg, payload)
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
