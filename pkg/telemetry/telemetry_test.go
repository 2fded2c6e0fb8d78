package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	"github.com/pulka/pulka/pkg/telemetry"
)

func setup(t *testing.T, cfg telemetry.Config) *telemetry.Telemetry {
	t.Helper()
	if cfg.LogWriter == nil {
		cfg.LogWriter = io.Discard
	}
	tel, err := telemetry.Setup(t.Context(), cfg)
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	t.Cleanup(func() {
		if err := tel.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})
	return tel
}

func TestLogger_WritesTraceIDsOfTheSpanInContext(t *testing.T) {
	tests := []struct {
		name   string
		inSpan bool
		logger func(*slog.Logger) *slog.Logger
	}{
		{name: "inside a span", inSpan: true, logger: func(l *slog.Logger) *slog.Logger { return l }},
		{name: "inside a span, grouped logger", inSpan: true, logger: func(l *slog.Logger) *slog.Logger {
			return l.With("table", "t1").WithGroup("move").With("seat", 2)
		}},
		{name: "no span", inSpan: false, logger: func(l *slog.Logger) *slog.Logger { return l }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			tel := setup(t, telemetry.Config{Service: "test", LogWriter: &buf})
			ctx := t.Context()
			var sc trace.SpanContext
			if tt.inSpan {
				var span trace.Span
				ctx, span = tel.Tracer("test").Start(ctx, "move")
				sc = span.SpanContext()
				defer span.End()
			}
			tt.logger(tel.Logger).InfoContext(ctx, "card played", "card", "AS")

			var line map[string]any
			if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
				t.Fatalf("log line is not JSON: %v\n%s", err, buf.String())
			}
			if got := line["service"]; got != "test" {
				t.Errorf("service = %v, want test", got)
			}
			gotTrace, hasTrace := line[telemetry.LogKeyTraceID]
			gotSpan, hasSpan := line[telemetry.LogKeySpanID]
			if !tt.inSpan {
				if hasTrace || hasSpan {
					t.Fatalf("ids written outside a span: %s", buf.String())
				}
				return
			}
			if gotTrace != sc.TraceID().String() || gotSpan != sc.SpanID().String() {
				t.Fatalf("trace_id, span_id = %v, %v; want %s, %s at the top level\n%s",
					gotTrace, gotSpan, sc.TraceID(), sc.SpanID(), buf.String())
			}
		})
	}
}

func TestLogger_LevelFiltersRecords(t *testing.T) {
	var buf bytes.Buffer
	tel := setup(t, telemetry.Config{LogWriter: &buf, LogLevel: slog.LevelWarn})
	tel.Logger.Info("dropped")
	tel.Logger.Warn("kept")
	if strings.Contains(buf.String(), "dropped") || !strings.Contains(buf.String(), "kept") {
		t.Fatalf("with level warn got:\n%s", buf.String())
	}
}

func TestMetricsHandler_ServesCounterFromMeterProvider(t *testing.T) {
	tel := setup(t, telemetry.Config{Service: "test"})
	moves, err := tel.Meter("pulka/test").Int64Counter("pulka_test_moves")
	if err != nil {
		t.Fatal(err)
	}
	moves.Add(t.Context(), 3)

	rec := httptest.NewRecorder()
	tel.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", rec.Code)
	}
	if !regexp.MustCompile(`(?m)^pulka_test_moves_total\{[^}]*\} 3$`).MatchString(rec.Body.String()) {
		t.Fatalf("counter not served as pulka_test_moves_total 3:\n%s", rec.Body.String())
	}
}

func TestSetup_UsesItsOwnRegistry(t *testing.T) {
	// Two services in one process (the local mode) must not collide on
	// collector registration, which they would on the default registry.
	a := setup(t, telemetry.Config{Service: "a"})
	b := setup(t, telemetry.Config{Service: "b"})
	c, err := a.Meter("pulka/test").Int64Counter("pulka_only_in_a")
	if err != nil {
		t.Fatal(err)
	}
	c.Add(t.Context(), 1)
	rec := httptest.NewRecorder()
	b.MetricsHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if strings.Contains(rec.Body.String(), "pulka_only_in_a") {
		t.Fatal("service b serves a metric recorded by service a")
	}
}

