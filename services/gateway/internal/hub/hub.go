package hub

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/periodic"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/visibility"
)

// Errors of Join.
var (
	// ErrSlow means the client could not take the replay and the events
	// that arrived meanwhile: it is too slow to follow the table.
	ErrSlow = errors.New("hub: client too slow for the replay")
	// ErrClosed means the hub is shutting down.
	ErrClosed = errors.New("hub: closed")
	// ErrTableGone means the table's event stream, which this hub saw,
	// no longer exists: Redis lost it (a restart without persistence,
	// FLUSHALL), or the finished game's retention ran out. The error also
	// wraps a *wire.Error with wire.CodeTableGone.
	ErrTableGone = errors.New("hub: the table no longer exists")
	// ErrAhead means the client's last event id lies past every event of
	// the table: no client was ever sent it. Taken at its word, it would
	// hold the seat the player had at that id for as long as the table
	// has not reached it (Subscription.Seat), and deliver nothing. The
	// error also wraps a *wire.Error with wire.CodeInvalid.
	ErrAhead = errors.New("hub: last event id ahead of the table")
)

// Defaults.
const (
	DefaultPageSize   = 500
	DefaultPendingMax = 4096
	// DefaultGoneCheck is how often the hub checks that the event streams
	// of its tables still exist.
	DefaultGoneCheck = 2 * time.Second
)

// maxGone bounds the tables remembered as gone (for joins that come after).
const maxGone = 10000

// SheetStream is the stream of a table's score-sheet updates (SheetUpdate),
// written by scoring (pkg/scoringclient owns the name).
func SheetStream(tableID string) string { return scoringclient.SheetStream(tableID) }

// Sink is one client's outbound queue.
type Sink interface {
	// Send queues a frame without blocking. It returns false when the queue
	// is full; the sink's owner then disconnects the client, and the hub
	// carries on with everybody else.
	Send(frame *wire.Frame) bool
}

// WaitSink is a Sink that can also wait for room in its queue. A replay
// uses it: the replay runs on the joining connection's own goroutine, so it
// may wait for its own client (live delivery never waits).
type WaitSink interface {
	Sink
	SendWait(ctx context.Context, frame *wire.Frame) bool
}

// TracedSink is a Sink that can put the write of a frame into a trace. The
// hub uses it for a live frame whose fan-out is recorded (a sampled trace),
// so that a move's trace ends at the write to each client; every other frame
// goes through Send and costs nothing more.
type TracedSink interface {
	Sink
	// SendTraced is Send for a frame whose write belongs to the span sc.
	SendTraced(frame *wire.Frame, sc trace.SpanContext) bool
}

// send queues frame on s, in the trace of parent when parent is recorded.
func send(s Sink, frame *wire.Frame, parent trace.Span) bool {
	if parent != nil {
		if ts, ok := s.(TracedSink); ok {
			return ts.SendTraced(frame, parent.SpanContext())
		}
	}
	return s.Send(frame)
}

// recorded is the span of ctx when it is recorded, or nil: most spans are
// not sampled, and their fan-out starts no span per client.
func recorded(ctx context.Context) trace.Span {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		return span
	}
	return nil
}

// Hub shares one reader per table among all the connections of this gateway
// instance that watch the table, and gives each connection the events its
// player may see.
type Hub struct {
	rdb        redis.UniversalClient
	tailer     *streams.Tailer
	log        *slog.Logger
	pageSize   int64
	pendingMax int

	// bg is for the hub's own housekeeping (waking the tailer when a table
	// is dropped), which must happen whatever the caller's context.
	bg context.Context

	mu       sync.Mutex
	closed   bool
	feeds    map[string]*feed // by table id
	byStream map[string]*feed // by event or sheet stream

	goneEvery time.Duration
	goneSeed  maphash.Seed        // checkGone's parts
	gone      map[string]struct{} // tables found gone, guarded by mu
	cluster   bool                // rdb is a Redis Cluster client

	sent     metric.Int64Counter
	withheld metric.Int64Counter
	slow     metric.Int64Counter
	notices  metric.Int64Counter
	lost     metric.Int64Counter
}

