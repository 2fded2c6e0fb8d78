package server

import (
	"context"
	"net/http"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// collect reads the gateway's metrics as Prometheus would scrape them.
func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			vals := map[string]int64{}
			var points []metricdata.DataPoint[int64]
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				points = d.DataPoints
			case metricdata.Gauge[int64]:
				points = d.DataPoints
			}
			for _, p := range points {
				key := ""
				for _, kv := range p.Attributes.ToSlice() {
					key += string(kv.Key) + "=" + kv.Value.String()
				}
				vals[key] += p.Value
			}
			out[m.Name] = vals
		}
	}
	return out
}

// Signups and the password-hash slots are limits: each has its metric.
func TestMetrics_SignupsAndPasswordHashes(t *testing.T) {
	cfg := testConfig()
	cfg.SignupsPerIP = 2
	reader := sdkmetric.NewManualReader()
	ts := startServer(t, cfg, nil, func(p *Parts) { p.Meter = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)) })
	for i := range 3 {
		r := ts.do(t, "POST", "/api/v1/session/guest", nil, nil)
		if want := map[bool]int{true: http.StatusCreated, false: http.StatusTooManyRequests}[i < 2]; r.status != want {
			t.Fatalf("guest %d: %d, want %d", i, r.status, want)
		}
	}
	m := collect(t, reader)
	if got := m["pulka_gateway_signups"]; got["result=allowed"] != 2 || got["result=refused"] != 1 {
		t.Fatalf("pulka_gateway_signups = %v, want 2 allowed, 1 refused", got)
	}
	if got, ok := m["pulka_gateway_password_hashes_in_flight"]; !ok || got[""] != 0 {
		t.Fatalf("pulka_gateway_password_hashes_in_flight = %v (ok %v), want 0 at rest", got, ok)
	}
	if _, ok := m["pulka_gateway_password_hash_busy"]; !ok {
		t.Fatalf("pulka_gateway_password_hash_busy is not registered: %v", m)
	}
}
