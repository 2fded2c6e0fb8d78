package streams_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
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

func TestConsumer_AcksAfterHandlerSucceeds(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	stream := streams.TableCommands("ack")
	pub := streams.NewPublisher(rdb)
	for i := 0; i < 10; i++ {
		if _, err := pub.Publish(ctx, streams.Entry{Stream: stream, Data: []byte(strconv.Itoa(i))}); err != nil {
			t.Fatal(err)
		}
	}
	var got atomic.Int64
	c := streams.NewConsumer(rdb, "g", "c1", func(ctx context.Context, m streams.Message) error {
		if m.Deliveries != 1 {
			t.Errorf("first delivery has Deliveries=%d", m.Deliveries)
		}
		got.Add(1)
		return nil
	}, fast()...)
	if err := c.Add(ctx, stream); err != nil {
		t.Fatal(err)
	}
	runConsumer(t, c)
	eventually(t, 5*time.Second, "10 handled and acked", func() bool {
		return got.Load() == 10 && pendingCount(t, rdb, stream, "g") == 0
	})
}

// The shard sends the same prepared XREADGROUP again and again; a read that
// times out empty must not hand out the previous reply's messages again.
func TestConsumer_EmptyBlockingReadsDeliverNothingAgain(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	streamA, streamB := streams.TableCommands("quiet-a"), streams.TableCommands("quiet-b")
	var mu sync.Mutex
	var ids []string
	c := streams.NewConsumer(rdb, "g", "c1", func(ctx context.Context, m streams.Message) error {
		mu.Lock()
		ids = append(ids, m.Stream+"/"+m.ID)
		mu.Unlock()
		return nil
	}, fast(streams.WithBlock(20*time.Millisecond))...)
	if err := c.Add(ctx, streamA, streamB); err != nil {
		t.Fatal(err)
	}
	runConsumer(t, c)
	handled := func() int { mu.Lock(); defer mu.Unlock(); return len(ids) }
	pub := streams.NewPublisher(rdb)
	for i, s := range []string{streamA, streamB, streamA} {
		if _, err := pub.Publish(ctx, streams.Entry{Stream: s}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 5*time.Second, "message handled", func() bool { return handled() >= i+1 })
		time.Sleep(200 * time.Millisecond) // about ten empty reads
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ids) != 3 {
		t.Fatalf("handled %v, want 3 distinct messages", ids)
	}
	if ids[0] == ids[2] || !strings.HasPrefix(ids[1], streamB) {
		t.Errorf("handled %v: a message repeated or out of place", ids)
	}
}

func TestConsumer_HandlesEachStreamInOrder(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	pub := streams.NewPublisher(rdb)
	const tables, per = 20, 50
	var entries []streams.Entry
	for i := 0; i < per; i++ {
		for tb := 0; tb < tables; tb++ {
			entries = append(entries, streams.Entry{Stream: streams.TableCommands(strconv.Itoa(tb)), Data: []byte(strconv.Itoa(i))})
		}
	}
	if _, err := pub.PublishBatch(ctx, entries); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	last := map[string]int{}
	var n atomic.Int64
	c := streams.NewConsumer(rdb, "g", "c1", func(ctx context.Context, m streams.Message) error {
		v, _ := strconv.Atoi(string(m.Data))
		mu.Lock()
		defer mu.Unlock()
		if prev, ok := last[m.Stream]; ok && v != prev+1 {
			t.Errorf("%s: got %d after %d", m.Stream, v, prev)
		}
		last[m.Stream] = v
		n.Add(1)
		return nil
	}, fast(streams.WithWorkers(4), streams.WithCount(7))...)
	for tb := 0; tb < tables; tb++ {
		if err := c.Add(ctx, streams.TableCommands(strconv.Itoa(tb))); err != nil {
			t.Fatal(err)
		}
	}
	runConsumer(t, c)
	eventually(t, 10*time.Second, "all handled", func() bool { return n.Load() == tables*per })
}

