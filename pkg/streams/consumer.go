package streams

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/metric"

	"github.com/pulka/pulka/pkg/periodic"
)

// Handler handles one message. Returning nil acknowledges it; an error
// leaves it pending so it is delivered again (after the reclaim idle time)
// until the delivery limit moves it to the dead-letter stream. The context
// is cancelled only after the consumer's shutdown grace expires.
type Handler func(ctx context.Context, m Message) error

// Consumer reads many streams as one member of a consumer group, with
// at-least-once delivery: XREADGROUP in multi-key batches, XACK after the
// handler succeeds, XAUTOCLAIM of messages a dead consumer left pending, a
// dead-letter stream after the delivery limit, and removal of long-idle
// consumers without pending messages.
type Consumer struct {
	rdb     redis.UniversalClient
	group   string
	name    string
	handler Handler
	cfg     settings
	tel     *telemetry
	reg     *registry
	dlq     string
	cluster bool
	// groupArg is the group name boxed once as a command argument.
	groupArg any

	slots   chan struct{}
	work    []chan Message
	acks    chan ackReq
	running atomic.Bool

	mu       sync.Mutex
	inflight map[heldKey]struct{} // messages read or reclaimed and not yet released

	// ackMu orders reclaims after acknowledgements: an XACK and the release
	// of its messages happen under the read lock; a reclaim holds the write
	// lock from XAUTOCLAIM until it has marked what it got as held. Without
	// it a reclaim reply computed just before an ack could arrive after the
	// release and hand out an already acknowledged message again.
	ackMu sync.RWMutex

	lag, pending atomic.Int64
}

// NewConsumer makes the consumer `name` of `group`. Names must be unique
// among live consumers of the group and should be stable across restarts of
// the same process slot (e.g. the pod name).
func NewConsumer(rdb redis.UniversalClient, group, name string, h Handler, opts ...Option) *Consumer {
	cfg := newSettings(opts)
	c := &Consumer{
		rdb: rdb, group: group, name: name, handler: h, cfg: cfg,
		tel: newTelemetry(&cfg, group), reg: newRegistry(cfg.batchKeys),
		dlq: cfg.deadLetter, inflight: map[heldKey]struct{}{},
	}
	if c.dlq == "" {
		c.dlq = DeadLetter(group)
	}
	c.groupArg = group
	_, c.cluster = rdb.(*redis.ClusterClient)
	return c
}

// Group is the consumer group name.
func (c *Consumer) Group() string { return c.group }

// Name is this consumer's name in the group.
func (c *Consumer) Name() string { return c.name }

// Add starts reading streams (creating the group on each, at the configured
// start ID, if missing). It may be called before or during Run; a running
// consumer picks the streams up at once.
func (c *Consumer) Add(ctx context.Context, streams ...string) error {
	if err := c.ensureGroups(ctx, streams, c.cfg.startID); err != nil {
		return err
	}
	wake := map[int]bool{}
	for _, s := range streams {
		if shard, added := c.reg.add(s, ""); added {
			wake[shard] = true
		}
	}
	c.wake(ctx, wake)
	return nil
}

// Remove stops reading streams. Messages already read are still handled.
func (c *Consumer) Remove(ctx context.Context, streams ...string) {
	wake := map[int]bool{}
	for _, s := range streams {
		for _, shard := range c.reg.remove(s) {
			wake[shard] = true
		}
	}
	c.wake(ctx, wake)
}

// Streams is the number of streams being read.
func (c *Consumer) Streams() int { return c.reg.len() }

// wake interrupts the blocking reads of shards whose key set changed. It is
// an optimisation: without it they notice at the end of their block time.
func (c *Consumer) wake(ctx context.Context, shards map[int]bool) {
	if len(shards) == 0 || !c.running.Load() {
		return
	}
	pipe := c.rdb.Pipeline()
	for shard := range shards {
		key := wakeKey(c.group, c.name, shard)
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: key, NoMkStream: true, MaxLen: 16, Values: []interface{}{"w", "1"}})
	}
	_, _ = pipe.Exec(ctx)
}

