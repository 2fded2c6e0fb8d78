package streams

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"
)

// Lease is one owner's hold on a resource (a table): the fencing token is
// (Epoch, Owner). Epochs only grow, so a writer holding an older epoch can
// always be told apart from the current owner.
type Lease struct {
	Key   string // the lease key, e.g. TableLease(id)
	Owner string
	Epoch int64
}

// Leases acquires, renews and releases leases with a TTL. The lease key is a
// hash {owner, epoch} that expires; the epoch comes from INCR on a separate,
// never-expiring counter (LeaseEpochKey) so that it keeps growing across
// expiries and owners. Both keys share the lease key's hash tag.
type Leases struct {
	rdb redis.UniversalClient
	ttl time.Duration
}

// NewLeases makes a lease manager whose leases live ttl unless renewed.
func NewLeases(rdb redis.UniversalClient, ttl time.Duration) *Leases {
	return &Leases{rdb: rdb, ttl: ttl}
}

// acquireScript: KEYS[1]=lease KEYS[2]=epoch counter;
// ARGV[1]=owner ARGV[2]=ttl ms ARGV[3]=force ("1" takes over a live lease).
// Returns {epoch, owner, held}: held=1 means another owner keeps the lease.
// Even the same owner gets a new epoch: a restarted process reusing its name
// must fence out its previous incarnation.
var acquireScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'owner', 'epoch')
if cur[1] and ARGV[3] ~= '1' and cur[1] ~= ARGV[1] then
  return {tonumber(cur[2]), cur[1], 1}
end
local epoch = redis.call('INCR', KEYS[2])
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'epoch', epoch)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return {epoch, ARGV[1], 0}
`)

// renewScript / releaseScript act only while the lease still holds the
// caller's owner and epoch (ARGV[1], ARGV[2]).
var renewScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'owner', 'epoch')
if cur[1] ~= ARGV[1] or cur[2] ~= ARGV[2] then
  return redis.error_reply('STALEEPOCH lease is ' .. tostring(cur[2]) .. ':' .. tostring(cur[1]))
end
return redis.call('PEXPIRE', KEYS[1], ARGV[3])
`)

var releaseScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'owner', 'epoch')
if cur[1] ~= ARGV[1] or cur[2] ~= ARGV[2] then
  return redis.error_reply('STALEEPOCH lease is ' .. tostring(cur[2]) .. ':' .. tostring(cur[1]))
