package streams

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/propagation"
)

// TailHandler receives fan-out messages in stream order. It runs on the
// tailer's reading goroutine, so it must be quick (e.g. hand the message to
// per-connection queues); there is no redelivery.
type TailHandler func(ctx context.Context, m Message)

// Tailer reads many streams without a consumer group (every Tailer sees
// every entry): gateways follow the event streams of the tables their players
// sit at, runners the command streams of their tables.
//
// It reads only the streams that have something new. Every writer of this
// package rings a stream's bell (a Pub/Sub message on the channel Bell(stream))
// after appending to it; the Tailer subscribes to the bells of the streams it
// follows and XREADs, without blocking, just the streams that rang, each from
// the last ID it delivered. A blocking XREAD over every followed stream, the
// design this replaced, cost Redis time in proportion to the streams named on
// every read (≈ 0.75 ms per read of 200 streams, 1.5 ms of 2,000), and a
// read returned about one entry. The bells of a publisher made
// WithEntryBells carry the entry (see bellVersion): when its predecessor is
// the last entry delivered, the Tailer hands it over without reading at all.
// Otherwise a
// bell is a hint: a bell lost (a reconnect, a writer that does not ring)
// only delays entries until the next sweep, a read of every followed stream
// every WithSweepInterval (spread over the interval in sweepParts parts),
// and a (re)subscription reads its stream at once.
type Tailer struct {
	rdb     redis.UniversalClient
	handler TailHandler
	cfg     settings
	tel     *telemetry
	reg     *registry
	cluster bool
	running atomic.Bool

	psMu sync.Mutex
	ps   *redis.PubSub // while running

	dirtyMu sync.Mutex
	dirty   map[string]struct{} // streams to read
	// spareDirty is the empty set takeDirty swaps in for dirty (the read
	// loop's own: only takeDirty touches it).
	spareDirty map[string]struct{}
	bells      []richBell    // bells that carried their entry, in the order heard
	rung       chan struct{} // signalled when dirty or bells gain something

	sweepSeed maphash.Seed // sweepPart's hash
}

// maxQueuedBells bounds the entries heard but not yet delivered: past it a
// bell is taken as a hint only (its stream is read instead), so a reader
// that falls behind holds positions, not payloads.
const maxQueuedBells = 8192

// NewTailer makes a fan-out reader. Relevant options: WithCount (entries per
// stream per read), WithBatchKeys (streams per XREAD), WithSweepInterval,
// WithBackoff, WithLogger and the telemetry providers.
func NewTailer(rdb redis.UniversalClient, h TailHandler, opts ...Option) *Tailer {
	cfg := newSettings(opts)
	t := &Tailer{rdb: rdb, handler: h, cfg: cfg, tel: newTelemetry(&cfg, ""), reg: newRegistry(cfg.batchKeys),
		dirty: map[string]struct{}{}, spareDirty: map[string]struct{}{}, rung: make(chan struct{}, 1), sweepSeed: maphash.MakeSeed()}
	_, t.cluster = rdb.(*redis.ClusterClient)
	return t
}

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
	// The registry and the subscriptions change under one lock, so that an
	// Add and a Remove of the same stream racing each other cannot leave it
	// followed but unsubscribed (it would then be read only by the sweep).
	t.psMu.Lock()
	if _, added := t.reg.add(stream, afterID); !added {
		t.psMu.Unlock()
		return nil
	}
	var err error
	if t.ps != nil {
		err = t.ps.Subscribe(ctx, Bell(stream))
	}
	t.psMu.Unlock()
	// Read it now: entries may be there already. If the subscription is not
	// confirmed yet, its confirmation reads it again.
	t.ring(stream)
	if err != nil {
		// The stream is followed all the same: the sweep reads it, and the
		// bells' reconnect subscribes it again.
		t.cfg.logger.Warn("streams: subscribing to a stream's bell failed", "stream", stream, "err", err)
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
	t.psMu.Lock()
	defer t.psMu.Unlock()
	if len(t.reg.remove(stream)) == 0 {
		return
	}
	if t.ps != nil {
		// A bell still in flight finds the stream gone and is dropped.
		_ = t.ps.Unsubscribe(ctx, Bell(stream))
	}
}

// ring marks streams to be read and wakes the reader.
func (t *Tailer) ring(streams ...string) {
	t.dirtyMu.Lock()
	for _, s := range streams {
		t.dirty[s] = struct{}{}
	}
	t.dirtyMu.Unlock()
	t.wake()
}

// hear queues a bell that carried its entry for the reader, or, when too
// many wait already, marks its stream to be read.
func (t *Tailer) hear(b richBell) {
	t.dirtyMu.Lock()
	if len(t.bells) < maxQueuedBells {
		t.bells = append(t.bells, b)
	} else {
		t.dirty[b.msg.Stream] = struct{}{}
	}
	t.dirtyMu.Unlock()
	t.wake()
}

