package streams_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
)

func publishN(t *testing.T, pub *streams.Publisher, stream string, from, to int) []string {
	t.Helper()
	var ids []string
	for i := from; i < to; i++ {
		id, err := pub.Publish(context.Background(), streams.Entry{Stream: stream, Data: []byte(strconv.Itoa(i))})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

func datas(ms []streams.Message) string {
	s := ""
	for i, m := range ms {
		if i > 0 {
			s += ","
		}
		s += string(m.Data)
	}
	return s
}

func TestReadAfter_ReturnsEverythingAfterIDExclusive(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	stream := streams.TableEvents("r")
	ids := publishN(t, streams.NewPublisher(rdb), stream, 0, 5)
	cases := []struct {
		after string
		count int64
		want  string
	}{
		{"0", 100, "0,1,2,3,4"},
		{"", 2, "0,1"},
		{ids[1], 100, "2,3,4"},
		{ids[4], 100, ""},
	}
	for _, tc := range cases {
		got, err := streams.ReadAfter(ctx, rdb, stream, tc.after, tc.count)
		if err != nil {
			t.Fatal(err)
		}
		if datas(got) != tc.want {
			t.Errorf("after %q: %q, want %q", tc.after, datas(got), tc.want)
		}
	}
	none, err := streams.ReadAfter(ctx, rdb, streams.TableEvents("missing"), "0", 10)
	if err != nil || len(none) != 0 {
		t.Fatalf("missing stream: %v %v", none, err)
	}
}

func TestReadAfter_TrimmedHistoryIsAnErrorNotAHole(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	stream := streams.TableEvents("trim")
	ids := publishN(t, streams.NewPublisher(rdb, streams.WithMaxLen(0)), stream, 0, 10)
	if err := rdb.XTrimMaxLen(ctx, stream, 5).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := streams.ReadAfter(ctx, rdb, stream, ids[2], 100); !errors.Is(err, streams.ErrTrimmed) {
		t.Fatalf("after a trimmed ID: %v, want ErrTrimmed", err)
	}
	if _, err := streams.ReadAfter(ctx, rdb, stream, "0", 100); !errors.Is(err, streams.ErrTrimmed) {
		t.Fatalf("full replay of a trimmed stream: %v, want ErrTrimmed", err)
	}
	got, err := streams.ReadAfter(ctx, rdb, stream, ids[6], 100)
	if err != nil || datas(got) != "7,8,9" {
		t.Fatalf("after a kept ID: %q %v", datas(got), err)
	}
}

func TestTailer_FollowsManyStreamsFromTheirPositions(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	pub := streams.NewPublisher(rdb)
	a, b, c := streams.TableEvents("a"), streams.TableEvents("b"), streams.TableEvents("c")
	idsA := publishN(t, pub, a, 0, 3)
	publishN(t, pub, b, 0, 3)

	var mu sync.Mutex
	got := map[string][]streams.Message{}
	tl := streams.NewTailer(rdb, func(ctx context.Context, m streams.Message) {
		mu.Lock()
		got[m.Stream] = append(got[m.Stream], m)
		mu.Unlock()
	}, streams.WithBatchKeys(2), streams.WithBlock(5*time.Second))
	if err := tl.Add(ctx, a, idsA[0]); err != nil { // a reconnecting client saw 0
		t.Fatal(err)
	}
	if err := tl.Add(ctx, b, "$"); err != nil { // only new entries
		t.Fatal(err)
	}
	stop := runConsumer(t, tl)
	publishN(t, pub, a, 3, 5)
	publishN(t, pub, b, 3, 4)
	// c is added at run time, in a second batch (batch size 2).
	if err := tl.Add(ctx, c, "0"); err != nil {
		t.Fatal(err)
	}
	publishN(t, pub, c, 0, 2)
	snapshot := func(s string) string { mu.Lock(); defer mu.Unlock(); return datas(got[s]) }
	eventually(t, 3*time.Second, "all streams", func() bool {
		return snapshot(a) == "1,2,3,4" && snapshot(b) == "3" && snapshot(c) == "0,1"
	})
	if pos, ok := tl.Position(a); !ok || pos != lastID(t, rdb, a) {
		t.Errorf("Position(a) = %s %v, want the last delivered ID", pos, ok)
	}
	tl.Remove(ctx, a)
	if _, ok := tl.Position(a); ok {
		t.Errorf("removed stream still has a position")
	}
	time.Sleep(100 * time.Millisecond)
	publishN(t, pub, a, 5, 6)
	publishN(t, pub, c, 2, 3)
	eventually(t, 3*time.Second, "c after removal of a", func() bool { return snapshot(c) == "0,1,2" })
	if snapshot(a) != "1,2,3,4" {
		t.Errorf("removed stream still delivered: %s", snapshot(a))
	}
	start := time.Now()
	stop()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("tailer shutdown took %s with 5s blocking reads", d)
	}
}

func lastID(t *testing.T, rdb *redis.Client, stream string) string {
	t.Helper()
	m, err := rdb.XRevRangeN(context.Background(), stream, "+", "-", 1).Result()
	if err != nil || len(m) != 1 {
		t.Fatalf("last entry of %s: %v", stream, err)
	}
	return m[0].ID
}

// A table paused and resumed at an earlier position while the reader is still
// delivering an old batch of its stream: the old batch must stop, and the
// stream is read again from the position it was re-added at. Before the
// compare-and-set advance, the old batch moved the new position past entries
// the resumed reader never saw.
func TestTailer_ReAddAtEarlierPositionDuringDeliveryLosesNothing(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	pub := streams.NewPublisher(rdb)
	s := streams.TableEvents("pause")
	ids := publishN(t, pub, s, 0, 6)

	var mu sync.Mutex
	var got []string
	resumed := false
	var afterResume []string
	blocked, release := make(chan struct{}), make(chan struct{})
	tl := streams.NewTailer(rdb, func(ctx context.Context, m streams.Message) {
		if string(m.Data) == "2" && !resumed {
			close(blocked)
			<-release
		}
		mu.Lock()
		got = append(got, string(m.Data))
		if resumed {
			afterResume = append(afterResume, string(m.Data))
		}
		mu.Unlock()
	}, streams.WithBlock(time.Second), streams.WithCount(100))
	if err := tl.Add(ctx, s, "0"); err != nil {
		t.Fatal(err)
	}
	stop := runConsumer(t, tl)
	defer stop()
	<-blocked
	// The consumer pauses the stream and resumes it after entry 0, the last
	// one it had applied (it dropped 1 while paused, as the table-runner does).
	tl.Remove(ctx, s)
	mu.Lock()
	resumed = true
	mu.Unlock()
	if err := tl.Add(ctx, s, ids[0]); err != nil {
		t.Fatal(err)
	}
	close(release)
	eventually(t, 3*time.Second, "entries after the resume position", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(afterResume) >= 5 && afterResume[len(afterResume)-1] == "5"
	})
	mu.Lock()
	defer mu.Unlock()
	seen := map[string]bool{}
	for _, d := range afterResume {
		seen[d] = true
	}
	for _, want := range []string{"1", "2", "3", "4", "5"} {
		if !seen[want] {
			t.Fatalf("after resuming at entry 0, entry %s was never delivered (after resume: %v, all: %v)", want, afterResume, got)
		}
	}
}

