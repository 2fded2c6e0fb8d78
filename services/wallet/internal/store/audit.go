package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/walletclient"
	"github.com/pulka/pulka/services/wallet/internal/ledger"
)

// scan calls f with every key matching pattern, on every master of a
// cluster or on the one server.
func scan(ctx context.Context, rdb redis.UniversalClient, pattern string, f func(key string)) error {
	one := func(ctx context.Context, c *redis.Client, f func(string)) error {
		it := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for it.Next(ctx) {
			f(it.Val())
		}
		return it.Err()
	}
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		// ForEachMaster runs the masters in parallel; f sees one key at a time.
		var mu sync.Mutex
		return c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			return one(ctx, n, func(k string) {
				mu.Lock()
				defer mu.Unlock()
				f(k)
			})
		})
	case *redis.Client:
		return one(ctx, c, f)
	}
	return fmt.Errorf("store: cannot scan a %T", rdb)
}

// Accounts lists every account (players and the wallet's own).
func (s *Store) Accounts(ctx context.Context) ([]string, error) {
	var out []string
	err := scan(ctx, s.rdb, accountPattern, func(k string) {
		open, end := strings.Index(k, "{w:"), strings.LastIndex(k, "}:acct")
		if open >= 0 && end > open {
			out = append(out, k[open+3:end])
		}
	})
	return out, err
}

// Pots lists every table that has a pot.
func (s *Store) Pots(ctx context.Context) ([]string, error) {
	var out []string
	err := scan(ctx, s.rdb, potPattern, func(k string) {
		open, end := strings.Index(k, "{t:"), strings.LastIndex(k, "}:wallet:pot")
		if open >= 0 && end > open {
			out = append(out, k[open+3:end])
		}
	})
	return out, err
}

// AuditBatch bounds the reads of one pipeline of the audit's batched reads
// (ReadPots, HoldersOf, ReadAccounts, SumLedgers, StepAmounts): a batch is
// one round trip. LedgerPage is the entries one read of a ledger takes, so
// a batch of SumLedgers holds at most AuditBatch × LedgerPage entries.
const (
	AuditBatch = 512
	LedgerPage = 128
)

// SetAuditBatch makes the audit's pipelines n reads long (and its ledger
// pages at most n entries): small batches for tests of the batching.
func (s *Store) SetAuditBatch(n int) {
	s.batch, s.page = max(n, 1), min(max(n, 1), LedgerPage)
}

// AuditBatch is the reads of one pipeline of the audit.
func (s *Store) AuditBatch() int { return s.batch }

// pipelined queues n reads in pipelines of AuditBatch, calling queue for
// each read and, once its pipeline has run, read for each (in order). Each
// command's error is its own: read sees it on the command it queued.
func (s *Store) pipelined(ctx context.Context, n int, queue func(p redis.Pipeliner, i int), read func(i int) error) error {
	for lo := 0; lo < n; lo += s.batch {
		hi := min(lo+s.batch, n)
		pipe := s.rdb.Pipeline()
		for i := lo; i < hi; i++ {
			queue(pipe, i)
		}
		_, _ = pipe.Exec(ctx) // each read checks its own command
		for i := lo; i < hi; i++ {
			if err := read(i); err != nil {
				return err
			}
		}
	}
	return ctx.Err()
}

// ReadPots reads the pots of tables (Pot.Exists false where there is none).
func (s *Store) ReadPots(ctx context.Context, tables []string) ([]Pot, error) {
	out := make([]Pot, len(tables))
	cmds := make([]*redis.SliceCmd, len(tables))
	err := s.pipelined(ctx, len(tables),
		func(p redis.Pipeliner, i int) { cmds[i] = readPot(ctx, p, tables[i]) },
		func(i int) error {
			v, err := cmds[i].Result()
			if err != nil {
				return fmt.Errorf("store: pot of %s: %w", tables[i], err)
			}
			out[i] = parsePot(v)
			return nil
		})
	return out, err
}

// HoldersOf lists, for each table, the accounts registered at its pot.
func (s *Store) HoldersOf(ctx context.Context, tables []string) ([][]string, error) {
	out := make([][]string, len(tables))
	cmds := make([]*redis.StringSliceCmd, len(tables))
	err := s.pipelined(ctx, len(tables),
		func(p redis.Pipeliner, i int) { cmds[i] = p.SMembers(ctx, holdersKey(tables[i])) },
		func(i int) error {
			v, err := cmds[i].Result()
			if err != nil {
				return fmt.Errorf("store: holders of %s: %w", tables[i], err)
			}
			out[i] = v
			return nil
		})
	return out, err
}

// Account is an account's stored state, read in one step.
type Account struct {
	ID                      string
	Available, Held, Seq    int64
	Issued, Collected, Paid int64
	Holds                   map[string]Hold
}

// Hold is an open hold.
type Hold struct {
	Amount    int64
	Forfeited bool
}

var readAccountScript = redis.NewScript(`
return {redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2])}
`)

// ReadAccount reads an account's balances and open holds together (one
// script: a consistent view even while the account changes).
func (s *Store) ReadAccount(ctx context.Context, id string) (Account, error) {
	a, err := s.ReadAccounts(ctx, []string{id})
	if err != nil {
		return Account{}, err
	}
	return a[0], nil
}

// ReadAccounts is ReadAccount for many accounts, pipelined.
func (s *Store) ReadAccounts(ctx context.Context, ids []string) ([]Account, error) {
	out := make([]Account, len(ids))
	cmds := make([]*redis.Cmd, len(ids))
	err := s.pipelined(ctx, len(ids),
		func(p redis.Pipeliner, i int) {
			keys := accountKeys(ids[i])
			// Eval, not EvalSha: a pipeline cannot fall back on NOSCRIPT, and
			// the script is a line.
			cmds[i] = readAccountScript.Eval(ctx, p, keys[:2])
		},
		func(i int) error {
			v, err := cmds[i].Slice()
			if err != nil || len(v) != 2 {
				return fmt.Errorf("store: read %s: %w (answer %v)", ids[i], err, v)
			}
			out[i] = parseAccount(ids[i], v)
			return nil
		})
	return out, err
}

