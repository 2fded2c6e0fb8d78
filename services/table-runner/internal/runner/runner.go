package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/assign"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/lobbyclient"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
)

// Why a table's goroutine stopped (its context's cause).
var (
	errShutdown  = errors.New("runner: shutting down")
	errMoved     = errors.New("runner: table assigned to another runner")
	errFenced    = errors.New("runner: fenced by a newer lease epoch")
	errFinished  = errors.New("runner: game over")
	errAbandoned = errors.New("runner: table abandoned")
	errGone      = errors.New("runner: the table's data is gone from Redis")
)

// The fenced-append pipelines: at most fencedBatch tables' steps each, at
// most fencedFlushers in flight.
const (
	fencedBatch    = 64
	fencedFlushers = 2
)

// Runner owns the tables the assignment gives it: one goroutine per table,
// one shared reader (a streams.Tailer) for every table's
// command stream, and the loops that keep it a member (heartbeat), keep its
// leases (renewal) and follow the assignment (poll). It may also run the
// leader-elected assigner.
type Runner struct {
	rdb    redis.UniversalClient
	opt    Options
	log    *slog.Logger
	pub    *streams.Publisher
	fenced *streams.FencedBatcher // the tables' appends, pipelined together
	leases *streams.Leases
	beats  *assign.Heartbeats
	store  *assign.Store
	asg    *assign.Assigner
	tailer *streams.Tailer
	tracer trace.Tracer
	m      *metrics

	ready    atomic.Bool
	draining atomic.Bool

	mu        sync.Mutex
	slots     map[string]*slot // by table id
	byStream  map[string]*slot // by command stream
	failures  map[string]int   // consecutive failed opens per table
	notBefore map[string]time.Time
	actors    sync.WaitGroup
}

// New makes a runner; Run starts it.
func New(rdb redis.UniversalClient, opt Options) (*Runner, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	r := &Runner{
		rdb: rdb, opt: opt, log: opt.Logger.With("runner", opt.ID),
		leases: streams.NewLeases(rdb, opt.LeaseTTL),
		beats:  assign.NewHeartbeats(rdb, opt.HeartbeatTTL),
		store:  assign.NewStore(rdb),
		tracer: opt.TracerProvider.Tracer("github.com/pulka/pulka/services/table-runner"),
		slots:  map[string]*slot{}, byStream: map[string]*slot{},
		failures: map[string]int{}, notBefore: map[string]time.Time{},
	}
	evClass := streams.StreamClass(streams.TableEvents("x"))
	// The events' bells carry the event: gateways following the table hand
	// it to their players without reading it back.
	r.pub = streams.NewPublisher(rdb, streams.WithEntryBells(),
		streams.WithTracerProvider(opt.TracerProvider), streams.WithMeterProvider(opt.MeterProvider),
		streams.WithRetention(func(stream string) int64 {
			switch {
			case streams.StreamClass(stream) == evClass:
				return opt.EventMaxLen
			case stream == scoringclient.HandsStream:
				return opt.ScoringMaxLen
			}
			return streams.DefaultMaxLen
		}))
	r.tailer = streams.NewTailer(rdb, r.onCommand,
		streams.WithTracerProvider(opt.TracerProvider), streams.WithMeterProvider(opt.MeterProvider),
		streams.WithLogger(r.log))
	if opt.Assigner {
		r.asg, err = assign.NewAssigner(rdb, r.beats, r.store, assign.AssignerOptions{
			ID: opt.ID, LeaderTTL: opt.LeaderTTL, Interval: opt.ReconcileEvery, TableLeaseTTL: opt.LeaseTTL,
			ConsumerOptions: []streams.Option{streams.WithMinIdle(opt.StartClaimIdle), streams.WithClaimInterval(opt.StartClaimIdle / 4)},
			Logger:          r.log, MeterProvider: opt.MeterProvider,
		})
		if err != nil {
			return nil, err
		}
	}
	if r.m, err = newMetrics(opt.MeterProvider, r); err != nil {
		return nil, err
	}
	return r, nil
}

// ID is the runner's id.
func (r *Runner) ID() string { return r.opt.ID }

// Leading reports whether this runner's assigner is the leader.
func (r *Runner) Leading() bool { return r.asg != nil && r.asg.IsLeader() }

