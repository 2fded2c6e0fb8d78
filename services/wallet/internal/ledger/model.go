package ledger

import (
	"cmp"
	"slices"

	"google.golang.org/protobuf/proto"

	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/pkg/walletclient"
)

// Model is the reference model of the ledger: the meaning of every command,
// applied atomically to plain maps. It is written for clarity, not speed,
// and shares nothing with the store but Validate and Plan.
type Model struct {
	// Signup and Bonus are the grants' amounts.
	Signup, Bonus int64

	accounts map[string]*modelAccount
	pots     map[string]*modelPot
}

type modelAccount struct {
	avail, held, seq        int64
	issued, collected, paid int64
	bonusDay                string
	holds                   map[string]*modelHold
	ops                     map[string]modelOp
}

type modelHold struct {
	amount    int64
	forfeited bool
}

type modelOp struct {
	digest string
	reason walletv1.WalletRejectReason
	avail  int64
	held   int64
	seq    int64
}

const (
	potOpen = iota
	potSettled
	potReleased
)

type modelPot struct {
	state   int
	game    tablesettings.Game
	holders map[string]bool
	digest  string
	result  *walletv1.GameSettled
	// balances of the accounts the resolution touched, right after it.
	balances []*walletv1.Balance
}

// NewModel makes an empty ledger with the given grants.
func NewModel(signup, bonus int64) *Model {
	return &Model{Signup: signup, Bonus: bonus, accounts: map[string]*modelAccount{}, pots: map[string]*modelPot{}}
}

// Apply applies one command on the given day (YYYY-MM-DD, the wallet's
// calendar day) and returns its result: accepted, reason, duplicate,
// balances and, for a table's settlement or release, what happened to the
// pot. Audit is not modelled.
func (m *Model) Apply(cmd *walletv1.WalletCommand, day string) *walletv1.WalletResult {
	res := &walletv1.WalletResult{CommandId: cmd.GetCommandId()}
	if r := Validate(cmd); r != nil {
		res.Reason, res.Message = r.Reason, r.Message
		return res
	}
	switch c := cmd.GetCommand().(type) {
	case *walletv1.WalletCommand_OpenAccount:
		a := c.OpenAccount.GetAccountId()
		if _, ok := m.accounts[a]; !ok {
			m.accounts[a] = &modelAccount{holds: map[string]*modelHold{}, ops: map[string]modelOp{}}
			return m.op(res, a, cmd, func(acc *modelAccount) walletv1.WalletRejectReason {
				acc.avail += m.Signup
				acc.issued += m.Signup
				acc.seq++
				return 0
			})
		}
		return m.op(res, a, cmd, func(*modelAccount) walletv1.WalletRejectReason {
			return walletv1.WalletRejectReason_WALLET_REJECT_REASON_ACCOUNT_EXISTS
		})
	case *walletv1.WalletCommand_ClaimDailyBonus:
		return m.op(res, c.ClaimDailyBonus.GetAccountId(), cmd, func(acc *modelAccount) walletv1.WalletRejectReason {
			if acc.bonusDay >= day {
				return walletv1.WalletRejectReason_WALLET_REJECT_REASON_BONUS_CLAIMED
			}
			acc.bonusDay = day
			acc.avail += m.Bonus
			acc.issued += m.Bonus
			acc.seq++
			return 0
		})
	case *walletv1.WalletCommand_HoldStake:
		h := c.HoldStake
		game, _ := tablesettings.GameFromProto(h.GetGame())
		// The pot first: it registers the holder (or refuses) whatever the
		// account's step then decides.
		var potReason walletv1.WalletRejectReason
		p := m.pots[h.GetTableId()]
		switch {
		case p == nil:
			p = &modelPot{state: potOpen, game: game, holders: map[string]bool{}}
			m.pots[h.GetTableId()] = p
			p.holders[h.GetAccountId()] = true
		case p.state != potOpen:
			potReason = walletv1.WalletRejectReason_WALLET_REJECT_REASON_TABLE_CLOSED
		case p.game != game:
			potReason = walletv1.WalletRejectReason_WALLET_REJECT_REASON_GAME_MISMATCH
		default:
			p.holders[h.GetAccountId()] = true
		}
		return m.op(res, h.GetAccountId(), cmd, func(acc *modelAccount) walletv1.WalletRejectReason {
			switch {
			case potReason != 0:
				return potReason
			case acc.holds[h.GetTableId()] != nil:
				return walletv1.WalletRejectReason_WALLET_REJECT_REASON_HOLD_EXISTS
			case acc.avail < h.GetAmount():
				return walletv1.WalletRejectReason_WALLET_REJECT_REASON_INSUFFICIENT_FUNDS
			}
			acc.holds[h.GetTableId()] = &modelHold{amount: h.GetAmount()}
			acc.avail -= h.GetAmount()
			acc.held += h.GetAmount()
			acc.seq++
			return 0
		})
	case *walletv1.WalletCommand_ReleaseHold:
		t := c.ReleaseHold.GetTableId()
		return m.op(res, c.ReleaseHold.GetAccountId(), cmd, func(acc *modelAccount) walletv1.WalletRejectReason {
			h := acc.holds[t]
			switch {
			case h == nil:
				return walletv1.WalletRejectReason_WALLET_REJECT_REASON_HOLD_NOT_FOUND
			case h.forfeited:
				return walletv1.WalletRejectReason_WALLET_REJECT_REASON_STAKE_FORFEITED
			}
			acc.release(t)
			return 0
		})
	case *walletv1.WalletCommand_ForfeitStake:
		t := c.ForfeitStake.GetTableId()
		return m.op(res, c.ForfeitStake.GetAccountId(), cmd, func(acc *modelAccount) walletv1.WalletRejectReason {
			h := acc.holds[t]
			switch {
			case h == nil:
				return walletv1.WalletRejectReason_WALLET_REJECT_REASON_HOLD_NOT_FOUND
			case h.forfeited:
				return walletv1.WalletRejectReason_WALLET_REJECT_REASON_STAKE_FORFEITED
			}
			h.forfeited = true
			acc.seq++
			return 0
		})
	case *walletv1.WalletCommand_ReleaseTable:
		return m.releaseTable(res, c.ReleaseTable.GetTableId())
	case *walletv1.WalletCommand_SettleGame:
		return m.settle(res, c.SettleGame)
	}
	return res
}

