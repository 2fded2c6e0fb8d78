package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/gin-gonic/gin"
	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/daemon"
	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/scoringclient/scoringtest"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/apierr"
	"github.com/pulka/pulka/services/gateway/internal/auth"
	"github.com/pulka/pulka/services/gateway/internal/hub"
	"github.com/pulka/pulka/services/gateway/internal/ports"
	"github.com/pulka/pulka/services/gateway/internal/webui"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.ReleaseMode)
	os.Exit(m.Run())
}

// fakeLobby answers lobby commands like the lobby would for one table "t1"
// with password "sesame", and lists two tables.
type fakeLobby struct {
	mu   sync.Mutex
	cmds []*lobbyv1.LobbyCommand
}

func (f *fakeLobby) Do(_ context.Context, cmd *lobbyv1.LobbyCommand) (*lobbyv1.LobbyCommandResult, error) {
	f.mu.Lock()
	f.cmds = append(f.cmds, cmd)
	f.mu.Unlock()
	res := &lobbyv1.LobbyCommandResult{CommandId: cmd.CommandId, PlayerId: cmd.PlayerId, Accepted: true}
	switch c := cmd.Command.(type) {
	case *lobbyv1.LobbyCommand_CreateTable:
		res.TableId = "t-new"
	case *lobbyv1.LobbyCommand_SitDown:
		res.TableId = c.SitDown.TableId
		if c.SitDown.TableId != "t1" {
			res.Accepted, res.Reason = false, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TABLE_NOT_FOUND
		} else if c.SitDown.Password != "sesame" {
			res.Accepted, res.Reason, res.Message = false, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_WRONG_PASSWORD, "wrong password"
		}
	}
	return res, nil
}

var listed = []*lobbyv1.TableSummary{
	{TableId: "t2", Name: "Japanese", Settings: &lobbyv1.TableSettings{Game: lobbyv1.Game_GAME_JAPANESE}, Status: lobbyv1.TableStatus_TABLE_STATUS_WAITING},
	{TableId: "t1", Name: "Classic", Settings: &lobbyv1.TableSettings{Game: lobbyv1.Game_GAME_CLASSIC, HasPassword: true}, Status: lobbyv1.TableStatus_TABLE_STATUS_WAITING},
}

func (f *fakeLobby) List(filter *lobbyv1.TableFilter) []*lobbyv1.TableSummary {
	var out []*lobbyv1.TableSummary
	for _, t := range listed {
		if filter.GetGame() != 0 && t.Settings.Game != filter.GetGame() {
			continue
		}
		if filter.GetWithoutPassword() && t.Settings.HasPassword {
			continue
		}
		out = append(out, t)
	}
	return out
}
func (f *fakeLobby) Page(filter *lobbyv1.TableFilter, offset, limit int) ([]*lobbyv1.TableSummary, bool) {
	all := f.List(filter)
	all = all[min(offset, len(all)):]
	return all[:min(limit, len(all))], len(all) > limit
}
func (f *fakeLobby) Get(id string) (*lobbyv1.TableSummary, bool) {
	for _, t := range listed {
		if t.TableId == id {
			return t, true
		}
	}
	return nil, false
}
func (f *fakeLobby) Fetch(_ context.Context, id string) (*lobbyv1.TableSummary, error) {
	if t, ok := f.Get(id); ok {
		return t, nil
	}
	return nil, &apierr.LobbyRejection{Reason: lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TABLE_NOT_FOUND}
}
func (f *fakeLobby) Version() uint64                                  { return 7 }
func (f *fakeLobby) Changed() <-chan struct{}                         { return make(chan struct{}) }
func (f *fakeLobby) Since(uint64) ([]ports.LobbyChange, uint64, bool) { return nil, 7, true }

type fakeSheets struct{}

func (fakeSheets) History(_ context.Context, player string, _ time.Time, limit int) ([]ports.FinishedGame, error) {
	return []ports.FinishedGame{{GameID: "g1", TableID: "t1", EndedAt: time.Unix(1_700_000_000, 0),
		Sheet:     &scoringv1.Sheet{GameId: "g1", Players: []*scoringv1.SheetPlayer{{PlayerId: player}, {PlayerId: "u-7"}}},
		Standings: &scoringv1.FinalStandings{GameId: "g1"}}}, nil
}

