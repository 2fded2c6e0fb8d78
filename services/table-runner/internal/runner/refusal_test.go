package runner

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/assign"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/lobbyclient"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/table-runner/internal/table"
	"github.com/pulka/pulka/services/table-runner/internal/tablelog"
)

// noticeLog collects the notices rung on a table's event bell (the answers
// to refused commands), as a gateway's hub hears them.
type noticeLog struct {
	mu  sync.Mutex
	evs []*tablev1.Event
}

func listenNotices(t *testing.T, rdb *redis.Client, tableID string) *noticeLog {
	t.Helper()
	ctx := context.Background()
	ps := rdb.Subscribe(ctx, streams.Bell(streams.TableEvents(tableID)))
	if _, err := ps.Receive(ctx); err != nil { // the confirmation
		t.Fatal(err)
	}
	n := &noticeLog{}
	prefix := streams.NoticeBell(nil)
	ch := ps.Channel(redis.WithChannelSize(20000))
	go func() {
		for m := range ch {
			data, ok := strings.CutPrefix(m.Payload, prefix)
			if !ok {
				continue
			}
			ev := &tablev1.Event{}
			if err := proto.Unmarshal([]byte(data), ev); err != nil {
				continue
			}
			n.mu.Lock()
			n.evs = append(n.evs, ev)
			n.mu.Unlock()
		}
	}()
	t.Cleanup(func() { _ = ps.Close() })
	return n
}

func (n *noticeLog) all() []*tablev1.Event {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]*tablev1.Event(nil), n.evs...)
}

func (n *noticeLog) count() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.evs)
}

func (n *noticeLog) wait(t *testing.T, timeout time.Duration, what string, pred func(*tablev1.Event) bool) *tablev1.Event {
	t.Helper()
	var found *tablev1.Event
	waitFor(t, timeout, what, func() bool {
		for _, e := range n.all() {
			if pred(e) {
				found = e
				return true
			}
		}
		return false
	})
	return found
}

// A seated player spamming illegal moves (issue 17): every command is
// answered to its sender, none is logged — the event stream's length does
// not move, the command stream is trimmed as the table goes, a restore
// replays none of them — and a restarted owner neither answers them again
// nor stumbles over the trimmed stream: the next legal move is applied.
func TestRunner_RefusalSpamIsAnsweredNotLoggedAndNotReplayed(t *testing.T) {
	_, rdb := startRedis(t)
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	opt := testOptions("r1")
	opt.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	r1 := startRunner(t, rdb, opt)
	ts := japaneseStart("j1", 5, 11, "alice", "bob")
	place(t, rdb, ts, "r1")
	before := waitEvent(t, rdb, "j1", "0", 5*time.Second, "the first timer", hasTimer)
	evLen := rdb.XLen(ctx, streams.TableEvents("j1")).Val()
	st, err := tablelog.Restore(ctx, rdb, "j1")
	if err != nil {
		t.Fatal(err)
	}
	steps := st.Steps
	notices := listenNotices(t, rdb, "j1")

	const spam = 10000
	// The player whose timer is not running: every play of theirs is
	// refused (the other one does not move).
	wrong := ts.GetSeats()[1-wire.TimerOf(before.ev).GetSeat()].GetPlayerId()
	pub := streams.NewPublisher(rdb)
	for i := 0; i < spam; i += 500 {
		batch := make([]streams.Entry, 0, 500)
		for j := i; j < i+500; j++ {
			c := playCmd(8)
			c.CommandId, c.TableId, c.PlayerId = "spam-"+strconv.Itoa(j), "j1", wrong
			data, err := proto.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			batch = append(batch, streams.Entry{Stream: streams.TableCommands("j1"), Data: data})
		}
		if _, err := pub.PublishBatch(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, 60*time.Second, "every refusal answered", func() bool { return notices.count() >= spam })
	for _, e := range notices.all() {
		if e.GetMoveRejected() == nil || e.GetVisibility().GetPlayerId() != wrong || e.GetSeq() != 0 {
			t.Fatalf("notice %v, want a move_rejected for %s outside the history", e, wrong)
		}
	}
	if n := rdb.XLen(ctx, streams.TableEvents("j1")).Val(); n != evLen {
		t.Fatalf("event stream: %d entries after %d refusals, %d before", n, spam, evLen)
	}
	if n := rdb.XLen(ctx, streams.TableCommands("j1")).Val(); n > DefaultCommandTrim {
		t.Fatalf("command stream: %d entries left after %d handled refusals, want at most %d", n, spam, DefaultCommandTrim)
	}
	if st, err = tablelog.Restore(ctx, rdb, "j1"); err != nil || st.Steps != steps {
		t.Fatalf("restore after the spam replays %d steps (%v), %d before", st.Steps, err, steps)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	if got := counterSum(rm, "pulka.runner.rejections"); got != spam {
		t.Fatalf("pulka.runner.rejections = %d, want %d", got, spam)
	}
	if got := counterSum(rm, "pulka.runner.commands.trimmed"); got < spam {
		t.Fatalf("pulka.runner.commands.trimmed = %d, want at least the %d refused", got, spam)
	}

	// The same runner restarts (a stable id reopens its own tables): it
	// resumes after the handled commands, so the next command it answers
	// is a new one, and none of the spam is answered again.
	r1.stop()
	startRunner(t, rdb, testOptions("r1"))
	next := send(t, rdb, "j1", wrong, playCmd(8))
	notices.wait(t, 10*time.Second, "the answer to a command after the restart", func(e *tablev1.Event) bool { return e.GetCausedBy() == next })
	time.Sleep(200 * time.Millisecond)
	if n := notices.count(); n != spam+1 {
		t.Fatalf("%d notices after the restart, want the %d of the spam and one more", n, spam)
	}
	if got := rdb.XLen(ctx, streams.TableEvents("j1")).Val(); got != evLen {
		t.Fatalf("event stream: %d entries after the restart, %d before the spam", got, evLen)
	}
}

func counterSum(rm metricdata.ResourceMetrics, name string) int64 {
	var sum int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				sum += dp.Value
			}
		}
	}
	return sum
}

