package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// services are tracer providers exporting to the sink over OTLP/HTTP, as
// the services do when run with OTEL_EXPORTER_OTLP_ENDPOINT.
func exportingProviders(t *testing.T, addr string, names ...string) map[string]*sdktrace.TracerProvider {
	t.Helper()
	out := map[string]*sdktrace.TracerProvider{}
	for _, name := range names {
		exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL("http://"+addr+"/v1/traces"))
		if err != nil {
			t.Fatal(err)
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp),
			sdktrace.WithResource(resource.NewSchemaless(semconv.ServiceName(name))))
		t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
		out[name] = tp
	}
	return out
}

// TestStages_SplitAMoveByItsSpansAcrossTheServices builds one move's trace
// as the gateway and the runner record it, exports it over OTLP/HTTP, and
// checks each stage against the spans' times.
func TestStages_SplitAMoveByItsSpansAcrossTheServices(t *testing.T) {
	sink, err := listenStages("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sink.Close(context.Background()) })
	tps := exportingProviders(t, sink.addr, serviceGateway, serviceRunner, "scoring")
	tr := func(svc string) trace.Tracer { return tps[svc].Tracer("test") }

	t0 := time.Unix(1_800_000_000, 0)
	at := func(ms float64) time.Time { return t0.Add(time.Duration(ms * float64(time.Millisecond))) }
	span := func(ctx context.Context, svc, name string, from, to float64) context.Context {
		ctx, sp := tr(svc).Start(ctx, name, trace.WithTimestamp(at(from)))
		sp.End(trace.WithTimestamp(at(to)))
		return ctx
	}
	// remote continues a trace in another process, as a stream entry's
	// trace context does.
	remote := func(ctx context.Context) context.Context {
		return trace.ContextWithRemoteSpanContext(context.Background(), trace.SpanContextFromContext(ctx))
	}
	move := func(from float64, name string, writes bool) {
		root := span(context.Background(), serviceGateway, name, from, from+0.4)
		// The runner reads the entry before its append's span ends (the
		// reply is still on its way back): stages cut where appends begin.
		cmd := span(root, serviceGateway, "pulka.table.commands publish", from+0.1, from+1.2)
		read := span(remote(cmd), serviceRunner, "pulka.table.commands process", from+1.0, from+3.0)
		apply := span(read, serviceRunner, "table.apply", from+1.1, from+2.9)
		event := span(apply, serviceRunner, "pulka.table.events publish", from+2.0, from+3.1)
		scored := span(apply, serviceRunner, "pulka.scoring publish", from+1.5, from+1.8) // ends first, read by scoring only
		span(remote(scored), "scoring", "pulka.scoring process", from+2.0, from+2.2)
		tail := span(remote(event), serviceGateway, "pulka.table.events process", from+3.0, from+3.2)
		if writes {
			span(tail, serviceGateway, spanWSWrite, from+3.5, from+4.0)
			span(tail, serviceGateway, spanWSWrite, from+3.6, from+4.5)
		}
	}
	move(0, "ws play", true)
	move(10, "ws bid", true)
	move(20, "ws play", false)                                   // no client written: incomplete
	move(-10, "ws play", true)                                   // before the window
	move(100, "ws play", true)                                   // after it
	span(context.Background(), serviceGateway, spanWSJoin, 1, 2) // not a move

	r := sink.report(t0, at(50))
	if r.moves != 2 || r.incomplete != 1 {
		t.Fatalf("moves %d incomplete %d, want 2 and 1 (%d spans received)", r.moves, r.incomplete, r.spans)
	}
	// An exporter that retried sends the same spans again: each counts once.
	sink.mu.Lock()
	sink.spans = append(sink.spans, sink.spans...)
	sink.mu.Unlock()
	if again := sink.report(t0, at(50)); again.moves != 2 || again.incomplete != 1 {
		t.Fatalf("with every span twice: moves %d incomplete %d, want 2 and 1", again.moves, again.incomplete)
	}
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	want := [numStages]time.Duration{
		stageGatewayIn:  ms(0.1), // read 0 → its append begins at 0.1
		stageToRunner:   ms(0.9), // → read by the runner at 1.0
		stageRunner:     ms(1.0), // → the event's append begins at 2.0 (not the scoring entry's at 1.5, read by no gateway)
		stageToGateway:  ms(1.0), // → the gateway reads it at 3.0
		stageGatewayOut: ms(1.5), // → the last client's frame written at 4.5
		stageTotal:      ms(4.5),
	}
	for i, w := range want {
		for _, got := range r.stages[i] {
			if d := got - w; d < -time.Microsecond || d > time.Microsecond {
				t.Errorf("%s: %v, want %v", stageNames[i], got, w)
			}
		}
	}
}

// TestStages_RefuseWhatIsNotATraceExport: the sink answers anything else
// with a clear error and keeps nothing of it.
func TestStages_RefuseWhatIsNotATraceExport(t *testing.T) {
	sink, err := listenStages("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sink.Close(context.Background()) })
	base := "http://" + sink.addr
	var bomb bytes.Buffer // a small body inflating past the limit
	zw := gzip.NewWriter(&bomb)
	_, _ = zw.Write(make([]byte, maxSpanBody+1))
	_ = zw.Close()
	for _, c := range []struct {
		method, path string
		body         []byte
		gzip         bool
		want         int
	}{
		{http.MethodGet, "/v1/traces", nil, false, http.StatusNotFound},
		{http.MethodPost, "/v1/metrics", []byte{}, false, http.StatusNotFound},
		{http.MethodPost, "/v1/traces", []byte("not protobuf \xff\xff\xff"), false, http.StatusBadRequest},
		{http.MethodPost, "/v1/traces", bomb.Bytes(), true, http.StatusRequestEntityTooLarge},
	} {
		req, _ := http.NewRequest(c.method, base+c.path, bytes.NewReader(c.body))
		if c.gzip {
			req.Header.Set("Content-Encoding", "gzip")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, resp.StatusCode, c.want)
		}
	}
	r := sink.report(time.Unix(0, 0), time.Now())
	if r.spans != 0 || r.rejected != 4 {
		t.Errorf("spans %d rejected %d, want 0 and 4", r.spans, r.rejected)
	}
	if got := r.String(); !bytes.Contains([]byte(got), []byte("no sampled move")) {
		t.Errorf("report %q does not say nothing was sampled", got)
	}
}