// Options tune a Hub.
type Options struct {
	Logger     *slog.Logger
	Meter      metric.Meter
	PageSize   int64 // entries per replay read
	PendingMax int   // live events held for one client during its replay
	// TailerOptions are passed to the streams.Tailer (e.g. WithSweepInterval).
	TailerOptions []streams.Option
	// GoneCheck is how often the event streams of the followed tables are
	// checked to still exist (DefaultGoneCheck; negative: never). A table
	// whose stream vanished gets its watchers an error table_gone and an
	// unjoined instead of silence.
	GoneCheck time.Duration
}

// New makes a hub; Run it to follow the streams.
func New(rdb redis.UniversalClient, o Options) *Hub {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Meter == nil {
		o.Meter = noop.NewMeterProvider().Meter("")
	}
	if o.PageSize <= 0 {
		o.PageSize = DefaultPageSize
	}
	if o.PendingMax <= 0 {
		o.PendingMax = DefaultPendingMax
	}
	if o.GoneCheck == 0 {
		o.GoneCheck = DefaultGoneCheck
	}
	h := &Hub{rdb: rdb, log: o.Logger, bg: context.Background(), pageSize: o.PageSize, pendingMax: o.PendingMax,
		feeds: map[string]*feed{}, byStream: map[string]*feed{}, goneEvery: o.GoneCheck, goneSeed: maphash.MakeSeed(), gone: map[string]struct{}{}}
	_, h.cluster = rdb.(*redis.ClusterClient)
	h.sent, _ = o.Meter.Int64Counter("pulka_gateway_events_sent", metric.WithDescription("table events queued to clients"))
	h.withheld, _ = o.Meter.Int64Counter("pulka_gateway_events_withheld", metric.WithDescription("table events a client's visibility did not allow"))
	h.slow, _ = o.Meter.Int64Counter("pulka_gateway_replay_overflows", metric.WithDescription("joins refused because the client could not keep up with its replay"))
	h.notices, _ = o.Meter.Int64Counter("pulka_gateway_refusals_sent", metric.WithDescription("refusals of commands (notices on the tables' bells) queued to their senders' connections"))
	h.lost, _ = o.Meter.Int64Counter("pulka_gateway_tables_gone", metric.WithDescription("followed tables whose event stream vanished (Redis lost them, or their retention ran out): their watchers got table_gone"))
	_, _ = o.Meter.Int64ObservableGauge("pulka_gateway_tables_followed", metric.WithDescription("tables this instance reads"),
		metric.WithInt64Callback(func(_ context.Context, obs metric.Int64Observer) error {
			h.mu.Lock()
			defer h.mu.Unlock()
			obs.Observe(int64(len(h.feeds)))
			return nil
		}))
	topts := append([]streams.Option{streams.WithNotices(h.onNotice)}, o.TailerOptions...)
	h.tailer = streams.NewTailer(rdb, h.onMessage, topts...)
	return h
}

// Run follows the streams of every joined table until ctx is cancelled.
func (h *Hub) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	if h.goneEvery > 0 {
		wg.Add(1)
		go func() { defer wg.Done(); h.watchGone(ctx) }()
	}
	err := h.tailer.Run(ctx)
	wg.Wait()
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	return err
}

// Tables is the number of tables followed.
func (h *Hub) Tables() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.feeds)
}

// checkpoint is the seating after an event that changed it.
type checkpoint struct {
	id    string
	seats visibility.Seats
}