// Redis that lost its data (a restart without persistence, FLUSHALL): the
// runner notices its open table's lease and log are gone, drops it — no
// reopening loop — and counts it; a table assigned to it whose start and log
// are gone is dropped at open, its assignment removed and the lobby told;
// new tables play.
func TestRunner_TablesRedisLostAreDroppedCleanly(t *testing.T) {
	_, rdb := startRedis(t)
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	opt := testOptions("r1")
	opt.LeaseTTL = 600 * time.Millisecond
	opt.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	r := startRunner(t, rdb, opt)
	place(t, rdb, japaneseStart("j1", 5, 11, "alice", "bob"), "r1")
	waitEvent(t, rdb, "j1", "0", 5*time.Second, "the first timer", hasTimer)
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the lost table dropped", func() bool { return len(r.Tables()) == 0 })
	// A gateway that has not noticed yet sends the table a command: the
	// command stream it appends to expires with the rest.
	send(t, rdb, "j1", "alice", playCmd(8))
	if ttl := rdb.PTTL(ctx, streams.TableCommands("j1")).Val(); ttl <= 0 {
		t.Errorf("a command sent after the runner gave the table up left its command stream with TTL %v, for ever", ttl)
	}

	// Assigned, but without a start or a log; a client's command waits in
	// its command stream.
	send(t, rdb, "ghost", "alice", playCmd(8))
	if _, err := assign.NewStore(rdb).Add(ctx, streams.Lease{}, "ghost", "r1"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the ghost's assignment removed", func() bool {
		ids, err := assign.NewStore(rdb).TablesOf(ctx, "r1")
		return err == nil && len(ids) == 0
	})
	finish, err := rdb.XRange(ctx, lobbyclient.CommandStream, "-", "+").Result()
	if err != nil || len(finish) == 0 {
		t.Fatalf("the lobby was not told the ghost is over: %v %v", finish, err)
	}
	if ttl := rdb.PTTL(ctx, streams.TableCommands("ghost")).Val(); ttl <= 0 {
		t.Errorf("the dropped table's command stream has TTL %v; want the finished tables' retention", ttl)
	}
	time.Sleep(500 * time.Millisecond) // a reopening loop would show here
	if n := len(r.Tables()); n != 0 {
		t.Fatalf("%d tables open after the loss, want none", n)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	if got := counterSum(rm, "pulka.runner.tables.lost"); got != 2 {
		t.Fatalf("pulka.runner.tables.lost = %d, want 2 (one running, one at open)", got)
	}
	place(t, rdb, japaneseStart("j2", 6, 11, "carol", "dave"), "r1")
	waitEvent(t, rdb, "j2", "0", 5*time.Second, "a new table's first timer", hasTimer)
}

// syncBuffer is a bytes.Buffer safe for a logger and a test at once.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A table that reads its backlog itself (its inbox was full) while it trims
// what it handles: every read after a trim starts exactly at the trimmed
// head, which is no gap — every command is answered once, in order, and
// the runner does not report commands lost.
func TestRunner_CatchUpAcrossItsOwnTrimsLosesNothingAndReportsNothing(t *testing.T) {
	_, rdb := startRedis(t)
	logs := &syncBuffer{}
	gate := make(chan struct{})
	var openGate sync.Once
	release := func() { openGate.Do(func() { close(gate) }) }
	blocked := make(chan struct{}, 1)
	var closedGate bool
	opt := testOptions("r1")
	opt.Inbox, opt.CommandTrim = 2, 2
	opt.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	opt.beforeApply = func(_ string, in table.Input) {
		if in.Kind == table.InputCommand && !closedGate {
			closedGate = true
			blocked <- struct{}{}
			<-gate
		}
	}
	r := startRunner(t, rdb, opt)
	t.Cleanup(release)
	ts := japaneseStart("j1", 5, 11, "alice", "bob")
	place(t, rdb, ts, "r1")
	first := waitEvent(t, rdb, "j1", "0", 5*time.Second, "the first timer", hasTimer)
	wrong := ts.GetSeats()[1-wire.TimerOf(first.ev).GetSeat()].GetPlayerId()
	waitFor(t, 5*time.Second, "the reader to follow the new table", func() bool {
		_, ok := r.tailer.Position(streams.TableCommands("j1"))
		return ok
	})
	notices := listenNotices(t, rdb, "j1")
	const n = 30
	ids := []string{send(t, rdb, "j1", wrong, playCmd(8))}
	<-blocked
	for range n - 1 {
		ids = append(ids, send(t, rdb, "j1", wrong, playCmd(8)))
	}
	release()
	waitFor(t, 10*time.Second, "every refusal", func() bool { return notices.count() >= n })
	time.Sleep(100 * time.Millisecond)
	var got []string
	for _, e := range notices.all() {
		got = append(got, e.GetCausedBy())
	}
	if strings.Join(got, ",") != strings.Join(ids, ",") {
		t.Fatalf("answered %v, want each of %v once, in order", got, ids)
	}
	if strings.Contains(logs.String(), "trimmed past") {
		t.Fatalf("the runner reported lost commands:\n%s", logs.String())
	}
}