func (c *Consumer) ensureGroups(ctx context.Context, streams []string, start string) error {
	for len(streams) > 0 {
		n := min(len(streams), 1000)
		pipe := c.rdb.Pipeline()
		cmds := make([]*redis.StatusCmd, n)
		for i, s := range streams[:n] {
			cmds[i] = pipe.XGroupCreateMkStream(ctx, s, c.group, start)
		}
		_, _ = pipe.Exec(ctx)
		for i, cmd := range cmds {
			if err := cmd.Err(); err != nil && !redis.HasErrorPrefix(err, "BUSYGROUP") {
				return fmt.Errorf("create group %s on %s: %w", c.group, streams[i], err)
			}
		}
		streams = streams[n:]
	}
	return nil
}

// Run reads and handles messages until ctx is cancelled, then stops reading,
// lets running handlers finish (within the shutdown grace), acknowledges what
// they finished and returns nil. Redis errors never end it: every loop backs
// off and retries, and groups a restarted Redis lost are recreated.
func (c *Consumer) Run(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("streams: consumer is already running")
	}
	defer c.running.Store(false)

	reg, err := c.registerGauges()
	if err != nil {
		return err
	}
	defer func() { _ = reg.Unregister() }()

	// Handlers outlive ctx by the shutdown grace so that a handler in the
	// middle of its effect can finish and be acknowledged.
	hctx, hcancel := context.WithCancel(context.WithoutCancel(ctx))
	defer hcancel()
	stopGrace := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(c.cfg.shutdownGrace, hcancel)
		context.AfterFunc(hctx, func() { t.Stop() })
	})
	defer stopGrace()

	c.slots = make(chan struct{}, c.cfg.maxInFlight)
	// Every message waiting for its ack holds a slot, so the ack queue can
	// never be fuller than the slots: a worker never blocks handing an ack
	// over.
	c.acks = make(chan ackReq, c.cfg.maxInFlight)
	ackerDone := make(chan struct{})
	go func() {
		defer close(ackerDone)
		c.ackLoop(ctx, hctx, c.acks)
	}()
	c.work = make([]chan Message, c.cfg.workers)
	var workers sync.WaitGroup
	for i := range c.work {
		c.work[i] = make(chan Message, 64)
		workers.Add(1)
		go func(ch <-chan Message) {
			defer workers.Done()
			c.worker(ctx, hctx, ch)
		}(c.work[i])
	}

	var producers sync.WaitGroup
	producers.Add(3)
	go func() { defer producers.Done(); c.claimLoop(ctx) }()
	go func() { defer producers.Done(); c.keepAliveLoop(ctx) }()
	go func() { defer producers.Done(); c.housekeepingLoop(ctx) }()

	for ctx.Err() == nil {
		changed := c.reg.changes()
		for _, i := range c.reg.startMissing() {
			producers.Add(1)
			go func(i int) {
				defer producers.Done()
				c.shard(ctx, i)
			}(i)
		}
		select {
		case <-ctx.Done():
		case <-changed:
		}
	}

	// Interrupt the shards' blocking reads instead of waiting out the block.
	shards := c.reg.shardCount()
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	all := map[int]bool{}
	for i := 0; i < shards; i++ {
		all[i] = true
	}
	c.wake(cleanup, all)
	producers.Wait()
	for _, ch := range c.work {
		close(ch)
	}
	workers.Wait()
	close(c.acks)
	<-ackerDone
	keys := make([]string, 0, shards)
	for i := 0; i < shards; i++ {
		keys = append(keys, wakeKey(c.group, c.name, i))
	}
	if len(keys) > 0 {
		for _, k := range keys {
			_ = c.rdb.Del(cleanup, k).Err() // one key per command: wake keys need not share a slot
		}
	}
	return nil
}