func (t *Tailer) wake() {
	select {
	case t.rung <- struct{}{}:
	default:
	}
}

// ringAll marks every followed stream.
func (t *Tailer) ringAll() { t.ring(t.reg.all()...) }

// sweepParts is how many parts the sweep reads the followed streams in, one
// part every WithSweepInterval/sweepParts, so that each stream is still read
// once an interval. Read at once, a gateway's 2,000 streams took Redis 2-10
// ms in one pipelined burst every second, and every command of every client
// waited behind it: the paced load's p99 (issue 24).
const sweepParts = 16

// sweepPart lists the followed streams of part k (of sweepParts) in buf (a
// scratch the read loop reuses: sixteen copies of every followed stream a
// sweep interval were a gateway's largest garbage but for its moves'): a
// stream's part is a hash of its name, so it stays in one part however the
// set changes.
func (t *Tailer) sweepPart(k int, buf []string) []string {
	all := t.reg.appendAll(buf[:0])
	part := all[:0]
	for _, s := range all {
		if int(maphash.String(t.sweepSeed, s)%sweepParts) == k {
			part = append(part, s)
		}
	}
	return part
}

// takeDirty clears the set of streams to read and returns those still
// followed, each with its position in from (cleared first), and the bells
// heard with their entries (swapped with spare, which it empties).
func (t *Tailer) takeDirty(keys []string, from map[string]string, spare []richBell) ([]string, []richBell) {
	clear(from)
	clear(spare)
	t.dirtyMu.Lock()
	var taken map[string]struct{} // nil unless there is something to read
	if len(t.dirty) > 0 {
		taken, t.dirty = t.dirty, t.spareDirty
	}
	bells := t.bells
	t.bells = spare[:0]
	t.dirtyMu.Unlock()
	if taken == nil {
		return keys, bells
	}
	t.reg.mu.Lock()
	for s := range taken {
		if p, ok := t.reg.pos[s]; ok {
			keys = append(keys, s)
			from[s] = p
		}
	}
	t.reg.mu.Unlock()
	clear(taken)
	t.spareDirty = taken
	return keys, bells
}

// deliverBells hands the handler each heard entry that follows its
// stream's position exactly, in the order heard. A stream about to be read
// (in from) is left to the read, which returns these entries too; a bell
// whose predecessor is not the position (a gap) adds its stream to the
// read. It returns keys with those streams added.
func (t *Tailer) deliverBells(ctx context.Context, bells []richBell, keys []string, from map[string]string) []string {
	for i := range bells {
		b := &bells[i]
		s := b.msg.Stream
		if _, reading := from[s]; reading {
			continue
		}
		pos, ok := t.Position(s)
		switch {
		case !ok || CompareIDs(b.msg.ID, pos) <= 0:
			// Not followed any more, or delivered already (by a read that
			// overlapped the bell).
		case CompareIDs(b.prev, pos) == 0 && t.reg.advance(s, pos, b.msg.ID):
			t.deliver(ctx, b.msg)
			t.tel.fromBell.Add(ctx, 1, t.tel.addOpts(s, outcomeNone)...)
		default:
			keys = append(keys, s)
			from[s] = pos
		}
	}
	return keys
}

// Run follows the streams until ctx is cancelled. Redis errors are retried
// with backoff; it returns nil on shutdown.
func (t *Tailer) Run(ctx context.Context) error {
	if !t.running.CompareAndSwap(false, true) {
		return errors.New("streams: tailer is already running")
	}
	defer t.running.Store(false)

	// Subscribe before the first read, so nothing appended after that read
	// goes unrung.
	t.psMu.Lock()
	t.ps = t.rdb.Subscribe(ctx)
	all := t.reg.all()
	for len(all) > 0 {
		n := min(len(all), t.cfg.batchKeys)
		chans := make([]string, n)
		for i, s := range all[:n] {
			chans[i] = Bell(s)
		}
		if err := t.ps.Subscribe(ctx, chans...); err != nil {
			t.cfg.logger.Warn("streams: subscribing to bells failed; the sweep reads meanwhile", "err", err)
		}
		all = all[n:]
	}
	ps := t.ps
	t.psMu.Unlock()

	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Not ctx itself: listen ends when Run closes ps, once read has.
		t.listen(context.WithoutCancel(ctx), ps)
	}()
	t.ringAll()
	t.read(ctx)

	t.psMu.Lock()
	_ = t.ps.Close() // ends listen
	t.ps = nil
	t.psMu.Unlock()
	wg.Wait()
	return nil
}

