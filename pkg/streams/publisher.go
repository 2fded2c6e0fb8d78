package streams

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"
)

// Publisher appends entries to streams with approximate MAXLEN retention
// and the caller's trace context stored in each entry.
type Publisher struct {
	rdb redis.UniversalClient
	cfg settings
	tel *telemetry
	// maxLen is WithMaxLen as a command argument, boxed once (nil: no
	// trimming); unused with WithRetention.
	maxLen any
}

// NewPublisher makes a publisher on rdb. Relevant options: WithMaxLen,
// WithRetention, WithTracerProvider, WithMeterProvider, WithPropagator.
func NewPublisher(rdb redis.UniversalClient, opts ...Option) *Publisher {
	cfg := newSettings(opts)
	p := &Publisher{rdb: rdb, cfg: cfg, tel: newTelemetry(&cfg, "")}
	if cfg.maxLen > 0 {
		p.maxLen = cfg.maxLen
	}
	return p
}

// xadd builds `XADD stream [MAXLEN ~ n] * data … header… trace…` in one
// argument slice. go-redis's XAdd would build an XAddArgs, a values slice
// and then its own argument slice, boxing the stream name and the limit
// again for every entry.
func (p *Publisher) xadd(ctx context.Context, e Entry, c *injectCarrier) *redis.StringCmd {
	var trace []string
	if c != nil {
		trace = c.pairs
	}
	args := make([]any, 0, 8+2*len(e.Header)+len(trace))
	args = append(args, "xadd", e.Stream)
	maxLen := p.maxLen
	if p.cfg.retention != nil {
		maxLen = nil
		if n := p.cfg.retention(e.Stream); n > 0 {
			maxLen = n
		}
	}
	if maxLen != nil {
		args = append(args, "maxlen", "~", maxLen)
	}
	args = append(args, "*", FieldData, e.Data)
	for k, v := range e.Header {
		args = append(args, k, v)
	}
	for i := 0; i+1 < len(trace); i += 2 {
		args = append(args, trace[i], trace[i+1])
	}
	return redis.NewStringCmd(ctx, args...)
}

// bell is `PUBLISH Bell(stream) ""`, sent after the stream's XADD in the
// same round trip: Tailers following the stream read it when it rings.
func bell(ctx context.Context, stream string) *redis.IntCmd {
	return redis.NewIntCmd(ctx, "publish", Bell(stream), "")
}

// ringAll queues one bell per distinct stream of n entries on pipe, after
// their XADDs.
func ringAll(ctx context.Context, pipe redis.Pipeliner, streamOf func(i int) string, n int) {
	if n <= 16 { // no map for the usual small batch
		for i := 0; i < n; i++ {
			s, seen := streamOf(i), false
			for j := 0; j < i && !seen; j++ {
				seen = streamOf(j) == s
			}
			if !seen {
				_ = pipe.Process(ctx, bell(ctx, s))
			}
		}
		return
	}
	rung := make(map[string]bool, n)
	for i := 0; i < n; i++ {
		if s := streamOf(i); !rung[s] {
			rung[s] = true
			_ = pipe.Process(ctx, bell(ctx, s))
		}
	}
}

// Publish appends one entry and returns its ID.
func (p *Publisher) Publish(ctx context.Context, e Entry) (string, error) {
	ctx, span, c := p.tel.startPublish(ctx, e.Stream)
	cmd := p.xadd(ctx, e, c)
	pipe := p.rdb.Pipeline()
	_ = pipe.Process(ctx, cmd)
	_ = pipe.Process(ctx, bell(ctx, e.Stream))
	_, _ = pipe.Exec(ctx) // the XADD's own error is read below; a bell is only a hint
	id, err := cmd.Result()
	endSpan(span, err)
	p.count(ctx, e.Stream, err)
	if err != nil {
		return "", fmt.Errorf("publish to %s: %w", e.Stream, err)
	}
	return id, nil
}

