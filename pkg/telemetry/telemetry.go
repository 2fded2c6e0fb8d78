package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// Environment variables read by ConfigFromEnv.
const (
	EnvServiceName         = "OTEL_SERVICE_NAME"
	EnvOTLPEndpoint        = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvOTLPTracesEndpoint  = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvTracesSampler       = "OTEL_TRACES_SAMPLER"
	EnvTracesSamplerArg    = "OTEL_TRACES_SAMPLER_ARG"
	EnvLogLevel            = "LOG_LEVEL"
	otlpTracesPath         = "/v1/traces"
	defaultServiceFallback = "pulka"
)

// ErrConfig is returned for a configuration that cannot be used.
var ErrConfig = errors.New("telemetry: invalid configuration")

// Config is what Setup needs. The zero value works: JSON info logs on stderr,
// spans without export, metrics in a private registry.
type Config struct {
	// Service is the service name (service.name), e.g. "table-runner".
	Service string
	// Version is the service version (service.version).
	Version string
	// LogLevel is the lowest level logged.
	LogLevel slog.Level
	// LogWriter receives the JSON log lines; nil means os.Stderr.
	LogWriter io.Writer
	// OTLPEndpoint is the base URL of an OTLP/HTTP collector, e.g.
	// "http://otel-collector:4318"; spans go to its /v1/traces. Empty (with
	// OTLPTracesEndpoint empty too) means spans are not exported.
	OTLPEndpoint string
	// OTLPTracesEndpoint is the full URL spans are posted to; it wins over
	// OTLPEndpoint, as OTEL_EXPORTER_OTLP_TRACES_ENDPOINT does in the spec.
	OTLPTracesEndpoint string
	// Sampler and SamplerArg choose which traces are recorded, as
	// OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG do in the spec
	// (ParseSampler lists the names). Empty means parentbased_always_on
	// when spans are exported and parentbased_always_off when they are
	// not: recording spans nobody collects was a twentieth of a busy
	// service's CPU, and unsampled spans still get real ids, so log lines
	// and stream entries still carry a trace context.
	Sampler    string
	SamplerArg string
	// SetGlobal also installs the providers, the propagator and the logger as
	// the process-wide defaults (otel.Set*, slog.SetDefault). Only a main
	// should ask for this.
	SetGlobal bool
}

// ConfigFromEnv reads the standard OpenTelemetry variables and LOG_LEVEL
// through getenv (os.Getenv in a main, a map in tests). Service and Version
// are left for the caller unless OTEL_SERVICE_NAME is set.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	cfg := Config{
		Service:            getenv(EnvServiceName),
		OTLPEndpoint:       getenv(EnvOTLPEndpoint),
		OTLPTracesEndpoint: getenv(EnvOTLPTracesEndpoint),
		Sampler:            getenv(EnvTracesSampler),
		SamplerArg:         getenv(EnvTracesSamplerArg),
	}
	if _, err := ParseSampler(cfg.Sampler, cfg.SamplerArg); err != nil {
		return Config{}, err
	}
	if lv := getenv(EnvLogLevel); lv != "" {
		if err := cfg.LogLevel.UnmarshalText([]byte(lv)); err != nil {
			return Config{}, fmt.Errorf("%w: %s=%q: %w", ErrConfig, EnvLogLevel, lv, err)
		}
	}
	return cfg, nil
}

// ParseSampler returns the sampler the spec's OTEL_TRACES_SAMPLER name
// and OTEL_TRACES_SAMPLER_ARG argument describe: always_on, always_off,
// traceidratio, parentbased_always_on, parentbased_always_off or
// parentbased_traceidratio, the ratio ones taking a probability in [0, 1]
// (1 when the argument is empty). An empty name returns nil: the default.
func ParseSampler(name, arg string) (sdktrace.Sampler, error) {
	ratio := func() (sdktrace.Sampler, error) {
		if arg == "" {
			return sdktrace.TraceIDRatioBased(1), nil
		}
		p, err := strconv.ParseFloat(arg, 64)
		if err != nil || p < 0 || p > 1 {
			return nil, fmt.Errorf("%w: %s=%q is not a probability between 0 and 1", ErrConfig, EnvTracesSamplerArg, arg)
		}
		return sdktrace.TraceIDRatioBased(p), nil
	}
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "":
		return nil, nil
	case "always_on":
		return sdktrace.AlwaysSample(), nil
	case "always_off":
		return sdktrace.NeverSample(), nil
	case "traceidratio":
		return ratio()
	case "parentbased_always_on":
		return sdktrace.ParentBased(sdktrace.AlwaysSample()), nil
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample()), nil
	case "parentbased_traceidratio":
		r, err := ratio()
		if err != nil {
			return nil, err
		}
		return sdktrace.ParentBased(r), nil
	}
	return nil, fmt.Errorf("%w: %s=%q: want always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off or parentbased_traceidratio",
		ErrConfig, EnvTracesSampler, name)
}

