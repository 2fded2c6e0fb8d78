package hub

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/visibility"
)

// sink records frames as a binary client decodes them; full makes Send
// refuse after limit frames.
type sink struct {
	mu     sync.Mutex
	frames []*gatewayv1.ServerFrame
	limit  int
	notify chan struct{}
}

func newSink() *sink { return &sink{notify: make(chan struct{}, 1)} }

func (s *sink) Send(f *wire.Frame) bool {
	b, err := f.Bytes(wire.Binary)
	if err != nil {
		panic(err)
	}
	m := &gatewayv1.ServerFrame{}
	if err := proto.Unmarshal(b, m); err != nil {
		panic(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.limit > 0 && len(s.frames) >= s.limit {
		return false
	}
	s.frames = append(s.frames, m)
	select {
	case s.notify <- struct{}{}:
	default:
	}
	return true
}

// eventIDs returns the ids of the event frames received so far.
func (s *sink) eventIDs(t *testing.T) []string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	for _, f := range s.frames {
		if e := f.GetEvent(); e != nil {
			ids = append(ids, e.GetId())
		}
	}
	return ids
}

func (s *sink) waitEvents(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if ids := s.eventIDs(t); len(ids) >= n {
			return ids
		}
		select {
		case <-s.notify:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("got %d events, want %d", len(s.eventIDs(t)), n)
		}
	}
}

type env struct {
	srv *redistest.Server // nil on a cluster
	rdb redis.UniversalClient
	pub *streams.Publisher
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	return &env{srv: srv, rdb: rdb, pub: streams.NewPublisher(rdb, streams.WithMaxLen(0))}
}

// newClusterEnv is newEnv on a Redis Cluster of three masters.
func newClusterEnv(t *testing.T) *env {
	t.Helper()
	rdb := redistest.StartCluster(t, 3, 0).NewClient()
	t.Cleanup(func() { _ = rdb.Close() })
	return &env{rdb: rdb, pub: streams.NewPublisher(rdb, streams.WithMaxLen(0))}
}

func (e *env) hub(t *testing.T, o Options) *Hub {
	t.Helper()
	h := New(e.rdb, o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = h.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return h
}

// publish appends ev to the table's event stream as a runner would.
func (e *env) publish(t *testing.T, table string, ev *tablev1.Event) string {
	t.Helper()
	data, err := proto.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	id, err := e.pub.Publish(context.Background(), streams.Entry{Stream: streams.TableEvents(table), Data: data})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func public(ev *tablev1.Event) *tablev1.Event {
	ev.Visibility = &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_PUBLIC}
	return ev
}

func seated(seat uint32, player string) *tablev1.Event {
	return public(&tablev1.Event{Event: &tablev1.Event_PlayerSeated{PlayerSeated: &tablev1.PlayerSeated{
		Seat: &tablev1.SeatPlayer{Seat: seat, PlayerId: player}}}})
}

func dealt(seat uint32) *tablev1.Event {
	return &tablev1.Event{Visibility: &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_SEAT, Seat: seat},
		Event: &tablev1.Event_Dealt{Dealt: &tablev1.Dealt{Seat: seat}}}
}

func bid(seat uint32) *tablev1.Event {
	return public(&tablev1.Event{Event: &tablev1.Event_BidMade{BidMade: &tablev1.BidMade{Seat: seat}}})
}

func toPlayer(p string) *tablev1.Event {
	return &tablev1.Event{Visibility: &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_PLAYER, PlayerId: p},
		Event: &tablev1.Event_MoveRejected{MoveRejected: &tablev1.MoveRejected{}}}
}

// history is every event published to a table, in order, for computing
// what a player should have received.
type history struct {
	mu  sync.Mutex
	ids []string
	evs []*tablev1.Event
}

func (h *history) add(id string, ev *tablev1.Event) {
	h.mu.Lock()
	h.ids = append(h.ids, id)
	h.evs = append(h.evs, ev)
	h.mu.Unlock()
}

// visibleAfter is what player must receive after event `after`, folding the
// seating from the start.
func (h *history) visibleAfter(player, after string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var seats visibility.Seats
	var out []string
	for i, ev := range h.evs {
		seats.Apply(ev)
		if after != "" && streams.CompareIDs(h.ids[i], after) <= 0 {
			continue
		}
		if visibility.Allows(ev.Visibility, visibility.Viewer{PlayerID: player, Seat: seats.SeatOf(player)}) {
			out = append(out, h.ids[i])
		}
	}
	return out
}

func (e *env) publishAll(t *testing.T, table string, h *history, evs ...*tablev1.Event) {
	for _, ev := range evs {
		h.add(e.publish(t, table, ev), ev)
	}
}