// collector gathers what a Tailer delivers, per stream.
type collector struct {
	mu      sync.Mutex
	got     map[string][]streams.Message
	notices []string // stream|data of each notice heard
}

func newCollector() *collector { return &collector{got: map[string][]streams.Message{}} }

func (c *collector) handle(_ context.Context, m streams.Message) {
	c.mu.Lock()
	c.got[m.Stream] = append(c.got[m.Stream], m)
	c.mu.Unlock()
}

func (c *collector) notice(_ context.Context, stream string, data []byte) {
	c.mu.Lock()
	c.notices = append(c.notices, stream+"|"+string(data))
	c.mu.Unlock()
}

// takeNotices returns the notices heard so far and forgets them.
func (c *collector) takeNotices() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.notices
	c.notices = nil
	return n
}

func (c *collector) datas(stream string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return datas(c.got[stream])
}

// noSweep is a sweep interval no test waits for: what arrives was read
// because its stream's bell rang.
var noSweep = streams.WithSweepInterval(time.Hour)

// followed runs, until the test ends, a Tailer that never sweeps (unless
// opts say otherwise) following stream from after, and returns what it
// collects (its notices too). It returns once the Tailer hears the stream's
// bell: a test that then appends without a bell sees no read but its own.
func followed(t *testing.T, rdb *redis.Client, stream, after string, opts ...streams.Option) *collector {
	t.Helper()
	col := newCollector()
	tl := streams.NewTailer(rdb, col.handle, append([]streams.Option{noSweep, streams.WithNotices(col.notice)}, opts...)...)
	if err := tl.Add(ctxT(t), stream, after); err != nil {
		t.Fatal(err)
	}
	runConsumer(t, tl)
	listening(t, rdb, stream, col)
	return col
}

