package ws

import (
	"context"
	"sync"
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

// tracing is an SDK tracer provider recording the spans it samples, shared
// by the gateway (its frames and its hub's tailer) and by the test's
// publisher, which stands in for the table-runner.
type tracing struct {
	tp    *sdktrace.TracerProvider
	spans *tracetest.SpanRecorder
}

// newTracedEnv is an env whose publisher and gateways trace with sampler.
func newTracedEnv(t *testing.T, sampler sdktrace.Sampler) (*env, *tracing) {
	t.Helper()
	e := newEnv(t)
	tr := &tracing{spans: tracetest.NewSpanRecorder()}
	tr.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tr.spans), sdktrace.WithSampler(sampler))
	t.Cleanup(func() { _ = tr.tp.Shutdown(context.Background()) }) // after the gateways' cleanups
	e.pub = streams.NewPublisher(e.rdb, streams.WithMaxLen(0), streams.WithTracerProvider(tr.tp))
	e.tailer = []streams.Option{streams.WithTracerProvider(tr.tp)}
	return e, tr
}

// gateway starts a gateway instance whose frames are traced by tracer.
func (e *env) tracedGateway(t *testing.T, tracer trace.Tracer) *gateway {
	t.Helper()
	return e.gatewayCfg(t, Config{}, func(d *Deps) { d.Tracer = tracer })
}

// ended waits until the ended spans satisfy ok (a span ends after the work
// it covers, so a client may see the frame first) and returns them.
func (tr *tracing) ended(t *testing.T, what string, ok func([]sdktrace.ReadOnlySpan) bool) []sdktrace.ReadOnlySpan {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		spans := tr.spans.Ended()
		if ok(spans) {
			return spans
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: never recorded; spans: %s", what, spanList(spans))
		}
	}
}

func spanList(spans []sdktrace.ReadOnlySpan) string {
	s := ""
	for _, sp := range spans {
		s += sp.Name() + " (" + sp.SpanContext().TraceID().String()[:8] + ") "
	}
	return s
}

func named(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

func byID(spans []sdktrace.ReadOnlySpan) map[trace.SpanID]sdktrace.ReadOnlySpan {
	m := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		m[s.SpanContext().SpanID()] = s
	}
	return m
}

// commandEntry reads the command with id from the table's command stream.
func (e *env) commandEntry(t *testing.T, table, id string) (streams.Message, *tablev1.Command) {
	t.Helper()
	msgs, err := streams.ReadAfter(context.Background(), e.rdb, streams.TableCommands(table), "0", 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		var cmd tablev1.Command
		if proto.Unmarshal(m.Data, &cmd) == nil && cmd.CommandId == id {
			return m, &cmd
		}
	}
	t.Fatalf("no command %s in the command stream of %s", id, table)
	return streams.Message{}, nil
}

// bidTraced has player ana join table t1 and bid (command id ana/k1) on a
// gateway whose spans are sampled by sampler and recorded by tr.
func bidTraced(t *testing.T, sampler sdktrace.Sampler) (*env, *tracing) {
	t.Helper()
	e, tr := newTracedEnv(t, sampler)
	g := e.tracedGateway(t, tr.tp.Tracer("gateway"))
	e.publish(t, "t1", seated(0, "ana")) // only a seated player's commands go through
	c := g.login(t, "ana")
	c.send(map[string]any{"join": map[string]any{"table": "t1"}})
	c.nextOf("joined")
	c.send(map[string]any{"ref": "m1", "command": map[string]any{"table": "t1", "cmd": "k1", "bid": map[string]any{"tricks": 2}}})
	c.nextOf("ack")
	return e, tr
}