// shard is one reading goroutine: a blocking multi-key XREADGROUP over its
// batch of streams plus its private wake stream. It only reads and hands
// messages over; it never waits for a handler or an ack.
func (c *Consumer) shard(ctx context.Context, i int) {
	wk := wakeKey(c.group, c.name, i)
	bo := backoff{min: c.cfg.backoffMin, max: c.cfg.backoffMax}
	wakeReady := false
	var (
		keys []string
		ver  uint64
		read *redis.XStreamSliceCmd
	)
	for ctx.Err() == nil {
		newKeys, _, newVer, changed, ok := c.reg.shardKeysSince(i, false, ver)
		if !ok {
			return
		}
		if changed {
			keys, ver, read = newKeys, newVer, nil
		}
		if !wakeReady && !c.cluster {
			if err := c.ensureGroups(ctx, []string{wk}, "$"); err != nil {
				c.cfg.logger.Warn("streams: create wake stream", "key", wk, "err", err)
				sleepCtx(ctx, bo.next())
				continue
			}
			_ = c.rdb.Expire(ctx, wk, 24*time.Hour).Err()
			wakeReady = true
		}
		if !c.waitCapacity(ctx) {
			return
		}
		var res []redis.XStream
		var err error
		if c.cluster {
			res, err = c.pollSlots(ctx, keys)
		} else {
			if read == nil {
				read = c.prepareRead(ctx, keys, wk)
			}
			err = c.rdb.Process(ctx, read)
			if err == nil {
				res = read.Val()
			}
		}
		switch {
		case errors.Is(err, redis.Nil) || (err == nil && len(res) == 0):
			bo.reset()
			if c.cluster {
				idleWait(ctx, c.reg.changes(), c.cfg.pollInterval)
			}
			continue
		case redis.HasErrorPrefix(err, "NOGROUP"):
			// Redis restarted without our data (or a key was deleted):
			// recreate every group of the batch, then read again.
			c.cfg.logger.Warn("streams: group missing, recreating", "group", c.group, "err", err)
			if e := c.ensureGroups(ctx, keys, c.cfg.startID); e != nil {
				sleepCtx(ctx, bo.next())
			}
			wakeReady = false
			continue
		case err != nil:
			if ctx.Err() != nil {
				return
			}
			c.cfg.logger.Warn("streams: read failed, retrying", "group", c.group, "err", err)
			sleepCtx(ctx, bo.next())
			continue
		}
		bo.reset()
		dispatched := false
		for _, xs := range res {
			if xs.Stream == wk {
				ids := make([]string, len(xs.Messages))
				for j, m := range xs.Messages {
					ids[j] = m.ID
				}
				_ = c.rdb.XAck(ctx, wk, c.group, ids...).Err()
				continue
			}
			// Track the whole read at once: a message waiting here for a
			// free worker must already count as held, or the reclaim loop
			// could take it as idle and deliver it a second time.
			fresh := c.trackNew(xs.Stream, xs.Messages)
			for j, xm := range fresh {
				if !c.dispatch(ctx, xs.Stream, xm, 1) {
					c.untrack(xs.Stream, fresh[j:])
					return
				}
				dispatched = true
			}
		}
		if dispatched {
			// Let the workers just readied start their handlers before this
			// goroutine writes its next read: that write is a system call of
			// tens of microseconds on a busy machine, and the readied worker
			// would otherwise wait behind it. A reader that handles inline
			// has no such wait. With a core idle, that core picks this
			// goroutine up again at once.
			runtime.Gosched()
		}
	}
}

// prepareRead builds a shard's blocking XREADGROUP once per key set, to be
// sent again and again with Process. go-redis's XReadGroup boxes every
// argument into an interface on each call: two allocations per stream per
// read, which at a message or two per read (a paced load spread over many
// tables) were most of the consumer's garbage and GC cycles. The command is
// built by queueing it on a pipeline that is never executed, so go-redis
// still gives it the read timeout of a blocking command; re-processing one
// command is what go-redis's own retries do. A reply overwrites the previous
// value, and the value is only read after a successful round trip.
func (c *Consumer) prepareRead(ctx context.Context, keys []string, wake string) *redis.XStreamSliceCmd {
	args := make([]string, 0, 2*(len(keys)+1))
	args = append(args, keys...)
	args = append(args, wake)
	for range len(keys) + 1 {
		args = append(args, ">")
	}
	pipe := c.rdb.Pipeline()
	cmd := pipe.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group: c.group, Consumer: c.name, Streams: args, Count: c.cfg.count, Block: c.cfg.block,
	})
	pipe.Discard()
	return cmd
}