// listening waits until the Tailer collecting into col hears stream's bell.
// The subscription's confirmation reads the stream (entries appended while
// it was on its way rang nobody); it comes before any message on the bell's
// channel, so once a notice is heard that read has been asked for, and it is
// done before the next entry is delivered. Without this wait, a confirmation
// still unread when a test appended silently read the silent entry (the CI
// failure of stop 37). Probes are rung until Redis has a subscriber for one
// (the earlier ones reached nobody), and that one is awaited.
func listening(t *testing.T, rdb *redis.Client, stream string, col *collector) {
	t.Helper()
	ctx := ctxT(t)
	var probe string
	eventually(t, 5*time.Second, "a subscriber to the bell of "+stream, func() bool {
		probe = "listening? " + strconv.FormatInt(time.Now().UnixNano(), 10)
		n, err := streams.Notify(ctx, rdb, stream, []byte(probe))
		if err != nil {
			t.Fatal(err)
		}
		return n > 0
	})
	eventually(t, 5*time.Second, "the Tailer hearing the bell of "+stream, func() bool {
		col.mu.Lock()
		defer col.mu.Unlock()
		return slices.Contains(col.notices, stream+"|"+probe)
	})
	col.takeNotices()
}

// Every way this package appends rings the stream's bell: with the sweep
// out of the picture, a Tailer still sees each entry within moments.
func TestTailer_EveryWriterRingsTheBell(t *testing.T) {
	t.Run("bare bells", func(t *testing.T) { everyWriterRings(t) })
	t.Run("entry bells", func(t *testing.T) { everyWriterRings(t, streams.WithEntryBells()) })
}

func everyWriterRings(t *testing.T, opts ...streams.Option) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	pub := streams.NewPublisher(rdb, opts...)
	leases := streams.NewLeases(rdb, time.Minute)
	one, batch, batcher, fenced := streams.TableEvents("one"), streams.TableEvents("batch"),
		streams.TableEvents("batcher"), streams.TableEvents("fenced")
	col := newCollector()
	tl := streams.NewTailer(rdb, col.handle, noSweep)
	for _, s := range []string{one, batch, batcher, fenced} {
		if err := tl.Add(ctx, s, "$"); err != nil {
			t.Fatal(err)
		}
	}
	runConsumer(t, tl)
	time.Sleep(100 * time.Millisecond) // past the first read and the subscription

	check := func(what, stream, want string) {
		t.Helper()
		eventually(t, 2*time.Second, what, func() bool { return col.datas(stream) == want })
	}
	if _, err := pub.Publish(ctx, streams.Entry{Stream: one, Data: []byte("p")}); err != nil {
		t.Fatal(err)
	}
	check("Publish", one, "p")
	if _, err := pub.PublishBatch(ctx, []streams.Entry{{Stream: batch, Data: []byte("b1")}, {Stream: batch, Data: []byte("b2")}, {Stream: one, Data: []byte("p2")}}); err != nil {
		t.Fatal(err)
	}
	check("PublishBatch", batch, "b1,b2")
	check("PublishBatch, second stream", one, "p,p2")
	b := pub.NewBatcher(ctx, 16, 1)
	if _, err := b.Publish(ctx, streams.Entry{Stream: batcher, Data: []byte("q")}); err != nil {
		t.Fatal(err)
	}
	check("Batcher", batcher, "q")
	l, err := leases.Acquire(ctx, streams.TableLease("fenced"), "runner-a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pub.AppendFenced(ctx, l, streams.Entry{Stream: fenced, Data: []byte("f1")}, streams.Entry{Stream: fenced, Data: []byte("f2")}); err != nil {
		t.Fatal(err)
	}
	check("AppendFenced", fenced, "f1,f2")
}

// An append that rings nobody (a writer outside this package, or a bell
// lost) is still delivered, by the sweep.
func TestTailer_SweepDeliversEntriesNobodyRang(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	s := streams.TableEvents("silent")
	col := followed(t, rdb, s, "0", streams.WithSweepInterval(200*time.Millisecond))
	if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: s, Values: []any{streams.FieldData, "raw"}}).Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Second, "the swept entry", func() bool { return col.datas(s) == "raw" })
}

