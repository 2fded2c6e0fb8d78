package service

import (
	"context"
	"fmt"
	"maps"
	"slices"
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
	read, err := w.st.ReadPots(ctx, tables)
	if err != nil {
		return nil, err
	}
	pots := make(map[string]store.Pot, len(tables))
	var settled []string
	for i, t := range tables {
		p := read[i]
		if !p.Exists { // expired between the scan and the read
			continue
		}
		pots[t] = p
		switch p.State {
		case "settled":
			rep.Settled++
			settled = append(settled, t)
		case "settling":
			rep.Settling++
		case "open":
			if age := w.opt.Now().Sub(p.Created); age > w.opt.StalePotAge {
				rep.StalePots++
				problem("%s: its pot has been open for %s: no game in progress holds it (release the table)", t, age.Round(time.Minute))
			}
		}
	}
	// The reads go in batches: one round trip per batch and kind of read,
	// and the memory of one batch of accounts.
	batch := w.st.AuditBatch()
	for lo := 0; lo < len(settled); lo += batch {
		if err := w.auditPlans(ctx, settled[lo:min(lo+batch, len(settled))], pots, problem); err != nil {
			return nil, err
		}
	}
	accounts, err := w.st.Accounts(ctx)
	if err != nil {
		return nil, err
	}
	for lo := 0; lo < len(accounts); lo += batch {
		if err := w.auditAccounts(ctx, rep, accounts[lo:min(lo+batch, len(accounts))], pots, problem); err != nil {
			return nil, err
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

// auditAccounts checks a batch of accounts: their balances against their
// ledgers and their holds against the pots (read before the accounts; a
// hold's pot the scan did not see is read after them).
func (w *Wallet) auditAccounts(ctx context.Context, rep *walletv1.AuditReport, ids []string, pots map[string]store.Pot, problem func(string, ...any)) error {
	as, err := w.st.ReadAccounts(ctx, ids)
	if err != nil {
		return err
	}
	sums, err := w.st.SumLedgers(ctx, as)
	if err != nil {
		return err
	}
	var newer []string // pots newer than the scan
	seen := map[string]bool{}
	for _, a := range as {
		for t := range a.Holds {
			if _, ok := pots[t]; !ok && !seen[t] {
				seen[t] = true
				newer = append(newer, t)
			}
		}
	}
	read, err := w.st.ReadPots(ctx, newer)
	if err != nil {
		return err
	}
	late := make(map[string]store.Pot, len(newer))
	for i, t := range newer {
		late[t] = read[i]
	}
	for i, a := range as {
		id, sum := a.ID, sums[i]
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
		for _, t := range slices.Sorted(maps.Keys(a.Holds)) {
			h := a.Holds[t]
			rep.OpenHolds++
			held += h.Amount
			p, ok := pots[t]
			if !ok {
				p = late[t]
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
	return nil
}

// auditPlans checks settled pots against the steps recorded on their
// accounts: the stakes collected add up to the plan's pot, and each payee
// was paid its share once.
func (w *Wallet) auditPlans(ctx context.Context, tables []string, pots map[string]store.Pot, problem func(string, ...any)) error {
	holders, err := w.st.HoldersOf(ctx, tables)
	if err != nil {
		return err
	}
	type check struct {
		table    string
		plan     *walletv1.GameSettled
		collects int      // steps[first:first+collects] are the collects
		payees   []string // then one pay step each
		want     []int64
		first    int
	}
	var steps []store.Step
	var checks []check
	for i, t := range tables {
		plan := &walletv1.GameSettled{}
		if p := pots[t].Plan; p == nil || proto.Unmarshal(p, plan) != nil {
			problem("%s: settled without a readable plan", t)
			continue
		}
		c := check{table: t, plan: plan, collects: len(holders[i]), first: len(steps)}
		for _, a := range holders[i] {
			steps = append(steps, store.Step{Account: a, Op: ledger.CollectID(t)})
		}
		paid := map[string]int64{}
		for _, s := range plan.GetShares() {
			paid[s.GetAccountId()] += s.GetAmount()
		}
		if plan.GetUnclaimed() > 0 {
			paid[walletclient.ForfeitAccount] += plan.GetUnclaimed()
		}
		for _, a := range slices.Sorted(maps.Keys(paid)) {
			c.payees = append(c.payees, a)
			c.want = append(c.want, paid[a])
			steps = append(steps, store.Step{Account: a, Op: ledger.PayID(t)})
		}
		checks = append(checks, c)
	}
	got, err := w.st.StepAmounts(ctx, steps)
	if err != nil {
		return err
	}
	for _, c := range checks {
		var collected int64
		for _, s := range got[c.first : c.first+c.collects] {
			collected += s.Amount
		}
		if collected != c.plan.GetPot() {
			problem("%s: collected %d but the plan's pot is %d", c.table, collected, c.plan.GetPot())
		}
		var total int64
		for j, a := range c.payees {
			s := got[c.first+c.collects+j]
			if !s.OK || s.Amount != c.want[j] {
				problem("%s: %s was paid %d (recorded: %t), the plan says %d", c.table, a, s.Amount, s.OK, c.want[j])
			}
			total += c.want[j]
		}
		if total != c.plan.GetPot() {
			problem("%s: the plan pays %d of a pot of %d", c.table, total, c.plan.GetPot())
		}
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