// op applies an account's operation f once per command id: a repeat of the
// id returns the first outcome (duplicate), another command under the same
// id is a conflict; refusals f decides are remembered like successes.
func (m *Model) op(res *walletv1.WalletResult, account string, cmd *walletv1.WalletCommand,
	f func(*modelAccount) walletv1.WalletRejectReason) *walletv1.WalletResult {
	acc := m.accounts[account]
	if acc == nil {
		res.Reason = walletv1.WalletRejectReason_WALLET_REJECT_REASON_UNKNOWN_ACCOUNT
		return res
	}
	digest := Digest(cmd)
	if prev, ok := acc.ops[cmd.GetCommandId()]; ok {
		if prev.digest != digest {
			res.Reason = walletv1.WalletRejectReason_WALLET_REJECT_REASON_CONFLICT
			return res
		}
		res.Duplicate = true
		return fill(res, account, prev)
	}
	o := modelOp{digest: digest, reason: f(acc)}
	o.avail, o.held, o.seq = acc.avail, acc.held, acc.seq
	acc.ops[cmd.GetCommandId()] = o
	return fill(res, account, o)
}

func fill(res *walletv1.WalletResult, account string, o modelOp) *walletv1.WalletResult {
	res.Accepted = o.reason == 0
	res.Reason = o.reason
	res.Balances = []*walletv1.Balance{{AccountId: account, Available: o.avail, Held: o.held, Version: uint64(o.seq)}}
	return res
}

func (acc *modelAccount) release(table string) int64 {
	h := acc.holds[table]
	delete(acc.holds, table)
	acc.avail += h.amount
	acc.held -= h.amount
	acc.seq++
	return h.amount
}

func (m *Model) releaseTable(res *walletv1.WalletResult, table string) *walletv1.WalletResult {
	p := m.pots[table]
	switch {
	case p == nil:
		p = &modelPot{state: potReleased, holders: map[string]bool{}, result: &walletv1.GameSettled{TableId: table, Released: true}}
		m.pots[table] = p
	case p.state == potSettled:
		res.Reason = walletv1.WalletRejectReason_WALLET_REJECT_REASON_ALREADY_SETTLED
		return res
	case p.state == potReleased:
		res.Duplicate = true
	default:
		p.state = potReleased
		out := &walletv1.GameSettled{TableId: table, Released: true}
		for _, a := range sortedKeys(p.holders) {
			acc := m.accounts[a]
			if acc == nil || acc.holds[table] == nil {
				continue
			}
			out.Shares = append(out.Shares, &walletv1.Share{AccountId: a, Amount: acc.release(table)})
			p.balances = append(p.balances, m.balance(a))
		}
		p.result = out
	}
	res.Accepted = true
	res.Settled = proto.CloneOf(p.result)
	res.Balances = cloneBalances(p.balances)
	return res
}

