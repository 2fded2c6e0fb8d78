package assign

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
	"go.opentelemetry.io/otel/metric/noop"
	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/lobbyclient"
	"github.com/pulka/pulka/pkg/streams"
)

// AssignerOptions configure an Assigner. Zero values take the defaults.
type AssignerOptions struct {
	// ID names this process in the leader election and in the start
	// stream's consumer group. Required.
	ID string
	// LeaderTTL is the leader lease's TTL (default 3 s); it is renewed
	// every third of it. A dead leader is replaced within about this time.
	LeaderTTL time.Duration
	// Interval is how often the leader reconciles the assignment with the
	// membership (default 500 ms) at the longest: a pass also runs the
	// moment a live member's liveness runs out (Member.LiveFor), so a
	// heartbeat's expiry is acted on at once, whatever the interval.
	Interval time.Duration
	// TableLeaseTTL is the TTL of the table lease the leader takes over for
	// a table's new owner (default 10 s, as the runners' leases).
	TableLeaseTTL time.Duration
	// StartStream carries TableStarted messages (default
	// lobbyclient.TableStartStream).
	StartStream string
	// StartTTL bounds how long StartKey lives (default 7 days); the owner
	// shortens it when the game ends.
	StartTTL time.Duration
	// ConsumerOptions are extra options of the start stream's consumer
	// (the logger and meter provider are passed already).
	ConsumerOptions []streams.Option
	// OnMove, when set, is called after each move Reconcile has recorded
	// (the operator reports each migration as a Kubernetes Event and a
	// metric, with the reason its membership gives). It runs in the
	// reconcile loop: it must not block.
	OnMove        func(ctx context.Context, m Move)
	Logger        *slog.Logger
	MeterProvider metric.MeterProvider
}

func (o AssignerOptions) withDefaults() AssignerOptions {
	if o.LeaderTTL <= 0 {
		o.LeaderTTL = 3 * time.Second
	}
	if o.Interval <= 0 {
		o.Interval = 500 * time.Millisecond
	}
	if o.TableLeaseTTL <= 0 {
		o.TableLeaseTTL = 10 * time.Second
	}
	if o.StartStream == "" {
		o.StartStream = lobbyclient.TableStartStream
	}
	if o.StartTTL <= 0 {
		o.StartTTL = 7 * 24 * time.Hour
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.MeterProvider == nil {
		o.MeterProvider = noop.NewMeterProvider()
	}
	return o
}

// Assigner gives tables to runners. Several may run (one per runner
// process, or the operator); one of them is the leader, elected with a
// Redis lease (LeaderKey), and only the leader acts:
//
//   - it consumes the start stream (consumer group StartGroup) and places
//     each new table on the least-loaded live runner (PlaceNew);
//   - every Interval, and as soon as a live member's heartbeat or grace
//     runs out (Member.LiveFor), it runs Plan over the membership and the
//     assignment and moves the tables of dead or draining runners, first
//     taking over each table's lease for the new owner (a new epoch: the old
//     owner is fenced from that moment), then recording the move, which
//     rings the new owner's bell (RunnerBell) so it opens the table at once.
//
// Every assignment write is fenced by the leader lease in the same script,
// so a paused former leader cannot overwrite the current leader's moves.
type Assigner struct {
	rdb     redis.UniversalClient
	members Membership
	store   *Store
	opt     AssignerOptions
	leaders *streams.Leases
	tables  *streams.Leases
	log     *slog.Logger

	leader atomic.Bool
	// wake asks the leader for a pass now (Wake); one pending is enough.
	wake chan struct{}

	mu     sync.Mutex
	lease  streams.Lease
	owners map[string]string // the last reconcile's view plus this leader's writes

	moves  metric.Int64Counter
	placed metric.Int64Counter
}

// NewAssigner makes an assigner over a membership source and the store.
func NewAssigner(rdb redis.UniversalClient, members Membership, store *Store, opt AssignerOptions) (*Assigner, error) {
	opt = opt.withDefaults()
	if err := checkID("assigner", opt.ID); err != nil {
		return nil, err
	}
	a := &Assigner{
		rdb: rdb, members: members, store: store, opt: opt, log: opt.Logger,
		leaders: streams.NewLeases(rdb, opt.LeaderTTL), tables: streams.NewLeases(rdb, opt.TableLeaseTTL),
		wake: make(chan struct{}, 1),
	}
	m := opt.MeterProvider.Meter("github.com/pulka/pulka/pkg/assign")
	var err error
	if a.moves, err = m.Int64Counter("pulka.assign.moves",
		metric.WithDescription("Tables moved off a dead or draining runner.")); err != nil {
		return nil, err
	}
	if a.placed, err = m.Int64Counter("pulka.assign.placed",
		metric.WithDescription("New tables given an owner (outcome placed or unplaced).")); err != nil {
		return nil, err
	}
	if _, err = m.Int64ObservableGauge("pulka.assign.leader",
		metric.WithDescription("1 while this process is the assigner leader."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			v := int64(0)
			if a.leader.Load() {
				v = 1
			}
			o.Observe(v)
			return nil
		})); err != nil {
		return nil, err
	}
	return a, nil
}

