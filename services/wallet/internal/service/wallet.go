package service

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/pkg/walletclient"
	"github.com/pulka/pulka/services/wallet/internal/ledger"
	"github.com/pulka/pulka/services/wallet/internal/store"
)

// Options are the wallet's amounts, clock and retention.
type Options struct {
	// SignupGrant and DailyBonus are the grants' amounts.
	SignupGrant, DailyBonus int64
	// Location is the time zone of the daily bonus's calendar day.
	Location *time.Location
	// PotTTL keeps a resolved pot (0: for ever).
	PotTTL time.Duration
	// Now is the clock (tests replace it).
	Now func() time.Time
	// Logger gets what the wallet reports.
	Logger *slog.Logger
	// Flushers: concurrent store calls share pipelines, this many in
	// flight (0: one round trip per call).
	Flushers int
	// StalePotAge: an open pot older than this is reported by the audit
	// (0: DefaultStalePotAge).
	StalePotAge time.Duration
	// AuditBatch: the audit's reads per round trip (0: store.AuditBatch).
	AuditBatch int
}

// Defaults of Options.
const (
	DefaultSignupGrant = 1000
	DefaultDailyBonus  = 100
	DefaultPotTTL      = 30 * 24 * time.Hour
	DefaultLocation    = "Asia/Tbilisi"
	DefaultStalePotAge = 24 * time.Hour
)

// Wallet applies commands to the store.
type Wallet struct {
	st      *store.Store
	opt     Options
	marshal proto.MarshalOptions
	m       *metrics
}

