package httpapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/services/gateway/internal/auth"
	"github.com/pulka/pulka/services/gateway/internal/coins"
)

// stubWallet answers from fixed data and records the ledger pages asked for.
type stubWallet struct {
	mu      sync.Mutex
	claimed bool
	limits  []int
}

func (w *stubWallet) Open(context.Context, string) error { return nil }
func (w *stubWallet) Balance(_ context.Context, a string) (*walletv1.Balance, error) {
	return &walletv1.Balance{AccountId: a, Available: 1000, Version: 1}, nil
}
func (w *stubWallet) Ledger(_ context.Context, a, before string, limit int) ([]*walletv1.LedgerEntry, string, error) {
	w.mu.Lock()
	w.limits = append(w.limits, limit)
	w.mu.Unlock()
	if before != "" {
		return nil, "", nil
	}
	return []*walletv1.LedgerEntry{{AccountId: a, Seq: 1, Kind: walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_SIGNUP_GRANT,
		AvailableDelta: 1000, AvailableAfter: 1000}}, "1-0", nil
}
func (w *stubWallet) ClaimDailyBonus(_ context.Context, a string) (*walletv1.WalletResult, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.claimed {
		return nil, &coins.Rejection{Reason: walletv1.WalletRejectReason_WALLET_REJECT_REASON_BONUS_CLAIMED}
	}
	w.claimed = true
	return &walletv1.WalletResult{Accepted: true, Balances: []*walletv1.Balance{{AccountId: a, Available: 1100, Version: 2}},
		Entries: []*walletv1.LedgerEntry{{AccountId: a, Seq: 2, AvailableDelta: 100}}}, nil
}

func TestWalletEndpoints(t *testing.T) {
	gin.SetMode(gin.TestMode)
	signer, err := auth.NewSigner([]byte(strings.Repeat("k", auth.MinSecretLen)), nil, time.Hour, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	account, _, _ := signer.Issue(auth.Claims{PlayerID: "u-ana", Name: "Ana"})
	guest, _, _ := signer.Issue(auth.Claims{PlayerID: "g-bo", Name: "Bo", Guest: true})
	w := &stubWallet{}
	var mu sync.Mutex
	counted := map[string]int{}
	engine := gin.New()
	if err := Mount(engine, Config{}, Deps{Signer: signer, Wallet: w, WalletCounted: func(op, result string) {
		mu.Lock()
		counted[op+"/"+result]++
		mu.Unlock()
	}}); err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(engine)
	t.Cleanup(hs.Close)
	call := func(method, path, tok string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(method, hs.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}
	code := func(body map[string]any) string {
		e, _ := body["error"].(map[string]any)
		s, _ := e["code"].(string)
		return s
	}

	if st, b := call("GET", "/api/v1/me/wallet", account); st != 200 || b["available"] != "1000" {
		t.Fatalf("balance: %d %v", st, b)
	}
	for _, p := range []string{"GET /api/v1/me/wallet", "GET /api/v1/me/wallet/ledger", "POST /api/v1/me/wallet/daily-bonus"} {
		m, path, _ := strings.Cut(p, " ")
		if st, b := call(m, path, guest); st != 403 || code(b) != "account_required" {
			t.Errorf("%s as a guest: %d %v, want 403 account_required", p, st, b)
		}
	}
	st, b := call("GET", "/api/v1/me/wallet/ledger", account)
	if es, _ := b["entries"].([]any); st != 200 || len(es) != 1 || b["next_before"] != "1-0" {
		t.Fatalf("ledger: %d %v", st, b)
	}
	if st, _ := call("GET", "/api/v1/me/wallet/ledger?before=1-0&limit=100", account); st != 200 {
		t.Fatalf("ledger next page: %d", st)
	}
	for _, q := range []string{"limit=0", "limit=101", "limit=x", "before=abc", "before=1-0-0"} {
		if st, b := call("GET", "/api/v1/me/wallet/ledger?"+q, account); st != 400 || code(b) != "bad_request" {
			t.Errorf("ledger?%s: %d %v, want 400", q, st, b)
		}
	}
	w.mu.Lock()
	if len(w.limits) != 2 || w.limits[0] != DefaultLedgerPage || w.limits[1] != 100 {
		t.Errorf("pages asked for %v", w.limits)
	}
	w.mu.Unlock()
	if st, b := call("POST", "/api/v1/me/wallet/daily-bonus", account); st != 200 || b["balance"].(map[string]any)["available"] != "1100" {
		t.Fatalf("bonus: %d %v", st, b)
	}
	if st, b := call("POST", "/api/v1/me/wallet/daily-bonus", account); st != 409 || code(b) != "bonus_claimed" {
		t.Fatalf("second bonus: %d %v, want 409 bonus_claimed", st, b)
	}
	mu.Lock()
	defer mu.Unlock()
	// The ledger's refusals: the guest's and the five bad pages, none of
	// which reached the wallet.
	if counted["daily_bonus/ok"] != 1 || counted["daily_bonus/refused"] != 2 || counted["balance/refused"] != 1 ||
		counted["ledger/refused"] != 6 || counted["ledger/ok"] != 2 || counted["ledger/error"] != 0 {
		t.Errorf("counted %v", counted)
	}
}
