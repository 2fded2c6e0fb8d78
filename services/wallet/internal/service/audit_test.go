package service

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/walletclient"
	"github.com/pulka/pulka/services/wallet/internal/ledger"
)

// auditFixture is a small wallet with every kind of state the audit reads:
// four accounts, a settled pot at table "done" (stakes collected, the plan
// paid) and an open pot at table "live" holding ana's stake.
func auditFixture(t *testing.T, ctx context.Context, rdb redis.UniversalClient, auditBatch int) *Wallet {
	t.Helper()
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)}
	w := newTestWallet(t, rdb, c, auditBatch)
	players := []string{"ana", "beso", "gio", "nika"}
	var cmds []*walletv1.WalletCommand
	fs := &scoringv1.FinalStandings{TableId: "done", GameId: "g-done"}
	for i, p := range players {
		cmds = append(cmds,
			&walletv1.WalletCommand{CommandId: "open-" + p, Command: &walletv1.WalletCommand_OpenAccount{OpenAccount: &walletv1.OpenAccount{AccountId: p}}},
			&walletv1.WalletCommand{CommandId: "hold-" + p, Command: &walletv1.WalletCommand_HoldStake{HoldStake: &walletv1.HoldStake{AccountId: p, TableId: "done", Amount: 100, Game: lobbyv1.Game_GAME_CLASSIC}}})
		fs.Standings = append(fs.Standings, &scoringv1.Standing{Seat: uint32(i), Place: uint32(i + 1), PlayerId: p, Total: int64(400 - 100*i)})
	}
	cmds = append(cmds,
		&walletv1.WalletCommand{CommandId: "settle", Command: &walletv1.WalletCommand_SettleGame{SettleGame: &walletv1.SettleGame{Standings: fs}}},
		&walletv1.WalletCommand{CommandId: "live", Command: &walletv1.WalletCommand_HoldStake{HoldStake: &walletv1.HoldStake{AccountId: "ana", TableId: "live", Amount: 50, Game: lobbyv1.Game_GAME_CLASSIC}}})
	for _, cmd := range cmds {
		res, err := w.Apply(ctx, cmd)
		if err != nil || !res.GetAccepted() {
			t.Fatalf("%v: %v %v", cmd, res, err)
		}
		if s := cmd.GetSettleGame(); s != nil && len(res.GetSettled().GetShares()) == 0 {
			t.Fatalf("the fixture's game paid nobody: %v", res)
		}
	}
	rep, err := w.Audit(ctx)
	if err != nil || !rep.GetOk() || rep.GetAccounts() != 4 || rep.GetSettled() != 1 || rep.GetOpenHolds() != 1 || rep.GetHeld() != 50 {
		t.Fatalf("the untouched fixture: %v %v", rep, err)
	}
	return w
}

// theKey is the one key matching pattern (the audit's own key names are
// the store's business; the tests find them by their tags).
func theKey(t *testing.T, ctx context.Context, rdb redis.UniversalClient, pattern string) string {
	t.Helper()
	found, err := rdb.Keys(ctx, pattern).Result()
	if err != nil || len(found) != 1 {
		t.Fatalf("keys %q: %v %v", pattern, found, err)
	}
	return found[0]
}

// acctKey is the account's key of that suffix (acct, holds, ops), found
// beside its balance (an empty holds hash does not exist).
func acctKey(t *testing.T, ctx context.Context, rdb redis.UniversalClient, account, suffix string) string {
	acct := theKey(t, ctx, rdb, "*"+walletclient.AccountTag(account)+":acct")
	return strings.TrimSuffix(acct, "acct") + suffix
}

func potOf(t *testing.T, ctx context.Context, rdb redis.UniversalClient, table string) string {
	return theKey(t, ctx, rdb, "*"+streams.TableTag(table)+"*:pot")
}

// setStep rewrites one field of a recorded collect or pay step.
func setStep(t *testing.T, ctx context.Context, rdb redis.UniversalClient, account, op string, col int, v string) {
	t.Helper()
	ops := acctKey(t, ctx, rdb, account, "ops")
	old, err := rdb.HGet(ctx, ops, op).Result()
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Split(old, "|")
	f[col] = v
	if err := rdb.HSet(ctx, ops, op, strings.Join(f, "|")).Err(); err != nil {
		t.Fatal(err)
	}
}