// pollSlots is the read of a shard on Redis Cluster, where one command may
// only name keys of one slot: one non-blocking XREADGROUP per slot, all in
// one pipeline (go-redis splits it per node). Streams of one slot (a shared
// tag) are still read together.
func (c *Consumer) pollSlots(ctx context.Context, keys []string) ([]redis.XStream, error) {
	groups := slotGroups(keys)
	pipe := c.rdb.Pipeline()
	cmds := make([]*redis.XStreamSliceCmd, len(groups))
	for i, g := range groups {
		args := make([]string, 0, 2*len(g))
		args = append(args, g...)
		for range g {
			args = append(args, ">")
		}
		cmds[i] = pipe.XReadGroup(ctx, &redis.XReadGroupArgs{Group: c.group, Consumer: c.name, Streams: args, Count: c.cfg.count, Block: -1})
	}
	_, _ = pipe.Exec(ctx)
	var out []redis.XStream
	var nogroup []string
	for i, cmd := range cmds {
		res, err := cmd.Result()
		switch {
		case errors.Is(err, redis.Nil):
		case redis.HasErrorPrefix(err, "NOGROUP"):
			nogroup = append(nogroup, groups[i]...)
		case err != nil:
			return out, err
		default:
			out = append(out, res...)
		}
	}
	if len(nogroup) > 0 {
		if err := c.ensureGroups(ctx, nogroup, c.cfg.startID); err != nil {
			return out, err
		}
	}
	return out, nil
}

// waitCapacity blocks while MaxInFlight messages are unfinished.
func (c *Consumer) waitCapacity(ctx context.Context) bool {
	select {
	case c.slots <- struct{}{}:
		<-c.slots
		return true
	case <-ctx.Done():
		return false
	}
}

func (c *Consumer) dispatch(ctx context.Context, stream string, xm redis.XMessage, deliveries int64) bool {
	select {
	case c.slots <- struct{}{}:
	case <-ctx.Done():
		return false
	}
	select {
	case c.work[workerOf(stream, len(c.work))] <- toMessage(stream, xm, deliveries):
		return true
	case <-ctx.Done():
		<-c.slots
		return false
	}
}

// workerOf picks the worker of a stream (FNV-1a of its name), so one
// stream's messages are handled in order by one worker.
func workerOf(stream string, workers int) int {
	h := uint32(2166136261)
	for i := 0; i < len(stream); i++ {
		h ^= uint32(stream[i])
		h *= 16777619
	}
	return int(h % uint32(workers))
}

// heldKey names a message this consumer holds. One flat set rather than a
// set per stream: with a message or two per stream in flight, a per-stream
// set was made and dropped for nearly every message.
type heldKey struct{ stream, id string }

// trackNew marks messages as held by this consumer and returns those that
// were not held already (a reclaim can return a message we still hold).
func (c *Consumer) trackNew(stream string, msgs []redis.XMessage) []redis.XMessage {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, m := range msgs {
		if _, held := c.inflight[heldKey{stream, m.ID}]; held {
			// Rare (reclaims only): filter into a new slice.
			fresh := append([]redis.XMessage(nil), msgs[:i]...)
			for _, m := range msgs[i+1:] {
				if _, held := c.inflight[heldKey{stream, m.ID}]; !held {
					fresh = append(fresh, m)
				}
			}
			for _, m := range fresh {
				c.inflight[heldKey{stream, m.ID}] = struct{}{}
			}
			return fresh
		}
	}
	for _, m := range msgs {
		c.inflight[heldKey{stream, m.ID}] = struct{}{}
	}
	return msgs
}

// untrack forgets messages that were tracked but never dispatched.
func (c *Consumer) untrack(stream string, msgs []redis.XMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range msgs {
		delete(c.inflight, heldKey{stream, m.ID})
	}
}

// release forgets finished (or abandoned) messages and frees their slots.
func (c *Consumer) release(stream string, ids ...string) {
	c.mu.Lock()
	for _, id := range ids {
		delete(c.inflight, heldKey{stream, id})
	}
	c.mu.Unlock()
	for range ids {
		<-c.slots
	}
}

// ackReq is a handled message waiting for its XACK.
type ackReq struct{ stream, id string }

// ackBuf collects acknowledgements for one pipeline.
type ackBuf struct {
	n   int
	ids map[string][]string
}

