package service

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/walletclient"
)

// testWallet stands in for the wallet service (whose own tests cover the
// ledger; e2e/coin_test.go runs the lobby against the real one). It keeps
// what the lobby's holds depend on, as docs/wallet.md specifies them:
// balances, one open hold per account and table, closed tables, and the
// first result of every command id (a repeat returns it, duplicate).
type testWallet struct {
	mu     sync.Mutex
	avail  map[string]int64
	holds  map[string]int64 // account + "|" + table
	closed map[string]bool
	seen   map[string]*walletv1.WalletResult
	log    []*walletv1.WalletCommand
	// silent: the next n commands are applied but not answered (a lost
	// reply, a slow wallet): Do returns ErrTimeout.
	silent int
}

func newTestWallet(balances map[string]int64) *testWallet {
	return &testWallet{avail: balances, holds: map[string]int64{}, closed: map[string]bool{}, seen: map[string]*walletv1.WalletResult{}}
}

func (w *testWallet) Do(_ context.Context, cmd *walletv1.WalletCommand) (*walletv1.WalletResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	res := w.apply(cmd)
	if w.silent > 0 {
		w.silent--
		return nil, walletclient.ErrTimeout
	}
	return res, nil
}

func (w *testWallet) apply(cmd *walletv1.WalletCommand) *walletv1.WalletResult {
	if prev, ok := w.seen[cmd.GetCommandId()]; ok {
		dup := proto.CloneOf(prev)
		dup.Duplicate = true
		return dup
	}
	w.log = append(w.log, proto.CloneOf(cmd))
	refuse := func(r walletv1.WalletRejectReason) *walletv1.WalletResult {
		return &walletv1.WalletResult{CommandId: cmd.GetCommandId(), Reason: r, Message: r.String()}
	}
	res := &walletv1.WalletResult{CommandId: cmd.GetCommandId(), Accepted: true}
	switch c := cmd.GetCommand().(type) {
	case *walletv1.WalletCommand_HoldStake:
		a, t, key := c.HoldStake.GetAccountId(), c.HoldStake.GetTableId(), c.HoldStake.GetAccountId()+"|"+c.HoldStake.GetTableId()
		_, known := w.avail[a]
		switch {
		case !known:
			res = refuse(walletv1.WalletRejectReason_WALLET_REJECT_REASON_UNKNOWN_ACCOUNT)
		case w.closed[t]:
			res = refuse(walletv1.WalletRejectReason_WALLET_REJECT_REASON_TABLE_CLOSED)
		case w.holds[key] > 0:
			res = refuse(walletv1.WalletRejectReason_WALLET_REJECT_REASON_HOLD_EXISTS)
		case w.avail[a] < c.HoldStake.GetAmount():
			res = refuse(walletv1.WalletRejectReason_WALLET_REJECT_REASON_INSUFFICIENT_FUNDS)
		default:
			w.avail[a] -= c.HoldStake.GetAmount()
			w.holds[key] = c.HoldStake.GetAmount()
		}
	case *walletv1.WalletCommand_ReleaseHold:
		a, key := c.ReleaseHold.GetAccountId(), c.ReleaseHold.GetAccountId()+"|"+c.ReleaseHold.GetTableId()
		if w.holds[key] == 0 {
			res = refuse(walletv1.WalletRejectReason_WALLET_REJECT_REASON_HOLD_NOT_FOUND)
		} else {
			w.avail[a] += w.holds[key]
			delete(w.holds, key)
		}
	case *walletv1.WalletCommand_ReleaseTable:
		t := c.ReleaseTable.GetTableId()
		w.closed[t] = true
		for key, n := range w.holds {
			if a, tt, _ := strings.Cut(key, "|"); tt == t {
				w.avail[a] += n
				delete(w.holds, key)
			}
		}
	default:
		res = refuse(walletv1.WalletRejectReason_WALLET_REJECT_REASON_UNSUPPORTED)
	}
	w.seen[cmd.GetCommandId()] = res
	return proto.CloneOf(res)
}

// state is (available, held at table) of account.
func (w *testWallet) state(account, table string) (avail, held int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.avail[account], w.holds[account+"|"+table]
}

func (w *testWallet) setSilent(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.silent = n
}

// kinds lists the commands applied (not the repeats), e.g. "hold u-1".
func (w *testWallet) kinds() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, c := range w.log {
		switch x := c.GetCommand().(type) {
		case *walletv1.WalletCommand_HoldStake:
			out = append(out, "hold "+x.HoldStake.GetAccountId())
		case *walletv1.WalletCommand_ReleaseHold:
			out = append(out, "release "+x.ReleaseHold.GetAccountId())
		case *walletv1.WalletCommand_ReleaseTable:
			out = append(out, "release table")
		}
	}
	return out
}

