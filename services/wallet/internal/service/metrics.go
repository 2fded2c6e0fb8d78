package service

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"

	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
)

const instrumentation = "github.com/pulka/pulka/services/wallet"

// metrics are the wallet's own instruments; the consumer's (lag, pending,
// handler time, dead letters) come from pkg/streams.
type metrics struct {
	commands   metric.Int64Counter
	settleTime metric.Float64Histogram
	coinsPaid  metric.Int64Counter
	auditTime  metric.Float64Histogram
	repaired   metric.Int64Counter
	mu         sync.Mutex
	last       *walletv1.AuditReport
}

func noMetrics() *metrics {
	m, _ := newMetrics(metricnoop.NewMeterProvider().Meter(instrumentation)) // no-op instruments never fail
	return m
}

func newMetrics(m metric.Meter) (*metrics, error) {
	out := &metrics{}
	var errs [6]error
	out.commands, errs[0] = m.Int64Counter("pulka.wallet.commands",
		metric.WithDescription("Commands handled, by kind and result (accepted, duplicate, the refusal reason)."), metric.WithUnit("{command}"))
	out.settleTime, errs[1] = m.Float64Histogram("pulka.wallet.settle.duration",
		metric.WithDescription("Time from a settlement's start to its last payment (collect, plan, pay)."), metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1))
	out.coinsPaid, errs[2] = m.Int64Counter("pulka.wallet.coins.paid",
		metric.WithDescription("Coins paid out of pots by settlements."), metric.WithUnit("{coin}"))
	out.auditTime, errs[3] = m.Float64Histogram("pulka.wallet.audit.duration",
		metric.WithDescription("Time of one reconciliation of the whole ledger."), metric.WithUnit("s"))
	out.repaired, errs[4] = m.Int64Counter("pulka.wallet.resolutions.repaired",
		metric.WithDescription("Settlements and releases a crash left half done, finished by the reconciliation."), metric.WithUnit("{pot}"))
	// The last audit's figures, as gauges (a Prometheus alert on
	// pulka_wallet_audit_ok == 0 or problems > 0 pages someone).
	gauge := func(name, desc string, f func(r *walletv1.AuditReport) int64) metric.Int64ObservableGauge {
		g, err := m.Int64ObservableGauge(name, metric.WithDescription(desc), metric.WithInt64Callback(
			func(_ context.Context, o metric.Int64Observer) error {
				out.mu.Lock()
				defer out.mu.Unlock()
				if out.last != nil {
					o.Observe(f(out.last))
				}
				return nil
			}))
		errs[5] = errors.Join(errs[5], err)
		return g
	}
	b := func(v bool) int64 {
		if v {
			return 1
		}
		return 0
	}
	gauge("pulka.wallet.audit.ok", "1 when the last reconciliation found nothing wrong.", func(r *walletv1.AuditReport) int64 { return b(r.GetOk()) })
	gauge("pulka.wallet.audit.problems", "Violations the last reconciliation found.", func(r *walletv1.AuditReport) int64 { return int64(len(r.GetProblems())) })
	gauge("pulka.wallet.coins.issued", "Coins ever issued (grants and bonuses), at the last reconciliation.", (*walletv1.AuditReport).GetIssued)
	gauge("pulka.wallet.coins.available", "Sum of available balances, at the last reconciliation.", (*walletv1.AuditReport).GetAvailable)
	gauge("pulka.wallet.coins.held", "Sum of held balances, at the last reconciliation.", (*walletv1.AuditReport).GetHeld)
	gauge("pulka.wallet.coins.in_pots", "Coins collected into pots and not yet paid, at the last reconciliation.", (*walletv1.AuditReport).GetInPots)
	gauge("pulka.wallet.holds.open", "Open holds, at the last reconciliation.", (*walletv1.AuditReport).GetOpenHolds)
	gauge("pulka.wallet.holds.orphan", "Open holds at tables whose pot is resolved or missing (should be 0).", (*walletv1.AuditReport).GetOrphanHolds)
	gauge("pulka.wallet.pots.settling", "Pots whose settlement has started and not finished.", (*walletv1.AuditReport).GetSettling)
	gauge("pulka.wallet.pots.stale", "Pots open longer than -stale-pot-age (should be 0).", (*walletv1.AuditReport).GetStalePots)
	gauge("pulka.wallet.accounts", "Accounts, at the last reconciliation.", (*walletv1.AuditReport).GetAccounts)
	if err := errors.Join(errs[:]...); err != nil {
		return nil, fmt.Errorf("wallet: metrics: %w", err)
	}
	return out, nil
}

func (m *metrics) command(ctx context.Context, kind string, res *walletv1.WalletResult) {
	result := "accepted"
	switch {
	case res.GetDuplicate():
		result = "duplicate"
	case !res.GetAccepted():
		result = res.GetReason().String()
	}
	m.commands.Add(ctx, 1, metric.WithAttributes(attribute.String("kind", kind), attribute.String("result", result)))
}

func (m *metrics) settled(ctx context.Context, d time.Duration, plan *walletv1.GameSettled) {
	m.settleTime.Record(ctx, d.Seconds())
	m.coinsPaid.Add(ctx, plan.GetPot())
}

func (m *metrics) audited(ctx context.Context, d time.Duration, r *walletv1.AuditReport) {
	m.auditTime.Record(ctx, d.Seconds())
	m.mu.Lock()
	m.last = r
	m.mu.Unlock()
}