func (a *ackBuf) add(r ackReq) {
	if a.ids == nil {
		a.ids = map[string][]string{}
	}
	a.ids[r.stream] = append(a.ids[r.stream], r.id)
	a.n++
}

// maxAckBatch bounds one ack pipeline.
const maxAckBatch = 1024

// worker handles one worker's messages in order. Acks go to the acker, so a
// worker never waits on Redis between two handlers: a message arriving while
// the previous one's ack is in flight starts at once.
func (c *Consumer) worker(ctx, hctx context.Context, ch <-chan Message) {
	for m := range ch {
		if ctx.Err() != nil {
			// Shutting down: do not start new work; the message stays
			// pending and another consumer reclaims it.
			c.release(m.Stream, m.ID)
			continue
		}
		if c.handle(hctx, m) {
			c.acks <- ackReq{m.Stream, m.ID}
		}
	}
}

// ackLoop acknowledges handled messages for all workers: everything queued
// while the previous pipeline was in flight goes in the next one, so under
// load one round trip acknowledges many messages. A failed pipeline is
// retried with backoff while handling goes on; the unacknowledged messages
// keep their slots, so a long outage stops the reading at MaxInFlight.
func (c *Consumer) ackLoop(ctx, hctx context.Context, in <-chan ackReq) {
	var acks ackBuf
	bo := backoff{min: c.cfg.backoffMin, max: c.cfg.backoffMax}
	for {
		if acks.n == 0 {
			r, ok := <-in
			if !ok {
				return
			}
			acks.add(r)
		}
	drain:
		for acks.n < maxAckBatch {
			select {
			case r, ok := <-in:
				if !ok {
					c.finalFlush(hctx, &acks)
					return
				}
				acks.add(r)
			default:
				break drain
			}
		}
		if err := c.flushAcks(hctx, &acks); err != nil {
			c.cfg.logger.Warn("streams: ack failed, retrying", "group", c.group, "err", err)
			if !sleepCtx(ctx, bo.next()) {
				// Shutting down: one last try, then leave them pending.
				c.finalFlush(hctx, &acks)
			}
			continue
		}
		bo.reset()
	}
}

func (c *Consumer) finalFlush(hctx context.Context, acks *ackBuf) {
	if acks.n == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(hctx), 5*time.Second)
	defer cancel()
	if err := c.flushAcks(ctx, acks); err != nil {
		c.cfg.logger.Warn("streams: final ack failed; messages will be redelivered", "group", c.group, "err", err)
		for s, ids := range acks.ids {
			c.release(s, ids...)
		}
		*acks = ackBuf{}
	}
}

// flushAcks sends the buffered XACKs in one pipeline. Acks whose group is
// gone (NOGROUP after a Redis restart without data) are dropped: there is
// nothing left to acknowledge.
func (c *Consumer) flushAcks(ctx context.Context, acks *ackBuf) error {
	if acks.n == 0 {
		return nil
	}
	c.ackMu.RLock()
	defer c.ackMu.RUnlock()
	type streamAck struct {
		stream string
		cmd    *redis.IntCmd
	}
	pipe := c.rdb.Pipeline()
	cmds := make([]streamAck, 0, len(acks.ids))
	for s, ids := range acks.ids {
		args := make([]any, 0, 3+len(ids))
		args = append(args, "xack", s, c.groupArg)
		for _, id := range ids {
			args = append(args, id)
		}
		cmd := redis.NewIntCmd(ctx, args...)
		_ = pipe.Process(ctx, cmd)
		cmds = append(cmds, streamAck{s, cmd})
	}
	_, _ = pipe.Exec(ctx)
	var firstErr error
	for _, a := range cmds {
		err := a.cmd.Err()
		if err != nil && !redis.HasErrorPrefix(err, "NOGROUP") {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		c.release(a.stream, acks.ids[a.stream]...)
		acks.n -= len(acks.ids[a.stream])
		delete(acks.ids, a.stream)
	}
	return firstErr
}

// handle runs the handler for one delivery and reports whether to ack it.
func (c *Consumer) handle(ctx context.Context, m Message) bool {
	if m.Deliveries > c.cfg.maxDeliveries {
		// Delivered this often without an ack: its handler keeps crashing
		// or hanging the consumer. Do not run it again.
		c.deadLetter(ctx, m, fmt.Sprintf("delivered %d times without acknowledgement (limit %d)", m.Deliveries, c.cfg.maxDeliveries))
		return false
	}
	sctx, span := c.tel.startConsume(ctx, m, c.group)
	start := time.Now()
	err := c.callHandler(sctx, m)
	c.tel.handlerTime.Record(sctx, seconds(time.Since(start)), c.tel.recordOpts(m.Stream, outcomeNone)...)
	endSpan(span, err)
	if err == nil {
		c.tel.consumed.Add(sctx, 1, c.tel.addOpts(m.Stream, outcomeOK)...)
		return true
	}
	c.tel.consumed.Add(sctx, 1, c.tel.addOpts(m.Stream, outcomeError)...)
	if m.Deliveries >= c.cfg.maxDeliveries {
		c.deadLetter(ctx, m, err.Error())
		return false
	}
	c.cfg.logger.Warn("streams: handler failed; will redeliver", "stream", m.Stream, "id", m.ID,
		"deliveries", m.Deliveries, "err", err)
	// Leave it pending and stop keeping it alive: the reclaim loop delivers
	// it again once it has been idle for the min-idle time.
	c.release(m.Stream, m.ID)
	return false
}

// callHandler turns a handler panic into an error so one bad message cannot
// take the consumer down.
func (c *Consumer) callHandler(ctx context.Context, m Message) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("handler panic: %v", r)
		}
	}()
	return c.handler(ctx, m)
}

