package wsclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/wire"
)

// Session is a signed session token and who it is for, as the gateway's
// session endpoints answer.
type Session struct {
	Token     string      `json:"token"`
	ExpiresAt time.Time   `json:"expires_at"`
	Player    wire.Player `json:"player"`
}

// APIError is an error answer of the HTTP API: its status and the stable
// code (docs/protocol.md, "Error codes").
type APIError struct {
	Status  int
	Code    string
	Message string
	// RetryAfter is the Retry-After of a 429, zero otherwise.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	return fmt.Sprintf("gateway: %d %s: %s", e.Status, e.Code, e.Message)
}

// IsCode reports whether err is an *APIError or a WebSocket *wire.Error
// with the given code.
func IsCode(err error, code string) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Code == code
	}
	return wire.CodeOf(err) == code
}

// API calls the gateway's HTTP API at Server ("http://localhost:8080") as
// the player of Token (empty for the session calls).
type API struct {
	Server string
	Token  string
	// HTTP is the client to use; nil means a client with a 10 s timeout.
	HTTP *http.Client
}

// client is a.HTTP, or one with a timeout on the default transport (whose
// idle pool reuses connections across API values).
func (a *API) client() *http.Client {
	if a.HTTP != nil {
		return a.HTTP
	}
	return &http.Client{Timeout: 10 * time.Second}
}

// Guest starts a guest session.
func (a *API) Guest(ctx context.Context) (Session, error) {
	var s Session
	err := a.do(ctx, http.MethodPost, "/api/v1/session/guest", nil, "", &s)
	return s, err
}

// Register creates an account and starts its session.
func (a *API) Register(ctx context.Context, username, password string) (Session, error) {
	var s Session
	err := a.do(ctx, http.MethodPost, "/api/v1/register", map[string]string{"username": username, "password": password}, "", &s)
	return s, err
}

// Login starts a session of an account.
func (a *API) Login(ctx context.Context, username, password string) (Session, error) {
	var s Session
	err := a.do(ctx, http.MethodPost, "/api/v1/login", map[string]string{"username": username, "password": password}, "", &s)
	return s, err
}

// CreateTable is what POST /api/v1/tables takes.
type CreateTable struct {
	Name     string
	Settings *lobbyv1.TableSettings
	Password string
	// SitDown seats the creator at once.
	SitDown bool
}

// ClassicSettings are the settings of a friendly, listed classic table
// (standard variant, khishti −200, premia and moshla).
func ClassicSettings() *lobbyv1.TableSettings {
	return &lobbyv1.TableSettings{
		Game: lobbyv1.Game_GAME_CLASSIC, ClassicVariant: lobbyv1.ClassicVariant_CLASSIC_VARIANT_STANDARD,
		Khishti: lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_200, Premia: true, Moshla: true,
		Visibility: lobbyv1.TableVisibility_TABLE_VISIBILITY_PUBLIC,
		Stake:      &lobbyv1.Stake{Kind: &lobbyv1.Stake_Free{Free: &lobbyv1.FreeStake{}}},
	}
}

// JapaneseSettings are the settings of a friendly, listed Japanese table
// playing to target (0: the default 21).
func JapaneseSettings(target uint32) *lobbyv1.TableSettings {
	return &lobbyv1.TableSettings{
		Game: lobbyv1.Game_GAME_JAPANESE, JapaneseTarget: target,
		Visibility: lobbyv1.TableVisibility_TABLE_VISIBILITY_PUBLIC,
		Stake:      &lobbyv1.Stake{Kind: &lobbyv1.Stake_Free{Free: &lobbyv1.FreeStake{}}},
	}
}

// CreateTable creates a table and returns its id. key, when not empty, is
// the Idempotency-Key: a retried request with the same key is the same
// command.
func (a *API) CreateTable(ctx context.Context, req CreateTable, key string) (string, error) {
	settings, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(req.Settings)
	if err != nil {
		return "", fmt.Errorf("wsclient: settings: %w", err)
	}
	body := struct {
		Name     string          `json:"name"`
		Settings json.RawMessage `json:"settings"`
		Password string          `json:"password,omitempty"`
		SitDown  bool            `json:"sit_down"`
	}{req.Name, settings, req.Password, req.SitDown}
	var out struct {
		TableID string `json:"table_id"`
	}
	if err := a.do(ctx, http.MethodPost, "/api/v1/tables", body, key, &out); err != nil {
		return "", err
	}
	return out.TableID, nil
}

