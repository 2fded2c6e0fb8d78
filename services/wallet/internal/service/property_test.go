package service

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/services/wallet/internal/ledger"
)

// clock is a test clock the wallet and the model share.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newTestWallet(t testing.TB, rdb redis.UniversalClient, c *clock, auditBatch int) *Wallet {
	t.Helper()
	return New(rdb, Options{SignupGrant: 1000, DailyBonus: 100, Location: time.UTC, PotTTL: time.Hour, Now: c.Now, Flushers: 4,
		StalePotAge: 10 * 365 * 24 * time.Hour, // the model does not model stale tables; TestAudit_ReportsAStalePot does
		AuditBatch:  auditBatch}, nil)
}

// gen makes random commands over a few accounts and tables, so that they
// collide: holds at the same tables, settlements of tables with holds.
type gen struct {
	r        *rand.Rand
	accounts []string
	tables   []string
	n        int
	sent     []*walletv1.WalletCommand
}

func (g *gen) id() string { g.n++; return fmt.Sprintf("c%d", g.n) }

func (g *gen) next() *walletv1.WalletCommand {
	r := g.r
	// Duplicates and reordering: send an earlier command again, as a
	// redelivery or a retry would, or its id with other content.
	if len(g.sent) > 0 && r.IntN(100) < 25 {
		old := g.sent[r.IntN(len(g.sent))]
		if r.IntN(10) == 0 {
			c := g.fresh()
			c.CommandId = old.GetCommandId()
			return c
		}
		return proto.CloneOf(old)
	}
	c := g.fresh()
	g.sent = append(g.sent, c)
	return c
}

func (g *gen) fresh() *walletv1.WalletCommand {
	r := g.r
	a := g.accounts[r.IntN(len(g.accounts))]
	t := g.tables[r.IntN(len(g.tables))]
	c := &walletv1.WalletCommand{CommandId: g.id()}
	switch k := r.IntN(100); {
	case k < 12:
		c.Command = &walletv1.WalletCommand_OpenAccount{OpenAccount: &walletv1.OpenAccount{AccountId: a}}
	case k < 20:
		c.Command = &walletv1.WalletCommand_ClaimDailyBonus{ClaimDailyBonus: &walletv1.ClaimDailyBonus{AccountId: a}}
	case k < 62:
		game := lobbyv1.Game_GAME_CLASSIC
		if t == "t1" || (t == "t3" && r.IntN(4) == 0) { // t3 sometimes gets the other game
			game = lobbyv1.Game_GAME_JAPANESE
		}
		amount := []int64{10, 50, 100, 500, 1000, 2000}[r.IntN(6)]
		c.Command = &walletv1.WalletCommand_HoldStake{HoldStake: &walletv1.HoldStake{AccountId: a, TableId: t, Amount: amount, Game: game}}
	case k < 72:
		c.Command = &walletv1.WalletCommand_ReleaseHold{ReleaseHold: &walletv1.ReleaseHold{AccountId: a, TableId: t}}
	case k < 78:
		c.Command = &walletv1.WalletCommand_ForfeitStake{ForfeitStake: &walletv1.ForfeitStake{AccountId: a, TableId: t}}
	case k < 81:
		c.Command = &walletv1.WalletCommand_ReleaseTable{ReleaseTable: &walletv1.ReleaseTable{TableId: t}}
	case k < 97:
		c.Command = &walletv1.WalletCommand_SettleGame{SettleGame: &walletv1.SettleGame{Standings: g.standings(t)}}
	default: // malformed
		c.Command = &walletv1.WalletCommand_HoldStake{HoldStake: &walletv1.HoldStake{AccountId: a, TableId: t, Amount: -5, Game: lobbyv1.Game_GAME_CLASSIC}}
	}
	return c
}

// standings: 2 or 4 seats (sometimes the wrong number for the table), players
// from the accounts or bots, places from random totals.
func (g *gen) standings(t string) *scoringv1.FinalStandings {
	r := g.r
	n := 4
	if t == "t1" || r.IntN(6) == 0 {
		n = 2
	}
	players := slices.Clone(g.accounts)
	r.Shuffle(len(players), func(i, j int) { players[i], players[j] = players[j], players[i] })
	totals := make([]int, n)
	for i := range totals {
		totals[i] = r.IntN(3)
	}
	fs := &scoringv1.FinalStandings{TableId: t, GameId: "g-" + t}
	for i := range n {
		place := uint32(1)
		for j := range totals {
			if totals[j] > totals[i] {
				place++
			}
		}
		p := players[i]
		if r.IntN(8) == 0 {
			p = "" // a bot
		}
		fs.Standings = append(fs.Standings, &scoringv1.Standing{Seat: uint32(i), Place: place, PlayerId: p, Total: int64(totals[i])})
	}
	return fs
}