func coins(amount int64, mut ...func(*lobbyv1.TableSettings)) *lobbyv1.TableSettings {
	return classic(append([]func(*lobbyv1.TableSettings){func(s *lobbyv1.TableSettings) {
		s.Stake = &lobbyv1.Stake{Kind: &lobbyv1.Stake_Coins{Coins: &lobbyv1.CoinStake{Amount: amount}}}
	}}, mut...)...)
}

func withWallet(w Wallet) func(*Options) { return func(o *Options) { o.Wallet = w } }

func TestCoins_SittingHoldsTheStakeAndStandingUpOrLeavingReleasesIt(t *testing.T) {
	e := newEnv(t)
	w := newTestWallet(map[string]int64{"u-host": 1000, "u-ana": 120, "u-beka": 1000})
	e.lobby("a", withWallet(w))
	id := e.mustCreate("u-host", coins(100), "", true)
	if a, h := w.state("u-host", id); a != 900 || h != 100 {
		t.Fatalf("the host, seated at creation: available %d held %d", a, h)
	}
	if got := e.fetch(id).GetSettings().GetStake().GetCoins().GetAmount(); got != 100 {
		t.Fatalf("the table's description shows stake %d", got)
	}
	if r := e.do("u-ana", sit(id, 1, "")); !r.GetAccepted() {
		t.Fatal(r)
	}
	if a, h := w.state("u-ana", id); a != 20 || h != 100 {
		t.Fatalf("ana: available %d held %d", a, h)
	}
	// Moving to another seat holds nothing more.
	if r := e.do("u-ana", sit(id, 2, "")); !r.GetAccepted() {
		t.Fatal(r)
	}
	if a, h := w.state("u-ana", id); a != 20 || h != 100 {
		t.Fatalf("ana moved: available %d held %d", a, h)
	}
	if r := e.do("u-ana", standUp(id)); !r.GetAccepted() {
		t.Fatal(r)
	}
	if a, h := w.state("u-ana", id); a != 120 || h != 0 {
		t.Fatalf("ana stood up: available %d held %d", a, h)
	}
	// Sitting again holds again (a new sit-down, a new id).
	if r := e.do("u-ana", sit(id, 1, "")); !r.GetAccepted() {
		t.Fatal(r)
	}
	if r := e.do("u-ana", leave(id)); !r.GetAccepted() {
		t.Fatal(r)
	}
	if a, h := w.state("u-ana", id); a != 120 || h != 0 {
		t.Fatalf("ana left: available %d held %d", a, h)
	}
	// The last player leaving closes the table: ReleaseTable.
	if r := e.do("u-host", leave(id)); !r.GetAccepted() {
		t.Fatal(r)
	}
	if a, h := w.state("u-host", id); a != 1000 || h != 0 {
		t.Fatalf("the host left the table, which closed: available %d held %d", a, h)
	}
	want := "hold u-host,hold u-ana,release u-ana,hold u-ana,release u-ana,release table"
	if got := strings.Join(w.kinds(), ","); got != want {
		t.Fatalf("wallet commands\n got %s\nwant %s", got, want)
	}
}

func TestCoins_TooSmallABalanceIsRefusedAndTheSeatStaysFree(t *testing.T) {
	e := newEnv(t)
	w := newTestWallet(map[string]int64{"u-host": 1000, "u-poor": 49})
	reader := sdkmetric.NewManualReader()
	e.lobby("a", withWallet(w), func(o *Options) { o.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)) })
	defer func() {
		// Every answer of the wallet is counted, refusals by reason.
		want := map[string]int64{"hold/accepted": 1, "hold/insufficient_funds": 1, "hold/unknown_account": 1}
		if got := walletMetric(t, reader); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("pulka_lobby_wallet_commands %v, want %v", got, want)
		}
	}()
	id := e.mustCreate("u-host", coins(50), "", true)
	r := e.do("u-poor", sit(id, 1, ""))
	if r.GetAccepted() || r.GetReason() != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INSUFFICIENT_FUNDS || !strings.Contains(r.GetMessage(), "50") {
		t.Fatalf("result %v; want INSUFFICIENT_FUNDS naming the stake", r)
	}
	if s := e.fetch(id).GetSeats()[1]; s.GetPlayerId() != "" {
		t.Fatalf("seat 1 is %v; want free", s)
	}
	if a, h := w.state("u-poor", id); a != 49 || h != 0 {
		t.Fatalf("available %d held %d", a, h)
	}
	// Nobody without a wallet account sits either.
	r = e.do("u-nobody", sit(id, 1, ""))
	if r.GetAccepted() || r.GetReason() != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_ACCOUNT_REQUIRED {
		t.Fatalf("no account: %v", r)
	}
	if s := e.fetch(id).GetSeats()[1]; s.GetPlayerId() != "" {
		t.Fatalf("seat 1 is %v; want free", s)
	}
}

