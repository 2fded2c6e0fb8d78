package service

import (
	"context"
	"fmt"
	"time"

	"github.com/pulka/pulka/pkg/daemon"
	"github.com/pulka/pulka/pkg/periodic"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/walletclient"
	"github.com/pulka/pulka/services/wallet/internal/store"
)

// Run is the service: it joins the consumer group on the command shards and
// scoring's standings, handles messages until ctx is cancelled, and runs the
// reconciliation every AuditInterval.
func (c *Config) Run(ctx context.Context, d *daemon.Daemon) error {
	tel := d.Telemetry
	loc, err := time.LoadLocation(c.TimeZone)
	if err != nil {
		return fmt.Errorf("wallet: %w", err)
	}
	m, err := newMetrics(tel.MeterProvider.Meter(instrumentation))
	if err != nil {
		return err
	}
	w := New(d.Redis, Options{SignupGrant: c.SignupGrant, DailyBonus: c.DailyBonus, Location: loc,
		PotTTL: c.PotTTL, Logger: d.Logger, Flushers: store.DefaultFlushers, StalePotAge: c.StalePotAge}, m)
	// Replies are kept short.
	pub := streams.NewPublisher(d.Redis, streams.WithMaxLen(walletclient.DefaultReplyMaxLen),
		streams.WithTracerProvider(tel.TracerProvider), streams.WithMeterProvider(tel.MeterProvider))
	batcher := pub.NewBatcher(ctx, 256, 2)
	h := &Handler{w: w, replies: streams.NewReplier(d.Redis, batcher, walletclient.ReplyStream(""), ReplyTTL)}
	grace := min(streams.DefaultShutdownGrace, c.ShutdownTimeout/2)
	consumer := streams.NewConsumer(d.Redis, c.Group, c.Consumer, h.Handle, append(c.Options(),
		streams.WithLogger(d.Logger), streams.WithTracerProvider(tel.TracerProvider),
		streams.WithMeterProvider(tel.MeterProvider), streams.WithPropagator(tel.Propagator),
		streams.WithWorkers(c.Workers), streams.WithOrderKey(OrderKey), streams.WithShutdownGrace(grace))...)

	d.Started()
	if c.AuditInterval > 0 {
		go periodic.Every(ctx, c.AuditInterval, func(ctx context.Context) { w.reconcile(ctx, c.RepairGrace) })
	}
	in := append(walletclient.CommandStreams(), scoringclient.StandingsStream)
	if err := d.Consume(ctx, consumer, in...); err != nil {
		return fmt.Errorf("wallet: %w", err)
	}
	return nil
}

// reconcile finishes what crashes left half done, then audits.
func (w *Wallet) reconcile(ctx context.Context, grace time.Duration) {
	n, err := w.Repair(ctx, grace)
	if n > 0 {
		w.m.repaired.Add(ctx, int64(n))
	}
	if err != nil {
		w.opt.Logger.WarnContext(ctx, "wallet: repair failed", "err", err)
		return
	}
	rep, err := w.Audit(ctx)
	if err != nil {
		w.opt.Logger.WarnContext(ctx, "wallet: audit failed", "err", err)
		return
	}
	if !rep.GetOk() {
		w.opt.Logger.ErrorContext(ctx, "wallet: the audit found problems", "problems", rep.GetProblems())
	}
}
