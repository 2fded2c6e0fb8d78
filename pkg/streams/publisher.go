package streams

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"
)

// Publisher appends entries to streams with approximate MAXLEN retention
// and the caller's trace context stored in each entry, and rings each
// stream's bell (see Bell; WithEntryBells for bells that carry the entry).
type Publisher struct {
	rdb     redis.UniversalClient
	cfg     settings
	tel     *telemetry
	cluster bool
	// maxLen is WithMaxLen as a command argument, boxed once (nil: no
	// trimming); unused with WithRetention.
	maxLen any
}

// NewPublisher makes a publisher on rdb. Relevant options: WithMaxLen,
// WithRetention, WithEntryBells, WithTracerProvider, WithMeterProvider,
// WithPropagator.
func NewPublisher(rdb redis.UniversalClient, opts ...Option) *Publisher {
	cfg := newSettings(opts)
	p := &Publisher{rdb: rdb, cfg: cfg, tel: newTelemetry(&cfg, "")}
	_, p.cluster = rdb.(*redis.ClusterClient)
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
	args := make([]any, 0, 6+fieldCount(e, c))
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
	args = append(args, "*")
	return redis.NewStringCmd(ctx, appendFields(args, e, c)...)
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

// entryBellScript (WithEntryBells): KEYS = streams (one per entry), ARGV =
// per entry: maxlen ("0" = none), field count n, n field/value strings, the
// body of its bell (bellBody of those strings).
// Each entry succeeds or fails on its own, as pipelined XADDs do.
var entryBellScript = redis.NewScript(appendLua + `
return append(1, 1, true, true)
`)

// Publish appends one entry and returns its ID.
func (p *Publisher) Publish(ctx context.Context, e Entry) (string, error) {
	ids, errs := p.appendEntries(ctx, []Entry{e}, nil)
	return ids[0], errs[0]
}

// PublishBatch appends entries in one round trip (a pipeline, not a
// transaction: on error some entries may have been appended). It returns the
// IDs in order; on error, ids[i] is "" for every entry that failed.
func (p *Publisher) PublishBatch(ctx context.Context, entries []Entry) ([]string, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	ids, errs := p.appendEntries(ctx, entries, nil)
	for _, err := range errs {
		if err != nil {
			return ids, err
		}
	}
	return ids, nil
}

// appendEntries appends entries in one round trip and returns each one's
// ID or error. Each entry's span is a child of ctxOf(i) (the caller that
// queued it, in a Batcher), or of ctx when ctxOf is nil; the commands run
// under ctx.
func (p *Publisher) appendEntries(ctx context.Context, entries []Entry, ctxOf func(i int) context.Context) ([]string, []error) {
	callerCtx := func(i int) context.Context {
		if ctxOf == nil {
			return ctx
		}
		return ctxOf(i)
	}
	spans := make([]trace.Span, len(entries))
	carriers := make([]*injectCarrier, len(entries))
	for i, e := range entries {
		_, spans[i], carriers[i] = p.tel.startPublish(callerCtx(i), e.Stream) //nolint:contextcheck // the entry's caller's trace
	}
	var ids []string
	var errs []error
	if p.cfg.entryBells {
		ids, errs = p.appendRinging(ctx, entries, carriers)
	} else {
		ids, errs = p.appendPipelined(ctx, entries, carriers)
	}
	for i, e := range entries {
		if errs[i] != nil {
			errs[i] = fmt.Errorf("publish to %s: %w", e.Stream, errs[i])
		}
		endSpan(spans[i], errs[i])
		p.count(callerCtx(i), e.Stream, errs[i]) //nolint:contextcheck // the entry's caller's metrics
	}
	return ids, errs
}

// appendPipelined sends one XADD per entry and a bare bell per stream.
func (p *Publisher) appendPipelined(ctx context.Context, entries []Entry, carriers []*injectCarrier) ([]string, []error) {
	pipe := p.rdb.Pipeline()
	cmds := make([]*redis.StringCmd, len(entries))
	for i, e := range entries {
		cmds[i] = p.xadd(ctx, e, carriers[i])
		_ = pipe.Process(ctx, cmds[i])
	}
	ringAll(ctx, pipe, func(i int) string { return entries[i].Stream }, len(entries))
	_, _ = pipe.Exec(ctx) // the XADDs' own errors are read below; a bell is only a hint
	ids, errs := make([]string, len(entries)), make([]error, len(entries))
	for i, cmd := range cmds {
		ids[i], errs[i] = cmd.Result()
	}
	return ids, errs
}

// appendRinging appends with entryBellScript: one script run per Redis
// Cluster slot among the entries' streams (one in all on a single Redis),
// so the script's own cost is paid once per round trip, not per entry.
func (p *Publisher) appendRinging(ctx context.Context, entries []Entry, carriers []*injectCarrier) ([]string, []error) {
	groups := [][]int{make([]int, len(entries))}
	for i := range entries {
		groups[0][i] = i
	}
	if p.cluster {
		groups = slotGroupsOf(len(entries), func(i int) string { return entries[i].Stream })
	}
	calls := make([]scriptCall, len(groups))
	for g, idx := range groups {
		c := newScriptCall(entryBellScript, len(idx), 8*len(idx))
		for _, i := range idx {
			c.args = append(c.args, entries[i].Stream)
		}
		for _, i := range idx {
			c.args = p.appendArgv(c.args, entries[i], carriers[i], true)
		}
		calls[g] = c
	}
	ids, errs := make([]string, len(entries)), make([]error, len(entries))
	for g, cmd := range runScripts(ctx, p.rdb, calls) {
		res, err := cmd.Slice()
		if err == nil && len(res) != len(groups[g]) {
			err = fmt.Errorf("the script returned %d results for %d entries", len(res), len(groups[g]))
		}
		for j, i := range groups[g] {
			if err != nil {
				errs[i] = err
				continue
			}
			switch r := res[j].(type) {
			case string:
				ids[i] = r
			case error:
				errs[i] = r
			default:
				errs[i] = fmt.Errorf("the script returned %T for an entry", r)
			}
		}
	}
	return ids, errs
}

// appendArgv appends an entry's part of an appending script's ARGV to
// args: its maxlen (0: none), its field count and its fields, then, for a
// script that rings rich bells, the bell's body (bellBody).
func (p *Publisher) appendArgv(args []any, e Entry, carrier *injectCarrier, rich bool) []any {
	args = append(args, p.cfg.maxLenFor(e.Stream), fieldCount(e, carrier))
	first := len(args)
	args = appendFields(args, e, carrier)
	if rich {
		args = append(args, bellBody(args[first:]))
	}
	return args
}

// scriptCall is one run of a script as its EVALSHA's arguments: "evalsha",
// the script's SHA1, the number of keys, the keys, then ARGV. Built whole
// by the caller it is the command's own argument slice, where go-redis's
// EvalSha would copy the keys and arguments into one of its own (with the
// per-entry slices this saves, about a tenth of the bytes the runner
// allocated at 100 tables: docs/benchmarks.md, issue 24).
type scriptCall struct {
	script *redis.Script
	args   []any
}

// newScriptCall starts a call of script with nkeys keys, with room for
// them and argc arguments; the caller appends the keys, then the arguments.
func newScriptCall(script *redis.Script, nkeys, argc int) scriptCall {
	args := make([]any, 3, 3+nkeys+argc)
	args[0], args[1], args[2] = "evalsha", script.Hash(), nkeys
	return scriptCall{script: script, args: args}
}

// cmd is the call's EVALSHA, routed by its first key on Redis Cluster.
func (c scriptCall) cmd(ctx context.Context) *redis.Cmd {
	cmd := redis.NewCmd(ctx, c.args...)
	if c.args[2].(int) > 0 {
		cmd.SetFirstKeyPos(3)
	}
	return cmd
}

// split returns the call's keys and ARGV, as Script.Eval takes them.
func (c scriptCall) split() ([]string, []any) {
	n := c.args[2].(int)
	keys := make([]string, n)
	for i := range keys {
		keys[i] = c.args[3+i].(string)
	}
	return keys, c.args[3+n:]
}

// runScripts runs calls in one round trip of EVALSHAs (a pipeline for more
// than one). A call that found Redis without the script in its cache (a
// restart, SCRIPT FLUSH) did not run, so running it again cannot append
// twice: it is rerun with EVAL, which sends the script's source and caches
// it for the calls after it too.
func runScripts(ctx context.Context, rdb redis.UniversalClient, calls []scriptCall) []*redis.Cmd {
	cmds := make([]*redis.Cmd, len(calls))
	if len(calls) == 1 {
		cmds[0] = calls[0].cmd(ctx)
		_ = rdb.Process(ctx, cmds[0]) // its error is read by the caller
	} else {
		pipe := rdb.Pipeline()
		for i, c := range calls {
			cmds[i] = c.cmd(ctx)
			_ = pipe.Process(ctx, cmds[i])
		}
		_, _ = pipe.Exec(ctx) // per-command errors are read by the caller
	}
	for i, c := range calls {
		if redis.HasErrorPrefix(cmds[i].Err(), "NOSCRIPT") {
			keys, argv := c.split()
			cmds[i] = c.script.Eval(ctx, rdb, keys, argv...)
		}
	}
	return cmds
}

func (p *Publisher) count(ctx context.Context, stream string, err error) {
	if err != nil {
		p.tel.publishErrs.Add(ctx, 1, p.tel.addOpts(stream, outcomeNone)...)
		return
	}
	p.tel.published.Add(ctx, 1, p.tel.addOpts(stream, outcomeNone)...)
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
// entries, so the round trip runs under the batcher's uncancellable context
// (the client's timeouts still bound it); each entry still carries its own
// caller's trace.
func (b *Batcher) flush(ctx context.Context, batch []*pending[Entry, string]) {
	entries := make([]Entry, len(batch))
	for i, r := range batch {
		entries[i] = r.in
	}
	ids, errs := b.p.appendEntries(ctx, entries, func(i int) context.Context { return batch[i].ctx })
	for i, r := range batch {
		r.out, r.err = ids[i], errs[i]
	}
}