// compare is what the model and the wallet must agree on.
func compare(t *testing.T, step int, cmd *walletv1.WalletCommand, want, got *walletv1.WalletResult) {
	t.Helper()
	strip := func(r *walletv1.WalletResult) *walletv1.WalletResult {
		r = proto.CloneOf(r)
		r.Message, r.Entries, r.Trace, r.Audit = "", nil, nil, nil
		return r
	}
	if w, g := strip(want), strip(got); !proto.Equal(w, g) {
		t.Fatalf("step %d: %v\nmodel:  %v\nwallet: %v", step, cmd, w, g)
	}
}

// checkAudit runs the reconciliation and checks it against the model.
func checkAudit(t *testing.T, ctx context.Context, step int, w *Wallet, m *ledger.Model) {
	t.Helper()
	rep, err := w.Audit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.GetOk() || rep.GetIssued() != m.Issued() || rep.GetInPots() != 0 || rep.GetSettling() != 0 {
		t.Fatalf("step %d: audit %v (model issued %d)", step, rep, m.Issued())
	}
	for _, a := range m.Accounts() {
		want, _ := m.Balance(a)
		got, err := w.st.ReadAccount(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		if got.Available != want.GetAvailable() || got.Held != want.GetHeld() || uint64(got.Seq) != want.GetVersion() {
			t.Fatalf("step %d: %s: wallet %+v, model %v", step, a, got, want)
		}
	}
}

// The property of issue 19: random sequences of commands, with duplicates
// and reordering, applied to the wallet on a real Redis give the reference
// model's results and balances, and after every step the audit is clean
// (balances = ledger sums, none negative, coins conserved, every hold in an
// open pot, every settled pot paid its plan once).
func TestWallet_MatchesTheModel(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	steps := 1500
	if testing.Short() {
		steps = 300
	}
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			// The last seed audits in pipelines of three reads (and ledger
			// pages of three entries), so every batch boundary is crossed.
			runModel(t, rdb, seed, steps, map[uint64]int{3: 3}[seed])
		})
	}
}

// The same on a Redis Cluster (one node that refuses cross-slot scripts as a
// real cluster does): every script stays in one slot.
func TestWallet_MatchesTheModelOnCluster(t *testing.T) {
	srv := redistest.Start(t, redistest.WithCluster())
	runModel(t, srv.ClusterClient(t), 7, 400, 0)
}

// And on a real cluster of three masters: the accounts and pots of one run
// spread over every master, so a settlement's steps run on different nodes.
func TestWallet_MatchesTheModelOnAMultiNodeCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	runModel(t, cl.Client(t), 11, 400, 3) // pipelines of three reads, over the masters
}

func runModel(t *testing.T, rdb redis.UniversalClient, seed uint64, steps, auditBatch int) {
	ctx := context.Background()
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)}
	w := newTestWallet(t, rdb, c, auditBatch)
	m := ledger.NewModel(1000, 100)
	g := &gen{r: rand.New(rand.NewPCG(seed, 19)), accounts: []string{"ana", "beso", "gio", "nika", "tamar"},
		tables: []string{"t0", "t1", "t2", "t3"}}
	stats := map[string]int{}
	for step := range steps {
		if g.r.IntN(40) == 0 {
			c.Add(12 * time.Hour) // a new calendar day now and then
		}
		if g.r.IntN(12) == 0 { // new tables, so that pots keep opening
			g.tables[g.r.IntN(len(g.tables))] = fmt.Sprintf("t%d-%d", g.r.IntN(4), step)
		}
		cmd := g.next()
		want := m.Apply(cmd, w.Day(c.Now()))
		got, err := w.Apply(ctx, cmd)
		if err != nil {
			t.Fatalf("step %d: %v: %v", step, cmd, err)
		}
		compare(t, step, cmd, want, got)
		checkAudit(t, ctx, step, w, m)
		stats[fmt.Sprintf("%-13s %-40s dup=%-5t paid=%t", kindOf(cmd), got.GetReason(), got.GetDuplicate(), len(got.GetSettled().GetShares()) > 0)]++
	}
	// What the run exercised, so that a generator that stopped reaching a
	// case shows here (and in the counts checked below).
	keys := make([]string, 0, len(stats))
	for k := range stats {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		t.Logf("%5d %s", stats[k], k)
	}
	for _, must := range []string{
		"settle        WALLET_REJECT_REASON_UNSPECIFIED         dup=false paid=true",
		"settle        WALLET_REJECT_REASON_UNSPECIFIED         dup=true  paid=true",
		"hold          WALLET_REJECT_REASON_UNSPECIFIED         dup=false paid=false",
		"hold          WALLET_REJECT_REASON_INSUFFICIENT_FUNDS  dup=false paid=false",
		"hold          WALLET_REJECT_REASON_TABLE_CLOSED        dup=false paid=false",
		"release_table WALLET_REJECT_REASON_UNSPECIFIED         dup=false paid=true",
	} {
		if stats[must] == 0 && steps >= 1000 {
			t.Errorf("the run never produced %q", must)
		}
	}
}
