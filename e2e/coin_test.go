package e2e

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/payout"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/pkg/walletclient"
)

// Domino Coin tables from the lobby to the payout, against the real
// wallet, lobby, runners and scoring of the shared stack.

// walletOf is a wallet client on the stack's Redis, running until t ends.
func walletOf(t *testing.T, s *stack) *walletclient.Client {
	t.Helper()
	w := walletclient.NewClient(s.Redis(), walletclient.Options{Timeout: 15 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

// coinAccount registers a player and waits until the gateway has opened
// their Domino Coin account (registration sends OpenAccount; the balance
// answers 503 wallet_opening until the wallet has applied it).
func (s *stack) coinAccount(t *testing.T) session {
	t.Helper()
	ses := s.register(t)
	deadline := time.Now().Add(20 * time.Second)
	for {
		status, body := s.call(t, http.MethodGet, "/api/v1/me/wallet", ses.Token, nil)
		if status == http.StatusOK {
			return ses
		}
		if status != http.StatusServiceUnavailable || time.Now().After(deadline) {
			t.Fatalf("the account of %s was not opened: %d %s", ses.Player.ID, status, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// coinAccounts opens n coin accounts and returns them with their
// available balances at the start.
func (s *stack) coinAccounts(t *testing.T, n int) ([]session, map[string]int64) {
	t.Helper()
	sessions := make([]session, n)
	start := map[string]int64{}
	for i := range sessions {
		sessions[i] = s.coinAccount(t)
		start[sessions[i].Player.ID], _ = s.balance(t, sessions[i].Player.ID)
	}
	return sessions, start
}

// balance is (available, held) of a player, as their ledger says.
func (s *stack) balance(t *testing.T, player string) (avail, held int64) {
	t.Helper()
	b, err := walletclient.ReadBalance(context.Background(), s.Redis(), player)
	if err != nil {
		t.Fatal(err)
	}
	return b.GetAvailable(), b.GetHeld()
}

// awaitBalances waits until every player's balance is want (available,
// nothing held): the wallet settles a game once scoring publishes its
// final standings.
func (s *stack) awaitBalances(t *testing.T, want map[string]int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		ok, got := true, ""
		for p, w := range want {
			a, h := s.balance(t, p)
			got += fmt.Sprintf(" %s=%d+%d held (want %d)", p, a, h, w)
			ok = ok && a == w && h == 0
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("balances never reached the payout:%s", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// expectedShares is the payout of a coin game by its GameEnded placings
// (pkg/payout, the rule the wallet applies), with the players in eligible
// the only ones who can win: every staker who did not forfeit.
func expectedShares(t *testing.T, game tablesettings.Game, pot int64, ended *tablev1.GameEnded, eligible map[string]bool) map[string]int64 {
	t.Helper()
	var players []payout.Player
	var ids []string
	for _, p := range ended.GetPlacings() {
		players = append(players, payout.Player{Seat: p.GetSeat(), Place: p.GetPlace(), Eligible: eligible[p.GetPlayerId()]})
		ids = append(ids, p.GetPlayerId())
	}
	res, err := payout.Split(game, pot, players)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for i, id := range ids {
		if id != "" {
			out[id] += res.Shares[i]
		}
	}
	return out
}

// settledOnce checks that the wallet published the table's GameSettled
// exactly once, for pot coins.
func (s *stack) settledOnce(t *testing.T, table string, pot int64) {
	t.Helper()
	msgs, err := s.Redis().XRange(context.Background(), walletclient.SettledStream(table), "-", "+").Result()
	if err != nil || len(msgs) != 1 {
		t.Fatalf("the table's settled stream has %d entries (%v); want one", len(msgs), err)
	}
	var gs walletv1.GameSettled
	data, _ := msgs[0].Values[streams.FieldData].(string)
	if err := proto.Unmarshal([]byte(data), &gs); err != nil {
		t.Fatal(err)
	}
	if gs.GetPot() != pot || gs.GetReleased() || gs.GetUnclaimed() != 0 {
		t.Fatalf("GameSettled %v; want a pot of %d paid out", &gs, pot)
	}
}

// auditClean runs the wallet's reconciliation (docs/wallet.md, Audit):
// balances equal their ledgers, none negative, coins conserved, no orphan
// hold, every settled pot paid once and exactly.
func auditClean(t *testing.T, w *walletclient.Client, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := w.Do(ctx, &walletv1.WalletCommand{CommandId: "e2e-audit-" + id, Command: &walletv1.WalletCommand_Audit{Audit: &walletv1.Audit{}}})
	if err != nil || !res.GetAudit().GetOk() {
		t.Fatalf("the wallet's audit: %v %v", res.GetAudit(), err)
	}
}

// TestCoins_FourAccountsPlayAClassicCoinGame: four accounts sit at a
// classic table of 100 coins (each sit-down holds the stake), play the whole
// game over WebSockets, and each balance changes by exactly the payout of
// their place; the coins are conserved.
func TestCoins_FourAccountsPlayAClassicCoinGame(t *testing.T) {
	t.Parallel()
	playClassicCoinGame(t, shared)
}

// playClassicCoinGame is TestCoins_FourAccountsPlayAClassicCoinGame on the stack s.
func playClassicCoinGame(t *testing.T, s *stack) {
	w := walletOf(t, s)
	var tableID string
	s.dumpOnFailure(t, &tableID)
	sessions, start := s.coinAccounts(t, 4)
	const stake = 100
	clients := seatPlayers(t, s, tableSpec{stake: stake, moveTime: time.Minute, name: "e2e coins"}, sessions, &tableID)
	for _, ses := range sessions {
		if a, h := s.balance(t, ses.Player.ID); a != start[ses.Player.ID]-stake || h != stake {
			t.Fatalf("%s seated: available %d held %d; want the stake held", ses.Player.ID, a, h)
		}
	}
	if got := s.tableSummary(t, sessions[0].Token, tableID).GetSettings().GetStake().GetCoins().GetAmount(); got != stake {
		t.Fatalf("the table's description shows stake %d", got)
	}
	playToEnd(t, clients, tableID, 120*time.Second)
	ended := clients[0].awaitEvent(0, time.Second, tableID, "the end", gameEnded).ev.GetGameEnded()
	eligible := map[string]bool{}
	for _, ses := range sessions {
		eligible[ses.Player.ID] = true
	}
	shares := expectedShares(t, tablesettings.Classic, 4*stake, ended, eligible)
	want := map[string]int64{}
	var before, after int64
	for _, ses := range sessions {
		p := ses.Player.ID
		want[p] = start[p] - stake + shares[p]
		before, after = before+start[p], after+want[p]
	}
	if before != after {
		t.Fatalf("the payout %v does not add up to the pot", shares)
	}
	s.awaitBalances(t, want)
	s.settledOnce(t, tableID, 4*stake)
	auditClean(t, w, tableID)
	t.Logf("classic coin game: placings %v, shares %v", ended.GetPlacings(), shares)
}

// TestCoins_AClassicLeaverForfeitsTheStake: two accounts and two bots at a
// classic table of 50; one account leaves during the game (a bot plays the
// seat on): the stake is forfeited, and the one who stayed, the only
// eligible player, takes the whole pot.
func TestCoins_AClassicLeaverForfeitsTheStake(t *testing.T) {
	t.Parallel()
	s := shared
	var tableID string
	s.dumpOnFailure(t, &tableID)
	stayer, leaver := s.coinAccount(t), s.coinAccount(t)
	a0, _ := s.balance(t, stayer.Player.ID)
	b0, _ := s.balance(t, leaver.Player.ID)
	const stake = 50
	clients := seatPlayers(t, s, tableSpec{stake: stake, moveTime: time.Minute, name: "e2e coin leaver"}, []session{stayer, leaver}, &tableID)
	s.fillWithBots(t, stayer, tableID)
	clients[0].awaitEvent(0, 10*time.Second, tableID, "the game's start", func(ev *tablev1.Event) bool { return ev.GetGameStarted() != nil })
	s.mustCall(t, http.StatusOK, http.MethodPost, "/api/v1/tables/"+tableID+"/leave", leaver.Token, nil, nil)
	clients[1].autoPlay(tableID, false)
	clients[0].autoPlay(tableID, true)
	clients[0].awaitEvent(0, 120*time.Second, tableID, "the end of the game", gameEnded)
	s.awaitBalances(t, map[string]int64{stayer.Player.ID: a0 - stake + 2*stake, leaver.Player.ID: b0 - stake})
	s.settledOnce(t, tableID, 2*stake)
}

// TestCoins_TooSmallABalanceOrAGuestIsRefusedAndTheSeatStaysFree: an
// account whose coins are all held at another table is refused a seat at a
// table of 10 (402 insufficient_funds), a guest is refused a coin table
// (403 account_required); the seat stays free and no coin moves. Once the
// other table closes (its host leaves), its stake is released and the
// account sits.
func TestCoins_TooSmallABalanceOrAGuestIsRefusedAndTheSeatStaysFree(t *testing.T) {
	t.Parallel()
	s := shared
	poor, host := s.coinAccount(t), s.coinAccount(t)
	p0, _ := s.balance(t, poor.Player.ID)
	if p0 < 1000 || p0-1000 >= 10 {
		t.Fatalf("a new account has %d coins; the test needs 1000..1009 (the sign-up grant)", p0)
	}
	big := s.createTable(t, poor, tableSpec{stake: 1000, name: "e2e all in"})
	small := s.createTable(t, host, tableSpec{stake: 10, name: "e2e small"})
	s.wantError(t, http.StatusPaymentRequired, "insufficient_funds", http.MethodPost, "/api/v1/tables/"+small+"/sit", poor.Token, map[string]any{"seat": 1})
	if seat := s.tableSummary(t, host.Token, small).GetSeats()[1]; seat.GetPlayerId() != "" {
		t.Fatalf("seat 1 after the refusal: %v", seat)
	}
	if a, h := s.balance(t, poor.Player.ID); a != p0-1000 || h != 1000 {
		t.Fatalf("after the refusal: available %d held %d", a, h)
	}
	guest := s.guest(t)
	s.wantError(t, http.StatusForbidden, "account_required", http.MethodPost, "/api/v1/tables/"+small+"/sit", guest.Token, map[string]any{"seat": 1})
	if seat := s.tableSummary(t, host.Token, small).GetSeats()[1]; seat.GetPlayerId() != "" {
		t.Fatalf("seat 1 after the guest: %v", seat)
	}
	s.mustCall(t, http.StatusOK, http.MethodPost, "/api/v1/tables/"+big+"/leave", poor.Token, nil, nil)
	if a, h := s.balance(t, poor.Player.ID); a != p0 || h != 0 {
		t.Fatalf("after the table closed: available %d held %d; want the stake back", a, h)
	}
	s.sit(t, poor, small, 1, "")
	if a, h := s.balance(t, poor.Player.ID); a != p0-10 || h != 10 {
		t.Fatalf("seated at the small table: available %d held %d", a, h)
	}
	s.mustCall(t, http.StatusOK, http.MethodPost, "/api/v1/tables/"+small+"/stand", poor.Token, nil, nil)
	if a, h := s.balance(t, poor.Player.ID); a != p0 || h != 0 {
		t.Fatalf("stood up: available %d held %d; want the stake back", a, h)
	}
}

// TestCoins_AJapaneseCoinMatchPaysThePotToTheWinner: two accounts play a
// Japanese match of 500 over WebSockets; the winner takes the pot.
func TestCoins_AJapaneseCoinMatchPaysThePotToTheWinner(t *testing.T) {
	t.Parallel()
	s := shared
	var tableID string
	s.dumpOnFailure(t, &tableID)
	sessions := []session{s.coinAccount(t), s.coinAccount(t)}
	start := map[string]int64{}
	for _, ses := range sessions {
		start[ses.Player.ID], _ = s.balance(t, ses.Player.ID)
	}
	const stake = 500
	clients := seatPlayers(t, s, tableSpec{japanese: true, target: 11, stake: stake, moveTime: time.Minute, name: "e2e japanese coins"}, sessions, &tableID)
	playToEnd(t, clients, tableID, 120*time.Second)
	ended := clients[0].awaitEvent(0, time.Second, tableID, "the end", gameEnded).ev.GetGameEnded()
	var winner string
	for _, p := range ended.GetPlacings() {
		if p.GetPlace() == 1 {
			winner = p.GetPlayerId()
		}
	}
	want := map[string]int64{}
	for _, ses := range sessions {
		p := ses.Player.ID
		want[p] = start[p] - stake
		if p == winner {
			want[p] += 2 * stake
		}
	}
	if winner == "" {
		t.Fatalf("no winner in %v", ended.GetPlacings())
	}
	s.awaitBalances(t, want)
	s.settledOnce(t, tableID, 2*stake)
}

// TestCoins_AJapaneseResignationHandsThePotToTheOpponent: a player resigns
// a Japanese coin match at once; the opponent takes the pot.
func TestCoins_AJapaneseResignationHandsThePotToTheOpponent(t *testing.T) {
	t.Parallel()
	s := shared
	var tableID string
	s.dumpOnFailure(t, &tableID)
	stayer, quitter := s.coinAccount(t), s.coinAccount(t)
	a0, _ := s.balance(t, stayer.Player.ID)
	b0, _ := s.balance(t, quitter.Player.ID)
	const stake = 10
	clients := seatPlayers(t, s, tableSpec{japanese: true, stake: stake, moveTime: time.Minute, name: "e2e japanese resign"}, []session{stayer, quitter}, &tableID)
	clients[1].awaitEvent(0, 10*time.Second, tableID, "the game's start", func(ev *tablev1.Event) bool { return ev.GetGameStarted() != nil })
	s.mustCall(t, http.StatusOK, http.MethodPost, "/api/v1/tables/"+tableID+"/leave", quitter.Token, nil, nil)
	clients[0].awaitEvent(0, 10*time.Second, tableID, "the end of the match", gameEnded)
	s.awaitBalances(t, map[string]int64{stayer.Player.ID: a0 + stake, quitter.Player.ID: b0 - stake})
	s.settledOnce(t, tableID, 2*stake)
}

// TestCoins_SIGKILLOfTheRunnerMidGamePaysOnce: own stack, two runners. Four
// accounts play a classic coin game; one leaves during the second hand
// (its forfeit is published by the owner), and at that hand's tenth card the
// owning runner is SIGKILLed. The other runner restores the table (and
// republishes what followed the last snapshot: the forfeit again, which the
// wallet applies once) and the game ends: the balances are exactly the
// payout with the leaver ineligible, the pot is settled once and the
// wallet's audit is clean.
func TestCoins_SIGKILLOfTheRunnerMidGamePaysOnce(t *testing.T) {
	t.Parallel()
	s := startStack(t, "coinkill", 2)
	w := walletOf(t, s)
	var tableID string
	s.dumpOnFailure(t, &tableID)
	sessions, start := s.coinAccounts(t, 4)
	const stake = 100
	clients := seatPlayers(t, s, tableSpec{stake: stake, moveTime: time.Minute, name: "e2e coin kill"}, sessions, &tableID)
	for _, c := range clients {
		c.autoPlay(tableID, true)
	}
	c := clients[0]
	second := c.awaitHand(30*time.Second, tableID, 1, "the second hand")
	leaver := sessions[3]
	clients[3].autoPlay(tableID, false)
	s.mustCall(t, http.StatusOK, http.MethodPost, "/api/v1/tables/"+tableID+"/leave", leaver.Token, nil, nil)
	c.awaitCards(second.N, 30*time.Second, tableID, 10, "ten cards of the second hand")
	victim := owner(s, tableID)
	proc := s.Runner(victim)
	if proc == nil {
		t.Fatalf("the table's owner %q is not one of the stack's runners", victim)
	}
	proc.Kill()
	t.Logf("SIGKILLed %s, the owner of %s", victim, tableID)
	ended := c.awaitEvent(0, 90*time.Second, tableID, "the end of the game after the kill", gameEnded).ev.GetGameEnded()

	eligible := map[string]bool{}
	for _, ses := range sessions[:3] {
		eligible[ses.Player.ID] = true
	}
	shares := expectedShares(t, tablesettings.Classic, 4*stake, ended, eligible)
	want := map[string]int64{}
	for _, ses := range sessions {
		p := ses.Player.ID
		want[p] = start[p] - stake + shares[p]
	}
	s.awaitBalances(t, want)
	s.settledOnce(t, tableID, 4*stake)
	auditClean(t, w, tableID)
	t.Logf("placings %v, shares %v (the leaver %s ineligible)", ended.GetPlacings(), shares, leaver.Player.ID)
}
