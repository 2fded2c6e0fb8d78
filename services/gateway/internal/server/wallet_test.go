package server

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/walletclient"
	"github.com/pulka/pulka/pkg/wire"
)

// downWallet stands for the wallet process: down, it answers nothing and
// its command stream keeps the commands; up, it applies them (an id once),
// opens accounts and pays one bonus, writing the ledger stream as the
// contract says (flat fields, the bell rung).
type downWallet struct {
	rdb    redis.UniversalClient
	mu     sync.Mutex
	down   bool
	queued []*walletv1.WalletCommand
	done   map[string]*walletv1.WalletResult
	seq    map[string]int64
}

func (w *downWallet) Do(ctx context.Context, cmd *walletv1.WalletCommand) (*walletv1.WalletResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.down {
		w.queued = append(w.queued, cmd)
		return nil, walletclient.ErrTimeout
	}
	return w.apply(ctx, cmd), nil
}

// up starts the wallet: it reads the commands that waited.
func (w *downWallet) up(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.down = false
	for _, c := range w.queued {
		w.apply(ctx, c)
	}
}

func (w *downWallet) apply(ctx context.Context, cmd *walletv1.WalletCommand) *walletv1.WalletResult {
	if r, ok := w.done[cmd.GetCommandId()]; ok {
		return r
	}
	r := w.decide(ctx, cmd)
	w.done[cmd.GetCommandId()] = r
	return r
}

func (w *downWallet) decide(ctx context.Context, cmd *walletv1.WalletCommand) *walletv1.WalletResult {
	var account string
	var amount int64
	switch c := cmd.GetCommand().(type) {
	case *walletv1.WalletCommand_OpenAccount:
		account, amount = c.OpenAccount.GetAccountId(), 1000
		if w.seq[account] > 0 {
			return &walletv1.WalletResult{Reason: walletv1.WalletRejectReason_WALLET_REJECT_REASON_ACCOUNT_EXISTS}
		}
	case *walletv1.WalletCommand_ClaimDailyBonus:
		account, amount = c.ClaimDailyBonus.GetAccountId(), 100
		if w.seq[account] > 1 {
			return &walletv1.WalletResult{Reason: walletv1.WalletRejectReason_WALLET_REJECT_REASON_BONUS_CLAIMED}
		}
	}
	w.seq[account]++
	stream := walletclient.LedgerStream(account)
	avail := 1000 + 100*(w.seq[account]-1)
	w.rdb.XAdd(ctx, &redis.XAddArgs{Stream: stream, Values: []any{"seq", w.seq[account], "kind", 7, "op", cmd.GetCommandId(),
		"da", amount, "dh", 0, "a", avail, "h", 0, "cp", "~issuer", "table", "", "game", "", "memo", "", "ts", time.Now().UnixMilli()}})
	w.rdb.Publish(ctx, stream, "")
	return &walletv1.WalletResult{Accepted: true, Balances: []*walletv1.Balance{{AccountId: account, Available: avail}}}
}