// With WithOrderKey one stream's messages about different subjects run in
// parallel, and each subject's still in stream order: subject a's first
// handler waits until a message of b has been handled, which by stream (one
// worker for the stream) could never happen.
func TestConsumer_OrderKeyRunsOneStreamsKeysInParallelEachInOrder(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	const stream, per = "pulka:test:subjects", 30
	var entries []streams.Entry
	for i := 0; i < per; i++ {
		for _, k := range []string{"a", "b", "c"} {
			entries = append(entries, streams.Entry{Stream: stream, Data: []byte(strconv.Itoa(i)), Header: map[string]string{"k": k}})
		}
	}
	if _, err := streams.NewPublisher(rdb).PublishBatch(ctx, entries); err != nil {
		t.Fatal(err)
	}
	bHandled := make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	last := map[string]int{}
	var n atomic.Int64
	// Workers 8: a, b and c hash to different workers (checked below), so
	// a's wait for b can end.
	c := streams.NewConsumer(rdb, "g", "c1", func(ctx context.Context, m streams.Message) error {
		k := m.Header["k"]
		v, _ := strconv.Atoi(string(m.Data))
		if k == "a" && v == 0 {
			select {
			case <-bHandled:
			case <-time.After(5 * time.Second):
				t.Error("a's handler waited 5 s for a message of b: the stream's messages ran one at a time")
			}
		}
		if k == "b" {
			once.Do(func() { close(bHandled) })
		}
		mu.Lock()
		defer mu.Unlock()
		if prev, ok := last[k]; (ok && v != prev+1) || (!ok && v != 0) {
			t.Errorf("key %s: got %d after %d", k, v, prev)
		}
		last[k] = v
		n.Add(1)
		return nil
	}, fast(streams.WithWorkers(8), streams.WithCount(5), streams.WithOrderKey(func(m streams.Message) string { return m.Header["k"] }))...)
	if err := c.Add(ctx, stream); err != nil {
		t.Fatal(err)
	}
	runConsumer(t, c)
	eventually(t, 10*time.Second, "all handled", func() bool { return n.Load() == 3*per })
	eventually(t, 5*time.Second, "all acknowledged", func() bool { return pendingCount(t, rdb, stream, "g") == 0 })
}

// The scenario of invariant 4: a consumer dies after its effect but before
// its ack. Another consumer must reclaim the message once it has been idle
// for the configured time, and the effect must still have happened once.
func TestConsumer_KilledAfterEffectBeforeAck_ReclaimedAndEffectAppliedOnce(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	stream, group := streams.TableCommands("kill"), "runners"
	const minIdle = 500 * time.Millisecond

	id, err := streams.NewPublisher(rdb).Publish(ctx, streams.Entry{Stream: stream, Header: map[string]string{"amount": "7"}})
	if err != nil {
		t.Fatal(err)
	}

	// Consumer A runs in another process so it can really be SIGKILLed.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "STREAMS_HELPER=effect-then-hang", "REDIS_ADDR="+srv.Addr(),
		"STREAM="+stream, "GROUP="+group, "MIN_IDLE_MS="+strconv.Itoa(int(minIdle.Milliseconds())))
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("helper said nothing: %v", err)
	}
	if strings.TrimSpace(line) != "EFFECT "+id {
		t.Fatalf("helper said %q, want EFFECT %s", line, id)
	}
	if err := cmd.Process.Signal(os.Kill); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	killed := time.Now()
	if n := pendingCount(t, rdb, stream, group); n != 1 {
		t.Fatalf("pending after kill = %d, want 1 (the unacked message)", n)
	}

	type seen struct {
		at         time.Time
		deliveries int64
		applied    bool
	}
	got := make(chan seen, 4)
	b := streams.NewConsumer(rdb, group, "survivor", func(ctx context.Context, m streams.Message) error {
		res, err := applyEffect(ctx, rdb, m)
		if err != nil {
			return err
		}
		got <- seen{time.Now(), m.Deliveries, res.Applied}
		return nil
	}, fast(streams.WithMinIdle(minIdle))...)
	if err := b.Add(ctx, stream); err != nil {
		t.Fatal(err)
	}
	runConsumer(t, b)

	select {
	case s := <-got:
		if s.applied {
			t.Errorf("the survivor applied the effect again")
		}
		if s.deliveries != 2 {
			t.Errorf("Deliveries = %d, want 2", s.deliveries)
		}
		// Idle time started at A's delivery (before the kill) and the scan
		// runs every 100ms: reclaim must come within min-idle plus slack.
		if wait := s.at.Sub(killed); wait > minIdle+time.Second {
			t.Errorf("reclaimed %s after the kill; min-idle is %s", wait, minIdle)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("message was never reclaimed")
	}
	eventually(t, 3*time.Second, "ack", func() bool { return pendingCount(t, rdb, stream, group) == 0 })
	total, err := rdb.Get(ctx, "fx:{fx}:total").Int()
	if err != nil || total != 7 {
		t.Fatalf("effect total = %d (%v), want 7 (applied exactly once)", total, err)
	}
	if n, _ := rdb.LLen(ctx, "fx:{fx}:log").Result(); n != 1 {
		t.Fatalf("effect log has %d entries, want 1", n)
	}
	select {
	case s := <-got:
		t.Fatalf("message handled again after ack: %+v", s)
	case <-time.After(3 * minIdle):
	}
}