// The sweep reads the followed streams a part at a time, spread over its
// interval, not all in one burst (a gateway's 2,000 streams in one pipelined
// read held Redis for up to 10 ms every second, and every client waited),
// and still reads every stream once an interval.
func TestTailer_SweepReadsEveryStreamOnceAnIntervalAPartAtATime(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	reads := &xreadHook{}
	rdb.AddHook(reads)
	const n = 64
	const every = 400 * time.Millisecond
	tl := streams.NewTailer(rdb, newCollector().handle, streams.WithSweepInterval(every))
	for i := range n {
		if err := tl.Add(ctx, streams.TableEvents(fmt.Sprintf("quiet%d", i)), "0"); err != nil {
			t.Fatal(err)
		}
	}
	runConsumer(t, tl)
	time.Sleep(every / 2) // the subscription's first read of everything is over
	reads.reset()
	time.Sleep(3 * every) // at least one whole interval even on a loaded machine, where ticks come late
	most, seen := reads.result()
	if most > n/3 {
		t.Errorf("a sweep read named %d of the %d streams at once; it should read them a part at a time", most, n)
	}
	if seen != n {
		t.Errorf("over three sweep intervals %d of the %d streams were read, want every one", seen, n)
	}
}

// xreadHook is a go-redis hook that notes the streams each XREAD names.
type xreadHook struct {
	mu   sync.Mutex
	most int
	seen map[string]bool
}

func (l *xreadHook) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.most, l.seen = 0, map[string]bool{}
}

func (l *xreadHook) result() (most, seen int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.most, len(l.seen)
}

func (l *xreadHook) note(cmd redis.Cmder) {
	args := cmd.Args()
	if len(args) == 0 || !strings.EqualFold(fmt.Sprint(args[0]), "xread") {
		return
	}
	for i, a := range args {
		if strings.EqualFold(fmt.Sprint(a), "streams") {
			keys := args[i+1:]
			keys = keys[:len(keys)/2]
			l.mu.Lock()
			l.most = max(l.most, len(keys))
			if l.seen != nil {
				for _, k := range keys {
					l.seen[fmt.Sprint(k)] = true
				}
			}
			l.mu.Unlock()
			return
		}
	}
}

func (l *xreadHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (l *xreadHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		l.note(cmd)
		return next(ctx, cmd)
	}
}
func (l *xreadHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			l.note(c)
		}
		return next(ctx, cmds)
	}
}

// A stream with more new entries than one read takes (WithCount) is read
// again at once, not at the next bell or sweep.
func TestTailer_ReadsABacklogLargerThanCountWithoutWaiting(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	s := streams.TableEvents("backlog")
	publishN(t, streams.NewPublisher(rdb), s, 0, 25)
	col := followed(t, rdb, s, "0", streams.WithCount(4))
	eventually(t, 2*time.Second, "all 25 entries", func() bool { return len(strings.Split(col.datas(s), ",")) == 25 })
	want := make([]string, 25)
	for i := range want {
		want[i] = strconv.Itoa(i)
	}
	if got := col.datas(s); got != strings.Join(want, ",") {
		t.Fatalf("delivered %s", got)
	}
}

// Redis dies and comes back (its data kept): the Tailer subscribes again,
// reads what was appended meanwhile and goes on, with no entry twice.
func TestTailer_SurvivesARedisRestart(t *testing.T) {
	srv := redistest.Start(t, redistest.WithPersistence())
	rdb := srv.Client(t)
	ctx := ctxT(t)
	s := streams.TableEvents("restart")
	pub := streams.NewPublisher(rdb)
	col := followed(t, rdb, s, "0", streams.WithBackoff(10*time.Millisecond, 100*time.Millisecond))
	publishN(t, pub, s, 0, 2)
	eventually(t, 2*time.Second, "before the restart", func() bool { return col.datas(s) == "0,1" })
	srv.Kill()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// Written while the Tailer's subscription may still be down: no bell
	// reaches it, the resubscription reads it.
	eventually(t, 10*time.Second, "a publish after the restart", func() bool {
		_, err := pub.Publish(ctx, streams.Entry{Stream: s, Data: []byte("2")})
		return err == nil
	})
	eventually(t, 10*time.Second, "the entry written after the restart", func() bool { return col.datas(s) == "0,1,2" })
	publishN(t, pub, s, 3, 4)
	eventually(t, 5*time.Second, "bells after the restart", func() bool { return col.datas(s) == "0,1,2,3" })
}

