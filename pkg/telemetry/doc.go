// Package telemetry sets up logs, traces and metrics for a Pulka service with
// one call, Setup, and tears them down with one call, Shutdown.
//
// Everything is returned, nothing is installed globally unless
// Config.SetGlobal asks for it, so tests and several services in one process
// (the local mode) do not step on each other:
//
//   - Logger: slog JSON lines that carry trace_id and span_id of the span in
//     the record's context, so logs and traces of one move join up.
//   - TracerProvider: always the OpenTelemetry SDK, so spans have valid,
//     propagatable ids even without a collector; spans are exported over
//     OTLP/HTTP only when an endpoint is configured.
//   - MeterProvider: OpenTelemetry metrics read by a Prometheus exporter into
//     the service's own registry, served by MetricsHandler at /metrics.
//   - Propagator: W3C trace context. TraceContextFrom and ContextWithTrace
//     carry it inside stream entries (pulka.common.v1.TraceContext).
package telemetry