func TestConsumer_PoisonMessageGoesToDeadLetterWithError(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	stream, group := streams.TableCommands("poison"), "g"
	pub := streams.NewPublisher(rdb)
	poisonID, err := pub.Publish(ctx, streams.Entry{Stream: stream, Data: []byte("poison"), Header: map[string]string{"type": "bad"}})
	if err != nil {
		t.Fatal(err)
	}
	goodID, err := pub.Publish(ctx, streams.Entry{Stream: stream, Data: []byte("good")})
	if err != nil {
		t.Fatal(err)
	}
	var attempts atomic.Int64
	var good atomic.Bool
	c := streams.NewConsumer(rdb, group, "c1", func(ctx context.Context, m streams.Message) error {
		if string(m.Data) == "poison" {
			attempts.Add(1)
			return errors.New("cannot parse move: bad card")
		}
		good.Store(true)
		return nil
	}, fast(streams.WithMaxDeliveries(3), streams.WithMinIdle(200*time.Millisecond))...)
	if err := c.Add(ctx, stream); err != nil {
		t.Fatal(err)
	}
	runConsumer(t, c)
	dlq := streams.DeadLetter(group)
	eventually(t, 10*time.Second, "dead-letter entry", func() bool {
		n, _ := rdb.XLen(ctx, dlq).Result()
		return n > 0
	})
	if !good.Load() {
		t.Errorf("the good message behind the poison one was not handled")
	}
	if n := attempts.Load(); n != 3 {
		t.Errorf("handler ran %d times, want 3 (the delivery limit)", n)
	}
	entries, err := rdb.XRange(ctx, dlq, "-", "+").Result()
	if err != nil || len(entries) != 1 {
		t.Fatalf("dead letters: %v %v", entries, err)
	}
	v := entries[0].Values
	want := map[string]string{
		"stream": stream, "id": poisonID, "group": group, "deliveries": "3",
		"error": "cannot parse move: bad card", "data": "poison", "h:type": "bad",
	}
	for k, w := range want {
		if v[k] != w {
			t.Errorf("dead letter %s = %v, want %q", k, v[k], w)
		}
	}
	eventually(t, 2*time.Second, "poison acked", func() bool { return pendingCount(t, rdb, stream, group) == 0 })
	_ = goodID
}