// deadLetter copies the message with its error and origin to the dead-letter
// stream and acknowledges it. Both commands go in one MULTI on a single
// Redis; on Cluster (different slots) they are pipelined, and a crash in
// between can leave a duplicate dead-letter entry (never a lost message).
func (c *Consumer) deadLetter(ctx context.Context, m Message, reason string) {
	values := []interface{}{
		"stream", m.Stream, "id", m.ID, "group", c.group, "consumer", c.name,
		"deliveries", strconv.FormatInt(m.Deliveries, 10), "error", reason, FieldData, m.Data,
	}
	for k, v := range m.Header {
		values = append(values, "h:"+k, v)
	}
	for k, v := range m.trace {
		values = append(values, k, v)
	}
	var pipe redis.Pipeliner
	if c.cluster {
		pipe = c.rdb.Pipeline()
	} else {
		pipe = c.rdb.TxPipeline()
	}
	pipe.XAdd(ctx, &redis.XAddArgs{Stream: c.dlq, MaxLen: c.cfg.deadLetterLen, Approx: true, Values: values})
	pipe.XAck(ctx, m.Stream, c.group, m.ID)
	c.ackMu.RLock()
	_, err := pipe.Exec(ctx)
	c.release(m.Stream, m.ID)
	c.ackMu.RUnlock()
	if err != nil {
		c.cfg.logger.Error("streams: dead-letter failed; message stays pending", "stream", m.Stream, "id", m.ID, "err", err)
		return
	}
	c.tel.deadLettered.Add(ctx, 1, c.tel.addOpts(m.Stream, outcomeNone)...)
	c.cfg.logger.Warn("streams: message dead-lettered", "stream", m.Stream, "id", m.ID, "deliveries", m.Deliveries, "reason", reason)
}

// claimLoop reclaims messages left pending longer than min-idle by any
// consumer (a dead one, or this one after a handler error).
func (c *Consumer) claimLoop(ctx context.Context) {
	periodic.Every(ctx, c.cfg.claimInterval, func(ctx context.Context) {
		streams := c.reg.all()
		for len(streams) > 0 && ctx.Err() == nil {
			n := min(len(streams), 500)
			if err := c.claimBatch(ctx, streams[:n]); err != nil && ctx.Err() == nil {
				c.cfg.logger.Warn("streams: reclaim failed", "group", c.group, "err", err)
				break
			}
			streams = streams[n:]
		}
	})
}

