package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/telemetry"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/apierr"
	"github.com/pulka/pulka/services/gateway/internal/auth"
)

// Page sizes of the table list.
const (
	DefaultTablePage = 50
	MaxTablePage     = 200
)

// protoJSON writes a contract message as the WebSocket does.
func protoJSON(c *gin.Context, status int, m proto.Message) {
	b, err := wire.ProtoJSON(m)
	if err != nil {
		Fail(c, err)
		return
	}
	c.Data(status, "application/json; charset=utf-8", b)
}

// filterFromQuery reads a TableFilter from query parameters:
// game=classic|japanese, variant=standard|nines,
// status=waiting|playing|finished, free_seat, free_only, without_password
// (true/false), max_stake (coins).
func filterFromQuery(c *gin.Context) (*lobbyv1.TableFilter, error) {
	f := &lobbyv1.TableFilter{}
	enum := func(name string, values map[string]int32) (int32, error) {
		v := strings.ToLower(c.Query(name))
		if v == "" {
			return 0, nil
		}
		n, ok := values[v]
		if !ok {
			return 0, apierr.BadRequestf("%s=%q is not one of the allowed values", name, v)
		}
		return n, nil
	}
	boolean := func(name string) (bool, error) {
		v := c.Query(name)
		if v == "" {
			return false, nil
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return false, apierr.BadRequestf("%s=%q is not true or false", name, v)
		}
		return b, nil
	}
	var err error
	var n int32
	if n, err = enum("game", map[string]int32{"classic": int32(lobbyv1.Game_GAME_CLASSIC), "japanese": int32(lobbyv1.Game_GAME_JAPANESE)}); err != nil {
		return nil, err
	}
	f.Game = lobbyv1.Game(n)
	if n, err = enum("variant", map[string]int32{"standard": int32(lobbyv1.ClassicVariant_CLASSIC_VARIANT_STANDARD), "nines": int32(lobbyv1.ClassicVariant_CLASSIC_VARIANT_NINES)}); err != nil {
		return nil, err
	}
	f.ClassicVariant = lobbyv1.ClassicVariant(n)
	if n, err = enum("status", map[string]int32{"waiting": int32(lobbyv1.TableStatus_TABLE_STATUS_WAITING),
		"playing": int32(lobbyv1.TableStatus_TABLE_STATUS_PLAYING), "finished": int32(lobbyv1.TableStatus_TABLE_STATUS_FINISHED)}); err != nil {
		return nil, err
	}
	f.Status = lobbyv1.TableStatus(n)
	if f.HasFreeSeat, err = boolean("free_seat"); err != nil {
		return nil, err
	}
	if f.FreeOnly, err = boolean("free_only"); err != nil {
		return nil, err
	}
	if f.WithoutPassword, err = boolean("without_password"); err != nil {
		return nil, err
	}
	if v := c.Query("max_stake"); v != "" {
		if f.MaxStake, err = strconv.ParseInt(v, 10, 64); err != nil || f.MaxStake < 0 {
			return nil, apierr.BadRequestf("max_stake=%q is not a number of coins", v)
		}
	}
	return f, nil
}

// listTables answers a ListTablesResponse, newest first; page_token is the
// offset of the page in the (cached) list.
func (a *API) listTables(c *gin.Context) {
	if a.deps.View == nil {
		Fail(c, apierr.ErrUnavailable)
		return
	}
	f, err := filterFromQuery(c)
	if err != nil {
		Fail(c, err)
		return
	}
	limit, offset := DefaultTablePage, 0
	if v := c.Query("page_size"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 1 {
			Fail(c, apierr.BadRequestf("page_size=%q is not a positive number", v))
			return
		}
		limit = min(limit, MaxTablePage)
	}
	if v := c.Query("page_token"); v != "" {
		if offset, err = strconv.Atoi(v); err != nil || offset < 0 {
			Fail(c, apierr.BadRequestf("page_token=%q is not one this API gave", v))
			return
		}
	}
	version := a.deps.View.Version()
	all := a.deps.View.List(f)
	resp := &lobbyv1.ListTablesResponse{}
	if offset < len(all) {
		end := min(offset+limit, len(all))
		resp.Tables = all[offset:end]
		if end < len(all) {
			resp.NextPageToken = strconv.Itoa(end)
		}
	}
	c.Header("X-Lobby-Version", strconv.FormatUint(version, 10))
	protoJSON(c, http.StatusOK, resp)
}

func (a *API) tableID(c *gin.Context) (string, bool) {
	id := c.Param("id")
	if !wire.ValidTableID(id) {
		Fail(c, apierr.BadRequestf("%q is not a table id", id))
		return "", false
	}
	return id, true
}