func equalIDs(t *testing.T, who string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d events %v\nwant %d %v", who, len(got), got, len(want), want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: event %d is %s, want %s\ngot  %v\nwant %v", who, i, got[i], want[i], got, want)
		}
	}
}

func TestJoin_SeatedPlayerSeesOnlyTheirOwnDeal(t *testing.T) {
	e := newEnv(t)
	h := e.hub(t, Options{})
	var hist history
	e.publishAll(t, "t1", &hist, seated(0, "ana"), seated(1, "bob"), dealt(0), dealt(1), toPlayer("bob"), bid(0))
	ctx := context.Background()
	for _, p := range []string{"ana", "bob", "watcher"} {
		s := newSink()
		sub, res, err := h.Join(ctx, "t1", p, "", s)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		want := hist.visibleAfter(p, "")
		equalIDs(t, p, s.eventIDs(t), want)
		if res.Replayed != len(want) {
			t.Fatalf("%s: Replayed = %d, want %d", p, res.Replayed, len(want))
		}
	}
	// Sanity of the expectation itself: ana gets 5 (two seatings, her deal,
	// the bid... and not bob's deal nor bob's rejection).
	if n := len(hist.visibleAfter("ana", "")); n != 4 {
		t.Fatalf("ana should see 4 events, the model says %d", n)
	}
	if n := len(hist.visibleAfter("bob", "")); n != 5 {
		t.Fatalf("bob should see 5 events, the model says %d", n)
	}
}

func TestJoin_ResumeGetsExactlyTheMissedEventsThenLiveOnes(t *testing.T) {
	e := newEnv(t)
	h := e.hub(t, Options{PageSize: 3}) // several pages of replay
	var hist history
	e.publishAll(t, "t1", &hist, seated(0, "ana"), seated(2, "cem"))
	for i := 0; i < 10; i++ {
		e.publishAll(t, "t1", &hist, dealt(uint32(i%4)), bid(uint32(i%4)))
	}
	last := hist.ids[7] // the client saw everything up to here
	s := newSink()
	sub, res, err := h.Join(context.Background(), "t1", "ana", last, s)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if res.Seat != 0 || res.Trimmed {
		t.Fatalf("join = %+v", res)
	}
	e.publishAll(t, "t1", &hist, dealt(0), dealt(1), bid(3))
	want := hist.visibleAfter("ana", last)
	equalIDs(t, "ana", s.waitEvents(t, len(want)), want)
}

// TestJoin_NoGapNoDuplicateWhileEventsKeepComing joins many clients at random
// resume points while a writer keeps appending, so that seams fall inside
// replays, inside held live events and at page boundaries.
func TestJoin_NoGapNoDuplicateWhileEventsKeepComing(t *testing.T) {
	e := newEnv(t)
	h := e.hub(t, Options{PageSize: 4})
	var hist history
	players := []string{"p0", "p1", "p2", "p3"}
	for i, p := range players {
		e.publishAll(t, "t1", &hist, seated(uint32(i), p))
	}
	for i := 0; i < 40; i++ {
		e.publishAll(t, "t1", &hist, dealt(uint32(i%4)), bid(uint32(i%4)))
	}
	stop := make(chan struct{})
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		rng := rand.New(rand.NewPCG(3, 4))
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			var ev *tablev1.Event
			switch rng.IntN(4) {
			case 0:
				ev = dealt(uint32(rng.IntN(4)))
			case 1:
				ev = toPlayer(players[rng.IntN(4)])
			default:
				ev = bid(uint32(rng.IntN(4)))
			}
			e.publishAll(t, "t1", &hist, ev)
			if i%5 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	type client struct {
		player, after string
		s             *sink
	}
	var clients []client
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 24; i++ {
		hist.mu.Lock()
		after := hist.ids[rng.IntN(len(hist.ids))]
		hist.mu.Unlock()
		if i%6 == 0 {
			after = ""
		}
		c := client{player: players[i%4], after: after, s: newSink()}
		sub, _, err := h.Join(context.Background(), "t1", c.player, c.after, c.s)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		clients = append(clients, c)
		time.Sleep(2 * time.Millisecond)
	}
	close(stop)
	<-writerDone
	for i, c := range clients {
		want := hist.visibleAfter(c.player, c.after)
		equalIDs(t, fmt.Sprintf("client %d (%s after %q)", i, c.player, c.after), c.s.waitEvents(t, len(want)), want)
	}
}