// Wake asks for a pass now rather than at the next timed one: the
// membership changed in a way it can tell (the operator calls it on every
// event of the pool's pods: one turned NotReady, was deleted, became Ready).
// It never blocks; wake-ups that come while one is pending are one pass. An
// assigner that does not lead ignores it (its first pass as leader comes at
// once anyway).
func (a *Assigner) Wake() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// IsLeader reports whether this assigner currently leads.
func (a *Assigner) IsLeader() bool { return a.leader.Load() }

// Run takes part in the leader election until ctx is cancelled and, while
// leading, places new tables and reconciles. It releases the leadership on
// the way out so that another assigner takes over at once.
func (a *Assigner) Run(ctx context.Context) error {
	every := a.opt.LeaderTTL / 3
	var stopLeading func()
	defer func() {
		if stopLeading != nil {
			stopLeading()
		}
	}()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if a.leader.Load() {
			a.mu.Lock()
			l := a.lease
			a.mu.Unlock()
			if err := a.leaders.Renew(ctx, l); err != nil && ctx.Err() == nil {
				a.log.Warn("assign: lost the leadership", "id", a.opt.ID, "err", err)
				stopLeading()
				stopLeading = nil
			}
		} else if l, err := a.leaders.Acquire(ctx, LeaderKey, a.opt.ID); err == nil {
			a.log.Info("assign: leading", "id", a.opt.ID, "epoch", l.Epoch)
			stopLeading = a.lead(ctx, l)
		} else if !errors.Is(err, streams.ErrLeaseHeld) && ctx.Err() == nil {
			a.log.Warn("assign: leader election", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// lead starts the leader's work and returns the function that stops it
// (and gives the leadership up).
func (a *Assigner) lead(ctx context.Context, l streams.Lease) (stop func()) {
	a.mu.Lock()
	a.lease, a.owners = l, nil
	a.mu.Unlock()
	a.leader.Store(true)
	lctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	cons := streams.NewConsumer(a.rdb, StartGroup, a.opt.ID, a.handleStart,
		append([]streams.Option{streams.WithLogger(a.log), streams.WithMeterProvider(a.opt.MeterProvider)},
			a.opt.ConsumerOptions...)...)
	wg.Add(2)
	go func() {
		defer wg.Done()
		for lctx.Err() == nil {
			if err := cons.Add(lctx, a.opt.StartStream); err == nil {
				break
			}
			sleep(lctx, a.opt.Interval)
		}
		_ = cons.Run(lctx)
	}()
	go func() {
		defer wg.Done()
		t := time.NewTimer(0)
		defer t.Stop()
		for {
			select {
			case <-lctx.Done():
				return
			case <-t.C:
			case <-a.wake:
				// t.Reset below drops the timer's pending tick (Go 1.23
				// timers), so a wake-up costs no second pass.
			}
			_, next, err := a.reconcile(lctx)
			if err != nil && lctx.Err() == nil {
				a.log.Warn("assign: reconcile", "err", err)
			}
			t.Reset(a.nextPass(next))
		}
	}()
	return func() {
		a.leader.Store(false)
		cancel()
		wg.Wait()
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer rcancel()
		_ = a.leaders.Release(rctx, l)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// handleStart places one TableStarted. A malformed message is an error, so
// it ends in the dead-letter stream rather than vanishing.
func (a *Assigner) handleStart(ctx context.Context, m streams.Message) error {
	ts := &lobbyv1.TableStarted{}
	if err := proto.Unmarshal(m.Data, ts); err != nil {
		return fmt.Errorf("assign: start %s: %w", m.ID, err)
	}
	return a.Place(ctx, ts, m.Data)
}

// Place records a new table's start and gives it an owner: the
// least-loaded live runner, or none for now (the next reconcile places it
// when a runner has room). A table placed already keeps its owner, so a
// redelivered start is harmless. data is ts encoded (nil: encode it).
func (a *Assigner) Place(ctx context.Context, ts *lobbyv1.TableStarted, data []byte) error {
	id := ts.GetTableId()
	if err := checkID("table", id); err != nil {
		return err
	}
	if data == nil {
		var err error
		if data, err = proto.Marshal(ts); err != nil {
			return fmt.Errorf("assign: start of %s: %w", id, err)
		}
	}
	// The start goes in first: an owner must find it when it opens the table.
	if err := a.rdb.SetNX(ctx, StartKey(id), data, a.opt.StartTTL).Err(); err != nil {
		return fmt.Errorf("assign: store start of %s: %w", id, err)
	}
	members, err := a.members.Members(ctx)
	if err != nil {
		return err
	}
	owners, l, err := a.view(ctx)
	if err != nil {
		return err
	}
	if _, ok := owners[id]; ok {
		return nil
	}
	to, ok := PlaceNew(members, owners)
	added, err := a.store.Add(ctx, l, id, to)
	if err != nil {
		return err
	}
	outcome := "unplaced"
	if ok {
		outcome = "placed"
	}
	if added {
		a.remember(id, to)
		a.placed.Add(ctx, 1, metric.WithAttributes(attribute.String("outcome", outcome)))
		a.log.Info("assign: new table", "table", id, "runner", to)
	}
	return nil
}

// view returns the leader's copy of the assignment (loading it when there
// is none) and its lease.
func (a *Assigner) view(ctx context.Context) (map[string]string, streams.Lease, error) {
	a.mu.Lock()
	owners, l := a.owners, a.lease
	a.mu.Unlock()
	if owners != nil {
		return owners, l, nil
	}
	owners, err := a.store.Owners(ctx)
	if err != nil {
		return nil, l, err
	}
	a.mu.Lock()
	a.owners = owners
	a.mu.Unlock()
	return owners, l, nil
}

// remember applies this leader's own write to its copy. The copy is
// replaced by every reconcile, so finished tables the runners removed are
// forgotten within one interval.
func (a *Assigner) remember(table, runner string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.owners == nil {
		return
	}
	next := make(map[string]string, len(a.owners)+1)
	for k, v := range a.owners {
		next[k] = v
	}
	next[table] = runner
	a.owners = next
}

// expirySlack is added to a member's LiveFor when the next pass is timed by
// it: the deadlines are whole milliseconds.
const expirySlack = 2 * time.Millisecond

// nextPass is how long the leader waits before its next pass: the interval,
// or less when a member's liveness runs out sooner (next is when, zero for
// none). A partitioned runner's heartbeat thus moves its tables at the
// moment it expires, not up to an interval later; a runner that beats in
// time only costs a pass that finds nothing to move. Every expiry is caught
// so when each member is seen live by a pass before its first deadline: a
// pass comes at least every interval, which is shorter than the heartbeat
// TTL with the defaults (500 ms, 3 s), and at once on Wake (the operator
// wakes it when a runner's pod turns Ready, which its probe does only after
// a heartbeat).
func (a *Assigner) nextPass(next time.Time) time.Duration {
	if next.IsZero() {
		return a.opt.Interval
	}
	return max(0, min(a.opt.Interval, time.Until(next)))
}

// Reconcile runs one pass: members and assignment in, Plan, and each move
// applied (lease takeover for the new owner, then the fenced record). It
// returns how many tables moved.
func (a *Assigner) Reconcile(ctx context.Context) (int, error) {
	n, _, err := a.reconcile(ctx)
	return n, err
}

// reconcile is Reconcile, also returning when the first live member's
// liveness runs out as this pass saw it (NextExpiry, from the moment the
// membership answered; zero when none has a known end).
func (a *Assigner) reconcile(ctx context.Context) (int, time.Time, error) {
	members, err := a.members.Members(ctx)
	if err != nil {
		return 0, time.Time{}, err
	}
	var next time.Time
	if d, ok := NextExpiry(members); ok {
		next = time.Now().Add(d + expirySlack)
	}
	owners, err := a.store.Owners(ctx)
	if err != nil {
		return 0, next, err
	}
	a.mu.Lock()
	a.owners = owners
	l := a.lease
	a.mu.Unlock()
	moves, unplaced := Plan(members, owners)
	if len(unplaced) > 0 {
		a.log.Warn("assign: tables without a runner with room", "count", len(unplaced))
	}
	n := 0
	var errs []error
	for _, m := range moves {
		if m.From != "" {
			// Fence the old owner before anything else: from here on its
			// appends fail, even if it is only partitioned, not dead.
			if _, err := a.tables.Takeover(ctx, streams.TableLease(m.Table), m.To); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		ok, err := a.store.Move(ctx, l, m.Table, m.From, m.To)
		if err != nil {
			errs = append(errs, err)
			if errors.Is(err, streams.ErrStaleEpoch) {
				break
			}
			continue
		}
		if ok {
			n++
			a.remember(m.Table, m.To)
			a.moves.Add(ctx, 1)
			a.log.Info("assign: moved table", "table", m.Table, "from", m.From, "to", m.To)
			if a.opt.OnMove != nil {
				a.opt.OnMove(ctx, m)
			}
		}
	}
	return n, next, errors.Join(errs...)
}