// A subscription quiet for longer than the Tailer's health check (3 s) is
// pinged, and bells still arrive after it: the quiet read's timeout breaks
// nothing.
func TestTailer_AQuietSubscriptionIsPingedAndStillHearsBells(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	s := streams.TableEvents("quiet")
	pub := streams.NewPublisher(rdb, streams.WithEntryBells())
	col := followed(t, rdb, s, "0")
	publishN(t, pub, s, 0, 1)
	eventually(t, 2*time.Second, "the first entry", func() bool { return col.datas(s) == "0" })
	time.Sleep(3500 * time.Millisecond)
	clients, err := rdb.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	pinged := false
	for _, line := range strings.Split(clients, "\n") {
		if strings.Contains(line, " sub=1 ") && strings.Contains(line, " cmd=ping") {
			pinged = true
		}
	}
	if !pinged {
		t.Fatalf("no subscribed client's last command is a ping after 3.5 s of quiet:\n%s", clients)
	}
	publishN(t, pub, s, 1, 2)
	eventually(t, time.Second, "a bell after the quiet", func() bool { return col.datas(s) == "0,1" })
}

// xreadLog follows `idle` idle streams and one busy one with a Tailer that
// never sweeps, runs publish (which appends n entries to busy, waiting for
// each to arrive) with Redis's slow log recording every command, and returns
// how many XREADs Redis ran meanwhile and how many streams they named.
func xreadLog(t *testing.T, idle, n int, publish func(ctx context.Context, rdb *redis.Client, busy string, i int)) (reads, named int) {
	t.Helper()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	col := newCollector()
	tl := streams.NewTailer(rdb, col.handle, noSweep)
	for i := 0; i < idle; i++ {
		if err := tl.Add(ctx, streams.TableEvents("idle"+strconv.Itoa(i)), "0"); err != nil {
			t.Fatal(err)
		}
	}
	busy := streams.TableEvents("busy")
	if err := tl.Add(ctx, busy, "0"); err != nil {
		t.Fatal(err)
	}
	runConsumer(t, tl)
	time.Sleep(200 * time.Millisecond) // the first read of everything
	monitor := srv.NewClient()
	defer monitor.Close()
	// Log every command with its arguments (Redis keeps 32 of them and
	// counts the rest).
	for k, v := range map[string]string{"slowlog-log-slower-than": "0", "slowlog-max-len": "100000"} {
		if err := monitor.ConfigSet(ctx, k, v).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := monitor.SlowLogReset(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		publish(ctx, rdb, busy, i)
		eventually(t, 2*time.Second, "entry "+strconv.Itoa(i), func() bool {
			return strings.HasSuffix(col.datas(busy), strconv.Itoa(i))
		})
	}
	if got, want := col.datas(busy), datas(numbered(n)); got != want {
		t.Fatalf("delivered %q, want %q", got, want)
	}
	logged, err := monitor.SlowLogGet(ctx, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(logged) < n {
		t.Fatalf("only %d commands logged for %d entries: is the slow log on?", len(logged), n)
	}
	for _, e := range logged {
		if len(e.Args) == 0 || !strings.EqualFold(e.Args[0], "xread") {
			continue
		}
		args := len(e.Args)
		var more int
		if _, err := fmt.Sscanf(e.Args[len(e.Args)-1], "... (%d more arguments)", &more); err == nil {
			args += more - 1
		}
		reads++
		named += (args - 4) / 2 // XREAD COUNT n STREAMS keys... ids...
	}
	return reads, named
}

func numbered(n int) []streams.Message {
	ms := make([]streams.Message, n)
	for i := range ms {
		ms[i].Data = []byte(strconv.Itoa(i))
	}
	return ms
}

// A Tailer's reads name only the streams that rang: following many idle
// streams costs Redis nothing per read. Before bells, every read named all
// of them (2,000 streams: ≈ 1.5 ms of Redis per read). The writer here rings
// bare bells (hints), as a script outside this package may.
func TestTailer_ReadsOnlyTheStreamsThatRang(t *testing.T) {
	const n = 50
	reads, named := xreadLog(t, 500, n, func(ctx context.Context, rdb *redis.Client, busy string, i int) {
		pipe := rdb.Pipeline()
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: busy, Values: []any{streams.FieldData, strconv.Itoa(i)}})
		pipe.Publish(ctx, streams.Bell(busy), "")
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	})
	if reads < n/2 {
		t.Fatalf("only %d XREADs for %d entries rung with bare bells", reads, n)
	}
	if avg := float64(named) / float64(reads); avg > 1.5 {
		t.Fatalf("XREAD named %.1f streams per call on average (%d reads); want only the one that rang", avg, reads)
	}
}

