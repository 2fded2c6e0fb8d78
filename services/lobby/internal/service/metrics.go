package service

import (
	"fmt"

	"go.opentelemetry.io/otel/metric"
)

type metrics struct {
	commands  metric.Int64Counter
	latency   metric.Float64Histogram
	conflicts metric.Int64Counter
	started   metric.Int64Counter
	snapshots metric.Int64Counter
}

func newMetrics(m metric.Meter) (metrics, error) {
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
	return out, nil
}
