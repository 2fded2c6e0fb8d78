package telemetry_test

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/pulka/pulka/pkg/telemetry"
)

// Every log line of a move goes through the handler, so its cost over the
// plain JSON handler should stay small.
func BenchmarkTraceHandler(b *testing.B) {
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled,
	})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)
	json := slog.NewJSONHandler(io.Discard, nil)
	for _, bc := range []struct {
		name   string
		logger *slog.Logger
	}{
		{"plain-json", slog.New(json)},
		{"trace", slog.New(telemetry.NewTraceHandler(json))},
		{"trace-grouped", slog.New(telemetry.NewTraceHandler(json)).WithGroup("move")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bc.logger.InfoContext(ctx, "card played", "table", "t1", "seat", 2)
			}
		})
	}
}