// tracesURL is where spans are exported, or "" for nowhere.
func (c Config) tracesURL() string {
	if c.OTLPTracesEndpoint != "" {
		return c.OTLPTracesEndpoint
	}
	if c.OTLPEndpoint != "" {
		return strings.TrimRight(c.OTLPEndpoint, "/") + otlpTracesPath
	}
	return ""
}

// Telemetry is a service's logger, providers and metrics endpoint.
type Telemetry struct {
	// Logger writes JSON lines with trace_id and span_id.
	Logger *slog.Logger
	// TracerProvider makes the service's tracers.
	TracerProvider trace.TracerProvider
	// MeterProvider makes the service's meters.
	MeterProvider metric.MeterProvider
	// Propagator injects and extracts W3C trace context.
	Propagator propagation.TextMapPropagator

	registry  *prometheus.Registry
	shutdowns []func(context.Context) error

	shutdownOnce sync.Once
	shutdownErr  error
}

// Setup builds logs, traces and metrics for one service. The caller must
// call Shutdown when the service stops, to flush spans that are still queued.
func Setup(ctx context.Context, cfg Config) (*Telemetry, error) {
	if cfg.Service == "" {
		cfg.Service = defaultServiceFallback
	}
	w := cfg.LogWriter
	if w == nil {
		w = os.Stderr
	}
	res, err := resource.New(ctx,
		resource.WithSchemaURL(semconv.SchemaURL),
		resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName(cfg.Service), semconv.ServiceVersion(cfg.Version)),
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry: resource: %w", err)
	}

	t := &Telemetry{
		Propagator: propagation.TraceContext{},
		registry:   prometheus.NewRegistry(),
	}

	// Without an exporter the SDK provider still gives every span real ids,
	// sampled or not, so log lines can be joined by trace_id and stream
	// entries carry a trace context.
	sampler, err := ParseSampler(cfg.Sampler, cfg.SamplerArg)
	if err != nil {
		return nil, err
	}
	u := cfg.tracesURL()
	if sampler == nil {
		sampler = sdktrace.ParentBased(sdktrace.NeverSample())
		if u != "" {
			sampler = sdktrace.ParentBased(sdktrace.AlwaysSample())
		}
	}
	tpOpts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sampler),
	}
	if u != "" {
		// The exporter silently falls back to localhost:4318 on a bad URL;
		// a typo in the endpoint should stop the service instead.
		if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return nil, fmt.Errorf("%w: OTLP endpoint %q is not an http(s) URL", ErrConfig, u)
		}
		exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u))
		if err != nil {
			return nil, fmt.Errorf("telemetry: OTLP exporter for %q: %w", u, err)
		}
		tpOpts = append(tpOpts, sdktrace.WithBatcher(exp))
	}
	tp := sdktrace.NewTracerProvider(tpOpts...)
	t.TracerProvider = tp
	t.shutdowns = append(t.shutdowns, tp.Shutdown)

	if err := t.registry.Register(collectors.NewGoCollector()); err != nil {
		return nil, errors.Join(fmt.Errorf("telemetry: go collector: %w", err), t.Shutdown(ctx))
	}
	if err := t.registry.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, errors.Join(fmt.Errorf("telemetry: process collector: %w", err), t.Shutdown(ctx))
	}
	promExp, err := otelprom.New(otelprom.WithRegisterer(t.registry))
	if err != nil {
		return nil, errors.Join(fmt.Errorf("telemetry: prometheus exporter: %w", err), t.Shutdown(ctx))
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res), sdkmetric.WithReader(promExp))
	t.MeterProvider = mp
	t.shutdowns = append(t.shutdowns, mp.Shutdown)

	t.Logger = slog.New(NewTraceHandler(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: cfg.LogLevel}))).
		With(slog.String("service", cfg.Service))

	if cfg.SetGlobal {
		otel.SetTracerProvider(tp)
		otel.SetMeterProvider(mp)
		otel.SetTextMapPropagator(t.Propagator)
		slog.SetDefault(t.Logger)
	}
	return t, nil
}

// Tracer returns a tracer of the service's provider.
func (t *Telemetry) Tracer(name string) trace.Tracer { return t.TracerProvider.Tracer(name) }

// Meter returns a meter of the service's provider.
func (t *Telemetry) Meter(name string) metric.Meter { return t.MeterProvider.Meter(name) }

// Registerer is the service's own Prometheus registry, for collectors that
// are not OpenTelemetry instruments (e.g. a client library's own metrics).
func (t *Telemetry) Registerer() prometheus.Registerer { return t.registry }

// MetricsHandler serves the service's metrics in the Prometheus text format,
// for /metrics.
func (t *Telemetry) MetricsHandler() http.Handler {
	return promhttp.HandlerFor(t.registry, promhttp.HandlerOpts{Registry: t.registry})
}

// Shutdown flushes queued spans and stops the providers. It is safe to call
// more than once; later calls return the first call's result.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	t.shutdownOnce.Do(func() {
		var errs []error
		for i := len(t.shutdowns) - 1; i >= 0; i-- {
			errs = append(errs, t.shutdowns[i](ctx))
		}
		t.shutdownErr = errors.Join(errs...)
	})
	return t.shutdownErr
}
