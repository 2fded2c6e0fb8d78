package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/telemetry"
)

// tracedServer starts a gateway tracing into an SDK provider that samples
// every trace and keeps the ended spans.
func tracedServer(t *testing.T) (*testServer, *sdktrace.TracerProvider, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.AlwaysSample())))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) }) // after the server's cleanup
	ts := startServer(t, testConfig(), nil, func(p *Parts) { p.Tracer = tp })
	return ts, tp, rec
}

// waitSpans waits until the ended spans satisfy ok: a span ends after the
// work it covers, which the client may see first.
func waitSpans(t *testing.T, rec *tracetest.SpanRecorder, what string, ok func([]sdktrace.ReadOnlySpan) bool) []sdktrace.ReadOnlySpan {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		spans := rec.Ended()
		if ok(spans) {
			return spans
		}
		if time.Now().After(deadline) {
			var names []string
			for _, s := range spans {
				names = append(names, s.Name())
			}
			t.Fatalf("%s: never recorded; spans: %v", what, names)
		}
	}
}

func spanNamed(spans []sdktrace.ReadOnlySpan, name string) sdktrace.ReadOnlySpan {
	for _, s := range spans {
		if s.Name() == name {
			return s
		}
	}
	return nil
}

func intAttr(s sdktrace.ReadOnlySpan, key string) int64 {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.AsInt64()
		}
	}
	return -1
}

// A request under /api/v1 is a server span named by its route (a table id
// in the name would make one span name per table), with its status; a
// lobby command the request sends carries that span's context. A request
// no route matched is named by its method alone.
func TestTrace_AnAPIRequestIsAServerSpanNamedByItsRoute(t *testing.T) {
	ts, _, rec := tracedServer(t)
	tok := ts.do(t, "POST", "/api/v1/session/guest", nil, nil).body["token"].(string)
	if r := ts.do(t, "POST", "/api/v1/tables/t1/sit", map[string]any{"seat": 1, "password": "sesame"}, bearer(tok)); r.status != http.StatusOK {
		t.Fatalf("sit: %d %v", r.status, r.body)
	}
	if r := ts.do(t, "GET", "/api/v1/no/such/thing", nil, nil); r.status != http.StatusNotFound {
		t.Fatalf("unknown path: %d", r.status)
	}

	spans := waitSpans(t, rec, "the requests' spans", func(s []sdktrace.ReadOnlySpan) bool {
		return spanNamed(s, "POST /api/v1/tables/:id/sit") != nil && spanNamed(s, "GET") != nil
	})
	for _, s := range spans {
		if strings.Contains(s.Name(), "t1") || strings.Contains(s.Name(), "no/such") {
			t.Fatalf("span %q is named by the request's path, not its route", s.Name())
		}
	}
	if s := spanNamed(spans, "POST /api/v1/session/guest"); s == nil || s.SpanKind() != trace.SpanKindServer {
		t.Fatalf("no server span for the guest session")
	}
	sit := spanNamed(spans, "POST /api/v1/tables/:id/sit")
	if sit.SpanKind() != trace.SpanKindServer || sit.Parent().IsValid() || intAttr(sit, "http.status_code") != http.StatusOK {
		t.Fatalf("sit span: kind %v, parent %v, status %d", sit.SpanKind(), sit.Parent(), intAttr(sit, "http.status_code"))
	}
	if s := spanNamed(spans, "GET"); intAttr(s, "http.status_code") != http.StatusNotFound {
		t.Fatalf("unknown path span status %d, want 404", intAttr(s, "http.status_code"))
	}

	ts.lobby.mu.Lock()
	cmd := ts.lobby.cmds[len(ts.lobby.cmds)-1]
	ts.lobby.mu.Unlock()
	sc := trace.SpanContextFromContext(telemetry.ContextWithTrace(context.Background(), cmd.GetTrace()))
	if cmd.GetSitDown() == nil || sc.TraceID() != sit.SpanContext().TraceID() || sc.SpanID() != sit.SpanContext().SpanID() {
		t.Fatalf("lobby command %v carries trace %v, want the request's span %v", cmd, cmd.GetTrace(), sit.SpanContext())
	}
}