func (m *Model) settle(res *walletv1.WalletResult, sg *walletv1.SettleGame) *walletv1.WalletResult {
	fs := sg.GetStandings()
	table := fs.GetTableId()
	p := m.pots[table]
	digest := StandingsDigest(fs)
	switch {
	case p == nil:
		res.Accepted = true
		res.Settled = &walletv1.GameSettled{TableId: table, GameId: fs.GetGameId()}
		return res
	case p.state == potReleased:
		res.Reason = walletv1.WalletRejectReason_WALLET_REJECT_REASON_ALREADY_SETTLED
		return res
	case p.state == potSettled && p.digest != digest:
		res.Reason = walletv1.WalletRejectReason_WALLET_REJECT_REASON_CONFLICT
		return res
	case p.state == potSettled:
		res.Duplicate = true
	default:
		if len(fs.GetStandings()) > p.game.Seats() {
			res.Reason = walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED
			return res
		}
		var collected []Collected
		touched := map[string]bool{}
		for _, a := range sortedKeys(p.holders) {
			acc := m.accounts[a]
			if acc == nil || acc.holds[table] == nil {
				continue
			}
			h := acc.holds[table]
			delete(acc.holds, table)
			acc.held -= h.amount
			acc.collected += h.amount
			acc.seq++
			touched[a] = true
			collected = append(collected, Collected{Account: a, Amount: h.amount, Forfeited: h.forfeited})
		}
		plan, err := Plan(p.game, fs, collected)
		if err != nil { // cannot happen: the standings were validated
			res.Reason = walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED
			return res
		}
		for _, s := range plan.GetShares() {
			m.pay(s.GetAccountId(), s.GetAmount())
			touched[s.GetAccountId()] = true
		}
		if plan.GetUnclaimed() > 0 {
			m.pay(walletclient.ForfeitAccount, plan.GetUnclaimed())
			touched[walletclient.ForfeitAccount] = true
		}
		p.state, p.digest, p.result = potSettled, digest, plan
		for _, a := range sortedKeys(touched) {
			p.balances = append(p.balances, m.balance(a))
		}
	}
	res.Accepted = true
	res.Settled = proto.CloneOf(p.result)
	res.Balances = cloneBalances(p.balances)
	return res
}

func (m *Model) pay(account string, amount int64) {
	acc := m.accounts[account]
	if acc == nil { // the forfeit account opens on its first payment
		acc = &modelAccount{holds: map[string]*modelHold{}, ops: map[string]modelOp{}}
		m.accounts[account] = acc
	}
	acc.avail += amount
	acc.paid += amount
	acc.seq++
}

func (m *Model) balance(account string) *walletv1.Balance {
	acc := m.accounts[account]
	return &walletv1.Balance{AccountId: account, Available: acc.avail, Held: acc.held, Version: uint64(acc.seq)}
}

func cloneBalances(bs []*walletv1.Balance) []*walletv1.Balance {
	out := make([]*walletv1.Balance, len(bs))
	for i, b := range bs {
		out[i] = proto.CloneOf(b)
	}
	return out
}

// Balance is an account's balance in the model (zero and false for an
// account that does not exist).
func (m *Model) Balance(account string) (*walletv1.Balance, bool) {
	if m.accounts[account] == nil {
		return nil, false
	}
	return m.balance(account), true
}

// Accounts lists the model's accounts, sorted.
func (m *Model) Accounts() []string { return sortedKeys(m.accounts) }

// Issued is every coin the model granted.
func (m *Model) Issued() int64 {
	var n int64
	for _, a := range m.accounts {
		n += a.issued
	}
	return n
}

func sortedKeys[V any](mp map[string]V) []string {
	out := make([]string, 0, len(mp))
	for k := range mp {
		out = append(out, k)
	}
	slices.SortFunc(out, cmp.Compare[string])
	return out
}
