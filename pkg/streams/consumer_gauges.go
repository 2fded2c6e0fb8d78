package streams

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/metric"
)

// Lag is the last sampled number of entries not yet delivered to the group,
// summed over the streams read (XINFO GROUPS lag).
func (c *Consumer) Lag() int64 { return c.lag.Load() }

// Pending is the last sampled number of delivered but unacknowledged
// entries, summed over the streams read.
func (c *Consumer) Pending() int64 { return c.pending.Load() }

func (c *Consumer) registerGauges() (metric.Registration, error) {
	m := c.cfg.meterProvider.Meter(instrumentationName)
	lag, err := m.Int64ObservableGauge("pulka.streams.group.lag",
		metric.WithDescription("Entries not yet delivered to the consumer group (sampled)."), metric.WithUnit("{message}"))
	if err != nil {
		return nil, fmt.Errorf("lag gauge: %w", err)
	}
	pend, err := m.Int64ObservableGauge("pulka.streams.group.pending",
		metric.WithDescription("Entries delivered but not acknowledged (sampled)."), metric.WithUnit("{message}"))
	if err != nil {
		return nil, fmt.Errorf("pending gauge: %w", err)
	}
	attrs := metric.WithAttributes(keyGroup.String(c.group))
	return m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		o.ObserveInt64(lag, c.lag.Load(), attrs)
		o.ObserveInt64(pend, c.pending.Load(), attrs)
		return nil
	}, lag, pend)
}