// feed is one table followed by this instance.
type feed struct {
	table       string
	evStream    string
	sheetStream string
	refs        int // guarded by Hub.mu
	ready       chan struct{}
	err         error // set before ready is closed

	mu          sync.Mutex
	pos         string // last event folded ("0-0" before any)
	seats       visibility.Seats
	checkpoints []checkpoint        // ascending ids
	members     map[string]struct{} // every player who has held a seat here
	subs        map[*Subscription]struct{}
	gone        bool // the table's stream vanished; its watchers were told
}

// seatsAt is the seating after event id (the table's history up to and
// including it). id must not be after f.pos.
func (f *feed) seatsAt(id string) visibility.Seats {
	i := sort.Search(len(f.checkpoints), func(i int) bool { return streams.CompareIDs(f.checkpoints[i].id, id) > 0 })
	if i == 0 {
		return visibility.Seats{}
	}
	return f.checkpoints[i-1].seats
}

// fold applies one event of the stream to the feed's seating.
func (f *feed) fold(id string, ev *tablev1.Event) {
	f.pos = id
	if ev != nil && f.seats.Apply(ev) {
		f.checkpoints = append(f.checkpoints, checkpoint{id: id, seats: f.seats})
		for _, p := range f.seats {
			if p != "" {
				f.members[p] = struct{}{}
			}
		}
	}
}

// acquire returns the table's feed, starting it (reading the table's
// history for its seating) if this is the first local watcher.
func (h *Hub) acquire(ctx context.Context, table string) (*feed, error) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrClosed
	}
	f, ok := h.feeds[table]
	if !ok {
		f = &feed{table: table, evStream: streams.TableEvents(table), sheetStream: SheetStream(table),
			ready: make(chan struct{}), pos: "0-0", subs: map[*Subscription]struct{}{}, members: map[string]struct{}{}}
		h.feeds[table] = f
		h.byStream[f.evStream], h.byStream[f.sheetStream] = f, f
	}
	f.refs++
	h.mu.Unlock()
	if !ok {
		if f.err = h.bootstrap(ctx, f); f.err != nil {
			h.forget(f)
		}
		close(f.ready)
	}
	select {
	case <-f.ready:
	case <-ctx.Done():
		h.release(f)
		return nil, ctx.Err()
	}
	if f.err != nil {
		h.release(f)
		return nil, f.err
	}
	return f, nil
}

// bootstrap folds the table's whole event stream into the feed's seating,
// then hands the streams to the tailer from exactly where it stopped.
func (h *Hub) bootstrap(ctx context.Context, f *feed) error {
	after := "0-0"
	for {
		xs, err := h.rdb.XRangeN(ctx, f.evStream, "("+after, "+", h.pageSize).Result()
		if err != nil {
			return fmt.Errorf("hub: read %s: %w", f.evStream, err)
		}
		f.mu.Lock()
		for _, x := range xs {
			f.fold(x.ID, h.eventHead(f.evStream, x.ID, xdata(x)))
		}
		f.mu.Unlock()
		if len(xs) > 0 {
			after = xs[len(xs)-1].ID
		}
		if int64(len(xs)) < h.pageSize {
			break
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.tailer.Add(ctx, f.evStream, after); err != nil {
		return fmt.Errorf("hub: follow %s: %w", f.evStream, err)
	}
	if err := h.tailer.Add(ctx, f.sheetStream, "$"); err != nil {
		return fmt.Errorf("hub: follow %s: %w", f.sheetStream, err)
	}
	return nil
}

// release drops one reference to the feed and stops following the table
// when it was the last.
func (h *Hub) release(f *feed) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f.refs--
	if f.refs > 0 || h.feeds[f.table] != f {
		return
	}
	h.forgetLocked(f)
}

// forget stops following a feed that failed to start, so the next join
// tries again instead of getting the same error.
func (h *Hub) forget(f *feed) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.feeds[f.table] == f {
		h.forgetLocked(f)
	}
}