// A message whose handler kills the consumer every time never returns an
// error: the delivery count alone must send it to the dead-letter stream.
func TestConsumer_MessageOverDeliveryLimitIsDeadLetteredWithoutRunningHandler(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	stream, group := streams.TableCommands("crashy"), "g"
	if err := rdb.XGroupCreateMkStream(ctx, stream, group, "0").Err(); err != nil {
		t.Fatal(err)
	}
	id, err := streams.NewPublisher(rdb).Publish(ctx, streams.Entry{Stream: stream, Data: []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	// Simulate three consumers that each took the message and died.
	for i := 0; i < 3; i++ {
		if i == 0 {
			if err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: group, Consumer: "dead", Streams: []string{stream, ">"}, Block: -1}).Err(); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := rdb.XClaim(ctx, &redis.XClaimArgs{Stream: stream, Group: group, Consumer: "dead", Messages: []string{id}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	var ran atomic.Bool
	c := streams.NewConsumer(rdb, group, "c1", func(ctx context.Context, m streams.Message) error {
		ran.Store(true)
		return nil
	}, fast(streams.WithMaxDeliveries(3), streams.WithMinIdle(100*time.Millisecond))...)
	if err := c.Add(ctx, stream); err != nil {
		t.Fatal(err)
	}
	runConsumer(t, c)
	eventually(t, 5*time.Second, "dead letter", func() bool {
		n, _ := rdb.XLen(ctx, streams.DeadLetter(group)).Result()
		return n == 1
	})
	if ran.Load() {
		t.Errorf("handler ran for a message already over its delivery limit")
	}
	e, _ := rdb.XRange(ctx, streams.DeadLetter(group), "-", "+").Result()
	if errText, _ := e[0].Values["error"].(string); !strings.Contains(errText, "without acknowledgement") {
		t.Errorf("dead letter error = %q", errText)
	}
}

func TestConsumer_ReadsFiveThousandStreamsInOneLoopAndPicksUpNewOnes(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t, func(o *redis.Options) { o.PoolSize = 32 })
	ctx := ctxT(t)
	const n = 5000
	names := make([]string, n)
	entries := make([]streams.Entry, n)
	for i := range names {
		names[i] = streams.TableCommands("t" + strconv.Itoa(i))
		entries[i] = streams.Entry{Stream: names[i], Data: []byte(names[i])}
	}
	pub := streams.NewPublisher(rdb)
	for i := 0; i < n; i += 1000 {
		if _, err := pub.PublishBatch(ctx, entries[i:i+1000]); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	seen := map[string]int{}
	c := streams.NewConsumer(rdb, "g", "c1", func(ctx context.Context, m streams.Message) error {
		if string(m.Data) != m.Stream {
			t.Errorf("message of %s read from %s", m.Data, m.Stream)
		}
		mu.Lock()
		seen[m.Stream]++
		mu.Unlock()
		return nil
	}, fast(streams.WithBatchKeys(1000), streams.WithBlock(5*time.Second))...)
	if err := c.Add(ctx, names...); err != nil {
		t.Fatal(err)
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(seen) }
	stop := runConsumer(t, c)
	eventually(t, 20*time.Second, "one message from each of 5000 streams", func() bool { return count() == n })

	// A stream added at run time is read without restarting, promptly even
	// though the reads block for 5s (the add wakes them).
	extra := streams.TableCommands("late")
	if err := c.Add(ctx, extra); err != nil {
		t.Fatal(err)
	}
	added := time.Now()
	if _, err := pub.Publish(ctx, streams.Entry{Stream: extra, Data: []byte(extra)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*time.Second, "message of the added stream", func() bool { return count() == n+1 })
	if d := time.Since(added); d > 2*time.Second {
		t.Errorf("added stream picked up after %s", d)
	}
	// A removed stream is no longer read.
	c.Remove(ctx, extra)
	time.Sleep(100 * time.Millisecond)
	if _, err := pub.Publish(ctx, streams.Entry{Stream: extra, Data: []byte(extra)}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	mu.Lock()
	if seen[extra] != 1 {
		t.Errorf("removed stream delivered %d messages, want 1", seen[extra])
	}
	for s, k := range seen {
		if k != 1 {
			t.Errorf("%s delivered %d times", s, k)
		}
	}
	mu.Unlock()
	start := time.Now()
	stop()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("shutdown took %s with 5s blocking reads (should be woken)", d)
	}
}

func TestConsumer_RemovesIdleConsumersWithoutPendingOnly(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	stream, group := streams.TableCommands("gc"), "g"
	if err := rdb.XGroupCreateMkStream(ctx, stream, group, "0").Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := streams.NewPublisher(rdb).Publish(ctx, streams.Entry{Stream: stream}); err != nil {
		t.Fatal(err)
	}
	if err := rdb.XGroupCreateConsumer(ctx, stream, group, "idle-empty").Err(); err != nil {
		t.Fatal(err)
	}
	// idle-busy holds the only message, unacked.
	if err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: group, Consumer: "idle-busy", Streams: []string{stream, ">"}, Block: -1}).Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	c := streams.NewConsumer(rdb, group, "me", func(context.Context, streams.Message) error { return nil }, fast(streams.WithMinIdle(time.Hour))...)
	if err := c.Add(ctx, stream); err != nil {
		t.Fatal(err)
	}
	removed, err := c.RemoveIdleConsumers(ctx, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if removed != 1 {
		t.Errorf("removed %d consumers, want 1", removed)
	}
	infos, err := rdb.XInfoConsumers(ctx, stream, group).Result()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ci := range infos {
		names = append(names, ci.Name)
	}
	if got := strings.Join(names, ","); got != "idle-busy" {
		t.Errorf("consumers left = %s, want idle-busy (it still owns a pending message)", got)
	}
}

func TestConsumer_GracefulShutdownLetsRunningHandlerFinishAndAcks(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	stream := streams.TableCommands("grace")
	if _, err := streams.NewPublisher(rdb).Publish(ctx, streams.Entry{Stream: stream}); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	var finished atomic.Bool
	c := streams.NewConsumer(rdb, "g", "c1", func(ctx context.Context, m streams.Message) error {
		close(started)
		select {
		case <-time.After(300 * time.Millisecond):
			finished.Store(true)
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}, fast()...)
	if err := c.Add(ctx, stream); err != nil {
		t.Fatal(err)
	}
	stop := runConsumer(t, c)
	<-started
	stop()
	if !finished.Load() {
		t.Fatalf("handler was cut off by shutdown")
	}
	if n := pendingCount(t, rdb, stream, "g"); n != 0 {
		t.Fatalf("pending after graceful shutdown = %d, want 0", n)
	}
}

// Without persistence a restarted Redis has lost streams and groups: the
// consumer must notice NOGROUP, recreate its groups and go on with new
// messages, and the publisher must reconnect.
func TestConsumer_RecoversWhenRestartedRedisLostItsGroups(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t, func(o *redis.Options) { o.MaxRetries = 1 })
	ctx := ctxT(t)
	stream := streams.TableCommands("amnesia")
	var got sync.Map
	c := streams.NewConsumer(rdb, "g", "c1", func(ctx context.Context, m streams.Message) error {
		got.Store(string(m.Data), true)
		return nil
	}, fast()...)
	if err := c.Add(ctx, stream); err != nil {
		t.Fatal(err)
	}
	runConsumer(t, c)
	pub := streams.NewPublisher(rdb)
	if _, err := pub.Publish(ctx, streams.Entry{Stream: stream, Data: []byte("before")}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "before", func() bool { _, ok := got.Load("before"); return ok })
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// The publisher retries until Redis is back; the message lands in a
	// fresh stream whose group the consumer has to recreate.
	eventually(t, 10*time.Second, "publish after restart", func() bool {
		_, err := pub.Publish(ctx, streams.Entry{Stream: stream, Data: []byte("after")})
		return err == nil
	})
	eventually(t, 10*time.Second, "after", func() bool { _, ok := got.Load("after"); return ok })
}

// With an fsync-always AOF, everything Redis acknowledged survives SIGKILL:
// then no acknowledged publish may be lost and no effect applied twice,
// however the kill splits publish, handle and ack.
func TestConsumer_KillAndRestartRedisMidStream_NoAcknowledgedMessageLostOrDoubled(t *testing.T) {
	srv := redistest.Start(t, redistest.WithPersistence())
	tune := func(o *redis.Options) {
		o.MaxRetries = 1
		o.DialTimeout = 200 * time.Millisecond
		o.ReadTimeout = time.Second
	}
	pubRdb := srv.Client(t, tune)
	conRdb := srv.Client(t, tune)
	ctx := ctxT(t)
	stream := streams.TableCommands("durable")

	c := streams.NewConsumer(conRdb, "g", "c1", func(ctx context.Context, m streams.Message) error {
		// The effect is keyed by the publisher's sequence number, not the
		// entry ID: a publish retried after a lost reply may append twice.
		seq := m.Header["seq"]
		eff := (&streams.Effect{}).Do("SADD", "fx:{d}:handled", seq).Do("INCR", "fx:{d}:effects")
		_, err := streams.Once(ctx, conRdb, "fx:{d}:dedupe:"+seq, time.Hour, m.ID, eff)
		return err
	}, fast()...)
	if err := c.Add(ctx, stream); err != nil {
		t.Fatal(err)
	}
	runConsumer(t, c)

	pub := streams.NewPublisher(pubRdb)
	info, err := pubRdb.Info(ctx, "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	firstRunID := runIDOf(info)
	var acked []string
	failed := 0
	const total = 600
	restarted := make(chan error, 1)
	for i := 0; i < total; i++ {
		if i == total/3 {
			srv.Kill()
			go func() {
				time.Sleep(300 * time.Millisecond)
				restarted <- srv.Restart()
			}()
		}
		seq := strconv.Itoa(i)
		for {
			_, err := pub.Publish(ctx, streams.Entry{Stream: stream, Header: map[string]string{"seq": seq}})
			if err == nil {
				acked = append(acked, seq)
				break
			}
			if ctx.Err() != nil {
				t.Fatal(ctx.Err())
			}
			failed++
			time.Sleep(20 * time.Millisecond)
		}
	}
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	runID, err := pubRdb.Info(ctx, "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(runID, firstRunID) {
		t.Fatalf("Redis was not restarted (same run_id)")
	}
	t.Logf("%d publishes acknowledged, %d attempts failed during the outage", len(acked), failed)
	eventually(t, 20*time.Second, "every acknowledged publish handled", func() bool {
		n, _ := pubRdb.SCard(ctx, "fx:{d}:handled").Result()
		return n == int64(len(acked))
	})
	for _, seq := range acked {
		ok, err := pubRdb.SIsMember(ctx, "fx:{d}:handled", seq).Result()
		if err != nil || !ok {
			t.Fatalf("acknowledged message %s was lost (%v)", seq, err)
		}
	}
	effects, _ := pubRdb.Get(ctx, "fx:{d}:effects").Int()
	if effects != len(acked) {
		t.Fatalf("effects applied %d times for %d messages", effects, len(acked))
	}
	eventually(t, 10*time.Second, "nothing pending", func() bool { return pendingCount(t, pubRdb, stream, "g") == 0 })
}

func TestConsumer_RunTwiceFails(t *testing.T) {
	srv := redistest.Start(t)
	c := streams.NewConsumer(srv.Client(t), "g", "c1", func(context.Context, streams.Message) error { return nil }, fast()...)
	runConsumer(t, c)
	time.Sleep(50 * time.Millisecond)
	if err := c.Run(context.Background()); err == nil {
		t.Fatalf("second concurrent Run succeeded")
	}
}

func runIDOf(info string) string {
	for _, line := range strings.Split(info, "\n") {
		if strings.HasPrefix(line, "run_id:") {
			return strings.TrimSpace(line)
		}
	}
	return "no run_id"
}