func TestShutdown_IsIdempotent(t *testing.T) {
	tel, err := telemetry.Setup(t.Context(), telemetry.Config{LogWriter: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := tel.Shutdown(t.Context()); err != nil {
			t.Fatalf("Shutdown #%d: %v", i+1, err)
		}
	}
}

func TestSetup_ExportsSpansToOTLPEndpoint(t *testing.T) {
	type export struct {
		path, contentType string
		spans             []string
	}
	got := make(chan export, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("read body: %v", err)
		}
		var req coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(body, &req); err != nil {
			t.Errorf("body is not an OTLP trace request: %v", err)
		}
		e := export{path: r.URL.Path, contentType: r.Header.Get("Content-Type")}
		for _, rs := range req.GetResourceSpans() {
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					e.spans = append(e.spans, s.GetName())
				}
			}
		}
		got <- e
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()

	tel, err := telemetry.Setup(t.Context(), telemetry.Config{
		Service: "test", LogWriter: io.Discard, OTLPEndpoint: srv.URL + "/",
	})
	if err != nil {
		t.Fatal(err)
	}
	_, span := tel.Tracer("test").Start(t.Context(), "play-card")
	span.End()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := tel.Shutdown(ctx); err != nil { // flushes the batch
		t.Fatalf("Shutdown: %v", err)
	}
	select {
	case e := <-got:
		if e.path != "/v1/traces" || e.contentType != "application/x-protobuf" {
			t.Errorf("export went to %s as %q; want /v1/traces as application/x-protobuf", e.path, e.contentType)
		}
		if len(e.spans) != 1 || e.spans[0] != "play-card" {
			t.Errorf("exported spans %v, want [play-card]", e.spans)
		}
	case <-ctx.Done():
		t.Fatal("no OTLP request arrived")
	}
}

func TestSetup_RejectsMalformedOTLPEndpoint(t *testing.T) {
	for _, ep := range []string{"otel-collector:4318", "ftp://x", "http://"} {
		_, err := telemetry.Setup(t.Context(), telemetry.Config{LogWriter: io.Discard, OTLPTracesEndpoint: ep})
		if !errors.Is(err, telemetry.ErrConfig) {
			t.Errorf("endpoint %q: err = %v, want ErrConfig", ep, err)
		}
	}
}

func TestConfigFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     map[string]string
		want    telemetry.Config
		wantErr error
	}{
		{name: "empty", env: nil, want: telemetry.Config{}},
		{name: "everything", env: map[string]string{
			"OTEL_SERVICE_NAME":                  "lobby",
			"OTEL_EXPORTER_OTLP_ENDPOINT":        "http://collector:4318",
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/custom",
			"LOG_LEVEL":                          "debug",
		}, want: telemetry.Config{
			Service:            "lobby",
			OTLPEndpoint:       "http://collector:4318",
			OTLPTracesEndpoint: "http://collector:4318/custom",
			LogLevel:           slog.LevelDebug,
		}},
		{name: "sampler", env: map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.25"},
			want: telemetry.Config{Sampler: "parentbased_traceidratio", SamplerArg: "0.25"}},
		{name: "bad sampler", env: map[string]string{"OTEL_TRACES_SAMPLER": "half"}, wantErr: telemetry.ErrConfig},
		{name: "bad sampler ratio", env: map[string]string{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "-1"}, wantErr: telemetry.ErrConfig},
		{name: "level with offset", env: map[string]string{"LOG_LEVEL": "WARN+1"}, want: telemetry.Config{LogLevel: slog.LevelWarn + 1}},
		{name: "bad level", env: map[string]string{"LOG_LEVEL": "loud"}, wantErr: telemetry.ErrConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := telemetry.ConfigFromEnv(func(k string) string { return tt.env[k] })
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestTraceContext_CarriesSpanAcrossAStreamEntry(t *testing.T) {
	tel := setup(t, telemetry.Config{})
	if tc := telemetry.TraceContextFrom(t.Context()); tc != nil {
		t.Fatalf("no span, got %v", tc)
	}
	ctx, span := tel.Tracer("test").Start(t.Context(), "gateway")
	defer span.End()

	wire, err := proto.Marshal(telemetry.TraceContextFrom(ctx))
	if err != nil {
		t.Fatal(err)
	}
	var tc commonv1.TraceContext
	if err := proto.Unmarshal(wire, &tc); err != nil {
		t.Fatal(err)
	}
	consumer := telemetry.ContextWithTrace(context.Background(), &tc)
	_, child := tel.Tracer("test").Start(consumer, "runner")
	defer child.End()
	if child.SpanContext().TraceID() != span.SpanContext().TraceID() {
		t.Fatalf("consumer span is in trace %s, want %s", child.SpanContext().TraceID(), span.SpanContext().TraceID())
	}
	if got := telemetry.ContextWithTrace(t.Context(), &commonv1.TraceContext{Traceparent: "garbage"}); trace.SpanContextFromContext(got).IsValid() {
		t.Fatal("a malformed traceparent produced a valid span context")
	}
}

func TestParseSampler(t *testing.T) {
	sampled := trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{1}, TraceFlags: trace.FlagsSampled, Remote: true}
	unsampled := sampled
	unsampled.TraceFlags = 0
	tests := []struct {
		name, arg string
		// whether a root span is recorded, and a child of a sampled and of
		// an unsampled remote parent
		root, underSampled, underUnsampled bool
	}{
		{"always_on", "", true, true, true},
		{"ALWAYS_OFF", "", false, false, false},
		{"traceidratio", "1", true, true, true},
		{"traceidratio", "0", false, false, false},
		{"traceidratio", "", true, true, true},
		{"parentbased_always_on", "", true, true, false},
		{"parentbased_always_off", "", false, true, false},
		{"parentbased_traceidratio", "0", false, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/"+tt.arg, func(t *testing.T) {
			s, err := telemetry.ParseSampler(tt.name, tt.arg)
			if err != nil {
				t.Fatal(err)
			}
			tel := setup(t, telemetry.Config{Sampler: tt.name, SamplerArg: tt.arg})
			tr := tel.Tracer("test")
			for _, c := range []struct {
				parent *trace.SpanContextConfig
				want   bool
			}{{nil, tt.root}, {&sampled, tt.underSampled}, {&unsampled, tt.underUnsampled}} {
				ctx := t.Context()
				if c.parent != nil {
					ctx = trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(*c.parent))
				}
				_, span := tr.Start(ctx, "x")
				if span.IsRecording() != c.want {
					t.Errorf("parent %+v: recording = %v, want %v (sampler %s)", c.parent, span.IsRecording(), c.want, s.Description())
				}
				if !span.SpanContext().IsValid() {
					t.Errorf("parent %+v: the span has no ids", c.parent)
				}
				span.End()
			}
		})
	}
	for _, bad := range [][2]string{{"sometimes", ""}, {"traceidratio", "x"}, {"traceidratio", "1.5"}, {"parentbased_traceidratio", "-0.1"}} {
		if _, err := telemetry.ParseSampler(bad[0], bad[1]); !errors.Is(err, telemetry.ErrConfig) {
			t.Errorf("ParseSampler(%q, %q) = %v, want ErrConfig", bad[0], bad[1], err)
		}
	}
	if s, err := telemetry.ParseSampler("", "whatever"); s != nil || err != nil {
		t.Errorf("empty name: got %v, %v; want the default (nil, nil)", s, err)
	}
}

func TestSetup_DefaultSamplerRecordsOnlyWhenExporting(t *testing.T) {
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	defer collector.Close()
	for _, tc := range []struct {
		name string
		cfg  telemetry.Config
		want bool
	}{
		{"no exporter", telemetry.Config{}, false},
		{"exporter", telemetry.Config{OTLPEndpoint: collector.URL}, true},
		{"no exporter, asked to record", telemetry.Config{Sampler: "always_on"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tel := setup(t, tc.cfg)
			_, span := tel.Tracer("test").Start(t.Context(), "root")
			defer span.End()
			if span.IsRecording() != tc.want {
				t.Errorf("recording = %v, want %v", span.IsRecording(), tc.want)
			}
			// Unrecorded spans still carry ids for logs and stream entries.
			if telemetry.TraceContextFrom(trace.ContextWithSpan(t.Context(), span)) == nil {
				t.Error("no trace context to propagate")
			}
		})
	}
}
