package wsclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FinishedGames reads GET /api/v1/me/games as the gateway answers it: the
// sheet and standings in protojson, standings null for a game without them,
// and an error answer as an *APIError with its code.
func TestAPI_FinishedGamesDecodesSheetsAndStandings(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/me/games" || r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":{"code":"unauthenticated","message":"no session"}}`))
			return
		}
		if r.URL.Query().Get("limit") != "5" {
			t.Errorf("limit = %q, want 5", r.URL.Query().Get("limit"))
		}
		_, _ = w.Write([]byte(`{"games":[
			{"game_id":"g2","table_id":"t2","sheet":{"gameId":"g2","totals":[{"seat":0,"total":"950"},{"seat":1,"total":"-50"}]},"standings":{"gameId":"g2","standings":[{"place":1,"seat":0,"total":"950"}]},"later":"ignored"},
			{"game_id":"g1","table_id":"t1","sheet":{"gameId":"g1"},"standings":null}]}`))
	}))
	defer srv.Close()

	games, err := (&API{Server: srv.URL, Token: "tok"}).FinishedGames(context.Background(), 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(games) != 2 || games[0].GameID != "g2" || games[0].TableID != "t2" || games[1].GameID != "g1" {
		t.Fatalf("games = %+v", games)
	}
	if got := games[0].Sheet.GetTotals(); len(got) != 2 || got[0].GetTotal() != 950 || got[1].GetTotal() != -50 {
		t.Errorf("g2's sheet totals = %v, want 950 and -50", got)
	}
	if st := games[0].Standings.GetStandings(); len(st) != 1 || st[0].GetPlace() != 1 || st[0].GetTotal() != 950 {
		t.Errorf("g2's standings = %v", st)
	}
	if games[1].Standings == nil || len(games[1].Standings.GetStandings()) != 0 {
		t.Errorf("g1's standings = %v, want empty", games[1].Standings)
	}

	_, err = (&API{Server: srv.URL, Token: "other"}).FinishedGames(context.Background(), 5)
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusUnauthorized || ae.Code != "unauthenticated" {
		t.Fatalf("err = %v, want the 401 as an *APIError", err)
	}
}