// getTable reads one table, private ones included (the id is the link).
func (a *API) getTable(c *gin.Context) {
	id, ok := a.tableID(c)
	if !ok {
		return
	}
	if a.deps.View == nil {
		Fail(c, apierr.ErrUnavailable)
		return
	}
	t, err := a.deps.View.Fetch(c.Request.Context(), id)
	if err != nil {
		Fail(c, err)
		return
	}
	protoJSON(c, http.StatusOK, t)
}

type createRequest struct {
	Name string `json:"name"`
	// Settings is a pulka.lobby.v1.TableSettings in its JSON form.
	Settings json.RawMessage `json:"settings"`
	Password string          `json:"password"`
	SitDown  bool            `json:"sit_down"`
}

func (a *API) createTable(c *gin.Context) {
	var req createRequest
	if err := c.ShouldBindJSON(&req); err != nil {
		Fail(c, apierr.BadRequestf("send JSON {\"name\":…,\"settings\":{…},\"password\":…,\"sit_down\":…}"))
		return
	}
	if err := auth.ValidName(req.Name); err != nil {
		Fail(c, apierr.BadRequestf("name: %v", err))
		return
	}
	settings := &lobbyv1.TableSettings{}
	if len(req.Settings) > 0 {
		if err := protojson.Unmarshal(req.Settings, settings); err != nil {
			Fail(c, apierr.BadRequestf("settings: %v", err))
			return
		}
	}
	a.doLobby(c, http.StatusCreated, &lobbyv1.LobbyCommand{Command: &lobbyv1.LobbyCommand_CreateTable{CreateTable: &lobbyv1.CreateTable{
		Name: req.Name, Settings: settings, Password: req.Password, SitDown: req.SitDown}}})
}

type sitRequest struct {
	Seat     *uint32 `json:"seat"`
	Password string  `json:"password"`
}

func (a *API) sit(c *gin.Context) {
	id, ok := a.tableID(c)
	if !ok {
		return
	}
	var req sitRequest
	if err := c.ShouldBindJSON(&req); err != nil || req.Seat == nil {
		Fail(c, apierr.BadRequestf("send JSON {\"seat\":0..3,\"password\":…}"))
		return
	}
	a.doLobby(c, http.StatusOK, &lobbyv1.LobbyCommand{Command: &lobbyv1.LobbyCommand_SitDown{SitDown: &lobbyv1.SitDown{
		TableId: id, Seat: *req.Seat, Password: req.Password}}})
}

func (a *API) stand(c *gin.Context) {
	if id, ok := a.tableID(c); ok {
		a.doLobby(c, http.StatusOK, &lobbyv1.LobbyCommand{Command: &lobbyv1.LobbyCommand_StandUp{StandUp: &lobbyv1.StandUp{TableId: id}}})
	}
}

func (a *API) leave(c *gin.Context) {
	if id, ok := a.tableID(c); ok {
		a.doLobby(c, http.StatusOK, &lobbyv1.LobbyCommand{Command: &lobbyv1.LobbyCommand_LeaveTable{LeaveTable: &lobbyv1.LeaveTable{TableId: id}}})
	}
}

func (a *API) fillWithBots(c *gin.Context) {
	if id, ok := a.tableID(c); ok {
		a.doLobby(c, http.StatusOK, &lobbyv1.LobbyCommand{Command: &lobbyv1.LobbyCommand_FillWithBots{FillWithBots: &lobbyv1.FillWithBots{TableId: id}}})
	}
}

// doLobby sends cmd for the session's player and answers with the result.
// An Idempotency-Key header makes a retried request the same command.
func (a *API) doLobby(c *gin.Context, okStatus int, cmd *lobbyv1.LobbyCommand) {
	cl := claimsOf(c)
	key := c.GetHeader("Idempotency-Key")
	if key == "" {
		key = a.deps.NewID()
	} else if !wire.ValidTableID(key) { // the ids' rules: short printable ASCII, no {, }, /
		Fail(c, apierr.BadRequestf("Idempotency-Key: at most %d bytes of printable ASCII without {, } and /", wire.MaxIDLen))
		return
	}
	cmd.CommandId = wire.CommandID(cl.PlayerID, key)
	cmd.PlayerId = cl.PlayerID
	// The lobby seats players under this name; without it every person
	// would show as a nameless seat on tables and sheets.
	cmd.DisplayName = cl.Name
	ctx, cancel := a.lobbyCtx(c)
	defer cancel()
	cmd.Trace = telemetry.TraceContextFrom(ctx)
	res, err := a.deps.Lobby.Do(ctx, cmd)
	if err != nil {
		Fail(c, err)
		return
	}
	if !res.GetAccepted() {
		Fail(c, &apierr.LobbyRejection{Reason: res.GetReason(), Message: res.GetMessage()})
		return
	}
	c.JSON(okStatus, gin.H{"table_id": res.GetTableId(), "command_id": res.GetCommandId()})
}