// Ready reports whether the runner is a live member taking tables.
func (r *Runner) Ready(context.Context) error {
	if r.draining.Load() {
		return errShutdown
	}
	if !r.ready.Load() {
		return errors.New("runner: not a member yet")
	}
	return nil
}

// Tables returns the ids of the tables this runner owns (open or opening).
func (r *Runner) Tables() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.slots))
	for id := range r.slots {
		out = append(out, id)
	}
	return out
}

func (r *Runner) tableCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.slots)
}

func (r *Runner) inboxDepth() (sum, mx int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.slots {
		n := len(s.inbox)
		sum += n
		mx = max(mx, n)
	}
	return sum, mx
}

// Run works until ctx is cancelled, then hands its tables over: each table
// writes a snapshot and releases its lease, the runner leaves the
// membership (so the assigner moves its tables at its next pass instead of
// after the heartbeat TTL) and gives up the assigner's leadership.
func (r *Runner) Run(ctx context.Context) error {
	bg := context.WithoutCancel(ctx)
	// Every table appends each step on its own; under load, sending those
	// appends together saves a round trip (two system calls here, two in
	// Redis) per step. Two pipelines in flight keep a lone table's append
	// from waiting long behind a batch. It lives until the tables stopped.
	r.fenced = r.pub.NewFencedBatcher(bg, fencedBatch, fencedFlushers)
	tailCtx, stopTail := context.WithCancel(bg)
	var tailDone sync.WaitGroup
	tailDone.Add(1)
	go func() { defer tailDone.Done(); _ = r.tailer.Run(tailCtx) }()

	var loops sync.WaitGroup
	loop := func(every time.Duration, f func(context.Context)) {
		loops.Add(1)
		go func() {
			defer loops.Done()
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				f(ctx)
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
			}
		}()
	}
	loop(r.opt.HeartbeatTTL/3, r.beat)
	loop(r.opt.LeaseTTL/3, r.renew)
	r.followAssignment(ctx, &loops)
	if r.asg != nil {
		loops.Add(1)
		go func() { defer loops.Done(); _ = r.asg.Run(ctx) }()
	}
	<-ctx.Done()
	r.draining.Store(true)
	loops.Wait()

	r.mu.Lock()
	for _, s := range r.slots {
		s.cancel(errShutdown)
	}
	r.mu.Unlock()
	r.actors.Wait()
	r.fenced.Close()
	lctx, cancel := context.WithTimeout(bg, time.Second)
	if err := r.beats.Leave(lctx, r.opt.ID); err != nil {
		r.log.Warn("runner: leave the membership", "err", err)
	}
	cancel()
	stopTail()
	tailDone.Wait()
	return nil
}

func (r *Runner) beat(ctx context.Context) {
	err := r.beats.Beat(ctx, assign.Member{ID: r.opt.ID, Capacity: r.opt.Capacity, Draining: r.draining.Load()})
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("runner: heartbeat", "err", err)
		}
		return
	}
	r.ready.Store(true)
}

// renew extends the lease of every open table, many per round trip; a
// table whose lease was taken over is stopped at once.
func (r *Runner) renew(ctx context.Context) {
	r.mu.Lock()
	slots := make([]*slot, 0, len(r.slots))
	for _, s := range r.slots {
		slots = append(slots, s)
	}
	r.mu.Unlock()
	held := make([]*slot, 0, len(slots))
	leases := make([]streams.Lease, 0, len(slots))
	for _, s := range slots {
		if l, ok := s.currentLease(); ok {
			held, leases = append(held, s), append(leases, l)
		}
	}
	for i, err := range r.leases.RenewAll(ctx, leases) {
		s := held[i]
		switch {
		case errors.Is(err, streams.ErrStaleEpoch):
			r.m.fenced.Add(ctx, 1)
			r.log.Warn("runner: lease lost", "table", s.id, "epoch", leases[i].Epoch, "err", err)
			s.cancel(errFenced)
		case err != nil && ctx.Err() == nil:
			r.log.Warn("runner: renew lease", "table", s.id, "err", err)
		}
	}
}