func TestWallet_RegistrationSucceedsWithTheWalletDown_BalanceFollowsLive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg := testConfig()
	cfg.WalletTimeout = 200 * time.Millisecond
	w := &downWallet{down: true, seq: map[string]int64{}, done: map[string]*walletv1.WalletResult{}}
	ts := startServer(t, cfg, nil, func(p *Parts) { w.rdb = p.Redis; p.Wallet = w })

	r := ts.do(t, "POST", "/api/v1/register", map[string]string{"username": "wallet-ana", "password": "correct horse battery"}, nil)
	if r.status != http.StatusCreated {
		t.Fatalf("register with the wallet down: %d %v", r.status, r.body)
	}
	tok := r.body["token"].(string)
	if r := ts.do(t, "GET", "/api/v1/me/wallet", nil, bearer(tok)); r.status != http.StatusServiceUnavailable || errorCode(r) != "wallet_opening" {
		t.Fatalf("balance while the wallet is down: %d %v", r.status, r.body)
	}
	// The registration's OpenAccount waited in the wallet's stream: the
	// wallet applies it when it is back. (A send that never reached the
	// stream is sent again by a balance read or login after
	// coins.DefaultOpenRetry: internal/coins' tests.)
	w.up(ctx)
	if r := ts.do(t, "POST", "/api/v1/login", map[string]string{"username": "wallet-ana", "password": "correct horse battery"}, nil); r.status != http.StatusOK {
		t.Fatalf("login: %d %v", r.status, r.body)
	}
	if r := ts.do(t, "GET", "/api/v1/me/wallet", nil, bearer(tok)); r.status != http.StatusOK || r.body["available"] != "1000" {
		t.Fatalf("balance: %d %v", r.status, r.body)
	}

	ws := ts.dialWS(ctx, t, tok)
	ws.next(ctx, wire.TypeWelcome)
	if b := ws.next(ctx, wire.TypeBalance).GetBalance(); b.GetBalance().GetAvailable() != 1000 || b.GetBalance().GetVersion() != 1 {
		t.Fatalf("first balance frame: %v", b)
	}
	if r := ts.do(t, "POST", "/api/v1/me/wallet/daily-bonus", nil, bearer(tok)); r.status != http.StatusOK {
		t.Fatalf("bonus: %d %v", r.status, r.body)
	}
	b := ws.next(ctx, wire.TypeBalance).GetBalance()
	if b.GetBalance().GetAvailable() != 1100 || b.GetBalance().GetVersion() != 2 || b.GetEntry().GetAvailableDelta() != 100 {
		t.Fatalf("balance frame after the bonus: %v", b)
	}
	if r := ts.do(t, "POST", "/api/v1/me/wallet/daily-bonus", nil, bearer(tok)); r.status != http.StatusConflict || errorCode(r) != "bonus_claimed" {
		t.Fatalf("second bonus: %d %v", r.status, r.body)
	}
	if r := ts.do(t, "GET", "/api/v1/me/wallet/ledger?limit=1", nil, bearer(tok)); r.status != http.StatusOK || r.body["next_before"] == nil {
		t.Fatalf("ledger: %d %v", r.status, r.body)
	}
}

func TestWallet_GuestsHaveNone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	w := &downWallet{seq: map[string]int64{}, done: map[string]*walletv1.WalletResult{}}
	ts := startServer(t, testConfig(), nil, func(p *Parts) { w.rdb = p.Redis; p.Wallet = w })
	r := ts.do(t, "POST", "/api/v1/session/guest", nil, nil)
	tok := r.body["token"].(string)
	for _, p := range []string{"GET /api/v1/me/wallet", "GET /api/v1/me/wallet/ledger", "POST /api/v1/me/wallet/daily-bonus"} {
		m, path, _ := strings.Cut(p, " ")
		if r := ts.do(t, m, path, nil, bearer(tok)); r.status != http.StatusForbidden || errorCode(r) != "account_required" {
			t.Errorf("%s as a guest: %d %v", p, r.status, r.body)
		}
	}
	// No balance frame between the welcome and the answer to a ping.
	ws := ts.dialWS(ctx, t, tok)
	ws.next(ctx, wire.TypeWelcome)
	ws.send(ctx, &gatewayv1.ClientFrame{Ref: "p", Frame: &gatewayv1.ClientFrame_Ping{Ping: &gatewayv1.Ping{}}})
	for {
		_, b, err := ws.c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		m := &gatewayv1.ServerFrame{}
		if err := proto.Unmarshal(b, m); err != nil {
			t.Fatal(err)
		}
		if typ := wire.ServerFrameType(m); typ == wire.TypeBalance {
			t.Fatalf("a guest got a balance frame: %v", m)
		} else if typ == wire.TypePong {
			break
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.done) != 0 {
		t.Fatalf("a guest sent wallet commands: %v", w.done)
	}
}
