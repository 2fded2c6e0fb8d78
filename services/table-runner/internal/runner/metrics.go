package runner

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

type metrics struct {
	apply      metric.Float64Histogram
	restores   metric.Int64Counter
	fenced     metric.Int64Counter
	woken      metric.Int64Counter
	rejections metric.Int64Counter
	inboxFull  metric.Int64Counter
	malformed  metric.Int64Counter
	staleAway  metric.Int64Counter
	unheard    metric.Int64Counter
	trimmed    metric.Int64Counter
	lost       metric.Int64Counter
	wallet     metric.Int64Counter
	// seeds counts client seeds awaited by committed hands and accepted
	// (attribute outcome); awaited − accepted were missing at the deal.
	seeds                    metric.Int64Counter
	seedsAwaited, seedsTaken metric.AddOption
	// applyBy is the apply histogram's attribute set by input kind, built
	// once: every step records one, and building the set (a sort and a
	// hash) per step was a twentieth of the runner's CPU.
	applyBy map[string]metric.RecordOption
}

// The apply histogram's input kinds.
const (
	inputCommand  = "command"
	inputTick     = "tick"
	inputPresence = "presence"
)

func newMetrics(mp metric.MeterProvider, r *Runner) (*metrics, error) {
	m := mp.Meter("github.com/pulka/pulka/services/table-runner")
	out := &metrics{applyBy: map[string]metric.RecordOption{}}
	for _, kind := range []string{inputCommand, inputTick, inputPresence} {
		out.applyBy[kind] = metric.WithAttributeSet(attribute.NewSet(attribute.String("input", kind)))
	}
	var err error
	if out.apply, err = m.Float64Histogram("pulka.runner.apply.duration", metric.WithUnit("s"),
		metric.WithDescription("Time to apply one input and append its events (attribute input: command, tick, presence)."),
		metric.WithExplicitBucketBoundaries(0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1)); err != nil {
		return nil, err
	}
	if out.restores, err = m.Int64Counter("pulka.runner.restores",
		metric.WithDescription("Tables opened by this runner (attribute source: created, snapshot, genesis; outcome: ok, error).")); err != nil {
		return nil, err
	}
	if out.fenced, err = m.Int64Counter("pulka.runner.fenced",
		metric.WithDescription("Writes refused because another runner holds a newer lease epoch of the table.")); err != nil {
		return nil, err
	}
	if out.woken, err = m.Int64Counter("pulka.runner.assignment.woken",
		metric.WithDescription("Times the assignment's bell (a table placed on or moved to or from this runner) made the runner read its tables before its next poll.")); err != nil {
		return nil, err
	}
	if out.rejections, err = m.Int64Counter("pulka.runner.rejections",
		metric.WithDescription("Commands refused by the rules (attribute reason).")); err != nil {
		return nil, err
	}
	if out.inboxFull, err = m.Int64Counter("pulka.runner.inbox.full",
		metric.WithDescription("Times a table's inbox was full and the table switched to reading its backlog from Redis.")); err != nil {
		return nil, err
	}
	if out.malformed, err = m.Int64Counter("pulka.runner.commands.malformed",
		metric.WithDescription("Command stream entries that are neither a command nor a presence report (skipped).")); err != nil {
		return nil, err
	}
	out.seedsAwaited = metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", "awaited")))
	out.seedsTaken = metric.WithAttributeSet(attribute.NewSet(attribute.String("outcome", "accepted")))
	if out.seeds, err = m.Int64Counter("pulka.runner.client_seeds",
		metric.WithDescription("Client seeds of the seated players: awaited by a committed hand, and accepted before its deal (attribute outcome: awaited, accepted); the difference was dealt at the seed deadline without them.")); err != nil {
		return nil, err
	}
	if out.staleAway, err = m.Int64Counter("pulka.runner.presence.stale_away",
		metric.WithDescription("Away reports skipped because the player had a live connection by the time the runner read them.")); err != nil {
		return nil, err
	}
	if out.unheard, err = m.Int64Counter("pulka.runner.rejections.unheard",
		metric.WithDescription("Refusals whose answer no gateway was subscribed to hear (attribute reason): the client got no answer.")); err != nil {
		return nil, err
	}
	if out.trimmed, err = m.Int64Counter("pulka.runner.commands.trimmed",
		metric.WithDescription("Handled command stream entries the tables trimmed away (refused, ignored or logged).")); err != nil {
		return nil, err
	}
	if out.lost, err = m.Int64Counter("pulka.runner.tables.lost",
		metric.WithDescription("Tables dropped because Redis no longer had their lease, snapshot and log, or their start (attribute stage: open, running).")); err != nil {
		return nil, err
	}
	if out.wallet, err = m.Int64Counter("pulka.runner.wallet.commands",
		metric.WithDescription("Commands sent to the wallet for coin tables (attribute command: forfeit, release_table).")); err != nil {
		return nil, err
	}
	if _, err = m.Int64ObservableGauge("pulka.runner.tables",
		metric.WithDescription("Tables this runner owns (open or opening)."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			o.Observe(int64(r.tableCount()))
			return nil
		})); err != nil {
		return nil, err
	}
	if _, err = m.Int64ObservableGauge("pulka.runner.inbox.depth",
		metric.WithDescription("Commands waiting in the tables' inboxes (attribute stat: sum, max)."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			sum, mx := r.inboxDepth()
			o.Observe(int64(sum), metric.WithAttributes(attribute.String("stat", "sum")))
			o.Observe(int64(mx), metric.WithAttributes(attribute.String("stat", "max")))
			return nil
		})); err != nil {
		return nil, err
	}
	return out, nil
}
