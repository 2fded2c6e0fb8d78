package service

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/daemon"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/pkg/walletclient"
	"github.com/pulka/pulka/services/wallet/internal/ledger"
)

// startService runs the wallet under the daemon in this process until the
// test ends.
func startService(t *testing.T, addr string, args ...string) {
	t.Helper()
	var cfg Config
	env := map[string]string{daemon.EnvRedisAddr: addr, daemon.EnvAdminAddr: "127.0.0.1:0"}
	args = append([]string{"-consumer", "test-1", "-shutdown-timeout", "5s", "-time-zone", "UTC"}, args...)
	if err := daemon.Load(&cfg, "wallet", args, func(k string) string { return env[k] }, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.Options{Name: "wallet", Config: cfg.Base, LogWriter: io.Discard}, cfg.Run)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("wallet: %v", err)
		}
	})
}

// clients are several walletclient.Clients (several senders), running
// until the test ends.
func clients(t *testing.T, rdb redis.UniversalClient, n int, timeout time.Duration) []*walletclient.Client {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	out := make([]*walletclient.Client, n)
	for i := range out {
		out[i] = walletclient.NewClient(rdb, walletclient.Options{Timeout: timeout})
		wg.Go(func() { _ = out[i].Run(ctx) })
	}
	t.Cleanup(func() { cancel(); wg.Wait() })
	return out
}

// workload is a stream of realistic commands whose outcomes do not depend
// on the order in which different accounts' commands are handled: every
// account has enough coins for every stake it holds, and a table is
// settled or released only after its holds were answered. So the final
// ledger is the model's for the same commands, whatever the interleaving.
type workload struct {
	r        *rand.Rand
	accounts []string
}

// open is the account-opening commands.
func (wl *workload) open() []*walletv1.WalletCommand {
	var out []*walletv1.WalletCommand
	for _, a := range wl.accounts {
		out = append(out, &walletv1.WalletCommand{CommandId: "open-" + a,
			Command: &walletv1.WalletCommand_OpenAccount{OpenAccount: &walletv1.OpenAccount{AccountId: a}}})
	}
	return out
}

// game is one table's commands, in phases: the holds (and bonuses of the
// players), maybe a forfeit, then the settlement or release.
func (wl *workload) game(i int) [][]*walletv1.WalletCommand {
	r := wl.r
	table := fmt.Sprintf("tbl-%d", i)
	g, seats := lobbyv1.Game_GAME_CLASSIC, tablesettings.Classic.Seats()
	if r.IntN(3) == 0 {
		g, seats = lobbyv1.Game_GAME_JAPANESE, tablesettings.Japanese.Seats()
	}
	players := slices.Clone(wl.accounts)
	r.Shuffle(len(players), func(a, b int) { players[a], players[b] = players[b], players[a] })
	players = players[:seats]
	stake := []int64{1, 2, 5, 10}[r.IntN(4)]
	var holds []*walletv1.WalletCommand
	for s, p := range players {
		holds = append(holds, &walletv1.WalletCommand{CommandId: fmt.Sprintf("%s-sit-%d", table, s),
			Command: &walletv1.WalletCommand_HoldStake{HoldStake: &walletv1.HoldStake{AccountId: p, TableId: table, Amount: stake, Game: g}}})
	}
	phases := [][]*walletv1.WalletCommand{holds}
	if r.IntN(10) == 0 {
		phases = append(phases, []*walletv1.WalletCommand{{CommandId: table + "-leave-0",
			Command: &walletv1.WalletCommand_ForfeitStake{ForfeitStake: &walletv1.ForfeitStake{AccountId: players[0], TableId: table}}}})
	}
	if r.IntN(8) == 0 {
		return append(phases, []*walletv1.WalletCommand{{CommandId: table + "-abandon",
			Command: &walletv1.WalletCommand_ReleaseTable{ReleaseTable: &walletv1.ReleaseTable{TableId: table}}}})
	}
	fs := &scoringv1.FinalStandings{TableId: table, GameId: "g-" + table}
	totals := make([]int, seats)
	for s := range totals {
		totals[s] = r.IntN(3)
	}
	for s, p := range players {
		place := uint32(1)
		for _, o := range totals {
			if o > totals[s] {
				place++
			}
		}
		fs.Standings = append(fs.Standings, &scoringv1.Standing{Seat: uint32(s), Place: place, PlayerId: p})
	}
	return append(phases, []*walletv1.WalletCommand{{CommandId: table + "-end",
		Command: &walletv1.WalletCommand_SettleGame{SettleGame: &walletv1.SettleGame{Standings: fs}}}})
}

