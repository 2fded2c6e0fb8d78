package scorer

import (
	"context"
	"fmt"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
)

// Run is the service: it joins the consumer group and handles inputs until
// ctx is cancelled, then lets running handlers finish and returns.
func (c *Config) Run(ctx context.Context, d *daemon.Daemon) error {
	tel := d.Telemetry
	s, err := New(d.Redis, c.Store, d.Logger, tel.TracerProvider, tel.MeterProvider)
	if err != nil {
		return err
	}
	// Handlers are short; half the shutdown budget is plenty for the last
	// ones, and leaves the rest for closing Redis and flushing telemetry.
	grace := min(streams.DefaultShutdownGrace, c.ShutdownTimeout/2)
	consumer := streams.NewConsumer(d.Redis, c.Group, c.Consumer, s.Handle, append(c.ConsumerOptions(),
		streams.WithLogger(d.Logger), streams.WithTracerProvider(tel.TracerProvider),
		streams.WithMeterProvider(tel.MeterProvider), streams.WithPropagator(tel.Propagator),
		streams.WithShutdownGrace(grace))...)

	d.Started()
	if err := d.Consume(ctx, consumer, scoringclient.HandsStream); err != nil {
		return fmt.Errorf("scorer: %w", err)
	}
	return nil
}