func parseAccount(id string, v []any) Account {
	a := Account{ID: id, Holds: map[string]Hold{}}
	pairs := func(x any, f func(k, v string)) {
		l, _ := x.([]any)
		for i := 0; i+1 < len(l); i += 2 {
			k, _ := l[i].(string)
			v, _ := l[i+1].(string)
			f(k, v)
		}
	}
	pairs(v[0], func(k, v string) {
		n, _ := strconv.ParseInt(v, 10, 64)
		switch k {
		case "avail":
			a.Available = n
		case "held":
			a.Held = n
		case "seq":
			a.Seq = n
		case "issued":
			a.Issued = n
		case "collected":
			a.Collected = n
		case "paid":
			a.Paid = n
		}
	})
	pairs(v[1], func(k, v string) {
		amount, forfeited, _ := strings.Cut(v, "|")
		n, _ := strconv.ParseInt(amount, 10, 64)
		a.Holds[k] = Hold{Amount: n, Forfeited: forfeited == "1"}
	})
	return a
}

// LedgerSums are the sums of an account's ledger entries up to a seq.
type LedgerSums struct {
	Entries                 int64
	Available, Held         int64
	Issued, Collected, Paid int64
	Gaps                    bool // the seqs are not 1, 2, 3, …
}

// SumLedgers adds up each account's ledger entries numbered up to its Seq
// (entries appended meanwhile have higher numbers and are skipped), a page
// of every account's ledger per pipeline.
func (s *Store) SumLedgers(ctx context.Context, accounts []Account) ([]LedgerSums, error) {
	sums := make([]LedgerSums, len(accounts))
	after := make([]string, len(accounts))
	todo := make([]int, len(accounts)) // the accounts whose ledger has more to read
	for i := range todo {
		todo[i], after[i] = i, "0"
	}
	for len(todo) > 0 {
		cmds := make([]*redis.XMessageSliceCmd, len(todo))
		var more []int
		err := s.pipelined(ctx, len(todo),
			func(p redis.Pipeliner, j int) {
				a := &accounts[todo[j]]
				cmds[j] = walletclient.LedgerPage(ctx, p, a.ID, after[todo[j]], int64(s.page))
			},
			func(j int) error {
				i := todo[j]
				msgs, err := cmds[j].Result()
				if err != nil {
					return fmt.Errorf("store: ledger of %s: %w", accounts[i].ID, err)
				}
				entries, next, err := walletclient.ParseLedgerPage(accounts[i].ID, after[i], msgs)
				if err != nil {
					return err
				}
				if sums[i].add(entries, accounts[i].Seq) && len(entries) == s.page {
					after[i] = next
					more = append(more, i)
				}
				return nil
			})
		if err != nil {
			return nil, err
		}
		todo = more
	}
	return sums, nil
}

// add counts the entries numbered up to seq, and reports whether all of
// them were (so later ones may still count).
func (sum *LedgerSums) add(entries []*walletv1.LedgerEntry, seq int64) bool {
	for _, e := range entries {
		if int64(e.GetSeq()) > seq {
			return false
		}
		sum.Entries++
		if int64(e.GetSeq()) != sum.Entries {
			sum.Gaps = true
		}
		sum.Available += e.GetAvailableDelta()
		sum.Held += e.GetHeldDelta()
		switch e.GetKind() {
		case walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_SIGNUP_GRANT, walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_DAILY_BONUS:
			sum.Issued += e.GetAvailableDelta()
		case walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_STAKE_SETTLED:
			sum.Collected -= e.GetHeldDelta()
		case walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_PAYOUT:
			sum.Paid += e.GetAvailableDelta()
		}
	}
	return true
}

// Step names a table's collect or pay step on one account (ledger.CollectID,
// ledger.PayID).
type Step struct{ Account, Op string }

// StepAmount is what a step recorded; OK is false when it has not run.
type StepAmount struct {
	Amount int64
	OK     bool
}

// StepAmounts reads what each step recorded: a collect its amount, a
// payment its available delta.
func (s *Store) StepAmounts(ctx context.Context, steps []Step) ([]StepAmount, error) {
	out := make([]StepAmount, len(steps))
	cmds := make([]*redis.StringCmd, len(steps))
	err := s.pipelined(ctx, len(steps),
		func(p redis.Pipeliner, i int) {
			cmds[i] = p.HGet(ctx, accountKey(steps[i].Account, "ops"), steps[i].Op)
		},
		func(i int) error {
			st := steps[i]
			v, err := cmds[i].Result()
			if err == redis.Nil { //nolint:errorlint // go-redis returns redis.Nil itself
				return nil
			}
			if err != nil {
				return fmt.Errorf("store: step %s of %s: %w", st.Op, st.Account, err)
			}
			f := strings.Split(v, "|")
			if len(f) != 9 {
				return fmt.Errorf("store: step %s of %s: %q", st.Op, st.Account, v)
			}
			// A collect remembers its amount in x1; a payment its available delta.
			col := 7
			if strings.HasPrefix(st.Op, ledger.PayID("")) {
				col = 5
			}
			n, err := strconv.ParseInt(f[col], 10, 64)
			if err != nil {
				return fmt.Errorf("store: step %s of %s: %q: %w", st.Op, st.Account, v, err)
			}
			out[i] = StepAmount{Amount: n, OK: true}
			return nil
		})
	return out, err
}