// Shared answers g1 to the players on its sheet (u-7 and the player).
func (f fakeSheets) Shared(ctx context.Context, player, viewer string, before time.Time, limit int) ([]ports.FinishedGame, time.Time, error) {
	if viewer != "u-7" {
		return []ports.FinishedGame{}, time.Time{}, nil
	}
	gs, _ := f.History(ctx, player, before, limit)
	var next time.Time
	if len(gs) == limit {
		next = gs[len(gs)-1].EndedAt
	}
	return gs, next, nil
}

type testServer struct {
	url   string
	lobby *fakeLobby
	srv   *Server
	redis *redistest.Server
}

func testConfig() *Config {
	return &Config{HTTPAddr: ":0", SessionSecret: strings.Repeat("s", 32), SessionTTL: time.Hour,
		AllowedOrigins: "pulka.example", LobbyTimeout: time.Second, WalletTimeout: time.Second, BonusPerAccount: 10,
		LoginPerIP: 100, LoginPerAccountIP: 3, LoginPerAccount: 100, LoginKnownFor: time.Hour, LoginWindow: time.Minute,
		SignupsPerIP: 100, SignupWindow: time.Minute, CookieSecure: CookieSecureAuto,
		WSPerPlayer: 8, WSPerIP: 64, ConnPerIP: 128, WSHelloTimeout: 5 * time.Second, FDShedPercent: 90, SessionSweep: time.Minute,
		HashConcurrency: 2, WSReadLimit: 4096, WSSendQueue: 256, WSRate: 50, WSBurst: 50, WSPingInterval: time.Minute, WSMaxTables: 4, PresenceBeat: time.Second,
		LobbyWindow: 100, LobbyInterval: 20 * time.Millisecond, GoneCheckInterval: 2 * time.Second}
}

func startServer(t *testing.T, cfg *Config, r *redistest.Server, tune ...func(*Parts)) *testServer {
	t.Helper()
	if r == nil {
		r = redistest.Start(t)
	}
	lobby := &fakeLobby{}
	parts := Parts{Redis: r.Client(t), Lobby: lobby, View: lobby, Sheets: fakeSheets{},
		Argon2: auth.Argon2Params{MemoryKiB: 64, Time: 1, Threads: 1},
	}
	for _, f := range tune {
		f(&parts)
	}
	s, err := New(context.Background(), cfg, parts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = s.Run(ctx); close(done) }()
	hs := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = s.Shutdown(sctx)
		scancel()
		hs.Close()
		cancel()
		<-done
	})
	return &testServer{url: hs.URL, lobby: lobby, srv: s, redis: r}
}

type response struct {
	status int
	header http.Header
	body   map[string]any
}

func (ts *testServer) do(t *testing.T, method, path string, body any, hdr map[string]string) response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, ts.url+path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := response{status: resp.StatusCode, header: resp.Header}
	b, _ := io.ReadAll(resp.Body)
	if len(b) > 0 {
		if err := json.Unmarshal(b, &out.body); err != nil {
			t.Fatalf("%s %s: body %q is not JSON", method, path, b)
		}
	}
	return out
}