func (c *Consumer) claimBatch(ctx context.Context, streams []string) error {
	c.ackMu.Lock()
	locked := true
	unlock := func() {
		if locked {
			locked = false
			c.ackMu.Unlock()
		}
	}
	defer unlock()
	pipe := c.rdb.Pipeline()
	cmds := make([]*redis.XAutoClaimCmd, len(streams))
	for i, s := range streams {
		cmds[i] = pipe.XAutoClaim(ctx, &redis.XAutoClaimArgs{
			Stream: s, Group: c.group, Consumer: c.name, MinIdle: c.cfg.minIdle, Start: "0-0", Count: c.cfg.claimCount,
		})
	}
	if _, err := pipe.Exec(ctx); err != nil && !isOnlyCommandErrors(cmds, err) {
		return err
	}
	type claimed struct {
		stream string
		msgs   []redis.XMessage
	}
	// Messages we still hold (queued, running or awaiting their ack) are
	// dropped from the reply; the rest are ours to deliver from now on.
	var got []claimed
	var lost []string
	for i, cmd := range cmds {
		msgs, _, err := cmd.Result()
		if redis.HasErrorPrefix(err, "NOGROUP") {
			lost = append(lost, streams[i])
			continue
		}
		if err != nil || len(msgs) == 0 {
			continue
		}
		if fresh := c.trackNew(streams[i], msgs); len(fresh) > 0 {
			got = append(got, claimed{streams[i], fresh})
		}
	}
	unlock()
	if len(lost) > 0 {
		_ = c.ensureGroups(ctx, lost, c.cfg.startID)
	}
	if len(got) == 0 {
		return nil
	}
	// XAUTOCLAIM does not say how often each entry was delivered; XPENDING
	// does, and the dead-letter decision needs it.
	pipe = c.rdb.Pipeline()
	pend := make([]*redis.XPendingExtCmd, len(got))
	for i, g := range got {
		pend[i] = pipe.XPendingExt(ctx, &redis.XPendingExtArgs{
			Stream: g.stream, Group: c.group, Start: g.msgs[0].ID, End: g.msgs[len(g.msgs)-1].ID,
			Count: int64(len(g.msgs)) + 1000, Consumer: c.name,
		})
	}
	_, _ = pipe.Exec(ctx)
	for i, g := range got {
		counts := map[string]int64{}
		if infos, err := pend[i].Result(); err == nil {
			for _, p := range infos {
				counts[p.ID] = p.RetryCount
			}
		}
		fresh := g.msgs
		for j, xm := range fresh {
			n := counts[xm.ID]
			if n == 0 {
				n = 2 // it was delivered before, or it would not be pending
			}
			c.tel.redelivered.Add(ctx, 1, c.tel.addOpts(g.stream, outcomeNone)...)
			if !c.dispatch(ctx, g.stream, xm, n) {
				c.untrack(g.stream, fresh[j:])
				return nil
			}
		}
	}
	return nil
}

// isOnlyCommandErrors is true when a pipeline error comes from individual
// commands (reported per command) rather than from the connection.
func isOnlyCommandErrors[T redis.Cmder](cmds []T, err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr)
}

// keepAliveLoop resets the idle time of messages this consumer holds (queued
// or running), so a healthy but busy consumer is not robbed of them.
// XCLAIM ... JUSTID does not count as a delivery.
func (c *Consumer) keepAliveLoop(ctx context.Context) {
	t := time.NewTicker(max(c.cfg.minIdle/3, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		c.mu.Lock()
		held := map[string][]string{}
		for k := range c.inflight {
			held[k.stream] = append(held[k.stream], k.id)
		}
		c.mu.Unlock()
		if len(held) == 0 {
			continue
		}
		pipe := c.rdb.Pipeline()
		for s, ids := range held {
			pipe.XClaimJustID(ctx, &redis.XClaimArgs{Stream: s, Group: c.group, Consumer: c.name, MinIdle: 0, Messages: ids})
		}
		_, _ = pipe.Exec(ctx)
	}
}

// delConsumerScript removes a consumer only if it owns no pending message,
// checked atomically: deleting a consumer drops its pending entries, which
// would lose messages it was given after our XINFO look.
var delConsumerScript = redis.NewScript(`
local p = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2])
if #p > 0 then return -1 end
return redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])
`)

// housekeepingLoop samples lag for the metrics and removes dead consumers.
func (c *Consumer) housekeepingLoop(ctx context.Context) {
	lagT := time.NewTicker(c.cfg.lagEvery)
	defer lagT.Stop()
	gcT := time.NewTicker(c.cfg.consumerGCEvery)
	defer gcT.Stop()
	c.sampleLag(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-lagT.C:
			c.sampleLag(ctx)
		case <-gcT.C:
			if _, err := c.RemoveIdleConsumers(ctx, c.cfg.consumerGCIdle); err != nil && ctx.Err() == nil {
				c.cfg.logger.Warn("streams: consumer GC failed", "group", c.group, "err", err)
			}
		}
	}
}

