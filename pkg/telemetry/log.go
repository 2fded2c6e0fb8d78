package telemetry

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"
)

// Log keys of the trace correlation attributes (the names the OpenTelemetry
// log data model and most log backends expect).
const (
	LogKeyTraceID = "trace_id"
	LogKeySpanID  = "span_id"
)

// TraceHandler wraps a slog.Handler and adds trace_id and span_id of the span
// in the record's context (use the *Context logging methods). The ids are
// always written at the top level of the record, also under WithGroup, so
// that log backends find them in one place.
type TraceHandler struct {
	// root is the wrapped handler before any WithGroup; ops replays the
	// WithAttrs/WithGroup calls made on top of it.
	root    slog.Handler
	ops     []handlerOp
	grouped bool
	inner   slog.Handler
}

type handlerOp struct {
	group string
	attrs []slog.Attr
}

func (o handlerOp) apply(h slog.Handler) slog.Handler {
	if o.group != "" {
		return h.WithGroup(o.group)
	}
	return h.WithAttrs(o.attrs)
}

// NewTraceHandler wraps h.
func NewTraceHandler(h slog.Handler) *TraceHandler {
	return &TraceHandler{root: h, inner: h}
}

// Enabled reports whether the wrapped handler handles level.
func (h *TraceHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

// Handle writes r, with the trace ids of ctx's span when it has a valid one.
func (h *TraceHandler) Handle(ctx context.Context, r slog.Record) error {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return h.inner.Handle(ctx, r)
	}
	traceID := slog.String(LogKeyTraceID, sc.TraceID().String())
	spanID := slog.String(LogKeySpanID, sc.SpanID().String())
	if !h.grouped {
		r.AddAttrs(traceID, spanID)
		return h.inner.Handle(ctx, r)
	}
	// Under a group the record's own attributes belong to the group, so the
	// ids go on the root and the group chain is rebuilt on top. This costs
	// an allocation per record, only for grouped loggers.
	inner := h.root.WithAttrs([]slog.Attr{traceID, spanID})
	for _, op := range h.ops {
		inner = op.apply(inner)
	}
	return inner.Handle(ctx, r)
}

// WithAttrs returns a handler that adds attrs to every record.
func (h *TraceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	return h.with(handlerOp{attrs: attrs})
}

// WithGroup returns a handler that puts the record's attributes in group name.
func (h *TraceHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return h.with(handlerOp{group: name})
}

func (h *TraceHandler) with(op handlerOp) *TraceHandler {
	ops := make([]handlerOp, len(h.ops), len(h.ops)+1)
	copy(ops, h.ops)
	return &TraceHandler{
		root:    h.root,
		ops:     append(ops, op),
		grouped: h.grouped || op.group != "",
		inner:   op.apply(h.inner),
	}
}