// listen turns bells into streams to read (a bell's channel is its stream's
// key: Bell). A subscription confirmation also counts: after a reconnect
// go-redis subscribes again, and entries appended while the connection was
// down rang nobody. It reads the subscription itself rather than through
// go-redis's Channel, whose goroutine would hand each bell over to this one
// and wake a third, its health check, for every message: two wake-ups a
// bell, on the path of every move. The health check is done here instead: a
// subscription quiet for bellsQuiet is pinged (a write to a dead connection
// fails, and go-redis connects and subscribes again).
func (t *Tailer) listen(ctx context.Context, ps *redis.PubSub) {
	failures := 0
	for {
		msg, err := ps.ReceiveTimeout(ctx, bellsQuiet)
		if err != nil {
			var ne net.Error
			switch {
			case errors.Is(err, redis.ErrClosed):
				return // Run closed it
			case errors.As(err, &ne) && ne.Timeout():
				pctx, cancel := context.WithTimeout(ctx, bellsQuiet)
				_ = ps.Ping(pctx)
				cancel()
			default:
				// go-redis reconnects on the next receive; do not spin
				// while Redis is away.
				if failures > 0 {
					time.Sleep(100 * time.Millisecond)
				}
				failures++
			}
			continue
		}
		failures = 0
		switch m := msg.(type) {
		case *redis.Message:
			if data, ok := strings.CutPrefix(m.Payload, noticeVersion); ok {
				// Not an entry: nothing to read.
				if t.cfg.notices != nil {
					t.cfg.notices(ctx, m.Channel, []byte(data))
				}
				continue
			}
			if b, ok := parseBell(m.Channel, m.Payload); ok {
				t.hear(b)
			} else {
				t.ring(m.Channel)
			}
		case *redis.Subscription:
			if m.Kind == "subscribe" {
				t.ring(m.Channel)
			}
		}
	}
}

// bellsQuiet is how long the bells' subscription may be silent before
// listen pings it (go-redis's Channel checks every 3 s).
const bellsQuiet = 3 * time.Second

// read is the reading loop: whenever streams rang (or the sweep is due) it
// reads them, BatchKeys streams per XREAD, all in one round trip.
func (t *Tailer) read(ctx context.Context) {
	sweep := time.NewTicker(max(t.cfg.sweepEvery/sweepParts, time.Millisecond))
	defer sweep.Stop()
	part := 0
	bo := t.cfg.newBackoff()
	var keys, swept []string
	var bells []richBell
	from := map[string]string{} // the position each stream of a read was read from
	for {
		select {
		case <-ctx.Done():
			return
		case <-sweep.C:
			swept = t.sweepPart(part, swept)
			t.ring(swept...)
			part = (part + 1) % sweepParts
		case <-t.rung:
		}
		keys, bells = t.takeDirty(keys[:0], from, bells)
		keys = t.deliverBells(ctx, bells, keys, from)
		if len(keys) == 0 {
			continue
		}
		res, err := t.readStreams(ctx, keys, from)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			t.cfg.logger.Warn("streams: tail read failed, retrying", "err", err)
			t.ring(keys...)
			sleepCtx(ctx, bo.NextBackOff())
			continue
		}
		bo.Reset()
		for _, xs := range res {
			t.deliverStream(ctx, xs, from[xs.Stream])
			if int64(len(xs.Messages)) >= t.cfg.count {
				t.ring(xs.Stream) // there may be more
			}
		}
	}
}

// deliverStream hands one stream's new entries, read from position from,
// to the handler, advancing the stream's position entry by entry.
func (t *Tailer) deliverStream(ctx context.Context, xs redis.XStream, from string) {
	for _, xm := range xs.Messages {
		if !t.reg.advance(xs.Stream, from, xm.ID) {
			return // removed or repositioned meanwhile: its new reader owns the rest
		}
		from = xm.ID
		t.deliver(ctx, toMessage(xs.Stream, xm, 0))
	}
}

// readStreams reads keys, each from its position in from, without blocking:
// one XREAD per BatchKeys streams (on Redis Cluster, per slot as well, as
// the Consumer groups them), pipelined.
func (t *Tailer) readStreams(ctx context.Context, keys []string, from map[string]string) ([]redis.XStream, error) {
	groups := [][]string{keys}
	if t.cluster {
		groups = slotGroups(keys)
	}
	pipe := t.rdb.Pipeline()
	var cmds []*redis.XStreamSliceCmd
	for _, g := range groups {
		for len(g) > 0 {
			chunk := g[:min(len(g), t.cfg.batchKeys)]
			g = g[len(chunk):]
			args := make([]string, 0, 2*len(chunk))
			args = append(args, chunk...)
			for _, k := range chunk {
				args = append(args, from[k])
			}
			cmds = append(cmds, pipe.XRead(ctx, &redis.XReadArgs{Streams: args, Count: t.cfg.count, Block: -1}))
		}
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
	if m.trace.empty() {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, m.trace)
}
