package streams_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/streams"
)

// fast makes the loops quick enough for tests that wait for reclaims.
func fast(extra ...streams.Option) []streams.Option {
	return append([]streams.Option{
		streams.WithMinIdle(400 * time.Millisecond),
		streams.WithClaimInterval(100 * time.Millisecond),
		streams.WithBlock(time.Second),
		streams.WithBackoff(10*time.Millisecond, 200*time.Millisecond),
		streams.WithShutdownGrace(2 * time.Second),
	}, extra...)
}

// runConsumer runs c until the test ends and reports Run's return.
func runConsumer(t *testing.T, c interface{ Run(context.Context) error }) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run returned %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Errorf("Run did not return within 10s of cancel")
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func pendingCount(t *testing.T, rdb *redis.Client, stream, group string) int64 {
	t.Helper()
	p, err := rdb.XPending(context.Background(), stream, group).Result()
	if err != nil {
		t.Fatalf("xpending: %v", err)
	}
	return p.Count
}

// TestMain doubles as a helper process: the kill test re-executes the test
// binary as a consumer it can SIGKILL between effect and ack.
func TestMain(m *testing.M) {
	if os.Getenv("STREAMS_HELPER") == "effect-then-hang" {
		os.Exit(helperEffectThenHang())
	}
	os.Exit(m.Run())
}

// helperEffectThenHang consumes one stream; its handler applies the effect
// with Once, prints EFFECT <id>, and then hangs so that it never acks.
func helperEffectThenHang() int {
	addr, stream, group := os.Getenv("REDIS_ADDR"), os.Getenv("STREAM"), os.Getenv("GROUP")
	minIdle, _ := strconv.Atoi(os.Getenv("MIN_IDLE_MS"))
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	out := bufio.NewWriter(os.Stdout)
	c := streams.NewConsumer(rdb, group, "doomed", func(ctx context.Context, m streams.Message) error {
		if _, err := applyEffect(ctx, rdb, m); err != nil {
			return err
		}
		fmt.Fprintf(out, "EFFECT %s\n", m.ID)
		out.Flush()
		select {} // "dies" here: the parent SIGKILLs us before any ack
	}, streams.WithMinIdle(time.Duration(minIdle)*time.Millisecond), streams.WithClaimInterval(100*time.Millisecond))
	ctx := context.Background()
	if err := c.Add(ctx, stream); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	_ = c.Run(ctx)
	return 0
}

// applyEffect is the handler effect of the exactly-once tests: add the
// message's amount to a counter and log the message, once per message key.
func applyEffect(ctx context.Context, rdb redis.Scripter, m streams.Message) (streams.OnceResult, error) {
	tag := "{fx}"
	eff := (&streams.Effect{}).
		Do("INCRBY", "fx:"+tag+":total", m.Header["amount"]).
		Do("RPUSH", "fx:"+tag+":log", m.ID)
	return streams.Once(ctx, rdb, "fx:"+tag+":dedupe:"+m.Key(), time.Hour, m.ID, eff)
}