func TestCoins_GuestsPlayFreeTablesOnly(t *testing.T) {
	e := newEnv(t)
	w := newTestWallet(map[string]int64{"u-host": 1000, "g-guest": 1000})
	e.lobby("a", withWallet(w))
	if r := e.create("g-guest", coins(10), "", true); r.GetAccepted() || r.GetReason() != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_ACCOUNT_REQUIRED {
		t.Fatalf("a guest creating a coin table: %v", r)
	}
	id := e.mustCreate("u-host", coins(10), "", true)
	if r := e.do("g-guest", sit(id, 1, "")); r.GetAccepted() || r.GetReason() != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_ACCOUNT_REQUIRED {
		t.Fatalf("a guest sitting at a coin table: %v", r)
	}
	if s := e.fetch(id).GetSeats()[1]; s.GetPlayerId() != "" {
		t.Fatalf("seat 1 is %v; want free", s)
	}
	if got := strings.Join(w.kinds(), ","); got != "hold u-host" {
		t.Fatalf("the wallet heard %s", got)
	}
	free := e.mustCreate("u-host", classic(), "", true)
	if r := e.do("g-guest", sit(free, 1, "")); !r.GetAccepted() {
		t.Fatalf("a guest at a free table: %v", r)
	}
}

func TestCoins_OffTheLadderOrWithoutAWalletIsRefused(t *testing.T) {
	e := newEnv(t)
	e.lobby("nowallet")
	r := e.create("u-host", coins(100), "", true)
	if r.GetAccepted() || r.GetReason() != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_NOT_ALLOWED || !strings.Contains(r.GetMessage(), "wallet") {
		t.Fatalf("a coin table on a lobby without a wallet: %v", r)
	}
	e2 := newEnv(t)
	e2.lobby("a", withWallet(newTestWallet(map[string]int64{"u-host": 1000})))
	for _, stake := range []int64{5, 20, 75, 2000} {
		r := e2.create("u-host", coins(stake), "", true)
		if r.GetAccepted() || r.GetReason() != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_INVALID_SETTINGS ||
			!strings.Contains(r.GetMessage(), "10, 50, 100, 500 or 1000") {
			t.Fatalf("stake %d: %v", stake, r)
		}
	}
}

func TestCoins_ARetriedSitHoldsOnceAndAHoldWithoutASeatIsTakenOver(t *testing.T) {
	e := newEnv(t)
	w := newTestWallet(map[string]int64{"u-host": 1000, "u-ana": 1000, "u-beka": 1000})
	e.lobby("a", withWallet(w))
	id := e.mustCreate("u-host", coins(100), "", true)

	// The wallet applies the hold but its answer is lost: the lobby leaves
	// the command pending, and the redelivery sends the same hold again,
	// which the wallet answers from memory. One hold, one seat.
	w.setSilent(1)
	if r := e.do("u-ana", sit(id, 1, "")); !r.GetAccepted() {
		t.Fatal(r)
	}
	if a, h := w.state("u-ana", id); a != 900 || h != 100 {
		t.Fatalf("ana: available %d held %d", a, h)
	}

	// A hold whose seat was never recorded (a lobby that died after the
	// wallet accepted it): the player's next sit-down takes it over.
	orphan := &walletv1.WalletCommand{CommandId: "lobby:hold:" + id + ":lost", Command: &walletv1.WalletCommand_HoldStake{
		HoldStake: &walletv1.HoldStake{AccountId: "u-beka", TableId: id, Amount: 100, Game: lobbyv1.Game_GAME_CLASSIC}}}
	if res, _ := w.Do(context.Background(), orphan); !res.GetAccepted() {
		t.Fatal(res)
	}
	if r := e.do("u-beka", sit(id, 2, "")); !r.GetAccepted() {
		t.Fatal(r)
	}
	if a, h := w.state("u-beka", id); a != 900 || h != 100 {
		t.Fatalf("beka: available %d held %d", a, h)
	}
	if got := e.fetch(id).GetSeats()[2].GetPlayerId(); got != "u-beka" {
		t.Fatalf("seat 2: %q", got)
	}
}

