package streams

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/propagation"
)

// TailHandler receives fan-out messages in stream order. It runs on the
// reading goroutine of the stream's batch, so it must be quick (e.g. hand the
// message to per-connection queues); there is no redelivery.
type TailHandler func(ctx context.Context, m Message)

// Tailer reads many streams without a consumer group (every Tailer sees
// every entry): gateways follow the event streams of the tables their players
// sit at. Streams are read in multi-key XREAD batches, each from the last ID
// seen, so nothing between two reads is missed.
type Tailer struct {
	rdb     redis.UniversalClient
	handler TailHandler
	cfg     settings
	tel     *telemetry
	reg     *registry
	id      string
	cluster bool
	running atomic.Bool
}

// NewTailer makes a fan-out reader.
func NewTailer(rdb redis.UniversalClient, h TailHandler, opts ...Option) *Tailer {
	cfg := newSettings(opts)
	var b [8]byte
	_, _ = rand.Read(b[:])
	t := &Tailer{rdb: rdb, handler: h, cfg: cfg, tel: newTelemetry(&cfg, ""), reg: newRegistry(cfg.batchKeys), id: hex.EncodeToString(b[:])}
	_, t.cluster = rdb.(*redis.ClusterClient)
	return t
}

func (t *Tailer) wakeKey(shard int) string { return wakeKey("tail", t.id, shard) }

// Add follows stream from after afterID (exclusive): "0" for everything
// still in the stream, "$" for only entries added from now on, or the last
// ID a client saw. Adding a stream already followed keeps its position.
func (t *Tailer) Add(ctx context.Context, stream, afterID string) error {
	if afterID == "$" {
		// Resolve "$" once: re-sending "$" on every read would skip entries
		// added between two reads.
		last, err := t.rdb.XRevRangeN(ctx, stream, "+", "-", 1).Result()
		if err != nil {
			return fmt.Errorf("tail %s: %w", stream, err)
		}
		afterID = "0-0"
		if len(last) == 1 {
			afterID = last[0].ID
		}
	}
	if afterID == "" {
		afterID = "0-0"
	}
	if shard, added := t.reg.add(stream, afterID); added {
		t.wake(ctx, shard)
	}
	return nil
}

// Position is the last ID delivered from stream (or its start position if
// nothing was delivered yet); ok is false when stream is not followed. A
// reader that must stop taking a stream for a while (its consumer's inbox is
// full) can Remove it and later Add it back from the last ID it handled:
// the entries wait in Redis meanwhile.
func (t *Tailer) Position(stream string) (id string, ok bool) {
	t.reg.mu.Lock()
	defer t.reg.mu.Unlock()
	id, ok = t.reg.pos[stream]
	return id, ok
}

// Remove stops following stream.
func (t *Tailer) Remove(ctx context.Context, stream string) {
	for _, shard := range t.reg.remove(stream) {
		t.wake(ctx, shard)
	}
}

func (t *Tailer) wake(ctx context.Context, shard int) {
	if !t.running.Load() || t.cluster {
		return
	}
	key := t.wakeKey(shard)
	pipe := t.rdb.Pipeline()
	pipe.XAdd(ctx, &redis.XAddArgs{Stream: key, MaxLen: 16, Values: []interface{}{"w", "1"}})
	// A crashed tailer's wake stream must not stay forever.
	pipe.Expire(ctx, key, time.Hour)
	_, _ = pipe.Exec(ctx)
}

// Run follows the streams until ctx is cancelled. Redis errors are retried
// with backoff; it returns nil on shutdown.
func (t *Tailer) Run(ctx context.Context) error {
	if !t.running.CompareAndSwap(false, true) {
		return errors.New("streams: tailer is already running")
	}
	defer t.running.Store(false)
	var wg sync.WaitGroup
	for ctx.Err() == nil {
		changed := t.reg.changes()
		for _, i := range t.reg.startMissing() {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				t.shard(ctx, i)
			}(i)
		}
		select {
		case <-ctx.Done():
		case <-changed:
		}
	}
	cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	defer cancel()
	shards := t.reg.shardCount()
	for i := 0; i < shards; i++ {
		t.wake(cleanup, i)
	}
	wg.Wait()
	for i := 0; i < shards; i++ {
		_ = t.rdb.Del(cleanup, t.wakeKey(i)).Err()
	}
	return nil
}

