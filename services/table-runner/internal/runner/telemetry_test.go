package runner

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
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