func TestJoin_SecondGatewayInstanceServesTheSameResume(t *testing.T) {
	e := newEnv(t)
	first := e.hub(t, Options{})
	second := e.hub(t, Options{})
	var hist history
	e.publishAll(t, "t1", &hist, seated(1, "bob"), dealt(1), dealt(0), bid(1))
	s1 := newSink()
	sub1, _, err := first.Join(context.Background(), "t1", "bob", "", s1)
	if err != nil {
		t.Fatal(err)
	}
	e.publishAll(t, "t1", &hist, dealt(1), bid(0))
	got1 := s1.waitEvents(t, len(hist.visibleAfter("bob", "")))
	seen := got1[1] // the client dropped after its second event...
	sub1.Close()
	e.publishAll(t, "t1", &hist, dealt(1), dealt(2), bid(2)) // ...and missed these
	s2 := newSink()
	sub2, _, err := second.Join(context.Background(), "t1", "bob", seen, s2)
	if err != nil {
		t.Fatal(err)
	}
	defer sub2.Close()
	e.publishAll(t, "t1", &hist, dealt(1))
	want := hist.visibleAfter("bob", seen)
	equalIDs(t, "bob on the second instance", s2.waitEvents(t, len(want)), want)
}

func TestJoin_SeatChangesApplyFromThatPointOfTheStream(t *testing.T) {
	e := newEnv(t)
	h := e.hub(t, Options{})
	var hist history
	// ana holds seat 0, leaves (a bot takes it), then takes it back.
	e.publishAll(t, "t1", &hist, seated(0, "ana"), dealt(0),
		public(&tablev1.Event{Event: &tablev1.Event_SeatTakenByBot{SeatTakenByBot: &tablev1.SeatTakenByBot{Seat: 0}}}),
		dealt(0), seated(0, "ana"), dealt(0))
	s := newSink()
	sub, _, err := h.Join(context.Background(), "t1", "ana", hist.ids[0], s)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	want := []string{hist.ids[1], hist.ids[2], hist.ids[4], hist.ids[5]} // not the deal the bot got
	equalIDs(t, "ana", s.eventIDs(t), want)
	equalIDs(t, "model", hist.visibleAfter("ana", hist.ids[0]), want)
}

func TestJoin_TrimmedHistoryIsReported(t *testing.T) {
	e := newEnv(t)
	h := e.hub(t, Options{})
	var hist history
	for i := 0; i < 20; i++ {
		e.publishAll(t, "t1", &hist, bid(0))
	}
	if err := e.rdb.XTrimMaxLen(context.Background(), streams.TableEvents("t1"), 5).Err(); err != nil {
		t.Fatal(err)
	}
	s := newSink()
	sub, res, err := h.Join(context.Background(), "t1", "ana", hist.ids[2], s)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if !res.Trimmed || res.LastID != hist.ids[19] || len(s.eventIDs(t)) != 0 {
		t.Fatalf("join = %+v with %d events, want trimmed at %s and none", res, len(s.eventIDs(t)), hist.ids[19])
	}
	id := e.publish(t, "t1", bid(1))
	equalIDs(t, "live after trim", s.waitEvents(t, 1), []string{id})
}

func TestJoin_ClientTooSlowForItsReplayIsRefused(t *testing.T) {
	e := newEnv(t)
	h := e.hub(t, Options{})
	var hist history
	for i := 0; i < 10; i++ {
		e.publishAll(t, "t1", &hist, bid(0))
	}
	s := newSink()
	s.limit = 3
	if _, _, err := h.Join(context.Background(), "t1", "ana", "", s); !errors.Is(err, ErrSlow) {
		t.Fatalf("err = %v, want ErrSlow", err)
	}
	if h.Tables() != 0 {
		t.Fatalf("a refused join left %d tables followed", h.Tables())
	}
}

func TestJoin_LastWatcherLeavingStopsFollowingTheTable(t *testing.T) {
	e := newEnv(t)
	h := e.hub(t, Options{})
	e.publish(t, "t1", bid(0))
	a, _, err := h.Join(context.Background(), "t1", "a", "", newSink())
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := h.Join(context.Background(), "t1", "b", "", newSink())
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	a.Close()
	if h.Tables() != 1 {
		t.Fatalf("tables = %d with one watcher left", h.Tables())
	}
	b.Close()
	if h.Tables() != 0 {
		t.Fatalf("tables = %d with no watcher", h.Tables())
	}
	// Joining again starts afresh and still sees everything.
	s := newSink()
	c, _, err := h.Join(context.Background(), "t1", "c", "", s)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	id := e.publish(t, "t1", bid(2))
	if got := s.waitEvents(t, 2); got[1] != id {
		t.Fatalf("events = %v", got)
	}
}