func (t *Tailer) shard(ctx context.Context, i int) {
	wk := t.wakeKey(i)
	wakePos := "0-0"
	bo := backoff{min: t.cfg.backoffMin, max: t.cfg.backoffMax}
	var (
		keys, pos []string // this shard's streams and the position of each
		ver       uint64
		read      *preparedXRead
	)
	for ctx.Err() == nil {
		newKeys, newPos, newVer, changed, ok := t.reg.shardKeysSince(i, true, ver)
		if !ok {
			return
		}
		if changed {
			keys, pos, ver, read = newKeys, newPos, newVer, nil
		}
		var res []redis.XStream
		var err error
		if t.cluster {
			res, err = t.pollSlots(ctx, keys, pos)
		} else {
			if read == nil {
				read = t.prepareRead(ctx, keys, pos, wk, wakePos)
			}
			err = t.rdb.Process(ctx, read.cmd)
			if err == nil {
				res = read.cmd.Val()
			}
		}
		switch {
		case errors.Is(err, redis.Nil) || (err == nil && len(res) == 0):
			bo.reset()
			if t.cluster {
				idleWait(ctx, t.reg.changes(), t.cfg.pollInterval)
			}
			continue
		case err != nil:
			if ctx.Err() != nil {
				return
			}
			t.cfg.logger.Warn("streams: tail read failed, retrying", "err", err)
			sleepCtx(ctx, bo.next())
			continue
		}
		bo.reset()
		for _, xs := range res {
			if len(xs.Messages) == 0 {
				continue
			}
			if xs.Stream == wk {
				wakePos = xs.Messages[len(xs.Messages)-1].ID
				if !read.setPos(len(keys), wakePos) {
					read = nil
				}
				continue
			}
			j := indexOf(keys, read, xs.Stream)
			if j < 0 {
				continue
			}
			from := pos[j]
			for _, xm := range xs.Messages {
				if !t.reg.advance(xs.Stream, from, xm.ID) {
					break // removed or repositioned meanwhile: its new reader owns the rest
				}
				from = xm.ID
				t.deliver(ctx, toMessage(xs.Stream, xm, 0))
			}
			pos[j] = from
			if !read.setPos(j, from) {
				read = nil
			}
		}
	}
}

// preparedXRead is a shard's blocking XREAD, built once per key set and sent
// again with Process; only the positions of streams that moved are replaced
// between reads. Rebuilding it for every read (go-redis's XRead boxes every
// key and position) cost two allocations per stream per read, for the
// thousand streams of a full shard even when one of them had an entry.
type preparedXRead struct {
	cmd   *redis.XStreamSliceCmd
	args  []any          // cmd's own argument slice
	first int            // index in args of the first position
	index map[string]int // stream → its index among the keys
	// inPlace: args is the command's own slice (go-redis's Args returns
	// it), so positions can be replaced in it.
	inPlace bool
}

// prepareRead builds the read; keys and positions are the shard's, with the
// wake stream (at wakePos) after them. Nil on Redis Cluster, which polls.
func (t *Tailer) prepareRead(ctx context.Context, keys, pos []string, wake, wakePos string) *preparedXRead {
	streams := make([]string, 0, 2*(len(keys)+1))
	streams = append(streams, keys...)
	streams = append(streams, wake)
	streams = append(streams, pos...)
	streams = append(streams, wakePos)
	pipe := t.rdb.Pipeline()
	cmd := pipe.XRead(ctx, &redis.XReadArgs{Streams: streams, Count: t.cfg.count, Block: t.cfg.block})
	pipe.Discard()
	p := &preparedXRead{cmd: cmd, args: cmd.Args(), index: make(map[string]int, len(keys))}
	again := cmd.Args()
	p.inPlace = len(again) > 0 && &again[0] == &p.args[0]
	p.first = len(p.args) - (len(keys) + 1)
	for j, k := range keys {
		p.index[k] = j
	}
	return p
}

// setPos moves the read position of key j (len(keys) is the wake stream)
// by writing into the command's own argument slice, which go-redis sends as
// is. It reports false when that is not possible (a go-redis that hands out
// a copy of the arguments): the read must then be built afresh.
func (p *preparedXRead) setPos(j int, id string) bool {
	if p == nil {
		return true // Cluster: no prepared read
	}
	if !p.inPlace {
		return false
	}
	p.args[p.first+j] = id
	return true
}

// indexOf finds stream among the shard's keys: by the prepared read's index,
// or by a scan on Cluster (where there is none).
func indexOf(keys []string, read *preparedXRead, stream string) int {
	if read != nil {
		if j, ok := read.index[stream]; ok {
			return j
		}
		return -1
	}
	for j, k := range keys {
		if k == stream {
			return j
		}
	}
	return -1
}