// The bells of a publisher made WithEntryBells carry the entry: a Tailer
// following the stream delivers it without reading the stream at all.
func TestTailer_BellsThatCarryTheEntryNeedNoRead(t *testing.T) {
	var pub *streams.Publisher
	reads, _ := xreadLog(t, 100, 50, func(ctx context.Context, rdb *redis.Client, busy string, i int) {
		if pub == nil {
			pub = streams.NewPublisher(rdb, streams.WithEntryBells())
		}
		if _, err := pub.Publish(ctx, streams.Entry{Stream: busy, Data: []byte(strconv.Itoa(i))}); err != nil {
			t.Fatal(err)
		}
	})
	if reads != 0 {
		t.Fatalf("%d XREADs for 50 entries whose bells carried them; want none", reads)
	}
}

// An entry whose bell carried it is delivered straight away only if it
// follows the last entry delivered: after entries that rang nothing (a raw
// XADD), the next bell finds a gap, and the Tailer reads the stream and
// delivers every entry, in order, instead of skipping the silent ones.
func TestTailer_ABellAfterAGapReadsTheStream(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	s := streams.TableEvents("gap")
	col := followed(t, rdb, s, "$")
	pub := streams.NewPublisher(rdb, streams.WithEntryBells())
	publishN(t, pub, s, 0, 2)
	eventually(t, 2*time.Second, "the first entries", func() bool { return col.datas(s) == "0,1" })
	for i := 2; i < 4; i++ { // silent: no bell
		if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: s, Values: []any{streams.FieldData, strconv.Itoa(i)}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	if got := col.datas(s); got != "0,1" {
		t.Fatalf("delivered %q before any bell rang; want 0,1", got)
	}
	publishN(t, pub, s, 4, 6)
	eventually(t, 2*time.Second, "every entry, the silent ones included", func() bool { return col.datas(s) == "0,1,2,3,4,5" })
}

// A bell carries the whole entry: its header fields and the trace context
// of its publisher arrive as a read would return them.
func TestTailer_ABellCarriesHeaderAndTrace(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	s := streams.TableEvents("whole")
	col := followed(t, rdb, s, "$")
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	pub := streams.NewPublisher(rdb, streams.WithEntryBells(), streams.WithTracerProvider(tp), streams.WithPropagator(propagation.TraceContext{}))
	data := []byte("bin\x00ary: 12:34 \xff")
	id, err := pub.Publish(ctx, streams.Entry{Stream: s, Data: data, Header: map[string]string{"type": "Played", "k": "a b:c"}})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Second, "the entry", func() bool { return col.datas(s) != "" })
	read, err := streams.ReadAfter(ctx, rdb, s, "0", 10)
	if err != nil || len(read) != 1 {
		t.Fatalf("ReadAfter: %v, %d entries", err, len(read))
	}
	col.mu.Lock()
	got := col.got[s][0]
	col.mu.Unlock()
	if got.ID != id || string(got.Data) != string(data) || !reflect.DeepEqual(got.Header, read[0].Header) {
		t.Fatalf("delivered %s %q %v; the stream holds %s %q %v", got.ID, got.Data, got.Header, read[0].ID, read[0].Data, read[0].Header)
	}
	if sc := trace.SpanContextFromContext(got.Context(ctx)); !sc.IsValid() ||
		sc.TraceID() != trace.SpanContextFromContext(read[0].Context(ctx)).TraceID() {
		t.Fatalf("the delivered entry's trace context is %v; the stored entry's is %v", sc, trace.SpanContextFromContext(read[0].Context(ctx)))
	}
}