func errorCode(r response) string {
	e, _ := r.body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func bearer(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

func TestAPI_GuestSessionThenMe(t *testing.T) {
	ts := startServer(t, testConfig(), nil)
	r := ts.do(t, "POST", "/api/v1/session/guest", nil, nil)
	if r.status != http.StatusCreated {
		t.Fatalf("guest: %d %v", r.status, r.body)
	}
	tok := r.body["token"].(string)
	player := r.body["player"].(map[string]any)
	if player["guest"] != true || !strings.HasPrefix(player["name"].(string), "Guest-") {
		t.Fatalf("guest = %v", r.body)
	}
	if !strings.Contains(r.header.Get("Set-Cookie"), "pulka_session=") || !strings.Contains(r.header.Get("Set-Cookie"), "HttpOnly") {
		t.Fatalf("cookie = %q", r.header.Get("Set-Cookie"))
	}
	me := ts.do(t, "GET", "/api/v1/me", nil, bearer(tok))
	if me.status != http.StatusOK || me.body["player"].(map[string]any)["id"] != player["id"] {
		t.Fatalf("me: %d %v", me.status, me.body)
	}
	byCookie := ts.do(t, "GET", "/api/v1/me", nil, map[string]string{"Cookie": "pulka_session=" + tok})
	if byCookie.status != http.StatusOK {
		t.Fatalf("me by cookie: %d %v", byCookie.status, byCookie.body)
	}
	if r := ts.do(t, "GET", "/api/v1/me", nil, nil); r.status != http.StatusUnauthorized || errorCode(r) != "auth_required" {
		t.Fatalf("me without session: %d %v", r.status, r.body)
	}
	if r := ts.do(t, "GET", "/api/v1/me", nil, bearer(tok+"x")); r.status != http.StatusUnauthorized || errorCode(r) != "unauthorized" {
		t.Fatalf("me with a forged token: %d %v", r.status, r.body)
	}
}

// GET /api/v1/session is what a browser asks on a fresh page load: no
// session is 204, never a 401 (an error in the console on every load).
func TestAPI_SessionWithoutA401(t *testing.T) {
	ts := startServer(t, testConfig(), nil)
	if r := ts.do(t, "GET", "/api/v1/session", nil, nil); r.status != http.StatusNoContent {
		t.Fatalf("session without a cookie: %d %v", r.status, r.body)
	}
	r := ts.do(t, "POST", "/api/v1/session/guest", nil, nil)
	tok := r.body["token"].(string)
	player := r.body["player"].(map[string]any)
	byCookie := ts.do(t, "GET", "/api/v1/session", nil, map[string]string{"Cookie": "pulka_session=" + tok})
	if byCookie.status != http.StatusOK || byCookie.body["player"].(map[string]any)["id"] != player["id"] {
		t.Fatalf("session by cookie: %d %v", byCookie.status, byCookie.body)
	}
	forged := ts.do(t, "GET", "/api/v1/session", nil, map[string]string{"Cookie": "pulka_session=" + tok + "x"})
	if forged.status != http.StatusNoContent || !strings.Contains(forged.header.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("session with a forged cookie: %d %v, Set-Cookie %q", forged.status, forged.body, forged.header.Get("Set-Cookie"))
	}
}

func TestAPI_RegisterLoginWrongPasswordAndRateLimit(t *testing.T) {
	ts := startServer(t, testConfig(), nil)
	cred := map[string]string{"username": "Nino", "password": "khachapuri"}
	if r := ts.do(t, "POST", "/api/v1/register", cred, nil); r.status != http.StatusCreated {
		t.Fatalf("register: %d %v", r.status, r.body)
	}
	if r := ts.do(t, "POST", "/api/v1/register", cred, nil); r.status != http.StatusConflict || errorCode(r) != "username_taken" {
		t.Fatalf("second register: %d %v", r.status, r.body)
	}
	if r := ts.do(t, "POST", "/api/v1/register", map[string]string{"username": "x", "password": "khachapuri"}, nil); errorCode(r) != "invalid_username" {
		t.Fatalf("bad name: %d %v", r.status, r.body)
	}
	if r := ts.do(t, "POST", "/api/v1/register", map[string]string{"username": "Tamar", "password": "short"}, nil); errorCode(r) != "weak_password" {
		t.Fatalf("weak password: %d %v", r.status, r.body)
	}
	ok := ts.do(t, "POST", "/api/v1/login", map[string]string{"username": "nino", "password": "khachapuri"}, nil)
	if ok.status != http.StatusOK || ok.body["player"].(map[string]any)["guest"] != false {
		t.Fatalf("login: %d %v", ok.status, ok.body)
	}
	for i := 0; i < 3; i++ { // LoginPerAccountIP = 3
		r := ts.do(t, "POST", "/api/v1/login", map[string]string{"username": "Nino", "password": "wrong-one"}, nil)
		if r.status != http.StatusUnauthorized || errorCode(r) != "invalid_credentials" {
			t.Fatalf("wrong password %d: %d %v", i, r.status, r.body)
		}
	}
	r := ts.do(t, "POST", "/api/v1/login", map[string]string{"username": "Nino", "password": "khachapuri"}, nil)
	if r.status != http.StatusTooManyRequests || errorCode(r) != "too_many_attempts" || r.header.Get("Retry-After") == "" {
		t.Fatalf("after 3 failures: %d %v (Retry-After %q)", r.status, r.body, r.header.Get("Retry-After"))
	}
	if r := ts.do(t, "POST", "/api/v1/login", "not an object", nil); r.status != http.StatusBadRequest || errorCode(r) != "bad_request" {
		t.Fatalf("bad body: %d %v", r.status, r.body)
	}
}

func TestAPI_LoginRateLimitedPerIP(t *testing.T) {
	cfg := testConfig()
	cfg.LoginPerIP = 2
	ts := startServer(t, cfg, nil)
	for i := 0; i < 2; i++ {
		if r := ts.do(t, "POST", "/api/v1/login", map[string]string{"username": "anyone", "password": "whatever1"}, nil); r.status != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %d", i, r.status)
		}
	}
	r := ts.do(t, "POST", "/api/v1/login", map[string]string{"username": "someone-else", "password": "whatever1"}, nil)
	if r.status != http.StatusTooManyRequests || !strings.Contains(r.body["error"].(map[string]any)["message"].(string), "ip") {
		t.Fatalf("third attempt from one IP: %d %v", r.status, r.body)
	}
}

func TestAPI_TablesListFiltersAndActions(t *testing.T) {
	ts := startServer(t, testConfig(), nil)
	guest := ts.do(t, "POST", "/api/v1/session/guest", nil, nil).body
	tok := guest["token"].(string)
	name := guest["player"].(map[string]any)["name"].(string)
	all := ts.do(t, "GET", "/api/v1/tables", nil, bearer(tok))
	if all.status != http.StatusOK || len(all.body["tables"].([]any)) != 2 || all.header.Get("X-Lobby-Version") != "7" {
		t.Fatalf("list: %d %v", all.status, all.body)
	}
	classic := ts.do(t, "GET", "/api/v1/tables?game=classic", nil, bearer(tok))
	if ts := classic.body["tables"].([]any); len(ts) != 1 || ts[0].(map[string]any)["table_id"] != "t1" {
		t.Fatalf("classic: %v", classic.body)
	}
	open := ts.do(t, "GET", "/api/v1/tables?without_password=true", nil, bearer(tok))
	if ts := open.body["tables"].([]any); len(ts) != 1 || ts[0].(map[string]any)["table_id"] != "t2" {
		t.Fatalf("without password: %v", open.body)
	}
	page := ts.do(t, "GET", "/api/v1/tables?page_size=1", nil, bearer(tok))
	if len(page.body["tables"].([]any)) != 1 || page.body["next_page_token"] != "1" {
		t.Fatalf("page: %v", page.body)
	}
	if r := ts.do(t, "GET", "/api/v1/tables?game=poker", nil, bearer(tok)); r.status != http.StatusBadRequest {
		t.Fatalf("bad filter: %d", r.status)
	}
	if r := ts.do(t, "GET", "/api/v1/tables/t1", nil, bearer(tok)); r.status != http.StatusOK || r.body["name"] != "Classic" {
		t.Fatalf("get: %d %v", r.status, r.body)
	}
	if r := ts.do(t, "GET", "/api/v1/tables/nope", nil, bearer(tok)); r.status != http.StatusNotFound || errorCode(r) != "table_not_found" {
		t.Fatalf("get missing: %d %v", r.status, r.body)
	}

	created := ts.do(t, "POST", "/api/v1/tables", map[string]any{"name": "Mine", "sit_down": true,
		"settings": map[string]any{"game": "GAME_CLASSIC", "classic_variant": "CLASSIC_VARIANT_NINES", "premia": true}},
		map[string]string{"Authorization": "Bearer " + tok, "Idempotency-Key": "create-1"})
	if created.status != http.StatusCreated || created.body["table_id"] != "t-new" {
		t.Fatalf("create: %d %v", created.status, created.body)
	}
	ts.lobby.mu.Lock()
	cmd := ts.lobby.cmds[0]
	ts.lobby.mu.Unlock()
	ct := cmd.GetCreateTable()
	if !strings.HasSuffix(cmd.CommandId, "/create-1") || cmd.PlayerId == "" || cmd.DisplayName != name || name == "" ||
		ct.Settings.ClassicVariant != lobbyv1.ClassicVariant_CLASSIC_VARIANT_NINES || !ct.SitDown {
		t.Fatalf("create command = %v", cmd)
	}

	wrong := ts.do(t, "POST", "/api/v1/tables/t1/sit", map[string]any{"seat": 1, "password": "open"}, bearer(tok))
	if wrong.status != http.StatusForbidden || errorCode(wrong) != "wrong_password" {
		t.Fatalf("sit with the wrong password: %d %v", wrong.status, wrong.body)
	}
	if r := ts.do(t, "POST", "/api/v1/tables/t1/sit", map[string]any{"seat": 1, "password": "sesame"}, bearer(tok)); r.status != http.StatusOK {
		t.Fatalf("sit: %d %v", r.status, r.body)
	}
	if r := ts.do(t, "POST", "/api/v1/tables/t1/sit", map[string]any{"password": "sesame"}, bearer(tok)); r.status != http.StatusBadRequest {
		t.Fatalf("sit without seat: %d %v", r.status, r.body)
	}
	for _, action := range []string{"stand", "leave", "bots"} {
		if r := ts.do(t, "POST", "/api/v1/tables/t1/"+action, nil, bearer(tok)); r.status != http.StatusOK {
			t.Fatalf("%s: %d %v", action, r.status, r.body)
		}
	}
}

func TestAPI_ForeignOriginCannotChangeState(t *testing.T) {
	ts := startServer(t, testConfig(), nil)
	r := ts.do(t, "POST", "/api/v1/session/guest", nil, map[string]string{"Origin": "https://evil.example"})
	if r.status != http.StatusForbidden || errorCode(r) != "origin_not_allowed" {
		t.Fatalf("foreign origin: %d %v", r.status, r.body)
	}
	if r := ts.do(t, "POST", "/api/v1/session/guest", nil, map[string]string{"Origin": "https://pulka.example"}); r.status != http.StatusCreated {
		t.Fatalf("allowed origin: %d %v", r.status, r.body)
	}
}

// Changed on purpose (issue 17): another player's history is readable only
// as far as the reader played in its games, no longer by every session.
func TestAPI_FinishedGamesWithSheets(t *testing.T) {
	cfg := testConfig()
	ts := startServer(t, cfg, nil)
	stranger := ts.do(t, "POST", "/api/v1/session/guest", nil, nil).body["token"].(string)
	if r := ts.do(t, "GET", "/api/v1/players/u-42/games?limit=1", nil, bearer(stranger)); r.status != http.StatusOK || len(r.body["games"].([]any)) != 0 {
		t.Fatalf("a stranger reads u-42's games: %d %v", r.status, r.body)
	}
	signer, err := auth.NewSigner([]byte(cfg.SessionSecret), nil, time.Hour, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	tok, _, _ := signer.Issue(auth.Claims{PlayerID: "u-7", Name: "Giorgi"}) // played in g1 with u-42
	r := ts.do(t, "GET", "/api/v1/players/u-42/games?limit=1", nil, bearer(tok))
	games, _ := r.body["games"].([]any)
	if r.status != http.StatusOK || len(games) != 1 || r.body["next_before"] == nil {
		t.Fatalf("games: %d %v", r.status, r.body)
	}
	g := games[0].(map[string]any)
	sheet := g["sheet"].(map[string]any)
	if g["game_id"] != "g1" || sheet["players"].([]any)[0].(map[string]any)["player_id"] != "u-42" {
		t.Fatalf("game = %v", g)
	}
	if r := ts.do(t, "GET", "/api/v1/me/games?before=yesterday", nil, bearer(tok)); r.status != http.StatusBadRequest {
		t.Fatalf("bad before: %d", r.status)
	}
}

// Paging someone's history one game at a time must not reveal when the
// games the asker did not play in ended (the cursor used to be the end of
// the last game of the unfiltered page).
func TestAPI_AnothersHistoryRevealsNoEndTimeOfUnsharedGames(t *testing.T) {
	cfg := testConfig()
	r := redistest.Start(t)
	rdb := r.Client(t)
	ts := startServer(t, cfg, r, func(p *Parts) { p.Sheets = sheets{scoringclient.NewReader(rdb)} })
	base := time.UnixMilli(1_700_000_000_000)
	private := map[string]bool{}
	for i := 0; i < 6; i++ { // u-42's games; u-7 is at the second only
		players := []string{"u-42", "u-9"}
		if i == 1 {
			players = append(players, "u-7")
		}
		ended := base.Add(time.Duration(i) * time.Minute)
		if len(players) == 2 {
			private[ended.UTC().Format(time.RFC3339Nano)] = true
		}
		if err := scoringtest.Archive(context.Background(), rdb, scoringtest.Game{TableID: "t1", GameID: fmt.Sprintf("g%d", i), EndedAt: ended,
			Sheet: []byte{}, Standings: []byte{}, PlayerIDs: players}); err != nil {
			t.Fatal(err)
		}
	}
	signer, err := auth.NewSigner([]byte(cfg.SessionSecret), nil, time.Hour, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	tok, _, _ := signer.Issue(auth.Claims{PlayerID: "u-7", Name: "Giorgi"})
	var seen []string
	path := "/api/v1/players/u-42/games?limit=1"
	for page := 0; page < 10; page++ {
		resp := ts.do(t, "GET", path, nil, bearer(tok))
		if resp.status != http.StatusOK {
			t.Fatalf("page %d: %d %v", page, resp.status, resp.body)
		}
		for _, g := range resp.body["games"].([]any) {
			seen = append(seen, g.(map[string]any)["game_id"].(string))
		}
		next, _ := resp.body["next_before"].(string)
		if private[next] {
			t.Fatalf("page %d: next_before %s is the end of a game u-7 did not play", page, next)
		}
		if next == "" {
			break
		}
		path = "/api/v1/players/u-42/games?limit=1&before=" + url.QueryEscape(next)
	}
	if len(seen) != 1 || seen[0] != "g1" {
		t.Fatalf("u-7 saw %v of u-42's games, want [g1]", seen)
	}
}

func TestAPI_UnknownPathIsJSON404(t *testing.T) {
	ts := startServer(t, testConfig(), nil)
	if r := ts.do(t, "GET", "/api/v1/nothing", nil, nil); r.status != http.StatusNotFound || errorCode(r) != "not_found" {
		t.Fatalf("unknown: %d %v", r.status, r.body)
	}
}

// wsClient is a WebSocket client of the gateway, authenticated by cookie.
type wsClient struct {
	t *testing.T
	c *websocket.Conn
}

// dialWS connects as the web client does: the session cookie, and binary
// protobuf frames (wire.SubprotocolProto).
func (ts *testServer) dialWS(ctx context.Context, t *testing.T, token string) *wsClient {
	t.Helper()
	c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(ts.url, "http")+"/ws",
		&websocket.DialOptions{HTTPHeader: http.Header{"Cookie": {"pulka_session=" + token}}, Subprotocols: []string{wire.SubprotocolProto}})
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CloseNow() })
	return &wsClient{t: t, c: c}
}