// RemoveIdleConsumers deletes, from every stream read, the group's other
// consumers idle longer than idle that own no pending message. It returns
// how many it removed. Run calls it periodically (WithConsumerGC).
func (c *Consumer) RemoveIdleConsumers(ctx context.Context, idle time.Duration) (int, error) {
	removed := 0
	streams := c.reg.all()
	for len(streams) > 0 {
		n := min(len(streams), 500)
		pipe := c.rdb.Pipeline()
		cmds := make([]*redis.XInfoConsumersCmd, n)
		for i, s := range streams[:n] {
			cmds[i] = pipe.XInfoConsumers(ctx, s, c.group)
		}
		if _, err := pipe.Exec(ctx); err != nil && !isOnlyCommandErrors(cmds, err) {
			return removed, err
		}
		for i, cmd := range cmds {
			infos, err := cmd.Result()
			if err != nil {
				continue
			}
			for _, ci := range infos {
				if ci.Name == c.name || ci.Pending > 0 || ci.Idle < idle {
					continue
				}
				res, err := delConsumerScript.Run(ctx, c.rdb, []string{streams[i]}, c.group, ci.Name).Int64()
				if err != nil {
					return removed, fmt.Errorf("remove consumer %s from %s: %w", ci.Name, streams[i], err)
				}
				if res >= 0 {
					removed++
				}
			}
		}
		streams = streams[n:]
	}
	return removed, nil
}

func (c *Consumer) sampleLag(ctx context.Context) {
	var lag, pending int64
	streams := c.reg.all()
	for len(streams) > 0 {
		n := min(len(streams), 500)
		pipe := c.rdb.Pipeline()
		cmds := make([]*redis.XInfoGroupsCmd, n)
		for i, s := range streams[:n] {
			cmds[i] = pipe.XInfoGroups(ctx, s)
		}
		if _, err := pipe.Exec(ctx); err != nil && !isOnlyCommandErrors(cmds, err) {
			return // keep the previous sample
		}
		for _, cmd := range cmds {
			groups, err := cmd.Result()
			if err != nil {
				continue
			}
			for _, g := range groups {
				if g.Name != c.group {
					continue
				}
				if g.Lag > 0 {
					lag += g.Lag
				}
				pending += g.Pending
			}
		}
		streams = streams[n:]
	}
	c.lag.Store(lag)
	c.pending.Store(pending)
}

// Lag is the last sampled number of entries not yet delivered to the group,
// summed over the streams read (XINFO GROUPS lag).
func (c *Consumer) Lag() int64 { return c.lag.Load() }

// Pending is the last sampled number of delivered but unacknowledged
// entries, summed over the streams read.
func (c *Consumer) Pending() int64 { return c.pending.Load() }

func (c *Consumer) registerGauges() (metric.Registration, error) {
	m := c.cfg.meterProvider.Meter(instrumentationName)
	lag, err := m.Int64ObservableGauge("pulka.streams.group.lag",
		metric.WithDescription("Entries not yet delivered to the consumer group (sampled)."), metric.WithUnit("{message}"))
	if err != nil {
		return nil, fmt.Errorf("lag gauge: %w", err)
	}
	pend, err := m.Int64ObservableGauge("pulka.streams.group.pending",
		metric.WithDescription("Entries delivered but not acknowledged (sampled)."), metric.WithUnit("{message}"))
	if err != nil {
		return nil, fmt.Errorf("pending gauge: %w", err)
	}
	attrs := metric.WithAttributes(keyGroup.String(c.group))
	return m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveInt64(lag, c.lag.Load(), attrs)
		o.ObserveInt64(pend, c.pending.Load(), attrs)
		return nil
	}, lag, pend)
}
