package streams

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

const instrumentationName = "github.com/pulka/pulka/pkg/streams"

// Attribute keys follow the OpenTelemetry messaging conventions where one
// exists.
var (
	attrSystem     = attribute.String("messaging.system", "redis")
	keyDestination = attribute.Key("messaging.destination.name")
	keyGroup       = attribute.Key("messaging.consumer.group.name")
	keyMessageID   = attribute.Key("messaging.message.id")
	keyOutcome     = attribute.Key("outcome")
	keyDeliveries  = attribute.Key("messaging.redis.deliveries")
)

type telemetry struct {
	group      string // the consumer group, "" for publishers and tailers
	tracer     trace.Tracer
	propagator propagation.TextMapPropagator
	// plainTraceContext: the propagator is the W3C trace context alone, which
	// writes nothing for an invalid span context.
	plainTraceContext bool
	// recording: spans may be recorded (the provider is not the no-op
	// default), so span attributes are worth building.
	recording bool

	// metas caches streamMeta by stream name. A plain map under a read
	// lock: sync.Map would box the name into an interface, an allocation
	// for every lookup with a freshly read name.
	metasMu sync.RWMutex
	metas   map[string]*streamMeta

	published    metric.Int64Counter
	consumed     metric.Int64Counter
	handlerTime  metric.Float64Histogram
	redelivered  metric.Int64Counter
	deadLettered metric.Int64Counter
	publishErrs  metric.Int64Counter
	fromBell     metric.Int64Counter
}

func newTelemetry(s *settings, group string) *telemetry {
	m := s.meterProvider.Meter(instrumentationName)
	t := &telemetry{
		group:      group,
		metas:      map[string]*streamMeta{},
		tracer:     s.tracerProvider.Tracer(instrumentationName),
		propagator: s.propagator,
	}
	_, t.plainTraceContext = s.propagator.(propagation.TraceContext)
	_, noop := s.tracerProvider.(tracenoop.TracerProvider)
	t.recording = !noop
	// Instrument constructors only fail on invalid names; ours are constant,
	// and a failing one still returns a usable no-op instrument.
	t.published, _ = m.Int64Counter("pulka.streams.published",
		metric.WithDescription("Entries appended to a stream."), metric.WithUnit("{message}"))
	t.publishErrs, _ = m.Int64Counter("pulka.streams.publish.errors",
		metric.WithDescription("Appends that failed (including fenced appends refused as stale)."), metric.WithUnit("{message}"))
	t.consumed, _ = m.Int64Counter("pulka.streams.consumed",
		metric.WithDescription("Messages handed to a handler, by outcome."), metric.WithUnit("{message}"))
	t.handlerTime, _ = m.Float64Histogram("pulka.streams.handler.duration",
		metric.WithDescription("Handler run time."), metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5))
	t.redelivered, _ = m.Int64Counter("pulka.streams.redelivered",
		metric.WithDescription("Messages reclaimed from an idle consumer and delivered again."), metric.WithUnit("{message}"))
	t.deadLettered, _ = m.Int64Counter("pulka.streams.dead_lettered",
		metric.WithDescription("Messages moved to the dead-letter stream."), metric.WithUnit("{message}"))
	t.fromBell, _ = m.Int64Counter("pulka.streams.tail.from_bell",
		metric.WithDescription("Entries a Tailer delivered from the bell that carried them, without reading the stream (of pulka.streams.consumed)."),
		metric.WithUnit("{message}"))
	return t
}

// streamMeta is what the hot path needs per stream, computed once: the
// stream class, the span options derived from it, and the metric attribute
// sets (class, the telemetry's group, and an outcome) so that no message
// builds or looks them up again.
type streamMeta struct {
	class       string
	publishName string
	publishOpts []trace.SpanStartOption
	processName string
	// Attribute sets by outcome, as ready-made variadic arguments: passing
	// one option to Add or Record makes a new one-element slice on the heap
	// for every call.
	add    [3][]metric.AddOption
	record [3][]metric.RecordOption
}

// Outcomes of a measurement: the `outcome` attribute is absent, "ok" or
// "error".
const (
	outcomeNone = iota
	outcomeOK
	outcomeError
)