func (w *wsClient) send(ctx context.Context, m *gatewayv1.ClientFrame) {
	w.t.Helper()
	b, err := proto.Marshal(m)
	if err == nil {
		err = w.c.Write(ctx, websocket.MessageBinary, b)
	}
	if err != nil {
		w.t.Fatal(err)
	}
}

// next skips frames until one of type typ (wire.ServerFrameType).
func (w *wsClient) next(ctx context.Context, typ string) *gatewayv1.ServerFrame {
	w.t.Helper()
	for {
		_, b, err := w.c.Read(ctx)
		if err != nil {
			w.t.Fatalf("waiting for %s: %v", typ, err)
		}
		m := &gatewayv1.ServerFrame{}
		if err := proto.Unmarshal(b, m); err != nil {
			w.t.Fatal(err)
		}
		if wire.ServerFrameType(m) == typ {
			return m
		}
	}
}

func joinFrame(table string) *gatewayv1.ClientFrame {
	return &gatewayv1.ClientFrame{Frame: &gatewayv1.ClientFrame_Join{Join: &gatewayv1.Join{Table: table}}}
}

func bidFrame(table, cmd string, tricks uint32) *gatewayv1.ClientFrame {
	return &gatewayv1.ClientFrame{Frame: &gatewayv1.ClientFrame_Command{Command: &gatewayv1.TableCommand{
		Table: table, Cmd: cmd, Command: &gatewayv1.TableCommand_Bid{Bid: &tablev1.BidCommand{Tricks: tricks}}}}}
}