// A command frame is a span of its own, a root: the move's trace starts at
// the WebSocket frame. The command entry carries it twice — Command.trace is
// the frame's span, the entry's traceparent the publish span under it — so
// the table-runner, which continues the entry's trace, is a child.
func TestTrace_ACommandFrameStartsTheTraceTheCommandEntryCarries(t *testing.T) {
	e, tr := bidTraced(t, sdktrace.ParentBased(sdktrace.AlwaysSample()))

	spans := tr.ended(t, "the bid frame's span", func(s []sdktrace.ReadOnlySpan) bool { return len(named(s, "ws bid")) > 0 })
	frame := named(spans, "ws bid")[0]
	if frame.Parent().IsValid() {
		t.Fatalf("the frame's span has parent %v; a frame starts the move's trace", frame.Parent())
	}
	if frame.SpanKind() != trace.SpanKindProducer {
		t.Fatalf("the frame's span is a %v span, want a producer", frame.SpanKind())
	}
	attrs := map[string]string{}
	for _, kv := range frame.Attributes() {
		attrs[string(kv.Key)] = kv.Value.AsString()
	}
	if attrs["table"] != "t1" || attrs["command_id"] != "ana/k1" {
		t.Fatalf("the frame's span attributes = %v", attrs)
	}

	m, cmd := e.commandEntry(t, "t1", "ana/k1")
	inCmd := trace.SpanContextFromContext(telemetry.ContextWithTrace(context.Background(), cmd.GetTrace()))
	if inCmd.TraceID() != frame.SpanContext().TraceID() || inCmd.SpanID() != frame.SpanContext().SpanID() || !inCmd.IsSampled() {
		t.Fatalf("Command.trace = %v, want the frame's span %v", cmd.GetTrace(), frame.SpanContext())
	}
	inEntry := trace.SpanContextFromContext(m.Context(context.Background()))
	publish, ok := byID(tr.spans.Ended())[inEntry.SpanID()]
	if !ok || inEntry.TraceID() != frame.SpanContext().TraceID() {
		t.Fatalf("the entry's trace context %v is no span of the frame's trace %s; spans: %s",
			inEntry, frame.SpanContext().TraceID(), spanList(tr.spans.Ended()))
	}
	if publish.Parent().SpanID() != frame.SpanContext().SpanID() || publish.SpanKind() != trace.SpanKindProducer {
		t.Fatalf("the entry's span %q (%v) has parent %v, want the frame's span", publish.Name(), publish.SpanKind(), publish.Parent())
	}

	// The runner's side: a span started from the entry is in the frame's trace.
	_, runner := tr.tp.Tracer("runner").Start(m.Context(context.Background()), "table.apply")
	runner.End()
	applied := named(tr.spans.Ended(), "table.apply")[0]
	if applied.SpanContext().TraceID() != frame.SpanContext().TraceID() || applied.Parent().SpanID() != publish.SpanContext().SpanID() {
		t.Fatalf("the runner's span is in trace %s under %v, want trace %s under the entry's span",
			applied.SpanContext().TraceID(), applied.Parent(), frame.SpanContext().TraceID())
	}
}

// Without an exporter the sampler records nothing (parentbased_always_off,
// docs/telemetry.md), yet the command still carries the frame's trace ids:
// the runner's logs and entries join the move's trace all the same.
func TestTrace_AnUnsampledCommandFrameStillCarriesItsTraceIDs(t *testing.T) {
	e, tr := bidTraced(t, sdktrace.ParentBased(sdktrace.NeverSample()))

	m, cmd := e.commandEntry(t, "t1", "ana/k1")
	inCmd := trace.SpanContextFromContext(telemetry.ContextWithTrace(context.Background(), cmd.GetTrace()))
	inEntry := trace.SpanContextFromContext(m.Context(context.Background()))
	if !inCmd.IsValid() || inCmd.IsSampled() {
		t.Fatalf("Command.trace = %v, want an unsampled trace context", cmd.GetTrace())
	}
	if !inEntry.IsValid() || inEntry.IsSampled() || inEntry.TraceID() != inCmd.TraceID() {
		t.Fatalf("the entry's trace context = %v, want the unsampled trace %s", inEntry, inCmd.TraceID())
	}
	if spans := tr.spans.Ended(); len(spans) != 0 {
		t.Fatalf("unsampled, yet recorded: %s", spanList(spans))
	}
}