func (h *Hub) forgetLocked(f *feed) {
	delete(h.feeds, f.table)
	delete(h.byStream, f.evStream)
	delete(h.byStream, f.sheetStream)
	// Under h.mu, so a new feed of the same table cannot Add the streams
	// before these Removes.
	h.tailer.Remove(h.bg, f.evStream)
	h.tailer.Remove(h.bg, f.sheetStream)
}

func xdata(x redis.XMessage) []byte {
	s, _ := x.Values[streams.FieldData].(string)
	return []byte(s)
}

// eventHead is what the seating needs of an event entry (wire.EventHead:
// whole only when it moves a seat). A malformed entry is logged and nil
// (folded as nothing: its position still counts).
func (h *Hub) eventHead(stream, id string, data []byte) *tablev1.Event {
	ev, err := wire.EventHead(data, visibility.Folds)
	if err != nil {
		h.log.Error("hub: undecodable table event", "stream", stream, "id", id, "err", err)
		return nil
	}
	return ev
}

// everyKind has wire.EventFrameOf decode an event whole, whatever its kind
// (a notice's, rare: the hub reads which kind it is).
func everyKind(protowire.Number) bool { return true }

// onMessage is the tailer's handler: one new entry of a followed stream.
func (h *Hub) onMessage(ctx context.Context, m streams.Message) {
	h.mu.Lock()
	f := h.byStream[m.Stream]
	h.mu.Unlock()
	if f == nil {
		return
	}
	if m.Stream == f.sheetStream {
		h.onSheet(ctx, f, m)
		return
	}
	it, ok := h.entry(f.table, m)
	f.mu.Lock()
	defer f.mu.Unlock()
	if streams.CompareIDs(m.ID, f.pos) <= 0 {
		return // already folded (cannot happen with one tailer; cheap to guard)
	}
	if !ok {
		f.fold(m.ID, nil)
		return
	}
	f.fold(m.ID, it.ev)
	var sent, withheld int64
	span := recorded(ctx) // the tailer's span of this entry, in the event's trace
	for s := range f.subs {
		switch {
		case s.pending:
			if len(s.buf) >= h.pendingMax {
				s.overflow = true
				continue
			}
			s.buf = append(s.buf, it)
		case streams.CompareIDs(m.ID, s.after) <= 0:
			// The client's replay already covered it.
		default:
			if frame := it.frameFor(visibility.Viewer{PlayerID: s.player, Seat: f.seats.SeatOf(s.player)}); frame != nil {
				send(s.sink, frame, span)
				sent++
			} else {
				withheld++
			}
		}
	}
	h.sent.Add(ctx, sent)
	h.withheld.Add(ctx, withheld)
}

// onSheet sends a score-sheet update to every watcher: the sheet is public.
func (h *Hub) onSheet(ctx context.Context, f *feed, m streams.Message) {
	frame, ok := h.sheetFrame(f.table, m.ID, m.Data)
	if !ok {
		return
	}
	span := recorded(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	for s := range f.subs {
		send(s.sink, frame, span)
	}
}

func (h *Hub) sheetFrame(table, id string, data []byte) (*wire.Frame, bool) {
	u := &scoringv1.SheetUpdate{}
	if err := proto.Unmarshal(data, u); err != nil {
		h.log.Error("hub: undecodable sheet update", "table", table, "id", id, "err", err)
		return nil, false
	}
	frame := wire.NewFrame(wire.Sheet(table, id, u))
	if _, err := frame.Bytes(wire.Binary); err != nil {
		h.log.Error("hub: encode sheet", "table", table, "id", id, "err", err)
		return nil, false
	}
	return frame, true
}

// entry frames one entry m of table's event stream; false when it cannot
// be read (logged: it is folded as nothing, its position still counts).
// The event is not decoded, only its visibility and, when it moves a seat,
// the whole of it (wire.EventFrameOf): its frame is its own bytes. A
// seat's legal moves packed into the entry are neither decoded nor encoded
// again either: only their seat is read, and their bytes spliced into that
// seat's copy of the frame (wire.WithLegal).
func (h *Hub) entry(table string, m streams.Message) (item, bool) {
	frame, ev, err := wire.EventFrameOf(table, m.ID, m.Data, visibility.Folds)
	if err == nil {
		it := item{id: m.ID, ev: ev, frame: frame}
		raw, packed := m.Header[wire.FieldLegal]
		if !packed {
			return it, true
		}
		if it.legal, err = legalVisibility(ev, raw); err == nil {
			if it.seatFrame, err = it.frame.WithLegal([]byte(raw)); err == nil {
				return it, true
			}
		}
	}
	h.log.Error("hub: undecodable table event", "stream", m.Stream, "id", m.ID, "err", err)
	return item{}, false
}

// legalVisibility is who may see the legal moves raw packed into host's
// entry: their seat alone (wire.PackedSeat refuses moves packed into an
// event that is not public).
func legalVisibility(host *tablev1.Event, raw string) (*tablev1.Visibility, error) {
	seat, err := wire.PackedSeat(host, []byte(raw))
	if err != nil {
		return nil, err
	}
	return &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_SEAT, Seat: seat}, nil
}

