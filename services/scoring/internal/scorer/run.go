package scorer

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
)

// errNotConsuming is the readiness failure before the consumer runs.
var errNotConsuming = errors.New("not consuming " + scoringclient.HandsStream + " yet")

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
	consumer := streams.NewConsumer(d.Redis, c.Group, c.Consumer, s.Handle,
		streams.WithLogger(d.Logger), streams.WithTracerProvider(tel.TracerProvider),
		streams.WithMeterProvider(tel.MeterProvider), streams.WithPropagator(tel.Propagator),
		streams.WithMinIdle(c.ReclaimIdle), streams.WithMaxDeliveries(c.MaxDeliveries),
		streams.WithShutdownGrace(grace))

	var consuming atomic.Bool
	d.AddReadyCheck("consumer", func(context.Context) error {
		if !consuming.Load() {
			return errNotConsuming
		}
		return nil
	})
	d.Started()
	// Redis may still be starting (docker-compose, a rolling restart):
	// keep trying to join the group instead of crash-looping.
	for wait := 100 * time.Millisecond; ; wait = min(2*wait, 5*time.Second) {
		err := consumer.Add(ctx, scoringclient.HandsStream)
		if err == nil {
			break
		}
		d.Logger.WarnContext(ctx, "cannot join the consumer group yet", "group", c.Group, "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
	d.Logger.InfoContext(ctx, "consuming", "stream", scoringclient.HandsStream, "group", c.Group, "consumer", c.Consumer)
	consuming.Store(true)
	defer consuming.Store(false)
	if err := consumer.Run(ctx); err != nil {
		return fmt.Errorf("scorer: consumer: %w", err)
	}
	return nil
}
