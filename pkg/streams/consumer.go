package streams

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
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

// isOnlyCommandErrors is true when a pipeline error comes from individual
// commands (reported per command) rather than from the connection.
func isOnlyCommandErrors[T redis.Cmder](cmds []T, err error) bool {
	var rerr redis.Error
	return errors.As(err, &rerr)
}
