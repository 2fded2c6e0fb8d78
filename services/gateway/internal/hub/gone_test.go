package hub

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/visibility"
)

// all is every frame received so far.
func (s *sink) all() []*gatewayv1.ServerFrame {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*gatewayv1.ServerFrame(nil), s.frames...)
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// subscribed waits until someone listens to the table's event bell.
func (e *env) subscribed(t *testing.T, table string) {
	t.Helper()
	ch := streams.Bell(streams.TableEvents(table))
	waitUntil(t, "the hub's subscription", func() bool {
		n, err := e.rdb.PubSubNumSub(context.Background(), ch).Result()
		return err == nil && n[ch] > 0
	})
}

// A table's refusal travels as a notice on the event stream's bell: the
// hub gives it to the connections of the player it names — as an event
// frame without an id, since it is not part of the history — and to no
// one else; the stream does not grow.
func TestHub_ARefusalNoticeGoesToItsSenderOnly(t *testing.T) {
	e := newEnv(t)
	h := e.hub(t, Options{})
	ctx := context.Background()
	e.publish(t, "t1", seated(0, "alice"))
	alice, bob := newSink(), newSink()
	for p, s := range map[string]*sink{"alice": alice, "bob": bob} {
		if _, _, err := h.Join(ctx, "t1", p, "", s); err != nil {
			t.Fatal(err)
		}
	}
	alice.waitEvents(t, 1)
	bob.waitEvents(t, 1)
	e.subscribed(t, "t1")
	rej := toPlayer("alice")
	rej.CausedBy = "alice/k1"
	data, err := proto.Marshal(rej)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := streams.Notify(ctx, e.rdb, streams.TableEvents("t1"), data); err != nil {
		t.Fatal(err)
	}
	ids := alice.waitEvents(t, 2)
	if ids[1] != "" {
		t.Fatalf("the refusal came with id %q; want none (not part of the history)", ids[1])
	}
	f := alice.all()[1]
	if ev := f.GetEvent().GetEvent(); ev.GetMoveRejected() == nil || ev.GetCausedBy() != "alice/k1" {
		t.Fatalf("frame %v, want alice's move_rejected", f)
	}
	time.Sleep(100 * time.Millisecond)
	if n := len(bob.eventIDs(t)); n != 1 {
		t.Fatalf("bob got %d events; the refusal was alice's only", n)
	}
	if n := e.rdb.XLen(ctx, streams.TableEvents("t1")).Val(); n != 1 {
		t.Fatalf("the event stream has %d entries, want 1: a notice is not an entry", n)
	}
}

// A followed table whose event stream vanishes (Redis restarted without its
// data, FLUSHALL) is not a silent freeze: each watcher gets an error
// table_gone naming the table and an unjoined, its subscription holds no
// seat (so the gateway forwards no command and no presence report that
// would recreate the table's keys), and a new join is refused with
// table_gone. A table joined before its first event is not taken for gone.
func TestHub_AVanishedTableGetsItsWatchersTableGone(t *testing.T) {
	e := newEnv(t)
	h := e.hub(t, Options{GoneCheck: 50 * time.Millisecond})
	ctx := context.Background()
	e.publish(t, "t1", seated(0, "alice"))
	alice, early := newSink(), newSink()
	sub, _, err := h.Join(ctx, "t1", "alice", "", alice)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.Join(ctx, "t2", "bob", "", early); err != nil { // no events yet
		t.Fatal(err)
	}
	alice.waitEvents(t, 1)
	if sub.Seat() != 0 || !sub.Member() {
		t.Fatalf("seat %d member %v, want seat 0", sub.Seat(), sub.Member())
	}
	if err := e.rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	var got []*gatewayv1.ServerFrame
	waitUntil(t, "table_gone and unjoined", func() bool {
		got = alice.all()
		return len(got) >= 3
	})
	if e := got[1].GetError(); e.GetCode() != wire.CodeTableGone || e.GetTable() != "t1" || got[2].GetUnjoined().GetTable() != "t1" {
		t.Fatalf("frames after the loss %v, want error table_gone then unjoined for t1", got[1:])
	}
	if sub.Seat() != visibility.NoSeat || sub.Member() {
		t.Fatal("the gone table's subscription still holds a seat")
	}
	sub.Close() // the connection's own unjoin later: harmless
	_, _, err = h.Join(ctx, "t1", "alice", "", newSink())
	if !errors.Is(err, ErrTableGone) || wire.CodeOf(err) != wire.CodeTableGone {
		t.Fatalf("join of the gone table: %v, want table_gone", err)
	}
	if h.Tables() != 1 {
		t.Fatalf("following %d tables, want only t2", h.Tables())
	}
	time.Sleep(200 * time.Millisecond)
	if n := len(early.all()); n != 0 {
		t.Fatalf("a table with no event yet got %d frames", n)
	}
	// The table waiting for its first event still works.
	e.publish(t, "t2", seated(1, "bob"))
	early.waitEvents(t, 1)
}

// Among many followed tables (in every part of the check), the one whose
// stream vanished — and only it — gets its watcher table_gone, within the
// check interval: the parts cover every table, and a part where all the
// streams exist but one finds that one. On a Redis Cluster too, where the
// tables' keys lie in different slots (one EXISTS of them all would be
// refused, and every table would pass for present).
func TestHub_OnlyTheVanishedTableOfManyIsGone(t *testing.T) {
	for name, newEnv := range map[string]func(*testing.T) *env{"one redis": newEnv, "cluster": newClusterEnv} {
		t.Run(name, func(t *testing.T) { onlyTheVanishedTableIsGone(t, newEnv(t)) })
	}
}

func onlyTheVanishedTableIsGone(t *testing.T, e *env) {
	const every = 160 * time.Millisecond
	h := e.hub(t, Options{GoneCheck: every})
	ctx := context.Background()
	const tables = 3 * goneParts
	sinks := make([]*sink, tables)
	for i := range sinks {
		table := "t" + strconv.Itoa(i)
		e.publish(t, table, seated(0, "alice"))
		sinks[i] = newSink()
		if _, _, err := h.Join(ctx, table, "alice", "", sinks[i]); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range sinks {
		s.waitEvents(t, 1)
	}
	for _, gone := range []int{7, 29} {
		if err := e.rdb.Del(ctx, streams.TableEvents("t"+strconv.Itoa(gone))).Err(); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		waitUntil(t, "table_gone", func() bool { return len(sinks[gone].all()) >= 3 })
		if took := time.Since(start); took > 3*every {
			t.Errorf("t%d was found gone after %v; the check interval is %v", gone, took, every)
		}
		if e := sinks[gone].all()[1].GetError(); e.GetCode() != wire.CodeTableGone || e.GetTable() != "t"+strconv.Itoa(gone) {
			t.Fatalf("t%d's frames %v, want table_gone", gone, sinks[gone].all())
		}
	}
	time.Sleep(2 * every) // every part checked again at least once
	for i, s := range sinks {
		if i != 7 && i != 29 && len(s.all()) != 1 {
			t.Errorf("t%d, still there, got %v", i, s.all()[1:])
		}
	}
	if h.Tables() != tables-2 {
		t.Errorf("following %d tables, want %d", h.Tables(), tables-2)
	}
}