// One move is one trace from the WebSocket frame to the last client write
// (docs/telemetry.md), through the gateway as it is wired for production:
// the bid frame's span is the root; the table-runner (played here by the
// test) continues the command entry's trace and publishes its event in it;
// the event's write to each client following the table is in it too.
func TestTrace_OneMoveIsOneTraceFromTheFrameToTheLastClientWrite(t *testing.T) {
	ts, tp, rec := tracedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var clients []*wsClient
	var players []string
	for i := range 2 { // a player and a watcher
		guest := ts.do(t, "POST", "/api/v1/session/guest", nil, nil).body
		players = append(players, guest["player"].(map[string]any)["id"].(string))
		if i == 0 { // only a seated player's commands go through
			seatAt(t, ts, "t1", 1, players[0])
		}
		c := ts.dialWS(ctx, t, guest["token"].(string))
		c.next(ctx, "welcome")
		c.send(ctx, joinFrame("t1"))
		c.next(ctx, "joined")
		clients = append(clients, c)
	}
	clients[0].send(ctx, bidFrame("t1", "b1", 2))
	clients[0].next(ctx, "ack")

	// The runner: continue the command entry's trace, publish the event in it.
	rdb := ts.redis.Client(t)
	msgs, err := streams.ReadAfter(ctx, rdb, streams.TableCommands("t1"), "0", 100)
	if err != nil {
		t.Fatal(err)
	}
	var bid *streams.Message
	for i, m := range msgs {
		var cmd tablev1.Command
		if proto.Unmarshal(m.Data, &cmd) == nil && cmd.GetBid() != nil {
			bid = &msgs[i]
		}
	}
	if bid == nil {
		t.Fatal("no bid in the command stream")
	}
	actx, apply := tp.Tracer("runner").Start(bid.Context(ctx), "table.apply")
	data, _ := proto.Marshal(&tablev1.Event{Visibility: &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_PUBLIC},
		Event: &tablev1.Event_BidMade{BidMade: &tablev1.BidMade{Seat: 1, Tricks: 2}}})
	id, err := streams.NewPublisher(rdb, streams.WithTracerProvider(tp)).Publish(actx, streams.Entry{Stream: streams.TableEvents("t1"), Data: data})
	if err != nil {
		t.Fatal(err)
	}
	apply.End()
	for _, c := range clients {
		if f := c.next(ctx, "event"); f.GetEvent().GetId() != id {
			t.Fatalf("event %v, want %s", f, id)
		}
	}

	move := apply.SpanContext().TraceID()
	writes := func(spans []sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
		var out []sdktrace.ReadOnlySpan
		for _, s := range spans {
			if s.Name() == "ws write" && s.SpanContext().TraceID() == move {
				out = append(out, s)
			}
		}
		return out
	}
	// A span is recorded when it ends, and the tailer's span of the event
	// ends once the hub has handed the frame to every client, which may be
	// after a client's writer has written it: wait for every ancestor of
	// the writes too (one never recorded fails the wait, as below).
	spans := waitSpans(t, rec, "a write span per client in the move's trace, and every span above them", func(s []sdktrace.ReadOnlySpan) bool {
		return len(writes(s)) == len(clients) && ancestorsRecorded(s, writes(s))
	})
	byID := spansByID(spans)
	for _, s := range spans {
		if s.SpanKind() == trace.SpanKindServer && strings.Contains(s.Name(), "/ws") {
			t.Fatalf("the WebSocket connection has a request span %q: its frames are the operations", s.Name())
		}
	}
	wrote := map[string]bool{}
	for _, w := range writes(spans) {
		for _, kv := range w.Attributes() {
			if kv.Key == "player" {
				wrote[kv.Value.AsString()] = true
			}
		}
		// Up from the write to the root, all recorded: the root is the frame.
		var path []string
		s := w
		for s.Parent().IsValid() {
			path = append(path, s.Name())
			parent, ok := byID[s.Parent().SpanID()]
			if !ok || parent.SpanContext().TraceID() != move {
				t.Fatalf("the trace breaks above %v: parent %v not recorded", path, s.Parent())
			}
			s = parent
		}
		path = append(path, s.Name())
		if s.Name() != "ws bid" || !hasAll(path, "table.apply", "ws write") {
			t.Fatalf("write span path to the root %v, want it to start at the bid frame's span and pass the runner's", path)
		}
	}
	for _, p := range players {
		if !wrote[p] {
			t.Fatalf("no write span for player %s in the move's trace: %v", p, wrote)
		}
	}
}

// spansByID indexes spans by their span id.
func spansByID(spans []sdktrace.ReadOnlySpan) map[trace.SpanID]sdktrace.ReadOnlySpan {
	byID := make(map[trace.SpanID]sdktrace.ReadOnlySpan, len(spans))
	for _, s := range spans {
		byID[s.SpanContext().SpanID()] = s
	}
	return byID
}

// ancestorsRecorded reports whether every parent of every span of leaves,
// up to its root, is among spans.
func ancestorsRecorded(spans, leaves []sdktrace.ReadOnlySpan) bool {
	byID := spansByID(spans)
	for _, s := range leaves {
		for s.Parent().IsValid() {
			parent, ok := byID[s.Parent().SpanID()]
			if !ok {
				return false
			}
			s = parent
		}
	}
	return true
}

func hasAll(names []string, want ...string) bool {
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	for _, w := range want {
		if !have[w] {
			return false
		}
	}
	return true
}

// seatAt publishes the event that seats player at table (as the table
// would), so that the gateway lets the player's commands through.
func seatAt(t *testing.T, ts *testServer, table string, seat uint32, player string) {
	t.Helper()
	data, _ := proto.Marshal(&tablev1.Event{Visibility: &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_PUBLIC},
		Event: &tablev1.Event_PlayerSeated{PlayerSeated: &tablev1.PlayerSeated{Seat: &tablev1.SeatPlayer{Seat: seat, PlayerId: player}}}})
	if _, err := streams.NewPublisher(ts.redis.Client(t)).Publish(context.Background(), streams.Entry{Stream: streams.TableEvents(table), Data: data}); err != nil {
		t.Fatal(err)
	}
}