// The reconciliation's findings: each way the stored wallet can go wrong
// behind the scripts' backs (a hand edit, a lost write, a bug in a script)
// is reported, naming the account or table, and the audit changes nothing.
func TestAudit_FindsEveryKindOfDamage(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		damage func(t *testing.T)
		want   []string // every one in the report's problems
		check  func(r *walletv1.AuditReport) bool
	}{
		{"coins added to a balance without a ledger entry", func(t *testing.T) {
			rdb.HIncrBy(ctx, acctKey(t, ctx, rdb, "gio", "acct"), "avail", 7)
		}, []string{"gio: balance", "gio: 7 coins appeared or vanished", "balances and pots hold"}, nil},
		{"a negative balance", func(t *testing.T) {
			rdb.HSet(ctx, acctKey(t, ctx, rdb, "nika", "acct"), "avail", -3)
		}, []string{"nika: negative balance: available -3"}, nil},
		{"a ledger entry lost", func(t *testing.T) {
			l := walletclient.LedgerStream("beso")
			first, err := rdb.XRangeN(ctx, l, "-", "+", 1).Result()
			if err != nil || len(first) != 1 {
				t.Fatal(first, err)
			}
			rdb.XDel(ctx, l, first[0].ID)
		}, []string{"beso: ledger has", "beso: balance"}, nil},
		{"a ledger entry's number skipped", func(t *testing.T) {
			// The newest entry renumbered past a gap, the balance's seq with it.
			l := walletclient.LedgerStream("gio")
			last, err := rdb.XRevRangeN(ctx, l, "+", "-", 1).Result()
			if err != nil || len(last) != 1 {
				t.Fatal(last, err)
			}
			e, err := walletclient.ParseLedgerEntry("gio", last[0])
			if err != nil {
				t.Fatal(err)
			}
			seq := int64(e.GetSeq()) + 1
			vals := last[0].Values
			vals[walletclient.FieldSeq] = seq
			rdb.XDel(ctx, l, last[0].ID)
			rdb.XAdd(ctx, &redis.XAddArgs{Stream: l, Values: vals})
			rdb.HSet(ctx, acctKey(t, ctx, rdb, "gio", "acct"), "seq", seq)
		}, []string{"gio: ledger has"}, nil},
		{"a hold forgotten, its coins still held", func(t *testing.T) {
			rdb.HDel(ctx, acctKey(t, ctx, rdb, "ana", "holds"), "live")
		}, []string{"ana: held 50 but its open holds add up to 0"}, nil},
		{"a hold whose pot is gone", func(t *testing.T) {
			rdb.Del(ctx, potOf(t, ctx, rdb, "live"))
		}, []string{"ana: holds 50 at live, which has no pot"}, func(r *walletv1.AuditReport) bool { return r.GetOrphanHolds() == 1 }},
		{"a hold at a settled pot", func(t *testing.T) {
			rdb.HSet(ctx, acctKey(t, ctx, rdb, "beso", "holds"), "done", "20|0")
		}, []string{"beso: holds 20 at done, whose pot is settled", "beso: held 0 but its open holds add up to 20"},
			func(r *walletv1.AuditReport) bool { return r.GetOrphanHolds() == 1 }},
		{"a payment unlike the plan's share", func(t *testing.T) {
			setStep(t, ctx, rdb, "ana", ledger.PayID("done"), 5, "1")
		}, []string{"done: ana was paid 1 (recorded: true), the plan says"}, nil},
		{"a payment never recorded", func(t *testing.T) {
			rdb.HDel(ctx, acctKey(t, ctx, rdb, "ana", "ops"), ledger.PayID("done"))
		}, []string{"done: ana was paid 0 (recorded: false), the plan says"}, nil},
		{"a stake collected twice over", func(t *testing.T) {
			setStep(t, ctx, rdb, "nika", ledger.CollectID("done"), 7, "200")
		}, []string{"done: collected 500 but the plan's pot is 400"}, nil},
		{"a settled pot without its plan", func(t *testing.T) {
			rdb.HSet(ctx, potOf(t, ctx, rdb, "done"), "plan", "\xff\xff not a plan")
		}, []string{"done: settled without a readable plan"}, nil},
		{"pots that paid out more than they took", func(t *testing.T) {
			for _, a := range []string{"ana", "beso"} {
				rdb.HIncrBy(ctx, acctKey(t, ctx, rdb, a, "acct"), "paid", 300)
				rdb.HIncrBy(ctx, acctKey(t, ctx, rdb, a, "acct"), "avail", 300)
			}
		}, []string{"pots paid 600 coins more than they collected", "ana: balance"}, nil},
	} {
		for _, batch := range []int{0, 2} { // whole, and in pipelines of two reads
			t.Run(fmt.Sprintf("%s/batch%d", tc.name, batch), func(t *testing.T) {
				w := auditFixture(t, ctx, rdb, batch)
				tc.damage(t)
				before := dump(t, ctx, rdb)
				rep, err := w.Audit(ctx)
				if err != nil {
					t.Fatal(err)
				}
				got := strings.Join(rep.GetProblems(), "\n")
				if rep.GetOk() {
					t.Fatalf("the audit found nothing: %v", rep)
				}
				for _, s := range tc.want {
					if !strings.Contains(got, s) {
						t.Errorf("no problem mentions %q; the problems:\n%s", s, got)
					}
				}
				if tc.check != nil && !tc.check(rep) {
					t.Errorf("counts: %v", rep)
				}
				if after := dump(t, ctx, rdb); after != before {
					t.Errorf("the audit changed the store:\n%s\nto\n%s", before, after)
				}
			})
		}
	}
}