end
return redis.call('DEL', KEYS[1])
`)

// Acquire takes the lease if it is free (or already the caller's) and
// returns it with a new, higher epoch. If another owner holds it, the error
// wraps ErrLeaseHeld and the returned Lease describes the holder.
func (l *Leases) Acquire(ctx context.Context, key, owner string) (Lease, error) {
	return l.acquire(ctx, key, owner, false)
}

// Takeover takes the lease whoever holds it, with a new, higher epoch. The
// previous holder's fenced appends fail from this moment on. Use it when the
// old owner is known to be gone (the operator migrating a table off a dead
// or drained runner).
func (l *Leases) Takeover(ctx context.Context, key, owner string) (Lease, error) {
	return l.acquire(ctx, key, owner, true)
}

func (l *Leases) acquire(ctx context.Context, key, owner string, force bool) (Lease, error) {
	if owner == "" {
		return Lease{}, errors.New("streams: lease owner must not be empty")
	}
	f := "0"
	if force {
		f = "1"
	}
	res, err := acquireScript.Run(ctx, l.rdb, []string{key, LeaseEpochKey(key)}, owner, l.ttl.Milliseconds(), f).Slice()
	if err != nil {
		return Lease{}, fmt.Errorf("acquire lease %s: %w", key, err)
	}
	if len(res) != 3 {
		return Lease{}, fmt.Errorf("acquire lease %s: unexpected reply %v", key, res)
	}
	epoch, _ := res[0].(int64)
	holder, _ := res[1].(string)
	held, _ := res[2].(int64)
	got := Lease{Key: key, Owner: holder, Epoch: epoch}
	if held == 1 {
		return got, fmt.Errorf("acquire lease %s: %w (owner %s, epoch %d)", key, ErrLeaseHeld, holder, epoch)
	}
	return got, nil
}

// Renew extends a lease the caller still holds; ErrStaleEpoch if it lost it.
func (l *Leases) Renew(ctx context.Context, lease Lease) error {
	err := renewScript.Run(ctx, l.rdb, []string{lease.Key}, lease.Owner, lease.Epoch, l.ttl.Milliseconds()).Err()
	if err != nil {
		return fmt.Errorf("renew lease %s: %w", lease.Key, mapStale(err))
	}
	return nil
}

// renewChunk bounds the renewals sent in one pipeline.
const renewChunk = 256

// RenewAll extends many leases, renewChunk per round trip, where Renew would
// take one round trip each: a runner renews every open table's lease each
// third of the TTL, and one at a time that round took N round trips (5,000
// tables at 0.3 ms: 1.5 s of a 3.3 s period). errs[i] is leases[i]'s error,
// wrapping ErrStaleEpoch when it was lost; nil when renewed.
func (l *Leases) RenewAll(ctx context.Context, leases []Lease) (errs []error) {
	errs = make([]error, len(leases))
	for start := 0; start < len(leases); start += renewChunk {
		end := min(start+renewChunk, len(leases))
		l.renewPipelined(ctx, leases[start:end], errs[start:end], true)
	}
	return errs
}

// renewPipelined sends the renewals by script hash in one pipeline; if the
// server does not know the script (a restart, SCRIPT FLUSH), it loads it and
// sends them once more.
func (l *Leases) renewPipelined(ctx context.Context, leases []Lease, errs []error, reload bool) {
	pipe := l.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(leases))
	ttl := l.ttl.Milliseconds()
	for i, lease := range leases {
		cmds[i] = renewScript.EvalSha(ctx, pipe, []string{lease.Key}, lease.Owner, lease.Epoch, ttl)
	}
	_, _ = pipe.Exec(ctx) // each renewal's own error is read below
	missing := false
	for i, cmd := range cmds {
		err := cmd.Err()
		if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			missing = true
		}
		errs[i] = nil
		if err != nil {
			errs[i] = fmt.Errorf("renew lease %s: %w", leases[i].Key, mapStale(err))
		}
	}
	if missing && reload {
		if err := renewScript.Load(ctx, l.rdb).Err(); err != nil {
			return // errs already say NOSCRIPT
		}
		l.renewPipelined(ctx, leases, errs, false)
	}
}

// Release gives up a lease the caller still holds; ErrStaleEpoch if it had
// already lost it. The epoch counter stays, so the next owner's epoch is
// still higher.
func (l *Leases) Release(ctx context.Context, lease Lease) error {
	err := releaseScript.Run(ctx, l.rdb, []string{lease.Key}, lease.Owner, lease.Epoch).Err()
	if err != nil {
		return fmt.Errorf("release lease %s: %w", lease.Key, mapStale(err))
	}
	return nil
}

// Current reads who holds the lease; ok is false when nobody does.
func (l *Leases) Current(ctx context.Context, key string) (lease Lease, ok bool, err error) {
	v, err := l.rdb.HMGet(ctx, key, "owner", "epoch").Result()
	if err != nil {
		return Lease{}, false, fmt.Errorf("read lease %s: %w", key, err)
	}
	owner, _ := v[0].(string)
	epoch, _ := v[1].(string)
	if owner == "" {
		return Lease{}, false, nil
	}
	n, err := strconv.ParseInt(epoch, 10, 64)
	if err != nil {
		return Lease{}, false, fmt.Errorf("read lease %s: malformed epoch %q", key, epoch)
	}
	return Lease{Key: key, Owner: owner, Epoch: n}, true, nil
}

// staleError keeps Redis's text ("lease is 7:runner-b", epoch:owner) while matching
// ErrStaleEpoch with errors.Is.
type staleError struct{ detail string }

func (e *staleError) Error() string { return ErrStaleEpoch.Error() + ": " + e.detail }
func (e *staleError) Unwrap() error { return ErrStaleEpoch }

func mapStale(err error) error {
	if redis.HasErrorPrefix(err, "STALEEPOCH") {
		return &staleError{detail: strings.TrimPrefix(err.Error(), "STALEEPOCH ")}
	}
	return err
}

// fencedAppendScript: KEYS[1]=lease, KEYS[2..]=streams (one per entry);
// ARGV[1]=owner, ARGV[2]=epoch, ARGV[3]="1" for bells that carry the entry,
// then per entry as entryBellScript's (without the bell's body when
// ARGV[3] is "0"). Checking the token and appending in
// one script makes the check atomic with the append: no other command, in
// particular no Takeover, can run between them.
var fencedAppendScript = redis.NewScript(appendLua + `
local cur = redis.call('HMGET', KEYS[1], 'owner', 'epoch')
if cur[1] ~= ARGV[1] or cur[2] ~= ARGV[2] then
  return redis.error_reply('STALEEPOCH lease is ' .. tostring(cur[2]) .. ':' .. tostring(cur[1]))
