package streams_test

import (
	"context"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
)

// One move is one trace: the consumer's handler span must be a child of
// the publisher's span, across Redis.
func TestTrace_ConsumerSpanIsChildOfPublishSpan(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := ctxT(t)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })

	stream := streams.TableCommands("tr")
	pub := streams.NewPublisher(rdb, streams.WithTracerProvider(tp))
	rootCtx, root := tp.Tracer("test").Start(ctx, "websocket frame")
	if _, err := pub.Publish(rootCtx, streams.Entry{Stream: stream}); err != nil {
		t.Fatal(err)
	}
	b := pub.NewBatcher(ctx, 8, 1)
	if _, err := b.Publish(rootCtx, streams.Entry{Stream: stream}); err != nil {
		t.Fatal(err)
	}
	b.Close()
	root.End()

	handled := make(chan trace.SpanContext, 4)
	c := streams.NewConsumer(rdb, "g", "c1", func(ctx context.Context, m streams.Message) error {
		handled <- trace.SpanContextFromContext(ctx)
		return nil
	}, fast(streams.WithTracerProvider(tp))...)
	if err := c.Add(ctx, stream); err != nil {
		t.Fatal(err)
	}
	tailed := make(chan trace.SpanContext, 4)
	tl := streams.NewTailer(rdb, func(ctx context.Context, m streams.Message) {
		tailed <- trace.SpanContextFromContext(ctx)
	}, streams.WithTracerProvider(tp))
	if err := tl.Add(ctx, stream, "0"); err != nil {
		t.Fatal(err)
	}
	runConsumer(t, c)
	runConsumer(t, tl)

	var handlerSCs []trace.SpanContext
	for _, ch := range []chan trace.SpanContext{handled, handled, tailed, tailed} {
		select {
		case sc := <-ch:
			handlerSCs = append(handlerSCs, sc)
		case <-time.After(5 * time.Second):
			t.Fatalf("message not handled")
		}
	}
	// Handler spans end after the handler returns; give them a moment.
	time.Sleep(100 * time.Millisecond)
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	var publishes []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		byID[s.SpanContext().SpanID()] = s
		if s.SpanKind() == trace.SpanKindProducer {
			publishes = append(publishes, s)
		}
	}
	if len(publishes) != 2 {
		t.Fatalf("%d producer spans, want 2", len(publishes))
	}
	for _, p := range publishes {
		if p.Parent().SpanID() != root.SpanContext().SpanID() {
			t.Errorf("publish span's parent is not the caller's span")
		}
	}
	for _, sc := range handlerSCs {
		if sc.TraceID() != root.SpanContext().TraceID() {
			t.Fatalf("handler runs in trace %s, want %s", sc.TraceID(), root.SpanContext().TraceID())
		}
		span, ok := byID[sc.SpanID()]
		if !ok {
			t.Fatalf("handler span %s not recorded", sc.SpanID())
		}
		if span.SpanKind() != trace.SpanKindConsumer {
			t.Errorf("handler span kind = %v", span.SpanKind())
		}
		parent := span.Parent().SpanID()
		if parent != publishes[0].SpanContext().SpanID() && parent != publishes[1].SpanContext().SpanID() {
			t.Errorf("handler span's parent %s is not a publish span", parent)
		}
		if !span.Parent().IsRemote() {
			t.Errorf("handler span's parent should be the remote publisher span")
		}
	}
}