// pollSlots is the read on Redis Cluster: one non-blocking XREAD per slot,
// pipelined.
func (t *Tailer) pollSlots(ctx context.Context, keys, pos []string) ([]redis.XStream, error) {
	at := make(map[string]string, len(keys))
	for i, k := range keys {
		at[k] = pos[i]
	}
	groups := slotGroups(keys)
	pipe := t.rdb.Pipeline()
	cmds := make([]*redis.XStreamSliceCmd, len(groups))
	for i, g := range groups {
		args := make([]string, 0, 2*len(g))
		args = append(args, g...)
		for _, k := range g {
			args = append(args, at[k])
		}
		cmds[i] = pipe.XRead(ctx, &redis.XReadArgs{Streams: args, Count: t.cfg.count, Block: -1})
	}
	_, _ = pipe.Exec(ctx)
	var out []redis.XStream
	for _, cmd := range cmds {
		res, err := cmd.Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			return out, err
		}
		out = append(out, res...)
	}
	return out, nil
}

func (t *Tailer) deliver(ctx context.Context, m Message) {
	sctx, span := t.tel.startConsume(ctx, m, "")
	t.handler(sctx, m)
	span.End()
	t.tel.consumed.Add(sctx, 1, t.tel.addOpts(m.Stream, outcomeOK)...)
}

// ReadAfter returns up to count entries of stream with IDs greater than
// afterID ("0" or "" for the start), oldest first: the replay a reconnecting
// client needs before it follows the stream. If entries after afterID were
// already trimmed (or deleted) the replay would have a hole, so it returns
// ErrTrimmed instead and the client must resynchronise from a snapshot.
func ReadAfter(ctx context.Context, rdb redis.UniversalClient, stream, afterID string, count int64) ([]Message, error) {
	if afterID == "" || afterID == "0" {
		afterID = "0-0"
	}
	pipe := rdb.TxPipeline() // one key: a MULTI works on Cluster too
	info := pipe.XInfoStream(ctx, stream)
	rng := pipe.XRangeN(ctx, stream, "("+afterID, "+", count)
	_, _ = pipe.Exec(ctx)
	if err := info.Err(); err != nil {
		if strings.Contains(err.Error(), "no such key") {
			return nil, nil
		}
		return nil, fmt.Errorf("replay %s: %w", stream, err)
	}
	if gone := firstMissing(*info.Val(), afterID); gone != "" {
		return nil, fmt.Errorf("replay %s after %s (entries up to %s are gone): %w", stream, afterID, gone, ErrTrimmed)
	}
	xms, err := rng.Result()
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", stream, err)
	}
	out := make([]Message, len(xms))
	for i, xm := range xms {
		out[i] = toMessage(stream, xm, 0)
	}
	return out, nil
}

// firstMissing returns the newest removed ID that may lie after afterID, or
// "" when nothing after afterID was removed. XDEL is tracked exactly
// (max-deleted-entry-id); trimming removes from the head and only counts
// (entries-added − length), so a reader positioned before the first
// remaining entry of a trimmed stream is told it has a gap — conservatively:
// it may have seen exactly the last trimmed entry.
func firstMissing(info redis.XInfoStream, afterID string) string {
	if md := info.MaxDeletedEntryID; md != "" && CompareIDs(afterID, md) < 0 {
		return md
	}
	if info.EntriesAdded <= info.Length {
		return ""
	}
	if info.Length == 0 {
		if CompareIDs(afterID, info.LastGeneratedID) < 0 {
			return info.LastGeneratedID
		}
		return ""
	}
	if CompareIDs(afterID, info.FirstEntry.ID) < 0 {
		return "before " + info.FirstEntry.ID
	}
	return ""
}

// CompareIDs orders two stream IDs ("ms-seq", or "ms") numerically.
func CompareIDs(a, b string) int {
	am, as := splitID(a)
	bm, bs := splitID(b)
	switch {
	case am < bm:
		return -1
	case am > bm:
		return 1
	case as < bs:
		return -1
	case as > bs:
		return 1
	}
	return 0
}

func splitID(id string) (ms, seq uint64) {
	m, s, _ := strings.Cut(id, "-")
	ms, _ = strconv.ParseUint(m, 10, 64)
	seq, _ = strconv.ParseUint(s, 10, 64)
	return ms, seq
}

// Context returns ctx carrying the trace context stored in the message (W3C
// trace-context), for callers that read messages themselves (ReadAfter).
func (m Message) Context(ctx context.Context) context.Context {
	if len(m.trace) == 0 {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, extractCarrier(m.trace))
}
