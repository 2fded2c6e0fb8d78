package service

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/walletclient"
	"github.com/pulka/pulka/services/wallet/internal/ledger"
	"github.com/pulka/pulka/services/wallet/internal/store"
)

// maxProblems bounds the lines of one report (the counts stay exact).
const maxProblems = 100

// Audit reconciles the whole ledger (docs/wallet.md, Reconciliation):
//   - every account: balances never negative, each equal to its ledger's sum
//     (entries numbered 1, 2, … without gaps), held equal to its open holds,
//     and coins conserved on the account: available + held + collected −
//     paid − issued = 0 (each script keeps this, so the sum over all
//     accounts shows every coin issued is in a balance or in a pot);
//   - every open hold belongs to a pot that is open or being resolved, and
//     no pot stays open longer than StalePotAge (a game in progress);
//   - every settled pot paid its plan exactly once: the payments recorded on
//     the payees are the plan's shares, the stakes collected its pot.
//
// Pots are read before accounts: a pot seen finished was finished before any
// account is read, so its steps are all visible.
func (w *Wallet) Audit(ctx context.Context) (*walletv1.AuditReport, error) {
	start := time.Now()
	rep := &walletv1.AuditReport{}
	problem := func(format string, args ...any) {
		if len(rep.Problems) < maxProblems {
			rep.Problems = append(rep.Problems, fmt.Sprintf(format, args...))
		}
	}
	tables, err := w.st.Pots(ctx)
	if err != nil {
		return nil, err
	}
	pots := make(map[string]store.Pot, len(tables))
	for _, t := range tables {
		p, err := w.st.ReadPot(ctx, t)
		if err != nil {
			return nil, err
		}
		if !p.Exists { // expired between the scan and the read
			continue
		}
		pots[t] = p
		switch p.State {
		case "settled":
			rep.Settled++
			if err := w.auditPlan(ctx, t, p, problem); err != nil {
				return nil, err
			}
		case "settling":
			rep.Settling++
		case "open":
			if age := w.opt.Now().Sub(p.Created); age > w.opt.StalePotAge {
				rep.StalePots++
				problem("%s: its pot has been open for %s: no game in progress holds it (release the table)", t, age.Round(time.Minute))
			}
		}
	}
	accounts, err := w.st.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	for _, id := range accounts {
		a, err := w.st.ReadAccount(ctx, id)
		if err != nil {
			return nil, err
		}
		sum, err := w.st.SumLedger(ctx, id, a.Seq)
		if err != nil {
			return nil, err
		}
		rep.Accounts++
		rep.Entries += sum.Entries
		rep.Issued += a.Issued
		rep.Available += a.Available
		rep.Held += a.Held
		rep.InPots += a.Collected - a.Paid
		if a.Available < 0 || a.Held < 0 {
			problem("%s: negative balance: available %d, held %d", id, a.Available, a.Held)
		}
		if sum.Gaps || sum.Entries != a.Seq {
			problem("%s: ledger has %d entries up to seq %d, or a gap", id, sum.Entries, a.Seq)
		}
		if sum.Available != a.Available || sum.Held != a.Held || sum.Issued != a.Issued ||
			sum.Collected != a.Collected || sum.Paid != a.Paid {
			problem("%s: balance %+v differs from its ledger's sums %+v", id, a, sum)
		}
		if q := a.Available + a.Held + a.Collected - a.Paid - a.Issued; q != 0 {
			problem("%s: %d coins appeared or vanished", id, q)
		}
		var held int64
		for t, h := range a.Holds {
			rep.OpenHolds++
			held += h.Amount
			p, ok := pots[t]
			if !ok { // the pot may be newer than the scan
				if p, err = w.st.ReadPot(ctx, t); err != nil {
					return nil, err
				}
			}
			switch {
			case !p.Exists:
				rep.OrphanHolds++
				problem("%s: holds %d at %s, which has no pot", id, h.Amount, t)
			case p.Done:
				rep.OrphanHolds++
				problem("%s: holds %d at %s, whose pot is %s", id, h.Amount, t, p.State)
			}
		}
		if held != a.Held {
			problem("%s: held %d but its open holds add up to %d", id, a.Held, held)
		}
	}
	if rep.InPots < 0 {
		problem("pots paid %d coins more than they collected", -rep.InPots)
	}
	if rep.Available+rep.Held+rep.InPots != rep.Issued {
		problem("issued %d but balances and pots hold %d", rep.Issued, rep.Available+rep.Held+rep.InPots)
	}
	rep.Ok = len(rep.Problems) == 0
	w.m.audited(ctx, time.Since(start), rep)
	return rep, nil
}

// auditPlan checks a settled pot against the steps recorded on its accounts.
func (w *Wallet) auditPlan(ctx context.Context, table string, p store.Pot, problem func(string, ...any)) error {
	plan := &walletv1.GameSettled{}
	if err := proto.Unmarshal(p.Plan, plan); err != nil || p.Plan == nil {
		problem("%s: settled without a readable plan", table)
		return nil //nolint:nilerr // a finding of the audit, not a failure to run it
	}
	holders, err := w.st.Holders(ctx, table)
	if err != nil {
		return err
	}
	var collected int64
	for _, a := range holders {
		n, _, err := w.st.StepAmount(ctx, a, ledger.CollectID(table))
		if err != nil {
			return err
		}
		collected += n
	}
	if collected != plan.GetPot() {
		problem("%s: collected %d but the plan's pot is %d", table, collected, plan.GetPot())
	}
	paid := map[string]int64{}
	for _, s := range plan.GetShares() {
		paid[s.GetAccountId()] += s.GetAmount()
	}
	if plan.GetUnclaimed() > 0 {
		paid[walletclient.ForfeitAccount] += plan.GetUnclaimed()
	}
	var total int64
	for a, want := range paid {
		n, ok, err := w.st.StepAmount(ctx, a, ledger.PayID(table))
		if err != nil {
			return err
		}
		if !ok || n != want {
			problem("%s: %s was paid %d (recorded: %t), the plan says %d", table, a, n, ok, want)
		}
		total += want
	}
	if total != plan.GetPot() {
		problem("%s: the plan pays %d of a pot of %d", table, total, plan.GetPot())
	}
	return nil
}

// Repair finishes the resolutions (settlements, releases) that started more
// than grace ago and are not done: a wallet that died between their steps
// left them, and every step is idempotent, so running them again completes
// them without repeating any. It returns how many it finished.
func (w *Wallet) Repair(ctx context.Context, grace time.Duration) (int, error) {
	tables, err := w.st.Pots(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, t := range tables {
		p, err := w.st.ReadPot(ctx, t)
		if err != nil {
			return n, err
		}
		if !p.Exists || p.Done || p.State == "open" || w.opt.Now().Sub(p.Started) < grace {
			continue
		}
		res := &walletv1.WalletResult{}
		switch p.State {
		case "settling":
			fs := &scoringv1.FinalStandings{}
			if err := proto.Unmarshal(p.Standings, fs); err != nil {
				return n, fmt.Errorf("wallet: stored standings of %s: %w", t, err)
			}
			_, err = w.settle(ctx, res, fs)
		case "released":
			_, err = w.releaseTable(ctx, res, t)
		}
		if err != nil {
			return n, err
		}
		w.opt.Logger.WarnContext(ctx, "wallet: finished a resolution a crash had left", "table", t, "state", p.State)
		n++
	}
	return n, nil
}
