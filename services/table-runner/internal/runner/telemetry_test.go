package runner

import (
	"context"
	"slices"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	oteltrace "go.opentelemetry.io/otel/trace"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/streams"
)

// The step's telemetry: the apply histogram by input kind (its attribute
// sets are built once, not per step) and, on sampled traces, a table.apply
// span naming the table and the input.
func TestRunner_StepsAreMeasuredByInputKindAndTracedWithTheTable(t *testing.T) {
	_, rdb := startRedis(t)
	reader := sdkmetric.NewManualReader()
	spans := tracetest.NewSpanRecorder()
	opt := testOptions("r1")
	opt.Assigner = true
	opt.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	opt.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	startRunner(t, rdb, opt)
	publishStart(t, rdb, classicStart("tel", 3))
	waitEvent(t, rdb, "tel", "0", 30*time.Second, "a trick", isKind("trick_won"))

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	byInput := map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "pulka.runner.apply.duration" {
				continue
			}
			for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				v, _ := dp.Attributes.Value("input")
				byInput[v.AsString()] += dp.Count
			}
		}
	}
	// Four bots play by ticks (their delay is a deadline), nothing else.
	if byInput[inputTick] == 0 || len(byInput) != 1 {
		t.Fatalf("apply durations by input = %v, want ticks only", byInput)
	}

	var applied int
	for _, s := range spans.Ended() {
		if s.Name() != "table.apply" {
			continue
		}
		applied++
		attrs := attribute.NewSet(s.Attributes()...)
		if v, _ := attrs.Value("pulka.table_id"); v.AsString() != "tel" {
			t.Fatalf("table.apply span attributes %v, want pulka.table_id=tel", s.Attributes())
		}
		if v, _ := attrs.Value("pulka.input"); v.AsString() == "" {
			t.Fatalf("table.apply span attributes %v, want pulka.input", s.Attributes())
		}
	}
	if applied == 0 {
		t.Fatal("no table.apply span was recorded")
	}
}

// A player's command continues the trace its entry carries (docs/telemetry.md,
// "The spans of one move"): the runner's process span of the command entry is
// a child of the entry's publish span, and the step's table.apply span a
// child of that process span, so a move is one trace from the gateway's frame
// through the runner.
func TestRunner_ACommandsStepIsInTheTraceItsEntryCarries(t *testing.T) {
	_, rdb := startRedis(t)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	opt := testOptions("r1")
	opt.Assigner = true
	opt.TracerProvider = tp
	r := startRunner(t, rdb, opt)
	ts := japaneseStart("trc", 5, 11, "alice", "bob")
	publishStart(t, rdb, ts)
	d := newJDriver(t, rdb, ts)
	d.followLogged()
	// A table that has just opened reads its backlog itself, and continues
	// each entry's trace without a process span of the runner's reader;
	// this test is about the live path, through the reader.
	waitFor(t, 5*time.Second, "the table to take its commands from the runner's reader", func() bool {
		r.mu.Lock()
		s := r.byStream[streams.TableCommands("trc")]
		r.mu.Unlock()
		return s != nil && !s.needCatchUp()
	})
	d.sync()
	seat := d.g.ToMove()
	m, ok := japanese.Bot{}.Choose(d.g, seat)
	if !ok {
		t.Fatalf("no move for seat %d", seat)
	}

	// The gateway's part, in short: a frame's span, and the command entry
	// published under it.
	ctx, frame := tp.Tracer("gateway").Start(context.Background(), "ws play")
	id := sendWith(t, ctx, streams.NewPublisher(rdb, streams.WithTracerProvider(tp)), "trc", d.players[seat], commandOf(m))
	frame.End()
	waitEvent(t, rdb, "trc", d.after, 5*time.Second, "the move of command "+id, func(e *tablev1.Event) bool {
		return e.GetCausedBy() == id
	})

	trace := frame.SpanContext().TraceID()
	var inTrace []sdktrace.ReadOnlySpan
	waitFor(t, 5*time.Second, "the step's table.apply span", func() bool {
		inTrace = inTrace[:0]
		found := false
		for _, s := range spans.Ended() {
			if s.SpanContext().TraceID() == trace {
				inTrace = append(inTrace, s)
				found = found || s.Name() == "table.apply"
			}
		}
		return found
	})
	byID := map[oteltrace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range inTrace {
		byID[s.SpanContext().SpanID()] = s
	}
	var chain []string
	for _, s := range inTrace {
		if s.Name() != "table.apply" {
			continue
		}
		for p := s; ; {
			chain = append(chain, p.Name())
			parent, ok := byID[p.Parent().SpanID()]
			if !ok {
				break
			}
			p = parent
		}
		break
	}
	want := []string{"table.apply", "process " + streams.StreamClass(streams.TableCommands("trc")),
		"publish " + streams.StreamClass(streams.TableCommands("trc")), "ws play"}
	if !slices.Equal(chain, want) {
		t.Fatalf("the step's span and its ancestors = %v, want %v", chain, want)
	}
}