// addOpts is the attribute set of a counter increment about stream.
func (t *telemetry) addOpts(stream string, outcome int) []metric.AddOption {
	return t.meta(stream).add[outcome]
}

// recordOpts is the attribute set of a histogram record about stream.
func (t *telemetry) recordOpts(stream string, outcome int) []metric.RecordOption {
	return t.meta(stream).record[outcome]
}

// meta caches streamMeta per stream name; thousands of tables mean
// thousands of entries of a few hundred bytes.
func (t *telemetry) meta(stream string) *streamMeta {
	t.metasMu.RLock()
	m, ok := t.metas[stream]
	t.metasMu.RUnlock()
	if ok {
		return m
	}
	class := StreamClass(stream)
	m = &streamMeta{
		class:       class,
		publishName: "publish " + class,
		processName: "process " + class,
		publishOpts: []trace.SpanStartOption{
			trace.WithSpanKind(trace.SpanKindProducer),
			trace.WithAttributes(attrSystem, keyDestination.String(class)),
		},
	}
	for outcome, name := range [3]string{outcomeNone: "", outcomeOK: "ok", outcomeError: "error"} {
		kv := []attribute.KeyValue{keyDestination.String(class)}
		if t.group != "" {
			kv = append(kv, keyGroup.String(t.group))
		}
		if name != "" {
			kv = append(kv, keyOutcome.String(name))
		}
		o := metric.WithAttributeSet(attribute.NewSet(kv...))
		m.add[outcome] = []metric.AddOption{o}
		m.record[outcome] = []metric.RecordOption{o}
	}
	t.metasMu.Lock()
	defer t.metasMu.Unlock()
	if existing, ok := t.metas[stream]; ok {
		return existing
	}
	t.metas[stream] = m
	return m
}

// startPublish opens the producer span of one entry and returns the trace
// fields to store with it (nil when there are none).
func (t *telemetry) startPublish(ctx context.Context, stream string) (context.Context, trace.Span, *injectCarrier) {
	var span trace.Span
	if t.recording {
		m := t.meta(stream)
		ctx, span = t.tracer.Start(ctx, m.publishName, m.publishOpts...)
	} else {
		// A no-op tracer's span would only carry the caller's span context,
		// which the propagator reads from ctx just the same; starting it
		// costs a context per entry.
		span = noopSpan
	}
	if t.plainTraceContext && !trace.SpanContextFromContext(ctx).IsValid() {
		// Nothing to propagate (no caller trace, no-op tracer): skip the
		// carrier on the hot path.
		return ctx, span, nil
	}
	c := &injectCarrier{}
	t.propagator.Inject(ctx, c)
	return ctx, span, c
}

func endSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// startConsume continues the publisher's trace: the handler span's parent is
// the producer span stored in the entry.
func (t *telemetry) startConsume(ctx context.Context, m Message, group string) (context.Context, trace.Span) {
	if !m.trace.empty() {
		ctx = t.propagator.Extract(ctx, m.trace)
	}
	meta := t.meta(m.Stream)
	if !t.recording {
		// The no-op tracer records nothing, but its span still carries the
		// extracted parent, so the handler's own publishes continue the
		// trace; building attributes for it would only make garbage. With
		// no parent at all it would only wrap ctx in a new context.
		if !trace.SpanContextFromContext(ctx).IsValid() {
			return ctx, noopSpan
		}
		return t.tracer.Start(ctx, meta.processName, consumerKind)
	}
	ctx, span := t.tracer.Start(ctx, meta.processName, consumerKind)
	// Attributes only for a span that keeps them: most are not sampled,
	// and building them was garbage on the hot path.
	if span.IsRecording() {
		span.SetAttributes(attrSystem, keyDestination.String(meta.class), keyMessageID.String(m.ID))
		if group != "" {
			span.SetAttributes(keyGroup.String(group), keyDeliveries.Int64(m.Deliveries))
		}
	}
	return ctx, span
}

var (
	consumerKind = trace.WithSpanKind(trace.SpanKindConsumer)
	noopSpan     = trace.SpanFromContext(context.Background()) // End does nothing
)

func seconds(d time.Duration) float64 { return d.Seconds() }