// followAssignment runs sync every poll interval and whenever the
// assignment rings this runner's bell (assign.Store.Watch: a table placed
// on it, moved to it or away), so a table moved here is opened at once
// rather than at the next poll. The bell is only a wake-up: sync reads the
// set either way, and the poll goes on for a bell that was lost.
func (r *Runner) followAssignment(ctx context.Context, loops *sync.WaitGroup) {
	wake := make(chan struct{}, 1)
	ring := func() {
		select {
		case wake <- struct{}{}:
		default: // a sync is due already; it reads the set after this bell
		}
	}
	loops.Add(2)
	go func() {
		defer loops.Done()
		if err := r.store.Watch(ctx, r.opt.ID, ring); err != nil {
			r.log.Warn("runner: watch the assignment (polling only)", "err", err)
		}
	}()
	go func() {
		defer loops.Done()
		t := time.NewTicker(r.opt.PollInterval)
		defer t.Stop()
		for {
			r.sync(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-wake:
				r.m.woken.Add(ctx, 1)
			}
		}
	}()
}

// sync opens the tables newly assigned to this runner and stops those
// assigned elsewhere.
func (r *Runner) sync(ctx context.Context) {
	if r.draining.Load() {
		return
	}
	ids, err := r.store.TablesOf(ctx, r.opt.ID)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("runner: read assignment", "err", err)
		}
		return
	}
	mine := make(map[string]bool, len(ids))
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		mine[id] = true
		if _, open := r.slots[id]; open || now.Before(r.notBefore[id]) {
			continue
		}
		// A table stops on its own cancel (shutdown, move, fence), never
		// with this poll's context.
		r.startLocked(context.WithoutCancel(ctx), id)
	}
	for id, s := range r.slots {
		if !mine[id] {
			s.cancel(errMoved)
		}
	}
	// A table's back-off belongs to its assignment here: once the table
	// is elsewhere, forget it. A partitioned runner's stale copy of a table
	// ends fenced (a failure, backed off); when the table is moved back
	// here later — the assigner took the lease over for this runner — it
	// must open at once, not after a back-off that grew with every fault.
	for id := range r.notBefore {
		if !mine[id] {
			delete(r.notBefore, id)
			delete(r.failures, id)
		}
	}
}

// startLocked starts table id's goroutine under parent. r.mu is held.
func (r *Runner) startLocked(parent context.Context, id string) {
	ctx, cancel := context.WithCancelCause(parent)
	s := &slot{id: id, cmd: streams.TableCommands(id), inbox: make(chan item, r.opt.Inbox), cancel: cancel, catchup: true}
	r.slots[id] = s
	r.byStream[s.cmd] = s
	r.actors.Add(1)
	go func() {
		defer r.actors.Done()
		err := r.runTable(ctx, s)
		r.stopped(context.WithoutCancel(ctx), s, err)
	}()
}

