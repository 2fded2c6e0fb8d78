package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/durationpb"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/tools/wsclient"
)

var httpClient = &http.Client{Timeout: 15 * time.Second}

// session is what POST /session/guest, /register and /login answer.
type session struct {
	Token  string `json:"token"`
	Player struct {
		ID    string `json:"id"`
		Name  string `json:"name"`
		Guest bool   `json:"guest"`
	} `json:"player"`
}

// apiError is the body of every HTTP error answer.
type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// call does one API request and returns the status and the body. body is
// JSON-encoded unless it is nil.
func (s *stack) call(t testing.TB, method, path, token string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.URL()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read: %v", method, path, err)
	}
	return resp.StatusCode, out
}

// mustCall is call that fails the test unless the status is want, and
// decodes the answer into out (when not nil).
func (s *stack) mustCall(t testing.TB, want int, method, path, token string, body, out any) {
	t.Helper()
	status, raw := s.call(t, method, path, token, body)
	if status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, raw)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %s: %v", method, path, raw, err)
		}
	}
}

// wantError checks that a request is refused with status and code.
func (s *stack) wantError(t testing.TB, status int, code, method, path, token string, body any) {
	t.Helper()
	got, raw := s.call(t, method, path, token, body)
	var e apiError
	_ = json.Unmarshal(raw, &e)
	if got != status || e.Error.Code != code {
		t.Fatalf("%s %s: got %d %q, want %d %q: %s", method, path, got, e.Error.Code, status, code, raw)
	}
	if e.Error.Message == "" {
		t.Errorf("%s %s: error %q has no message for people", method, path, code)
	}
}

// guest opens a guest session.
func (s *stack) guest(t testing.TB) session {
	t.Helper()
	var ses session
	s.mustCall(t, http.StatusCreated, http.MethodPost, "/api/v1/session/guest", "", nil, &ses)
	if ses.Token == "" || !ses.Player.Guest || !strings.HasPrefix(ses.Player.ID, "g-") {
		t.Fatalf("guest session: %+v", ses)
	}
	return ses
}

var userSeq atomic.Int64

// register creates an account with a fresh name and returns its session.
func (s *stack) register(t testing.TB) session {
	t.Helper()
	name := fmt.Sprintf("e2e_%d_%d", time.Now().UnixNano()%1_000_000_000, userSeq.Add(1))
	var ses session
	s.mustCall(t, http.StatusCreated, http.MethodPost, "/api/v1/register", "",
		map[string]string{"username": name, "password": "correct horse battery"}, &ses)
	if ses.Token == "" || ses.Player.Guest || !strings.HasPrefix(ses.Player.ID, "u-") {
		t.Fatalf("register: %+v", ses)
	}
	return ses
}

// tableSpec is what a test wants of a new table.
type tableSpec struct {
	japanese bool
	standard bool // classic standard (24 hands) instead of nines (16)
	target   uint32
	moveTime time.Duration // 0: the runner's default (the short test timer)
	grace    time.Duration // 0: the runner's default
	password string
	name     string
	stake    int64 // Domino Coins per seat; 0: a free table
}

func (sp tableSpec) settings() *lobbyv1.TableSettings {
	ts := &lobbyv1.TableSettings{Visibility: lobbyv1.TableVisibility_TABLE_VISIBILITY_PUBLIC}
	if sp.japanese {
		ts.Game, ts.JapaneseTarget = lobbyv1.Game_GAME_JAPANESE, sp.target
	} else {
		ts.Game = lobbyv1.Game_GAME_CLASSIC
		ts.ClassicVariant = lobbyv1.ClassicVariant_CLASSIC_VARIANT_NINES
		if sp.standard {
			ts.ClassicVariant = lobbyv1.ClassicVariant_CLASSIC_VARIANT_STANDARD
		}
		ts.Khishti = lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_200
		ts.Premia, ts.Moshla, ts.RestDocked = true, true, true
	}
	if sp.moveTime > 0 {
		ts.MoveTime = durationpb.New(sp.moveTime)
	}
	if sp.grace > 0 {
		ts.ReconnectGrace = durationpb.New(sp.grace)
	}
	if sp.stake > 0 {
		ts.Stake = &lobbyv1.Stake{Kind: &lobbyv1.Stake_Coins{Coins: &lobbyv1.CoinStake{Amount: sp.stake}}}
	}
	return ts
}

// createTable creates a table through the HTTP API with its host seated
// at seat 0, and returns its id.
func (s *stack) createTable(t testing.TB, host session, sp tableSpec) string {
	t.Helper()
	settings, err := protojson.Marshal(sp.settings())
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		TableID string `json:"table_id"`
	}
	s.mustCall(t, http.StatusCreated, http.MethodPost, "/api/v1/tables", host.Token, map[string]any{
		"name": sp.name, "settings": json.RawMessage(settings), "password": sp.password, "sit_down": true,
	}, &out)
	if out.TableID == "" {
		t.Fatal("create table: no table_id")
	}
	return out.TableID
}

// sit takes seat at table.
func (s *stack) sit(t testing.TB, who session, table string, seat int, password string) {
	t.Helper()
	s.mustCall(t, http.StatusOK, http.MethodPost, "/api/v1/tables/"+table+"/sit", who.Token,
		map[string]any{"seat": seat, "password": password}, nil)
}

// fillWithBots asks the lobby to seat bots in the table's free seats.
func (s *stack) fillWithBots(t testing.TB, host session, table string) {
	t.Helper()
	s.mustCall(t, http.StatusOK, http.MethodPost, "/api/v1/tables/"+table+"/bots", host.Token, nil, nil)
}

// tableSummary reads GET /tables/:id.
func (s *stack) tableSummary(t testing.TB, token, table string) *lobbyv1.TableSummary {
	t.Helper()
	status, raw := s.call(t, http.MethodGet, "/api/v1/tables/"+table, token, nil)
	if status != http.StatusOK {
		t.Fatalf("GET table %s: %d %s", table, status, raw)
	}
	ts := &lobbyv1.TableSummary{}
	if err := protojson.Unmarshal(raw, ts); err != nil {
		t.Fatalf("table summary %s: %v", raw, err)
	}
	return ts
}

// history returns the player's finished games (newest first).
func (s *stack) history(t testing.TB, who session) []wsclient.FinishedGame {
	t.Helper()
	games, err := (&wsclient.API{Server: s.URL(), Token: who.Token}).FinishedGames(context.Background(), 100)
	if err != nil {
		t.Fatalf("the history of %s: %v", who.Player.ID, err)
	}
	return games
}

// gameInHistory waits until the player's history lists gameID and returns it.
func (s *stack) gameInHistory(t testing.TB, who session, gameID string) wsclient.FinishedGame {
	t.Helper()
	var found wsclient.FinishedGame
	eventually(t, 20*time.Second, "game "+gameID+" in the history of "+who.Player.ID, func() bool {
		for _, g := range s.history(t, who) {
			if g.GameID == gameID {
				found = g
				return true
			}
		}
		return false
	})
	return found
}