func TestCoins_TheStartReleasesHoldsWhoseSeatWasNeverRecorded(t *testing.T) {
	e := newEnv(t)
	w := newTestWallet(map[string]int64{"u-1": 1000, "u-2": 1000, "u-3": 1000, "u-4": 1000, "u-lost": 1000})
	svc, _ := e.lobby("a", withWallet(w))
	id := e.mustCreate("u-1", coins(500), "", true)
	// u-lost's sit-down: staker recorded, hold accepted, then the lobby
	// died before the seat was committed.
	if err := svc.store.AddStaker(context.Background(), id, "u-lost"); err != nil {
		t.Fatal(err)
	}
	orphan := &walletv1.WalletCommand{CommandId: "lobby:hold:" + id + ":lost", Command: &walletv1.WalletCommand_HoldStake{
		HoldStake: &walletv1.HoldStake{AccountId: "u-lost", TableId: id, Amount: 500, Game: lobbyv1.Game_GAME_CLASSIC}}}
	if res, _ := w.Do(context.Background(), orphan); !res.GetAccepted() {
		t.Fatal(res)
	}
	for i, p := range []string{"u-2", "u-3", "u-4"} {
		if r := e.do(p, sit(id, uint32(i+1), "")); !r.GetAccepted() {
			t.Fatal(r)
		}
	}
	if st := e.fetch(id).GetStatus(); st != lobbyv1.TableStatus_TABLE_STATUS_PLAYING {
		t.Fatalf("status %v", st)
	}
	if a, h := w.state("u-lost", id); a != 1000 || h != 0 {
		t.Fatalf("the unseated staker: available %d held %d", a, h)
	}
	for _, p := range []string{"u-1", "u-2", "u-3", "u-4"} {
		if a, h := w.state(p, id); a != 500 || h != 500 {
			t.Fatalf("%s: available %d held %d", p, a, h)
		}
	}
	if n := len(e.starts()); n != 1 {
		t.Fatalf("%d starts", n)
	}
}

func TestCoins_AnExpiredTableReleasesItsHolds(t *testing.T) {
	e := newEnv(t)
	w := newTestWallet(map[string]int64{"u-host": 1000})
	svc, _ := e.lobby("a", withWallet(w), func(o *Options) { o.Limits.WaitingTTL = time.Minute; o.Limits.SweepInterval = time.Hour })
	id := e.mustCreate("u-host", coins(1000), "", true)
	if a, _ := w.state("u-host", id); a != 0 {
		t.Fatalf("available %d", a)
	}
	e.clock.Add(3600)
	if n, err := svc.SweepIdle(context.Background()); err != nil || n != 1 {
		t.Fatalf("swept %d, %v", n, err)
	}
	if a, h := w.state("u-host", id); a != 1000 || h != 0 {
		t.Fatalf("after the table expired: available %d held %d", a, h)
	}
}

func TestCoins_AWalletThatNeverAnswersLeavesTheSeatFree(t *testing.T) {
	e := newEnv(t)
	w := newTestWallet(map[string]int64{"u-host": 1000, "u-ana": 1000})
	e.lobby("a", withWallet(w), func(o *Options) { o.MaxDeliveries = 2; o.MinIdle = 100 * time.Millisecond })
	id := e.mustCreate("u-host", coins(10), "", true)
	w.setSilent(1000)
	r := e.do("u-ana", sit(id, 1, ""))
	if r.GetAccepted() || r.GetReason() != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_UNAVAILABLE {
		t.Fatalf("result %v; want UNAVAILABLE", r)
	}
	if s := e.fetch(id).GetSeats()[1]; s.GetPlayerId() != "" {
		t.Fatalf("seat 1 is %v", s)
	}
	w.setSilent(0)
	// The hold the wallet applied without answering is the player's: the
	// next sit-down takes it over, one stake.
	if r := e.do("u-ana", sit(id, 1, "")); !r.GetAccepted() {
		t.Fatal(r)
	}
	if a, h := w.state("u-ana", id); a != 990 || h != 10 {
		t.Fatalf("available %d held %d", a, h)
	}
}