func TestJoin_SheetUpdatesReachEveryWatcher(t *testing.T) {
	e := newEnv(t)
	h := e.hub(t, Options{})
	pubSheet := func(v uint64) {
		data, _ := proto.Marshal(&scoringv1.SheetUpdate{Version: v, Sheet: &scoringv1.Sheet{TableId: "t1"}})
		if _, err := e.pub.Publish(context.Background(), streams.Entry{Stream: SheetStream("t1"), Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	pubSheet(1)
	pubSheet(2)
	s := newSink()
	sub, _, err := h.Join(context.Background(), "t1", "w", "", s)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	pubSheet(3)
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		var versions []uint64
		for _, f := range s.frames {
			if sh := f.GetSheet(); sh != nil {
				versions = append(versions, sh.GetUpdate().GetVersion())
			}
		}
		s.mu.Unlock()
		if len(versions) == 2 {
			if versions[0] != 2 || versions[1] != 3 {
				t.Fatalf("sheet versions = %v, want the latest (2) then the live one (3)", versions)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sheet versions = %v", versions)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func BenchmarkFanOut(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	h := New(rdb, Options{})
	ctx := context.Background()
	f := &feed{table: "t", evStream: streams.TableEvents("t"), sheetStream: SheetStream("t"), pos: "0-0",
		subs: map[*Subscription]struct{}{}, ready: make(chan struct{}), members: map[string]struct{}{}}
	h.feeds["t"], h.byStream[f.evStream] = f, f
	for i := 0; i < 100; i++ {
		f.subs[&Subscription{hub: h, feed: f, player: fmt.Sprintf("p%d", i), sink: discard{}, after: "0-0"}] = struct{}{}
	}
	data, _ := proto.Marshal(dealt(1))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.onMessage(ctx, streams.Message{Stream: f.evStream, ID: fmt.Sprintf("%d-0", i+1), Data: data})
	}
}

// BenchmarkMove is the hub's work for one player's move at a table of four
// players and two watchers: the public event carrying the next seat's
// timer, and that seat's legal moves: none (a table from before them), as
// an entry of their own (the layout of session 16), or packed into the
// event's entry (wire.FieldLegal).
func BenchmarkMove(b *testing.B) {
	host := bid(1)
	host.Seq, host.TableId, host.GameId, host.CausedBy = 41, "t", "g", "p1/k"
	plays := make([]*tablev1.LegalPlay, 9)
	for i := range plays {
		plays[i] = &tablev1.LegalPlay{Card: commonv1.Card(i + 1)}
	}
	legal := wire.LegalEvent(host, &tablev1.LegalMoves{Seat: 2, Phase: tablev1.Phase_PHASE_PLAY, Plays: plays})
	hostData, _ := proto.Marshal(host)
	legalData, _ := proto.Marshal(legal)
	movesData, _ := proto.Marshal(legal.GetLegalMoves())
	for _, layout := range []string{"none", "separate", "packed"} {
		b.Run("legal="+layout, func(b *testing.B) {
			srv := redistest.Start(b)
			h := New(srv.Client(b), Options{})
			ctx := context.Background()
			f := &feed{table: "t", evStream: streams.TableEvents("t"), sheetStream: SheetStream("t"), pos: "0-0",
				subs: map[*Subscription]struct{}{}, ready: make(chan struct{}), members: map[string]struct{}{},
				seats: visibility.Seats{"p0", "p1", "p2", "p3"}}
			h.feeds["t"], h.byStream[f.evStream] = f, f
			for _, p := range []string{"p0", "p1", "p2", "p3", "w0", "w1"} {
				f.subs[&Subscription{hub: h, feed: f, player: p, sink: discard{}, after: "0-0"}] = struct{}{}
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				switch layout {
				case "packed":
					h.onMessage(ctx, streams.Message{Stream: f.evStream, ID: fmt.Sprintf("%d-0", i+1), Data: hostData,
						Header: map[string]string{wire.FieldLegal: string(movesData)}})
				case "separate":
					h.onMessage(ctx, streams.Message{Stream: f.evStream, ID: fmt.Sprintf("%d-0", i+1), Data: hostData})
					h.onMessage(ctx, streams.Message{Stream: f.evStream, ID: fmt.Sprintf("%d-1", i+1), Data: legalData})
				default:
					h.onMessage(ctx, streams.Message{Stream: f.evStream, ID: fmt.Sprintf("%d-0", i+1), Data: hostData})
				}
			}
		})
	}
}

type discard struct{}

func (discard) Send(f *wire.Frame) bool { _, _ = f.Bytes(wire.Binary); return true }

// A join's replay reads the stream itself and may run ahead of the table's
// feed. A client that answers what the replay showed it (a seat's client
// seed for a replayed HandCommitted) must not be taken for seatless until
// the feed catches up: Seat is the replay's answer meanwhile.
func TestSeat_AJoinAheadOfTheFeedKeepsTheSeatItReplayed(t *testing.T) {
	e := newEnv(t)
	h := e.hub(t, Options{})
	ctx := context.Background()
	e.publish(t, "t1", seated(1, "bob"))
	w, _, err := h.Join(ctx, "t1", "watcher", "", newSink()) // the feed exists and is up to date
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// Appended without its bell: the replay will read it, the feed has
	// not heard of it.
	data, err := proto.Marshal(seated(0, "ana"))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.rdb.XAdd(ctx, &redis.XAddArgs{Stream: streams.TableEvents("t1"), Values: []any{streams.FieldData, data}}).Err(); err != nil {
		t.Fatal(err)
	}
	sub, res, err := h.Join(ctx, "t1", "ana", "", newSink())
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if res.Seat != 0 {
		t.Fatalf("the join's replay gives seat %d, want 0", res.Seat)
	}
	if got := sub.Seat(); got != 0 {
		t.Fatalf("Seat() = %d right after a join that replayed ana's seating, want 0", got)
	}
}

// publishPacked appends host with the legal moves lm (binary) packed into
// its entry, as a runner does (wire.FieldLegal).
func (e *env) publishPacked(t *testing.T, table string, host *tablev1.Event, lm []byte) string {
	t.Helper()
	data, err := proto.Marshal(host)
	if err != nil {
		t.Fatal(err)
	}
	id, err := e.pub.Publish(context.Background(), streams.Entry{Stream: streams.TableEvents(table), Data: data,
		Header: map[string]string{wire.FieldLegal: string(lm)}})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// legalFor is seat's legal moves as a runner packs them.
func legalFor(seat uint32) []byte {
	b, err := proto.Marshal(&tablev1.LegalMoves{Seat: seat, Phase: tablev1.Phase_PHASE_BID, Bids: []uint32{0, 1, 3}})
	if err != nil {
		panic(err)
	}
	return b
}

// legalOn is, per event frame received, the seat whose legal moves rode on
// it (-1: none).
func (s *sink) legalOn() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for _, f := range s.frames {
		if e := f.GetEvent(); e != nil {
			if l := e.GetLegal(); l != nil {
				out = append(out, int(l.GetSeat()))
			} else {
				out = append(out, -1)
			}
		}
	}
	return out
}

// TestJoin_PackedLegalMovesReachOnlyTheirSeat: the legal moves a runner
// packs into the entry of the public event before them ride on that seat's
// copy of the event's frame, live and replayed, and on nobody else's; an
// entry that packs them into a private event, or packs bytes that are not
// moves, reaches nobody (fail closed).
func TestJoin_PackedLegalMovesReachOnlyTheirSeat(t *testing.T) {
	e := newEnv(t)
	h := e.hub(t, Options{})
	ctx := context.Background()
	e.publish(t, "t1", seated(0, "ana"))
	e.publish(t, "t1", seated(1, "bob"))
	e.publishPacked(t, "t1", bid(1), legalFor(0))
	e.publishPacked(t, "t1", dealt(1), legalFor(1))            // a private host: refused whole
	e.publishPacked(t, "t1", bid(0), []byte{0x08, 0xff, 0xff}) // undecodable moves: refused whole
	want := map[string][]int{"ana": {-1, -1, 0}, "bob": {-1, -1, -1}, "watcher": {-1, -1, -1}}
	sinks := map[string]*sink{}
	for _, p := range []string{"ana", "bob", "watcher"} {
		s := newSink()
		sub, _, err := h.Join(ctx, "t1", p, "", s)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		sinks[p] = s
		if got := s.legalOn(); !slices.Equal(got, want[p]) {
			t.Fatalf("%s replayed: legal moves on frames %v, want %v", p, got, want[p])
		}
	}
	e.publishPacked(t, "t1", bid(0), legalFor(1))
	e.publish(t, "t1", bid(1))
	want["ana"] = append(want["ana"], -1, -1)
	want["bob"] = append(want["bob"], 1, -1)
	want["watcher"] = append(want["watcher"], -1, -1)
	for p, s := range sinks {
		s.waitEvents(t, len(want[p]))
		if got := s.legalOn(); !slices.Equal(got, want[p]) {
			t.Fatalf("%s live: legal moves on frames %v, want %v", p, got, want[p])
		}
	}
}
