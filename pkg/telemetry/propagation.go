package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/propagation"

	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
)

// Header names of the W3C trace context.
const (
	headerTraceparent = "traceparent"
	headerTracestate  = "tracestate"
)

// traceCarrier adapts a TraceContext message to the propagation API.
type traceCarrier struct{ tc *commonv1.TraceContext }

func (c traceCarrier) Get(key string) string {
	switch key {
	case headerTraceparent:
		return c.tc.GetTraceparent()
	case headerTracestate:
		return c.tc.GetTracestate()
	}
	return ""
}

func (c traceCarrier) Set(key, value string) {
	switch key {
	case headerTraceparent:
		c.tc.Traceparent = value
	case headerTracestate:
		c.tc.Tracestate = value
	}
}

func (c traceCarrier) Keys() []string { return []string{headerTraceparent, headerTracestate} }

// TraceContextFrom returns the W3C trace context of ctx's span, to put in a
// stream entry. It returns nil when ctx has no valid span, so the field is
// simply absent on the wire.
func TraceContextFrom(ctx context.Context) *commonv1.TraceContext {
	tc := &commonv1.TraceContext{}
	// The W3C propagator is stateless, so stream code needs no Telemetry
	// value to carry a trace across Redis.
	propagation.TraceContext{}.Inject(ctx, traceCarrier{tc})
	if tc.Traceparent == "" {
		return nil
	}
	return tc
}

// ContextWithTrace returns ctx carrying the remote span context of tc, so a
// span started from it continues the producer's trace. A nil or malformed tc
// leaves ctx unchanged.
func ContextWithTrace(ctx context.Context, tc *commonv1.TraceContext) context.Context {
	if tc == nil {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, traceCarrier{tc})
}