func TestList_FiltersCoinTablesByStake(t *testing.T) {
	e := newEnv(t)
	e.lobby("a", withWallet(newTestWallet(map[string]int64{"u-1": 10_000})))
	free := e.mustCreate("u-1", classic(), "", false)
	ten := e.mustCreate("u-1", coins(10), "", false)
	hundred := e.mustCreate("u-1", coins(100), "", false)
	thousand := e.mustCreate("u-1", japanese(21, func(s *lobbyv1.TableSettings) {
		s.Stake = &lobbyv1.Stake{Kind: &lobbyv1.Stake_Coins{Coins: &lobbyv1.CoinStake{Amount: 1000}}}
	}), "", false)
	e.converge(e.view)
	ids := func(f *lobbyv1.TableFilter) string {
		var out []string
		for _, t := range e.view.List(f) {
			out = append(out, t.GetTableId())
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		name string
		f    *lobbyv1.TableFilter
		want []string
	}{
		{"all", nil, []string{thousand, hundred, ten, free}},
		{"free only", &lobbyv1.TableFilter{FreeOnly: true}, []string{free}},
		{"max stake 100", &lobbyv1.TableFilter{MaxStake: 100}, []string{hundred, ten, free}},
		{"max stake 99", &lobbyv1.TableFilter{MaxStake: 99}, []string{ten, free}},
		{"max stake 10", &lobbyv1.TableFilter{MaxStake: 10}, []string{ten, free}},
		{"max stake 1000 japanese", &lobbyv1.TableFilter{MaxStake: 1000, Game: lobbyv1.Game_GAME_JAPANESE}, []string{thousand}},
	} {
		if got := ids(tc.f); got != strings.Join(tc.want, ",") {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCoins_ARetriedCreationMakesOneTableOnOneHold(t *testing.T) {
	e := newEnv(t)
	w := newTestWallet(map[string]int64{"u-host": 1000})
	e.lobby("a", withWallet(w))
	// The wallet holds the host's stake but its answer is lost: the
	// redelivered creation makes the same table and finds the hold.
	w.setSilent(1)
	id := e.mustCreate("u-host", coins(100), "", true)
	if a, h := w.state("u-host", id); a != 900 || h != 100 {
		t.Fatalf("available %d held %d", a, h)
	}
	if got := strings.Join(w.kinds(), ","); got != "hold u-host" {
		t.Fatalf("the wallet applied %s", got)
	}
	keys, _ := e.rdb.Keys(context.Background(), "pulka:{lobby}:table:*").Result()
	if len(keys) != 1 {
		t.Fatalf("tables %v; want one", keys)
	}
}

func TestCoins_TheWaitingLimitRefusesBeforeHolding(t *testing.T) {
	e := newEnv(t)
	w := newTestWallet(map[string]int64{"u-host": 1000, "u-ana": 1000})
	e.lobby("a", withWallet(w), func(o *Options) { o.Limits.WaitingPerPlayer = 1 })
	first := e.mustCreate("u-host", coins(10), "", true)
	second := e.mustCreate("u-ana", coins(10), "", true)
	try := sit(second, 1, "")
	try.CommandId = "the-sit"
	r := e.do("u-host", try)
	if r.GetAccepted() || r.GetReason() != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TOO_MANY_WAITING_TABLES {
		t.Fatalf("result %v", r)
	}
	if a, h := w.state("u-host", second); a != 990 || h != 0 {
		t.Fatalf("the host at the second table: available %d held %d", a, h)
	}
	if got := strings.Join(w.kinds(), ","); got != "hold u-host,hold u-ana" {
		t.Fatalf("the wallet heard %s", got)
	}
	// Leaving the first table frees the limit; the same command (a limit's
	// refusal is not stored) now holds the stake and sits.
	if r := e.do("u-host", leave(first)); !r.GetAccepted() {
		t.Fatal(r)
	}
	again := sit(second, 1, "")
	again.CommandId = "the-sit"
	if r := e.do("u-host", again); !r.GetAccepted() {
		t.Fatal(r)
	}
	if a, h := w.state("u-host", second); a != 990 || h != 10 {
		t.Fatalf("available %d held %d", a, h)
	}
}

// walletMetric reads pulka_lobby_wallet_commands as "command/result" → count.
func walletMetric(t *testing.T, reader *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	return counterBy(t, reader, "pulka_lobby_wallet_commands", func(a attribute.Set) string {
		c, _ := a.Value("command")
		r, _ := a.Value("result")
		return c.AsString() + "/" + r.AsString()
	})
}

func TestCoins_ATableNobodyStakedAtClosesWithoutTheWallet(t *testing.T) {
	e := newEnv(t)
	w := newTestWallet(map[string]int64{"u-host": 1000})
	e.lobby("a", withWallet(w))
	id := e.mustCreate("u-host", coins(10), "", false)
	if r := e.do("u-host", leave(id)); !r.GetAccepted() {
		t.Fatal(r)
	}
	if st := e.fetch(id).GetStatus(); st != lobbyv1.TableStatus_TABLE_STATUS_FINISHED {
		t.Fatalf("status %v", st)
	}
	if got := w.kinds(); len(got) != 0 {
		t.Fatalf("the wallet heard %v", got)
	}
}