func (p *Publisher) count(ctx context.Context, stream string, err error) {
	if err != nil {
		p.tel.publishErrs.Add(ctx, 1, p.tel.addOpts(stream, outcomeNone)...)
		return
	}
	p.tel.published.Add(ctx, 1, p.tel.addOpts(stream, outcomeNone)...)
}

// PublishBatch appends entries in one round trip (a pipeline, not a
// transaction: on error some entries may have been appended). It returns the
// IDs in order; on error, ids[i] is "" for every entry that failed.
func (p *Publisher) PublishBatch(ctx context.Context, entries []Entry) ([]string, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	pipe := p.rdb.Pipeline()
	cmds := make([]*redis.StringCmd, len(entries))
	spans := make([]trace.Span, len(entries))
	for i, e := range entries {
		_, span, c := p.tel.startPublish(ctx, e.Stream)
		spans[i] = span
		cmds[i] = p.xadd(ctx, e, c)
		_ = pipe.Process(ctx, cmds[i])
	}
	ringAll(ctx, pipe, func(i int) string { return entries[i].Stream }, len(entries))
	_, execErr := pipe.Exec(ctx)
	ids := make([]string, len(entries))
	var firstErr error
	for i, cmd := range cmds {
		id, err := cmd.Result()
		endSpan(spans[i], err)
		p.count(ctx, entries[i].Stream, err)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("publish to %s: %w", entries[i].Stream, err)
			}
			continue
		}
		ids[i] = id
	}
	if firstErr == nil && execErr != nil {
		firstErr = fmt.Errorf("publish batch: %w", execErr)
	}
	return ids, firstErr
}

// Batcher coalesces concurrent Publish calls into pipelines: while one
// pipeline is in flight the next calls queue, and are sent together when it
// returns. Under light load each call goes out at once (no linger timer);
// under heavy load batches grow up to maxBatch, so throughput approaches
// PublishBatch without callers having to batch themselves. There is no
// sending goroutine (see coalescer).
type Batcher struct {
	p *Publisher
	c *coalescer[Entry, string]
}

// NewBatcher makes a batcher with `flushers` pipelines in flight at most
// (1 keeps per-stream order of concurrent calls; more raises throughput).
// Its pipelines run with ctx's values but not its cancellation (a queued
// caller always gets an answer); when ctx ends the batcher closes itself.
// Close stops it earlier.
func (p *Publisher) NewBatcher(ctx context.Context, maxBatch, flushers int) *Batcher {
	b := &Batcher{p: p}
	b.c = newCoalescer(ctx, maxBatch, flushers, b.flush)
	return b
}

// Publish queues e and waits until its pipeline returned.
func (b *Batcher) Publish(ctx context.Context, e Entry) (string, error) {
	return b.c.do(ctx, e)
}

// Close stops taking entries (Publish returns ErrClosed) and waits until
// every queued entry was sent and answered.
func (b *Batcher) Close() { b.c.close() }

// flush sends one batch. One caller giving up must not fail the others'
// entries, so the pipeline runs under the batcher's uncancellable context
// (the client's timeouts still bound it); each entry still carries its own
// caller's trace.
func (b *Batcher) flush(ctx context.Context, batch []*pending[Entry, string]) {
	pipe := b.p.rdb.Pipeline()
	cmds := make([]*redis.StringCmd, len(batch))
	spans := make([]trace.Span, len(batch))
	for i, r := range batch {
		_, span, c := b.p.tel.startPublish(r.ctx, r.in.Stream)
		spans[i] = span
		cmds[i] = b.p.xadd(ctx, r.in, c)
		_ = pipe.Process(ctx, cmds[i])
	}
	ringAll(ctx, pipe, func(i int) string { return batch[i].in.Stream }, len(batch))
	_, _ = pipe.Exec(ctx) // per-command errors are read below
	for i, r := range batch {
		id, err := cmds[i].Result()
		endSpan(spans[i], err)
		b.p.count(ctx, r.in.Stream, err)
		if err != nil {
			r.err = fmt.Errorf("publish to %s: %w", r.in.Stream, err)
		}
		r.out = id
	}
}