// dump is every key and its type and contents' digest (DEBUG DIGEST-VALUE is
// not everywhere; DUMP is), to see that the audit writes nothing.
func dump(t *testing.T, ctx context.Context, rdb redis.UniversalClient) string {
	t.Helper()
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	slices.Sort(keys)
	for _, k := range keys {
		v, err := rdb.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(k, err)
		}
		b.WriteString(k + "=" + v + "\n")
	}
	return b.String()
}

// BenchmarkAudit reconciles a wallet of 400 accounts that played 100
// settled games of four, and left 100 holds open.
func BenchmarkAudit(b *testing.B) {
	srv := redistest.Start(b)
	rdb := srv.Client(b)
	ctx := context.Background()
	w := New(rdb, Options{SignupGrant: 1000, Location: time.UTC, Flushers: 4}, nil)
	apply := func(cmd *walletv1.WalletCommand) {
		if res, err := w.Apply(ctx, cmd); err != nil || !res.GetAccepted() {
			b.Fatalf("%v: %v %v", cmd, res, err)
		}
	}
	for i := range 400 {
		p := fmt.Sprint("p", i)
		apply(&walletv1.WalletCommand{CommandId: "open-" + p, Command: &walletv1.WalletCommand_OpenAccount{OpenAccount: &walletv1.OpenAccount{AccountId: p}}})
	}
	for g := range 100 {
		table := fmt.Sprint("t", g)
		fs := &scoringv1.FinalStandings{TableId: table, GameId: "g-" + table}
		for s := range 4 {
			p := fmt.Sprint("p", 4*g+s)
			apply(&walletv1.WalletCommand{CommandId: "hold-" + table + p, Command: &walletv1.WalletCommand_HoldStake{HoldStake: &walletv1.HoldStake{AccountId: p, TableId: table, Amount: 100, Game: lobbyv1.Game_GAME_CLASSIC}}})
			fs.Standings = append(fs.Standings, &scoringv1.Standing{Seat: uint32(s), Place: uint32(s + 1), PlayerId: p, Total: int64(400 - 100*s)})
		}
		apply(&walletv1.WalletCommand{CommandId: "settle-" + table, Command: &walletv1.WalletCommand_SettleGame{SettleGame: &walletv1.SettleGame{Standings: fs}}})
		p := fmt.Sprint("p", 4*g)
		apply(&walletv1.WalletCommand{CommandId: "live-" + table, Command: &walletv1.WalletCommand_HoldStake{HoldStake: &walletv1.HoldStake{AccountId: p, TableId: "live" + table, Amount: 10, Game: lobbyv1.Game_GAME_CLASSIC}}})
	}
	b.ResetTimer()
	for b.Loop() {
		rep, err := w.Audit(ctx)
		if err != nil || !rep.GetOk() || rep.GetAccounts() != 400 || rep.GetSettled() != 100 {
			b.Fatal(rep, err)
		}
	}
}