// New makes a wallet on rdb.
func New(rdb redis.UniversalClient, opt Options, m *metrics) *Wallet {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Location == nil {
		opt.Location = time.UTC
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.StalePotAge <= 0 {
		opt.StalePotAge = DefaultStalePotAge
	}
	if m == nil {
		m = noMetrics()
	}
	st := store.New(rdb, opt.Now, opt.Flushers)
	if opt.AuditBatch > 0 {
		st.SetAuditBatch(opt.AuditBatch)
	}
	return &Wallet{st: st, opt: opt, marshal: proto.MarshalOptions{Deterministic: true}, m: m}
}

// Day is the calendar day of t for the daily bonus.
func (w *Wallet) Day(t time.Time) string { return t.In(w.opt.Location).Format(time.DateOnly) }

// Apply carries out one command and returns its result. An error is a
// failure of Redis (nothing decided: the command may be retried, and its
// steps that ran are not repeated); every decision, refusals included, is a
// result.
func (w *Wallet) Apply(ctx context.Context, cmd *walletv1.WalletCommand) (*walletv1.WalletResult, error) {
	res := &walletv1.WalletResult{CommandId: cmd.GetCommandId(), Trace: cmd.GetTrace()}
	if r := ledger.Validate(cmd); r != nil {
		res.Reason, res.Message = r.Reason, r.Message
		return res, nil //nolint:nilerr // a refusal is the command's result, not a failure to apply it
	}
	op := store.Op{ID: cmd.GetCommandId(), Digest: ledger.Digest(cmd)}
	var (
		o    store.Outcome
		err  error
		kind walletv1.LedgerEntryKind
	)
	switch c := cmd.GetCommand().(type) {
	case *walletv1.WalletCommand_OpenAccount:
		op.Account, kind = c.OpenAccount.GetAccountId(), walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_SIGNUP_GRANT
		o, err = w.st.Open(ctx, op, w.opt.SignupGrant)
	case *walletv1.WalletCommand_ClaimDailyBonus:
		op.Account, kind = c.ClaimDailyBonus.GetAccountId(), walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_DAILY_BONUS
		o, err = w.st.Bonus(ctx, op, w.Day(w.opt.Now()), w.opt.DailyBonus)
	case *walletv1.WalletCommand_HoldStake:
		h := c.HoldStake
		op.Account, kind = h.GetAccountId(), walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_HOLD
		o, err = w.st.Hold(ctx, op, h.GetTableId(), h.GetGameId(), h.GetGame(), h.GetAmount())
	case *walletv1.WalletCommand_ReleaseHold:
		op.Account, kind = c.ReleaseHold.GetAccountId(), walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_RELEASE
		o, err = w.st.Release(ctx, op, c.ReleaseHold.GetTableId())
	case *walletv1.WalletCommand_ForfeitStake:
		op.Account, kind = c.ForfeitStake.GetAccountId(), walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_FORFEIT
		o, err = w.st.Forfeit(ctx, op, c.ForfeitStake.GetTableId())
	case *walletv1.WalletCommand_ReleaseTable:
		return w.releaseTable(ctx, res, c.ReleaseTable.GetTableId())
	case *walletv1.WalletCommand_SettleGame:
		return w.settle(ctx, res, c.SettleGame.GetStandings())
	case *walletv1.WalletCommand_Audit:
		rep, err := w.Audit(ctx)
		if err != nil {
			return nil, err
		}
		res.Accepted, res.Audit = true, rep
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	return w.accountResult(res, cmd, op.Account, kind, o), nil
}

// accountResult turns an account script's outcome into the result.
func (w *Wallet) accountResult(res *walletv1.WalletResult, cmd *walletv1.WalletCommand, account string,
	kind walletv1.LedgerEntryKind, o store.Outcome) *walletv1.WalletResult {
	switch o.Status {
	case store.Conflict:
		res.Reason = walletv1.WalletRejectReason_WALLET_REJECT_REASON_CONFLICT
		res.Message = "command_id " + cmd.GetCommandId() + " was used for another command"
		return res
	case store.NoAccount:
		res.Reason = walletv1.WalletRejectReason_WALLET_REJECT_REASON_UNKNOWN_ACCOUNT
		res.Message = "no account " + account
		return res
	}
	res.Accepted, res.Reason, res.Duplicate = o.Accepted(), o.Reason, o.Status == store.Duplicate
	res.Message = message(o.Reason)
	res.Balances = []*walletv1.Balance{o.Balance(account)}
	if o.Status == store.Applied && o.Accepted() {
		res.Entries = []*walletv1.LedgerEntry{{
			EntryId: fmt.Sprintf("%s/%d", account, o.Seq), CommandId: cmd.GetCommandId(), AccountId: account, Kind: kind,
			AvailableDelta: o.AvailDelta, HeldDelta: o.HeldDelta, AvailableAfter: o.Available, HeldAfter: o.Held, Seq: o.Seq,
		}}
	}
	return res
}

func message(r walletv1.WalletRejectReason) string {
	switch r {
	case 0:
		return ""
	case walletv1.WalletRejectReason_WALLET_REJECT_REASON_INSUFFICIENT_FUNDS:
		return "the available balance cannot cover the stake"
	case walletv1.WalletRejectReason_WALLET_REJECT_REASON_ACCOUNT_EXISTS:
		return "the account exists already"
	case walletv1.WalletRejectReason_WALLET_REJECT_REASON_BONUS_CLAIMED:
		return "the daily bonus was claimed today already"
	case walletv1.WalletRejectReason_WALLET_REJECT_REASON_TABLE_CLOSED:
		return "the table's pot is settled or released"
	case walletv1.WalletRejectReason_WALLET_REJECT_REASON_GAME_MISMATCH:
		return "the table's holds are for another game"
	case walletv1.WalletRejectReason_WALLET_REJECT_REASON_HOLD_EXISTS:
		return "the account holds a stake at this table already"
	case walletv1.WalletRejectReason_WALLET_REJECT_REASON_HOLD_NOT_FOUND:
		return "no open hold at this table"
	case walletv1.WalletRejectReason_WALLET_REJECT_REASON_STAKE_FORFEITED:
		return "the stake was forfeited"
	case walletv1.WalletRejectReason_WALLET_REJECT_REASON_ALREADY_SETTLED:
		return "the table's pot was settled or released already"
	}
	return r.String()
}

func (w *Wallet) releaseTable(ctx context.Context, res *walletv1.WalletResult, table string) (*walletv1.WalletResult, error) {
	b, err := w.st.BeginRelease(ctx, table)
	if err != nil {
		return nil, err
	}
	if b.What == "refused" {
		res.Reason, res.Message = b.Reason, message(b.Reason)
		return res, nil
	}
	out, balances, err := w.voidAll(ctx, table, b.Holders)
	if err != nil {
		return nil, err
	}
	res.Accepted, res.Duplicate, res.Settled, res.Balances = true, b.What == "again", out, balances
	return res, nil
}

// voidAll runs a release's step on every holder, then closes the pot.
func (w *Wallet) voidAll(ctx context.Context, table string, holders []string) (*walletv1.GameSettled, []*walletv1.Balance, error) {
	slices.Sort(holders)
	out := &walletv1.GameSettled{TableId: table, Released: true}
	var balances []*walletv1.Balance
	outs, err := each(holders, func(a string) (store.Outcome, error) { return w.st.Void(ctx, a, table) })
	if err != nil {
		return nil, nil, err
	}
	for i, o := range outs {
		if a := holders[i]; o.Status != store.NoAccount && o.Amount > 0 {
			out.Shares = append(out.Shares, &walletv1.Share{AccountId: a, Amount: o.Amount})
			balances = append(balances, o.Balance(a))
		}
	}
	if err := w.done(ctx, out); err != nil {
		return nil, nil, err
	}
	return out, balances, nil
}

func (w *Wallet) settle(ctx context.Context, res *walletv1.WalletResult, fs *scoringv1.FinalStandings) (*walletv1.WalletResult, error) {
	table := fs.GetTableId()
	clean := proto.CloneOf(fs)
	clean.Trace = nil
	data, err := w.marshal.Marshal(clean)
	if err != nil {
		return nil, fmt.Errorf("wallet: encode standings: %w", err)
	}
	b, err := w.st.BeginSettle(ctx, table, ledger.StandingsDigest(fs), fs.GetGameId(), data, len(fs.GetStandings()))
	if err != nil {
		return nil, err
	}
	switch b.What {
	case "none": // a free table: nothing held, nothing to pay
		res.Accepted, res.Settled = true, &walletv1.GameSettled{TableId: table, GameId: fs.GetGameId()}
		return res, nil
	case "refused":
		res.Reason, res.Message = b.Reason, message(b.Reason)
		switch b.Reason {
		case walletv1.WalletRejectReason_WALLET_REJECT_REASON_CONFLICT:
			res.Message = "the table was settled with other standings"
		case walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED:
			res.Message = fmt.Sprintf("%d standings for a %s table", len(fs.GetStandings()), b.Game)
		}
		return res, nil
	}
	game, _ := tablesettings.GameFromProto(b.Game)
	start := time.Now()
	plan, balances, err := w.payAll(ctx, game, clean, b.Holders)
	if err != nil {
		return nil, err
	}
	if b.What == "new" {
		w.m.settled(ctx, time.Since(start), plan)
	}
	res.Accepted, res.Duplicate, res.Settled, res.Balances = true, b.What == "again", plan, balances
	return res, nil
}

// payAll runs a settlement from its stored start: collect every holder's
// stake, store the plan once, pay every share, close the pot. Each step is
// idempotent (its operation id is per account and table), so it may run any
// number of times, after any crash, and pays each share once.
func (w *Wallet) payAll(ctx context.Context, game tablesettings.Game, fs *scoringv1.FinalStandings, holders []string) (*walletv1.GameSettled, []*walletv1.Balance, error) {
	table, gameID := fs.GetTableId(), fs.GetGameId()
	slices.Sort(holders)
	touched := map[string]*walletv1.Balance{}
	var collected []ledger.Collected
	outs, err := each(holders, func(a string) (store.Outcome, error) { return w.st.Collect(ctx, a, table, gameID) })
	if err != nil {
		return nil, nil, err
	}
	for i, o := range outs {
		if o.Status != store.NoAccount && o.Amount > 0 {
			collected = append(collected, ledger.Collected{Account: holders[i], Amount: o.Amount, Forfeited: o.Forfeited})
			touched[holders[i]] = o.Balance(holders[i])
		}
	}
	plan, err := ledger.Plan(game, fs, collected)
	if err != nil {
		return nil, nil, err
	}
	data, err := w.marshal.Marshal(plan)
	if err != nil {
		return nil, nil, fmt.Errorf("wallet: encode plan: %w", err)
	}
	stored, err := w.st.SavePlan(ctx, table, data)
	if err != nil {
		return nil, nil, err
	}
	if !bytes.Equal(stored, data) {
		// Cannot happen (the plan is a function of remembered steps); the
		// stored plan is the one paid, so pay it and say so.
		w.opt.Logger.ErrorContext(ctx, "wallet: a settlement computed another plan than the stored one; paying the stored one", "table", table)
		plan = &walletv1.GameSettled{}
		if err := proto.Unmarshal(stored, plan); err != nil {
			return nil, nil, fmt.Errorf("wallet: stored plan of %s: %w", table, err)
		}
	}
	payees, amounts := []string{}, map[string]int64{}
	for _, s := range plan.GetShares() {
		payees, amounts[s.GetAccountId()] = append(payees, s.GetAccountId()), s.GetAmount()
	}
	if plan.GetUnclaimed() > 0 {
		payees, amounts[walletclient.ForfeitAccount] = append(payees, walletclient.ForfeitAccount), plan.GetUnclaimed()
	}
	outs, err = each(payees, func(a string) (store.Outcome, error) { return w.st.Pay(ctx, a, table, gameID, amounts[a]) })
	if err != nil {
		return nil, nil, err
	}
	for i, o := range outs {
		if !o.Accepted() {
			return nil, nil, fmt.Errorf("wallet: paying %d to %s for %s: status %d reason %s", amounts[payees[i]], payees[i], table, o.Status, o.Reason)
		}
		touched[payees[i]] = o.Balance(payees[i])
	}
	if err := w.done(ctx, plan); err != nil {
		return nil, nil, err
	}
	balances := make([]*walletv1.Balance, 0, len(touched))
	for _, b := range touched {
		balances = append(balances, b)
	}
	slices.SortFunc(balances, func(a, b *walletv1.Balance) int { return cmp.Compare(a.GetAccountId(), b.GetAccountId()) })
	return plan, balances, nil
}

// each runs one step per account at once (the store pipelines concurrent
// steps: a settlement's collections are one round trip, its payments
// another); the steps are independent, each atomic and idempotent.
func each(accounts []string, f func(a string) (store.Outcome, error)) ([]store.Outcome, error) {
	outs := make([]store.Outcome, len(accounts))
	errs := make([]error, len(accounts))
	var wg sync.WaitGroup
	for i, a := range accounts {
		wg.Go(func() { outs[i], errs[i] = f(a) })
	}
	wg.Wait()
	return outs, errors.Join(errs...)
}

// done closes the table's pot and publishes its GameSettled, once (the
// script that closes the pot appends it the first time only).
func (w *Wallet) done(ctx context.Context, gs *walletv1.GameSettled) error {
	data, err := w.marshal.Marshal(gs)
	if err != nil {
		return fmt.Errorf("wallet: encode settled: %w", err)
	}
	return w.st.Done(ctx, gs.GetTableId(), w.opt.PotTTL, data)
}