// Add and Remove of one stream racing each other leave it either not
// followed or followed with its bell subscribed: never followed but deaf
// (read only by the sweep).
func TestTailer_RacingAddAndRemoveNeverLeaveAFollowedStreamDeaf(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	col := newCollector()
	tl := streams.NewTailer(rdb, col.handle, noSweep)
	runConsumer(t, tl)
	pub := streams.NewPublisher(rdb)
	for round := 0; round < 20; round++ {
		s := streams.TableEvents("race" + strconv.Itoa(round))
		var wg sync.WaitGroup
		for i := 0; i < 20; i++ {
			wg.Add(2)
			go func() { defer wg.Done(); _ = tl.Add(ctx, s, "0") }()
			go func() { defer wg.Done(); tl.Remove(ctx, s) }()
		}
		wg.Wait()
		if _, ok := tl.Position(s); !ok {
			if err := tl.Add(ctx, s, "0"); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(20 * time.Millisecond) // the last (un)subscription reaches Redis
		if _, err := pub.Publish(ctx, streams.Entry{Stream: s, Data: []byte("x")}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 2*time.Second, "round "+strconv.Itoa(round)+"'s entry through its bell", func() bool {
			return strings.HasSuffix(col.datas(s), "x")
		})
	}
}

// While the handler is stuck, bells that carry their entry pile up only to
// a bound; past it they are hints and the Tailer reads the stream when the
// handler is free again: every entry still arrives once, in order.
func TestTailer_BellsPastTheQueueBoundAreReadInstead(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	s := streams.TableEvents("flood")
	release := make(chan struct{})
	var mu sync.Mutex
	var got []string
	tl := streams.NewTailer(rdb, func(_ context.Context, m streams.Message) {
		if string(m.Data) == "0" {
			<-release
		}
		mu.Lock()
		got = append(got, string(m.Data))
		mu.Unlock()
	}, noSweep, streams.WithCount(1000))
	if err := tl.Add(ctx, s, "$"); err != nil {
		t.Fatal(err)
	}
	runConsumer(t, tl)
	time.Sleep(100 * time.Millisecond) // past the first read
	pub := streams.NewPublisher(rdb, streams.WithEntryBells(), streams.WithMaxLen(0))
	const n = 12000 // more than the queue holds
	for i := 0; i < n; i += 500 {
		batch := make([]streams.Entry, 500)
		for j := range batch {
			batch[j] = streams.Entry{Stream: s, Data: []byte(strconv.Itoa(i + j))}
		}
		if _, err := pub.PublishBatch(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(300 * time.Millisecond) // let the bells arrive while the handler is stuck
	close(release)
	eventually(t, 20*time.Second, "every entry", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= n
	})
	mu.Lock()
	defer mu.Unlock()
	if len(got) != n {
		t.Fatalf("%d entries delivered, want %d", len(got), n)
	}
	for i, d := range got {
		if d != strconv.Itoa(i) {
			t.Fatalf("entry %d is %q: out of order or twice", i, d)
		}
	}
}

// A notice rung on a followed stream's bell (a table's refusal for one
// player) reaches the WithNotices handler whole — binary data included —
// without becoming an entry and without a read of the stream; entries
// published around it are delivered as ever.
func TestTailer_NoticesReachTheHandlerAndReadNothing(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	s := streams.TableEvents("notices")
	col := followed(t, rdb, s, "$")
	pub := streams.NewPublisher(rdb, streams.WithEntryBells())
	publishN(t, pub, s, 0, 1)
	eventually(t, 2*time.Second, "the first entry", func() bool { return col.datas(s) == "0" })
	if err := rdb.ConfigSet(ctx, "slowlog-log-slower-than", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.SlowLogReset(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	const n = 20
	var want []string
	for i := range n {
		data := []byte("refused \x00\xff " + strconv.Itoa(i))
		want = append(want, s+"|"+string(data))
		if _, err := streams.Notify(ctx, rdb, s, data); err != nil {
			t.Fatal(err)
		}
	}
	var heard []string
	eventually(t, 2*time.Second, "every notice", func() bool {
		heard = append(heard, col.takeNotices()...)
		return len(heard) >= n
	})
	if strings.Join(heard, ",") != strings.Join(want, ",") {
		t.Fatalf("heard %q, want %q", heard, want)
	}
	logged, err := rdb.SlowLogGet(ctx, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range logged {
		if len(e.Args) > 0 && strings.EqualFold(e.Args[0], "xread") {
			t.Fatalf("a notice made the tailer read the stream: %v", e.Args)
		}
	}
	publishN(t, pub, s, 1, 2)
	eventually(t, 2*time.Second, "the next entry", func() bool { return col.datas(s) == "0,1" })
	if n, _ := rdb.XLen(ctx, s).Result(); n != 2 {
		t.Fatalf("stream length %d, want 2: notices are not entries", n)
	}
}
