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

// Holders lists the accounts registered at a table's pot.
func (s *Store) Holders(ctx context.Context, table string) ([]string, error) {
	v, err := s.rdb.SMembers(ctx, holdersKey(table)).Result()
	if err != nil {
		return nil, fmt.Errorf("store: holders of %s: %w", table, err)
	}
	return v, nil
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
	keys := accountKeys(id)
	v, err := readAccountScript.Run(ctx, s.rdb, keys[:2]).Slice()
	if err != nil || len(v) != 2 {
		return Account{}, fmt.Errorf("store: read %s: %w (answer %v)", id, err, v)
	}
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
	return a, nil
}

// LedgerSums are the sums of an account's ledger entries up to a seq.
type LedgerSums struct {
	Entries                 int64
	Available, Held         int64
	Issued, Collected, Paid int64
	Gaps                    bool // the seqs are not 1, 2, 3, …
}

// SumLedger adds up the account's ledger entries numbered up to seq, in
// pages (entries appended meanwhile have higher numbers and are skipped).
func (s *Store) SumLedger(ctx context.Context, id string, seq int64) (LedgerSums, error) {
	var sum LedgerSums
	after := "0"
	for {
		entries, next, err := walletclient.Ledger(ctx, s.rdb, id, after, 1000)
		if err != nil {
			return sum, err
		}
		for _, e := range entries {
			if int64(e.GetSeq()) > seq {
				return sum, nil
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
		if len(entries) < 1000 {
			return sum, nil
		}
		after = next
	}
}

// StepAmount is what an account's collect or pay step of a table recorded
// (ok false when the step has not run there).
func (s *Store) StepAmount(ctx context.Context, account, opID string) (int64, bool, error) {
	v, err := s.rdb.HGet(ctx, accountKey(account, "ops"), opID).Result()
	if err == redis.Nil { //nolint:errorlint // go-redis returns redis.Nil itself
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("store: step %s of %s: %w", opID, account, err)
	}
	f := strings.Split(v, "|")
	if len(f) != 9 {
		return 0, false, fmt.Errorf("store: step %s of %s: %q", opID, account, v)
	}
	// A collect remembers its amount in x1; a payment its available delta.
	col := 7
	if strings.HasPrefix(opID, ledger.PayID("")) {
		col = 5
	}
	n, err := strconv.ParseInt(f[col], 10, 64)
	return n, true, err
}
