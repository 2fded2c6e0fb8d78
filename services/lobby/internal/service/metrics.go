package service

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

type metrics struct {
	commands  metric.Int64Counter
	latency   metric.Float64Histogram
	conflicts metric.Int64Counter
	started   metric.Int64Counter
	snapshots metric.Int64Counter
	limited   metric.Int64Counter
	expired   metric.Int64Counter
	hashWait  metric.Float64Histogram
	wallet    metric.Int64Counter
}

func newMetrics(m metric.Meter, hashQueue func() (sits, creates int64)) (metrics, error) {
	var out metrics
	var err error
	if out.commands, err = m.Int64Counter("pulka_lobby_commands",
		metric.WithDescription("Lobby commands handled, by command and outcome (accepted, rejected, duplicate, error).")); err != nil {
		return out, fmt.Errorf("lobby metrics: %w", err)
	}
	if out.latency, err = m.Float64Histogram("pulka_lobby_command_duration", metric.WithUnit("s"),
		metric.WithDescription("Time to apply one lobby command, Redis round trips and password hashing included."),
		metric.WithExplicitBucketBoundaries(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1)); err != nil {
		return out, fmt.Errorf("lobby metrics: %w", err)
	}
	if out.conflicts, err = m.Int64Counter("pulka_lobby_conflicts",
		metric.WithDescription("Optimistic commits retried because the table changed concurrently.")); err != nil {
		return out, fmt.Errorf("lobby metrics: %w", err)
	}
	if out.started, err = m.Int64Counter("pulka_lobby_tables_started",
		metric.WithDescription("Tables whose seats filled up (TableStarted messages published).")); err != nil {
		return out, fmt.Errorf("lobby metrics: %w", err)
	}
	if out.snapshots, err = m.Int64Counter("pulka_lobby_snapshots",
		metric.WithDescription("LobbyView snapshots written.")); err != nil {
		return out, fmt.Errorf("lobby metrics: %w", err)
	}
	if out.limited, err = m.Int64Counter("pulka_lobby_limited",
		metric.WithDescription("Commands refused by a limit, by limit: waiting_tables, create_rate, commands, coin_sits, guess_player, guess_table, guess_guesser, password_queue, create_queue.")); err != nil {
		return out, fmt.Errorf("lobby metrics: %w", err)
	}
	if out.expired, err = m.Int64Counter("pulka_lobby_tables_expired",
		metric.WithDescription("Waiting tables closed because nobody changed them for the waiting TTL.")); err != nil {
		return out, fmt.Errorf("lobby metrics: %w", err)
	}
	if out.hashWait, err = m.Float64Histogram("pulka_lobby_password_queue_wait", metric.WithUnit("s"),
		metric.WithDescription("Time a password command waited for a password worker."),
		metric.WithExplicitBucketBoundaries(0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5)); err != nil {
		return out, fmt.Errorf("lobby metrics: %w", err)
	}
	if out.wallet, err = m.Int64Counter("pulka_lobby_wallet_commands",
		metric.WithDescription("Commands the lobby sent the wallet, by command (hold, release, release_table) and result (accepted, the wallet's refusal reason such as insufficient_funds, timeout, error).")); err != nil {
		return out, fmt.Errorf("lobby metrics: %w", err)
	}
	if _, err = m.Int64ObservableGauge("pulka_lobby_password_queue",
		metric.WithDescription("Password commands waiting for a password worker, by queue (sit_down, create_table)."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			sits, creates := hashQueue()
			o.Observe(sits, metric.WithAttributes(attribute.String("queue", "sit_down")))
			o.Observe(creates, metric.WithAttributes(attribute.String("queue", "create_table")))
			return nil
		})); err != nil {
		return out, fmt.Errorf("lobby metrics: %w", err)
	}
	return out, nil
}