// An event's fan-out ends the move's trace: the write of the event to each
// client following the table is a span under the gateway's span of the event
// entry, itself under the runner's.
func TestTrace_AnEventsWriteToEveryClientJoinsTheEventsTrace(t *testing.T) {
	e, tr := newTracedEnv(t, sdktrace.ParentBased(sdktrace.AlwaysSample()))
	g := e.tracedGateway(t, tr.tp.Tracer("gateway"))
	players := []string{"ana", "bob"}
	var clients []*client
	for _, p := range players {
		c := g.login(t, p)
		c.send(map[string]any{"join": map[string]any{"table": "t1"}})
		c.nextOf("joined")
		clients = append(clients, c)
	}

	ctx, move := tr.tp.Tracer("runner").Start(context.Background(), "table.apply")
	data, _ := proto.Marshal(bidMade(0))
	id, err := e.pub.Publish(ctx, streams.Entry{Stream: streams.TableEvents("t1"), Data: data})
	if err != nil {
		t.Fatal(err)
	}
	move.End()
	for _, c := range clients {
		if f := c.nextOf("event"); f["id"] != id {
			t.Fatalf("event %v, want %s", f, id)
		}
	}

	inTrace := func(spans []sdktrace.ReadOnlySpan) []sdktrace.ReadOnlySpan {
		var out []sdktrace.ReadOnlySpan
		for _, s := range named(spans, "ws write") {
			if s.SpanContext().TraceID() == move.SpanContext().TraceID() {
				out = append(out, s)
			}
		}
		return out
	}
	spans := tr.ended(t, "a write span per client in the event's trace", func(s []sdktrace.ReadOnlySpan) bool {
		return len(inTrace(s)) == len(players)
	})
	if n := len(named(spans, "ws write")); n != len(players) {
		t.Fatalf("%d write spans, want %d (one per client, none for the welcomes and joins): %s", n, len(players), spanList(spans))
	}
	all := byID(spans)
	wrote := map[string]bool{}
	for _, w := range inTrace(spans) {
		for _, kv := range w.Attributes() {
			if kv.Key == "player" {
				wrote[kv.Value.AsString()] = true
			}
		}
		// write ← process (the gateway's tailer) ← publish ← table.apply
		process := all[w.Parent().SpanID()]
		if process == nil || process.SpanKind() != trace.SpanKindConsumer {
			t.Fatalf("the write's parent %v is not the gateway's span of the event entry; spans: %s", w.Parent(), spanList(spans))
		}
		publish := all[process.Parent().SpanID()]
		if publish == nil || publish.SpanKind() != trace.SpanKindProducer || publish.Parent().SpanID() != move.SpanContext().SpanID() {
			t.Fatalf("the event entry's span %v does not hang under the runner's span", process.Parent())
		}
	}
	for _, p := range players {
		if !wrote[p] {
			t.Fatalf("no write span for %s: %v", p, wrote)
		}
	}
}

// countingTracer counts the spans started by name, recorded or not.
type countingTracer struct {
	trace.Tracer
	mu      sync.Mutex
	started map[string]int
}

func (c *countingTracer) Start(ctx context.Context, name string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	c.mu.Lock()
	c.started[name]++
	c.mu.Unlock()
	return c.Tracer.Start(ctx, name, opts...)
}

func (c *countingTracer) count(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.started[name]
}

// The fan-out of an unsampled event — nearly every event, in production —
// starts no span per client: starting even an unrecorded one per write would
// be the cost docs/benchmarks.md measured and removed.
func TestTrace_AnUnsampledEventsWritesStartNoSpans(t *testing.T) {
	e, tr := newTracedEnv(t, sdktrace.ParentBased(sdktrace.NeverSample()))
	tracer := &countingTracer{Tracer: tr.tp.Tracer("gateway"), started: map[string]int{}}
	g := e.tracedGateway(t, tracer)
	c := g.login(t, "ana")
	c.send(map[string]any{"join": map[string]any{"table": "t1"}})
	c.nextOf("joined")

	ctx, move := tr.tp.Tracer("runner").Start(context.Background(), "table.apply")
	if move.SpanContext().IsSampled() || !move.SpanContext().IsValid() {
		t.Fatalf("the runner's span %v, want valid and unsampled", move.SpanContext())
	}
	data, _ := proto.Marshal(bidMade(0))
	id, err := e.pub.Publish(ctx, streams.Entry{Stream: streams.TableEvents("t1"), Data: data})
	if err != nil {
		t.Fatal(err)
	}
	move.End()
	if f := c.nextOf("event"); f["id"] != id {
		t.Fatalf("event %v, want %s", f, id)
	}
	if n := tracer.count("ws write"); n != 0 {
		t.Fatalf("%d write spans started for an unsampled event, want none", n)
	}
	if tracer.count("ws join") == 0 {
		t.Fatal("the counting tracer saw no span at all: it is not the gateway's")
	}
}