// TestWebSocket_ThroughGinWithTheSessionCookie plays the browser: a guest
// session from the API, then the WebSocket with the cookie, a join and a
// move that lands on the table's command stream.
func TestWebSocket_ThroughGinWithTheSessionCookie(t *testing.T) {
	ts := startServer(t, testConfig(), nil)
	guest := ts.do(t, "POST", "/api/v1/session/guest", nil, nil)
	tok := guest.body["token"].(string)
	pid := guest.body["player"].(map[string]any)["id"].(string)
	rdb := ts.redis.Client(t)
	ev := &tablev1.Event{Visibility: &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_PUBLIC},
		Event: &tablev1.Event_PlayerSeated{PlayerSeated: &tablev1.PlayerSeated{Seat: &tablev1.SeatPlayer{Seat: 3, PlayerId: pid}}}}
	data, _ := proto.Marshal(ev)
	evID, err := streams.NewPublisher(rdb).Publish(context.Background(), streams.Entry{Stream: streams.TableEvents("t1"), Data: data})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := ts.dialWS(ctx, t, tok)
	if f := c.next(ctx, wire.TypeWelcome); f.GetWelcome().GetPlayer().GetId() != pid {
		t.Fatalf("first frame %v", f)
	}
	c.send(ctx, joinFrame("t1"))
	if f := c.next(ctx, wire.TypeEvent); f.GetEvent().GetId() != evID {
		t.Fatalf("replayed %v", f)
	}
	if f := c.next(ctx, wire.TypeJoined); f.GetJoined().Seat == nil || f.GetJoined().GetSeat() != 3 {
		t.Fatalf("joined %v", f)
	}
	c.send(ctx, bidFrame("t1", "b1", 2))
	if f := c.next(ctx, wire.TypeAck); f.GetAck().GetCmd() != pid+"/b1" {
		t.Fatalf("ack %v", f)
	}
	xs, _ := rdb.XRange(ctx, streams.TableCommands("t1"), "-", "+").Result()
	var kinds []string
	for _, x := range xs {
		var cmd tablev1.Command
		_ = proto.Unmarshal([]byte(x.Values[streams.FieldData].(string)), &cmd)
		switch {
		case x.Values["presence"] == "back" && x.Values["player"] == pid:
			kinds = append(kinds, "back")
		case cmd.GetBid() != nil && cmd.GetBid().Tricks == 2 && cmd.PlayerId == pid:
			kinds = append(kinds, "bid")
		}
	}
	if strings.Join(kinds, ",") != "back,bid" {
		t.Fatalf("commands = %v", kinds)
	}
}