// item is one entry of a table's event stream, framed (held for a client
// whose replay is running, or read by a replay).
type item struct {
	id string
	// ev is the event's head (wire.EventHead): its visibility, and all of
	// it only when it moves a seat.
	ev    *tablev1.Event
	frame *wire.Frame
	// legal is who may see the legal moves the entry packs after ev (nil
	// when none: wire.FieldLegal), and seatFrame ev's frame with them: what
	// that seat's player gets instead of frame.
	legal     *tablev1.Visibility
	seatFrame *wire.Frame
}

// frameFor is the frame of the entry viewer v gets: nil when v may not see
// its event, the frame with the packed legal moves when they are v's.
func (it *item) frameFor(v visibility.Viewer) *wire.Frame {
	if !visibility.Allows(it.ev.GetVisibility(), v) {
		return nil
	}
	if it.legal != nil && visibility.Allows(it.legal, v) {
		return it.seatFrame
	}
	return it.frame
}

// onNotice is the tailer's notice handler: a table's answer to one
// player's refused command, rung on the event stream's bell and never
// appended (docs/table-runner.md, Refusals). It goes to the connections of
// this instance whose player the refusal names, as an event frame without
// an id (it is not part of the history: nothing to resume after, nothing
// replayed). A connection not following the table here at that moment does
// not get it.
func (h *Hub) onNotice(ctx context.Context, stream string, data []byte) {
	h.mu.Lock()
	f := h.byStream[stream]
	h.mu.Unlock()
	if f == nil || stream != f.evStream {
		return
	}
	frame, ev, err := wire.EventFrameOf(f.table, "", data, everyKind)
	if err != nil {
		h.log.Error("hub: undecodable table event", "stream", stream, "id", "notice", "err", err)
		return
	}
	if ev.GetMoveRejected() == nil {
		return // only refusals travel this way
	}
	var sent int64
	f.mu.Lock()
	for s := range f.subs {
		if visibility.Allows(ev.GetVisibility(), visibility.Viewer{PlayerID: s.player, Seat: f.seats.SeatOf(s.player)}) {
			s.sink.Send(frame)
			sent++
		}
	}
	f.mu.Unlock()
	h.notices.Add(ctx, sent)
}

// watchGone checks, every goneEvery, that the event stream of every
// followed table that has had events still exists. Nothing else would tell:
// a stream that vanished (Redis restarted without persistence, FLUSHALL)
// reads as a table where nothing happens, and its players would wait for
// ever. It checks a part of the tables at a time (goneParts of them, one
// every goneEvery/goneParts), each table in the same part every time: all
// at once, a gateway's thousand tables were a thousand commands in one
// burst every two seconds, which every move's commands queued behind.
func (h *Hub) watchGone(ctx context.Context) {
	part := 0
	periodic.Every(ctx, max(h.goneEvery/goneParts, time.Millisecond), func(ctx context.Context) {
		h.checkGone(ctx, part)
		part = (part + 1) % goneParts
	})
}

