package hub

import (
	"context"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/wire"
)

// tracedSink is a sink that records the span each frame was sent in.
type tracedSink struct {
	*sink
	mu    sync.Mutex
	spans []trace.SpanContext // the zero value for a frame sent untraced
}

func (s *tracedSink) Send(f *wire.Frame) bool {
	s.mu.Lock()
	s.spans = append(s.spans, trace.SpanContext{})
	s.mu.Unlock()
	return s.sink.Send(f)
}

func (s *tracedSink) SendTraced(f *wire.Frame, sc trace.SpanContext) bool {
	s.mu.Lock()
	s.spans = append(s.spans, sc)
	s.mu.Unlock()
	return s.sink.Send(f)
}

// A live event or sheet update whose entry the hub's tailer recorded (a
// sampled trace) goes to a TracedSink with the tailer's span of that entry,
// so the write joins the entry's trace; an unsampled one goes through Send;
// a plain Sink gets every frame through Send.
func TestFanOut_ARecordedEntrysFramesCarryItsSpanToTracedSinks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sampler sdktrace.Sampler
	}{
		{"sampled", sdktrace.ParentBased(sdktrace.AlwaysSample())},
		{"unsampled", sdktrace.ParentBased(sdktrace.NeverSample())},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithSampler(tc.sampler))
			e := newEnv(t)
			e.pub = streams.NewPublisher(e.rdb, streams.WithMaxLen(0), streams.WithTracerProvider(tp))
			h := e.hub(t, Options{TailerOptions: []streams.Option{streams.WithTracerProvider(tp)}})
			traced, plain := &tracedSink{sink: newSink()}, newSink()
			for _, s := range []Sink{traced, plain} {
				sub, _, err := h.Join(context.Background(), "t1", "w", "", s)
				if err != nil {
					t.Fatal(err)
				}
				defer sub.Close()
			}

			ctx, move := tp.Tracer("runner").Start(context.Background(), "table.apply")
			data, _ := proto.Marshal(public(bid(1)))
			if _, err := e.pub.Publish(ctx, streams.Entry{Stream: streams.TableEvents("t1"), Data: data}); err != nil {
				t.Fatal(err)
			}
			data, _ = proto.Marshal(&scoringv1.SheetUpdate{Version: 1, Sheet: &scoringv1.Sheet{TableId: "t1"}})
			if _, err := e.pub.Publish(ctx, streams.Entry{Stream: SheetStream("t1"), Data: data}); err != nil {
				t.Fatal(err)
			}
			move.End()
			for _, s := range []*sink{traced.sink, plain} {
				for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
					s.mu.Lock()
					n := len(s.frames)
					s.mu.Unlock()
					if n == 2 {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("%d frames, want the event and the sheet", n)
					}
				}
			}

			traced.mu.Lock()
			got := append([]trace.SpanContext(nil), traced.spans...)
			traced.mu.Unlock()
			if len(got) != 2 {
				t.Fatalf("%d frames through the traced sink, want 2", len(got))
			}
			recorded := map[trace.SpanID]sdktrace.ReadOnlySpan{}
			for _, s := range rec.Ended() {
				recorded[s.SpanContext().SpanID()] = s
			}
			for i, sc := range got {
				if !move.SpanContext().IsSampled() {
					if sc.IsValid() {
						t.Fatalf("frame %d of an unsampled move sent in span %v, want through Send", i, sc)
					}
					continue
				}
				// The sink is called inside the tailer's span, before it ends.
				for deadline := time.Now().Add(5 * time.Second); recorded[sc.SpanID()] == nil && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
					for _, s := range rec.Ended() {
						recorded[s.SpanContext().SpanID()] = s
					}
				}
				span := recorded[sc.SpanID()]
				if sc.TraceID() != move.SpanContext().TraceID() || span == nil || span.SpanKind() != trace.SpanKindConsumer {
					t.Fatalf("frame %d sent in span %v, want the tailer's span of its entry in trace %s", i, sc, move.SpanContext().TraceID())
				}
			}
		})
	}
}