func TestConfig_ValidateReportsEveryProblem(t *testing.T) {
	c := testConfig()
	c.RedisAddr, c.AdminAddr, c.ShutdownTimeout = "localhost:6379", ":9090", time.Second
	if err := c.Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	c.SessionSecret = "short"
	c.AllowedOrigins = "*"
	c.TrustedProxies = "not-an-ip"
	c.WSRate = 0
	c.HTTPAddr = "nowhere"
	c.PresenceBeat = 0
	c.LobbyWindow = 0
	c.LobbyInterval = time.Minute
	c.GoneCheckInterval = 0
	err := c.Validate()
	for _, want := range []string{EnvSessionSecret, "allowed-origins", "trusted-proxies", "ws-rate", "http-addr", "presence-beat", "lobby-window", "lobby-update-interval", "gone-check-interval"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want a complaint about %s", err, want)
		}
	}
}

// A trusted-proxy list with one bad entry is refused, not silently
// shortened (every client behind the dropped proxy would be one address).
func TestConfig_TrustedProxiesRefusesABadEntryAmongGoodOnes(t *testing.T) {
	c := testConfig()
	c.RedisAddr, c.AdminAddr, c.ShutdownTimeout = "localhost:6379", ":9090", time.Second
	c.TrustedProxies = "10.0.0.1, 192.168.0.0/16"
	if err := c.Validate(); err != nil {
		t.Fatalf("valid proxies: %v", err)
	}
	c.TrustedProxies = "10.0.0.1,proxy.internal"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "proxy.internal") {
		t.Fatalf("Validate() = %v, want the bad entry refused", err)
	}
	if _, err := New(context.Background(), c, Parts{}); err == nil {
		t.Fatal("New accepted a bad trusted proxy")
	}
}

// The gone-check interval is a gateway setting, 2 s by default.
func TestConfig_GoneCheckIntervalDefault(t *testing.T) {
	var c Config
	if err := daemon.Load(&c, "gateway", nil, func(k string) string {
		if k == EnvSessionSecret {
			return strings.Repeat("s", 32)
		}
		return ""
	}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if c.GoneCheckInterval != hub.DefaultGoneCheck || hub.DefaultGoneCheck != 2*time.Second {
		t.Fatalf("gone-check-interval default %v, want 2s", c.GoneCheckInterval)
	}
}

func TestWebClient_ServedOutsideTheAPI(t *testing.T) {
	ts := startServer(t, testConfig(), nil)
	resp, err := http.Get(ts.url + "/t/some-table")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusServiceUnavailable && !webui.Built() {
		t.Fatal("client route: 503: the web client is not built into this test binary; run `make web` (make test does) first")
	}
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("client route: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}