// goneParts is how many parts watchGone checks the tables in.
const goneParts = 16

// checkGone is one pass of watchGone over the tables of part k: their
// streams' existence asked in one round trip.
func (h *Hub) checkGone(ctx context.Context, k int) {
	h.mu.Lock()
	var feeds []*feed
	for table, f := range h.feeds {
		if int(maphash.String(h.goneSeed, table)%goneParts) == k {
			feeds = append(feeds, f)
		}
	}
	h.mu.Unlock()
	seen := feeds[:0]
	for _, f := range feeds {
		select {
		case <-f.ready:
		default:
			continue // still starting
		}
		f.mu.Lock()
		started := f.err == nil && f.pos != "0-0"
		f.mu.Unlock()
		if started {
			seen = append(seen, f)
		}
	}
	if len(seen) == 0 {
		return
	}
	if !h.cluster {
		// One EXISTS of every key answers the usual case, all there, in
		// one command (on a Cluster the keys are in different slots).
		keys := make([]string, len(seen))
		for i, f := range seen {
			keys[i] = f.evStream
		}
		n, err := h.rdb.Exists(ctx, keys...).Result()
		if err != nil || n == int64(len(keys)) {
			return // all there, or Redis away: look again next time
		}
	}
	pipe := h.rdb.Pipeline()
	cmds := make([]*redis.IntCmd, len(seen))
	for i, f := range seen {
		cmds[i] = pipe.Exists(ctx, f.evStream)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return // Redis away: look again next time
	}
	for i, f := range seen {
		if cmds[i].Val() == 0 {
			h.tableGone(ctx, f)
		}
	}
}

// tableGone tells every watcher of f that its table no longer exists — an
// error table_gone naming it, then an unjoined — and stops following it.
// The connections' subscriptions end (Seat is NoSeat, Member false, so no
// command or presence report recreates the table's keys); a later join of
// the table is refused with ErrTableGone while its stream stays absent.
func (h *Hub) tableGone(ctx context.Context, f *feed) {
	h.mu.Lock()
	if h.feeds[f.table] == f {
		h.forgetLocked(f)
	}
	if len(h.gone) >= maxGone {
		clear(h.gone) // a bound, not a cache policy: a join re-checks Redis anyway
	}
	h.gone[f.table] = struct{}{}
	h.mu.Unlock()
	errFrame := wire.NewFrame(wire.TableError(f.table, wire.CodeTableGone, "this table no longer exists: back to the lobby"))
	unjoined := wire.NewFrame(wire.Unjoined(f.table, ""))
	f.mu.Lock()
	f.gone = true
	subs := f.subs
	f.subs = map[*Subscription]struct{}{}
	for s := range subs {
		s.closed, s.buf = true, nil
		s.sink.Send(errFrame)
		s.sink.Send(unjoined)
	}
	f.mu.Unlock()
	h.lost.Add(ctx, 1)
	h.log.Warn("hub: the table's event stream is gone (Redis lost its data, or the finished game expired); its watchers were sent table_gone",
		"table", f.table, "watchers", len(subs))
}

// checkJoinable refuses a join of a table this hub found gone, while its
// event stream is still absent.
func (h *Hub) checkJoinable(ctx context.Context, table string) error {
	h.mu.Lock()
	_, gone := h.gone[table]
	h.mu.Unlock()
	if !gone {
		return nil
	}
	n, err := h.rdb.Exists(ctx, streams.TableEvents(table)).Result()
	if err != nil {
		return fmt.Errorf("hub: join %s: %w", table, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %w", ErrTableGone, wire.Errorf(wire.CodeTableGone, "table %s no longer exists", table))
	}
	h.mu.Lock()
	delete(h.gone, table)
	h.mu.Unlock()
	return nil
}