end
return append(2, 4, ARGV[3] == '1', false)
`)

// AppendFenced appends entries only if lease is still the current lease of
// its key, atomically: either every entry is appended or (ErrStaleEpoch)
// none is. All streams must share the lease key's hash tag (e.g.
// TableEvents(id) with TableLease(id)) so the script runs on Redis Cluster.
func (p *Publisher) AppendFenced(ctx context.Context, lease Lease, entries ...Entry) ([]string, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	f := p.fenced(ctx, lease, entries)
	res, err := runScripts(ctx, p.rdb, []scriptCall{f.scriptCall})[0].StringSlice()
	return f.finish(ctx, res, err)
}

// fencedCall is one AppendFenced call as the script's keys and arguments,
// with the spans of its entries.
type fencedCall struct {
	scriptCall
	p       *Publisher
	lease   Lease
	entries []Entry
	spans   []trace.Span
}

func (p *Publisher) fenced(ctx context.Context, lease Lease, entries []Entry) fencedCall {
	rich := "0"
	if p.cfg.entryBells {
		rich = "1"
	}
	f := fencedCall{p: p, lease: lease, entries: entries, spans: make([]trace.Span, len(entries)),
		scriptCall: newScriptCall(fencedAppendScript, 1+len(entries), 3+len(entries)*8)}
	f.args = append(f.args, lease.Key)
	for _, e := range entries {
		f.args = append(f.args, e.Stream)
	}
	f.args = append(f.args, lease.Owner, lease.Epoch, rich)
	for i, e := range entries {
		var c *injectCarrier
		_, f.spans[i], c = p.tel.startPublish(ctx, e.Stream)
		f.args = p.appendArgv(f.args, e, c, p.cfg.entryBells)
	}
	return f
}

// finish ends the call's spans and counts its entries with the script's
// result.
func (f fencedCall) finish(ctx context.Context, res []string, err error) ([]string, error) {
	err = mapStale(err)
	if err == nil && len(res) != len(f.entries) {
		err = fmt.Errorf("the script returned %d IDs for %d entries", len(res), len(f.entries))
	}
	for i, e := range f.entries {
		endSpan(f.spans[i], err)
		f.p.count(ctx, e.Stream, err)
	}
	if err != nil {
		return nil, fmt.Errorf("fenced append (lease %s epoch %d): %w", f.lease.Key, f.lease.Epoch, err)
	}
	return res, nil
}

// FencedBatcher coalesces concurrent AppendFenced calls (a table-runner's
// tables, each appending its own step) into pipelines of the fenced-append
// script, as Batcher does XADDs: one round trip for many tables' appends
// instead of one each, which saves the caller and Redis a read and a write
// per append under load. Each call is still its own script run, atomic and
// fenced on its own lease; calls do not fail or succeed together.
type FencedBatcher struct {
	p *Publisher
	c *coalescer[fencedReq, []string]
}

type fencedReq struct {
	lease   Lease
	entries []Entry
}

// NewFencedBatcher makes a FencedBatcher with `flushers` pipelines in
// flight at most. Calls of one caller are answered in order (each waits
// for its answer), so a table's appends keep their order whatever the
// number of flushers. Like NewBatcher, the pipelines run with ctx's values
// but not its cancellation, and the batcher closes itself when ctx ends.
func (p *Publisher) NewFencedBatcher(ctx context.Context, maxBatch, flushers int) *FencedBatcher {
	b := &FencedBatcher{p: p}
	b.c = newCoalescer(ctx, maxBatch, flushers, b.flush)
	return b
}

// AppendFenced is Publisher.AppendFenced, sent in a pipeline with other
// callers' appends. The caller's ctx bounds only the wait for a place in
// the queue: once queued, the append is sent and answered.
func (b *FencedBatcher) AppendFenced(ctx context.Context, lease Lease, entries ...Entry) ([]string, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	return b.c.do(ctx, fencedReq{lease: lease, entries: entries})
}

// Close stops taking appends (AppendFenced returns ErrClosed) and waits
// until every queued append was sent and answered.
func (b *FencedBatcher) Close() { b.c.close() }

func (b *FencedBatcher) flush(ctx context.Context, batch []*pending[fencedReq, []string]) {
	calls := make([]fencedCall, len(batch))
	scripts := make([]scriptCall, len(batch))
	for i, r := range batch {
		calls[i] = b.p.fenced(r.ctx, r.in.lease, r.in.entries) //nolint:contextcheck // each entry carries its caller's trace; the pipeline runs under ctx
		scripts[i] = calls[i].scriptCall
	}
	for i, cmd := range runScripts(ctx, b.p.rdb, scripts) {
		r := batch[i]
		res, err := cmd.StringSlice()
		r.out, r.err = calls[i].finish(r.ctx, res, err) //nolint:contextcheck // the caller's spans and metrics
	}
}
