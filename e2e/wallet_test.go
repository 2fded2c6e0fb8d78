package e2e

import (
	"net/http"
	"testing"
	"time"

	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/wire"
)

// balanceOf is the balance of a balance frame (nil for other frames).
func balanceOf(f *frame) *walletv1.Balance {
	if f.Type != wire.TypeBalance || f.wf.Balance == nil {
		return nil
	}
	return f.wf.Balance.GetBalance()
}

// An account's Domino Coin through the gateway and the real wallet: the
// registration opened it with the sign-up grant, the socket gets the
// balance after its welcome and again live when the daily bonus is paid, a
// second claim is refused, the ledger pages newest first, and guests have
// no wallet. (Coin tables — holds at sit, payouts — need the lobby's side.)
func TestWallet_RegistrationBalanceBonusAndLedgerThroughTheGateway(t *testing.T) {
	s := shared
	a := s.register(t)
	c := s.newClient(t, "coins", a)
	c.connect()
	f := c.await(0, 10*time.Second, "the first balance", func(f *frame) bool { return balanceOf(f).GetVersion() >= 1 })
	if b := balanceOf(f); b.GetAvailable() != 1000 || b.GetHeld() != 0 || b.GetAccountId() != a.Player.ID {
		t.Fatalf("balance after registration: %v", b)
	}

	var bal struct {
		Available string `json:"available"`
		Version   string `json:"version"`
	}
	s.mustCall(t, http.StatusOK, http.MethodGet, "/api/v1/me/wallet", a.Token, nil, &bal)
	if bal.Available != "1000" || bal.Version != "1" {
		t.Fatalf("GET /me/wallet: %+v", bal)
	}

	from := c.len()
	s.mustCall(t, http.StatusOK, http.MethodPost, "/api/v1/me/wallet/daily-bonus", a.Token, nil, nil)
	f = c.await(from, 10*time.Second, "the bonus's balance", func(f *frame) bool { return balanceOf(f).GetVersion() >= 2 })
	if b, e := balanceOf(f), f.wf.Balance.GetEntry(); b.GetAvailable() != 1100 ||
		e.GetKind() != walletv1.LedgerEntryKind_LEDGER_ENTRY_KIND_DAILY_BONUS || e.GetAvailableDelta() != 100 {
		t.Fatalf("balance frame after the bonus: %v", f.wf.Balance)
	}
	s.wantError(t, http.StatusConflict, "bonus_claimed", http.MethodPost, "/api/v1/me/wallet/daily-bonus", a.Token, nil)

	type page struct {
		Entries []struct {
			Kind           string `json:"kind"`
			AvailableAfter string `json:"available_after"`
		} `json:"entries"`
		NextBefore string `json:"next_before"`
	}
	var p1, p2 page
	s.mustCall(t, http.StatusOK, http.MethodGet, "/api/v1/me/wallet/ledger?limit=1", a.Token, nil, &p1)
	if len(p1.Entries) != 1 || p1.Entries[0].Kind != "LEDGER_ENTRY_KIND_DAILY_BONUS" || p1.Entries[0].AvailableAfter != "1100" || p1.NextBefore == "" {
		t.Fatalf("ledger page 1: %+v", p1)
	}
	s.mustCall(t, http.StatusOK, http.MethodGet, "/api/v1/me/wallet/ledger?limit=1&before="+p1.NextBefore, a.Token, nil, &p2)
	if len(p2.Entries) != 1 || p2.Entries[0].Kind != "LEDGER_ENTRY_KIND_SIGNUP_GRANT" || p2.NextBefore != "" {
		t.Fatalf("ledger page 2: %+v", p2)
	}
	s.wantError(t, http.StatusBadRequest, "bad_request", http.MethodGet, "/api/v1/me/wallet/ledger?limit=1000", a.Token, nil)

	g := s.guest(t)
	s.wantError(t, http.StatusForbidden, "account_required", http.MethodGet, "/api/v1/me/wallet", g.Token, nil)
	s.wantError(t, http.StatusForbidden, "account_required", http.MethodPost, "/api/v1/me/wallet/daily-bonus", g.Token, nil)
}