// stopped forgets a table whose goroutine ended and decides when it may be
// opened again (if it is still assigned here).
func (r *Runner) stopped(ctx context.Context, s *slot, err error) {
	s.mu.Lock()
	s.closed = true
	if s.inTailer {
		s.inTailer = false
		r.tailer.Remove(ctx, s.cmd)
	}
	s.mu.Unlock()
	if errors.Is(err, errFenced) || errors.Is(err, errMoved) {
		// A lease or an assignment that vanished, rather than passed to
		// another runner (which takes the lease first), may mean Redis
		// lost the table.
		if gone, gerr := r.gone(ctx, s.id); gerr == nil && gone {
			r.lost(ctx, s.id, "running", err)
			if l, ok := s.currentLease(); ok {
				if gerr := r.giveUp(ctx, s.id, l); gerr != nil {
					r.log.Warn("runner: give up a lost table", "table", s.id, "err", gerr)
				}
			}
			err = fmt.Errorf("%w: %w", errGone, err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.slots[s.id] == s {
		delete(r.slots, s.id)
		delete(r.byStream, s.cmd)
	}
	switch {
	case errors.Is(err, errShutdown), errors.Is(err, errMoved), errors.Is(err, errFinished), errors.Is(err, errAbandoned),
		errors.Is(err, errGone):
		delete(r.failures, s.id)
		delete(r.notBefore, s.id)
		r.log.Info("runner: table closed", "table", s.id, "why", err)
		return
	case errors.Is(err, errFenced), errors.Is(err, streams.ErrLeaseHeld):
		r.log.Warn("runner: table not ours (yet)", "table", s.id, "err", err)
	default:
		r.log.Error("runner: table stopped", "table", s.id, "err", err)
	}
	n := r.failures[s.id]
	r.failures[s.id] = n + 1
	r.notBefore[s.id] = time.Now().Add(min(r.opt.PollInterval<<min(n, 5), 5*time.Second))
}

// onCommand is the shared reader's handler: it hands a command stream
// entry to its table's inbox without waiting. A full inbox switches the
// table to catch-up: the reader stops following its stream and drops what
// it already read of it (the entries stay in Redis); the table reads its
// backlog itself when it has room, then follows again (see catchUp).
func (r *Runner) onCommand(ctx context.Context, m streams.Message) {
	r.mu.Lock()
	s := r.byStream[m.Stream]
	r.mu.Unlock()
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if s.catchup {
		if streams.CompareIDs(m.ID, s.lastDropped) > 0 {
			s.lastDropped = m.ID
		}
		return
	}
	select {
	case s.inbox <- item{msg: m, span: trace.SpanContextFromContext(ctx)}:
	default:
		s.catchup, s.lastDropped = true, m.ID
		r.m.inboxFull.Add(ctx, 1)
		if s.inTailer {
			s.inTailer = false
			r.tailer.Remove(ctx, s.cmd)
		}
	}
}

func (r *Runner) String() string { return fmt.Sprintf("runner %s", r.opt.ID) }

// gone reports whether Redis has lost table id: no lease, no snapshot, no
// event stream. A table taken over by another runner has a lease; one
// that finished keeps its log for the finished TTL, and its runner stops
// it before that.
func (r *Runner) gone(ctx context.Context, id string) (bool, error) {
	// One EXISTS: the keys share the table's Cluster slot.
	n, err := r.rdb.Exists(ctx, streams.TableLease(id), streams.TableEvents(id), streams.TableSnapshot(id)).Result()
	if err != nil {
		return false, err
	}
	return n == 0, nil
}

// lost logs and counts a table whose data Redis lost.
func (r *Runner) lost(ctx context.Context, id, stage string, why error) {
	r.m.lost.Add(ctx, 1, metric.WithAttributes(attribute.String("stage", stage)))
	r.log.Error("runner: the table's data is gone from Redis (restarted without persistence, flushed, or restored "+
		"from an older backup?); dropping the table", "table", id, "stage", stage, "err", why)
}

// giveUp stops a table for good: the lobby is told it is over (so that it
// leaves the list; the command id dedupes), whatever is left of its keys
// gets the finished tables' retention (commands sent to it meanwhile would
// otherwise stay for ever), the assignment forgets it and the lease is
// released.
//
// The command stream is made to exist (empty) before it gets the
// retention: a gateway that has not noticed the loss yet (it checks every
// 2 s) appends to it afterwards, and XADD keeps an existing key's TTL,
// where it would otherwise create the key with none, for ever.
func (r *Runner) giveUp(ctx context.Context, id string, l streams.Lease) error {
	pipe := r.rdb.Pipeline()
	pipe.XAdd(ctx, &redis.XAddArgs{Stream: streams.TableCommands(id), Values: []any{"gone", "1"}})
	pipe.XTrimMaxLen(ctx, streams.TableCommands(id), 0) // an empty stream stays a key
	for _, k := range tableKeys(id) {
		pipe.PExpire(ctx, k, r.opt.FinishedTTL)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("give up %s: %w", id, err)
	}
	data, err := proto.Marshal(&lobbyv1.LobbyCommand{
		CommandId: "table-runner:abandon:" + id,
		Command:   &lobbyv1.LobbyCommand_FinishTable{FinishTable: &lobbyv1.FinishTable{TableId: id}},
	})
	if err != nil {
		return fmt.Errorf("give up %s: %w", id, err)
	}
	release, err := releaseTableEntry(id)
	if err != nil {
		return fmt.Errorf("give up %s: %w", id, err)
	}
	// The lobby hears the table is over, the wallet gives every stake held
	// at it back (the game never ended, so nobody settles it).
	if _, err := r.pub.PublishBatch(ctx, []streams.Entry{{Stream: lobbyclient.CommandStream, Data: data}, release}); err != nil {
		return fmt.Errorf("give up %s: tell the lobby and the wallet: %w", id, err)
	}
	if _, err := r.store.Remove(ctx, id, r.opt.ID); err != nil {
		return fmt.Errorf("give up %s: forget the assignment: %w", id, err)
	}
	_ = r.leases.Release(ctx, l)
	return nil
}