// Sit takes seat (0-based) at a table.
func (a *API) Sit(ctx context.Context, table string, seat int, password, key string) error {
	body := map[string]any{"seat": seat}
	if password != "" {
		body["password"] = password
	}
	return a.do(ctx, http.MethodPost, "/api/v1/tables/"+url.PathEscape(table)+"/sit", body, key, nil)
}

// Balance is the Domino Coin balance of the session's account. A wallet not
// opened yet answers an *APIError with Code "wallet_opening" (503): the
// gateway opens it when the account registers, asynchronously.
func (a *API) Balance(ctx context.Context) (*walletv1.Balance, error) {
	var raw json.RawMessage
	if err := a.do(ctx, http.MethodGet, "/api/v1/me/wallet", nil, "", &raw); err != nil {
		return nil, err
	}
	var b walletv1.Balance
	if err := protojson.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("wsclient: balance: %w", err)
	}
	return &b, nil
}

// FillBots fills the empty seats of a classic table with bots (host only).
func (a *API) FillBots(ctx context.Context, table, key string) error {
	return a.do(ctx, http.MethodPost, "/api/v1/tables/"+url.PathEscape(table)+"/bots", nil, key, nil)
}

// Table returns a table's summary.
func (a *API) Table(ctx context.Context, table string) (*lobbyv1.TableSummary, error) {
	var raw json.RawMessage
	if err := a.do(ctx, http.MethodGet, "/api/v1/tables/"+url.PathEscape(table), nil, "", &raw); err != nil {
		return nil, err
	}
	ts := &lobbyv1.TableSummary{}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(raw, ts); err != nil {
		return nil, fmt.Errorf("wsclient: table summary: %w", err)
	}
	return ts, nil
}

// FinishedGame is one of a player's finished games, with its final sheet.
type FinishedGame struct {
	GameID  string
	TableID string
	Sheet   *scoringv1.Sheet
	// Standings are the game's final standings (empty when the answer has
	// none).
	Standings *scoringv1.FinalStandings
}

// FinishedGames returns the player's finished games, newest first: at most
// limit of them (0: the gateway's default).
func (a *API) FinishedGames(ctx context.Context, limit int) ([]FinishedGame, error) {
	path := "/api/v1/me/games"
	if limit > 0 {
		path += "?limit=" + strconv.Itoa(limit)
	}
	var out struct {
		Games []struct {
			GameID    string          `json:"game_id"`
			TableID   string          `json:"table_id"`
			Sheet     json.RawMessage `json:"sheet"`
			Standings json.RawMessage `json:"standings"`
		} `json:"games"`
	}
	if err := a.do(ctx, http.MethodGet, path, nil, "", &out); err != nil {
		return nil, err
	}
	in := protojson.UnmarshalOptions{DiscardUnknown: true}
	games := make([]FinishedGame, 0, len(out.Games))
	for _, g := range out.Games {
		fg := FinishedGame{GameID: g.GameID, TableID: g.TableID, Sheet: &scoringv1.Sheet{}, Standings: &scoringv1.FinalStandings{}}
		if err := in.Unmarshal(g.Sheet, fg.Sheet); err != nil {
			return nil, fmt.Errorf("wsclient: the sheet of game %s: %w", g.GameID, err)
		}
		if len(g.Standings) > 0 && string(g.Standings) != "null" {
			if err := in.Unmarshal(g.Standings, fg.Standings); err != nil {
				return nil, fmt.Errorf("wsclient: the standings of game %s: %w", g.GameID, err)
			}
		}
		games = append(games, fg)
	}
	return games, nil
}

// do sends one request; in, when not nil, is the JSON body; out, when not
// nil, receives the JSON answer.
func (a *API) do(ctx context.Context, method, path string, in any, key string, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("wsclient: %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(a.Server, "/")+path, body)
	if err != nil {
		return fmt.Errorf("wsclient: %s %s: %w", method, path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.Token != "" {
		req.Header.Set("Authorization", "Bearer "+a.Token)
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := a.client().Do(req)
	if err != nil {
		return fmt.Errorf("wsclient: %s %s: %w", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("wsclient: %s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		return apiError(resp, data)
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("wsclient: %s %s: answer: %w", method, path, err)
	}
	return nil
}

func apiError(resp *http.Response, data []byte) error {
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	ae := &APIError{Status: resp.StatusCode}
	if json.Unmarshal(data, &e) == nil && e.Error.Code != "" {
		ae.Code, ae.Message = e.Error.Code, e.Error.Message
	} else {
		ae.Code, ae.Message = "http_"+strconv.Itoa(resp.StatusCode), strings.TrimSpace(string(data))
	}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
		ae.RetryAfter = time.Duration(s) * time.Second
	}
	return ae
}