// sendAll sends every command 2 or 3 times at once from different clients
// and returns the results of each (retrying a send that timed out with the
// same id, as a sender must).
func sendAll(t *testing.T, r *rand.Rand, cs []*walletclient.Client, cmds []*walletv1.WalletCommand) map[string][]*walletv1.WalletResult {
	t.Helper()
	var mu sync.Mutex
	out := map[string][]*walletv1.WalletResult{}
	var wg sync.WaitGroup
	for _, cmd := range cmds {
		copies := 2 + r.IntN(2)
		first := r.IntN(len(cs))
		for k := range copies {
			c := cs[(first+k)%len(cs)]
			wg.Go(func() {
				res := do(t, c, cmd)
				mu.Lock()
				out[cmd.GetCommandId()] = append(out[cmd.GetCommandId()], res)
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	return out
}

// do sends cmd until it is answered (a dead wallet or Redis makes Do time
// out; the same id is safe to send again).
func do(t *testing.T, c *walletclient.Client, cmd *walletv1.WalletCommand) *walletv1.WalletResult {
	deadline := time.Now().Add(90 * time.Second)
	for {
		res, err := c.Do(context.Background(), cmd)
		if err == nil {
			return res
		}
		if time.Now().After(deadline) {
			t.Errorf("%s: no answer: %v", cmd.GetCommandId(), err)
			return &walletv1.WalletResult{}
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkOnce checks the results of a command sent several times: all
// accepted with the same balances, at most one applied now (the others are
// duplicates; none at all when an earlier attempt, whose answer was lost,
// applied it).
func checkOnce(t *testing.T, id string, rs []*walletv1.WalletResult) {
	t.Helper()
	fresh := 0
	for _, r := range rs {
		if !r.GetAccepted() {
			t.Errorf("%s refused: %v", id, r)
			return
		}
		if !r.GetDuplicate() {
			fresh++
		}
		if fmt.Sprint(r.GetBalances()) != fmt.Sprint(rs[0].GetBalances()) {
			t.Errorf("%s: results differ: %v and %v", id, r.GetBalances(), rs[0].GetBalances())
		}
	}
	if fresh > 1 {
		t.Errorf("%s applied %d times", id, fresh)
	}
}

// checkAgainstModel applies the commands, in their phase order, to the
// reference model and compares every account's balance and ledger length;
// then checks that each command left at most one entry per account.
func checkAgainstModel(t *testing.T, ctx context.Context, w *Wallet, rdb redis.UniversalClient, all []*walletv1.WalletCommand) {
	t.Helper()
	m := ledger.NewModel(1000, 100)
	for _, c := range all {
		if res := m.Apply(c, "2026-12-05"); !res.GetAccepted() {
			t.Fatalf("model refused %v: %v", c, res)
		}
	}
	rep, err := w.Audit(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.GetOk() || rep.GetIssued() != m.Issued() || rep.GetInPots() != 0 || rep.GetSettling() != 0 {
		t.Fatalf("audit %v, model issued %d", rep, m.Issued())
	}
	for _, a := range m.Accounts() {
		want, _ := m.Balance(a)
		got, err := walletclient.ReadBalance(ctx, rdb, a)
		if err != nil {
			t.Fatal(err)
		}
		if got.GetAvailable() != want.GetAvailable() || got.GetHeld() != want.GetHeld() || got.GetVersion() != want.GetVersion() {
			t.Errorf("%s: wallet %v, model %v", a, got, want)
		}
		entries, _, err := walletclient.Ledger(ctx, rdb, a, "", 1_000_000)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, e := range entries {
			if seen[e.GetCommandId()] {
				t.Errorf("%s: %s wrote twice", a, e.GetCommandId())
			}
			seen[e.GetCommandId()] = true
		}
	}
}
