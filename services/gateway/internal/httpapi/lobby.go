package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/names"
	"github.com/pulka/pulka/pkg/telemetry"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/apierr"
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
// (true/false), max_stake (coins): wire.LobbyFilter's names, which the
// WebSocket's lobby watch takes too.
func filterFromQuery(c *gin.Context) (*lobbyv1.TableFilter, error) {
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
	lf := wire.LobbyFilter{Game: c.Query("game"), Variant: c.Query("variant"), Status: c.Query("status")}
	var err error
	if lf.FreeSeat, err = boolean("free_seat"); err != nil {
		return nil, err
	}
	if lf.FreeOnly, err = boolean("free_only"); err != nil {
		return nil, err
	}
	if lf.WithoutPassword, err = boolean("without_password"); err != nil {
		return nil, err
	}
	if v := c.Query("max_stake"); v != "" {
		if lf.MaxStake, err = strconv.ParseInt(v, 10, 64); err != nil || lf.MaxStake < 0 {
			return nil, apierr.BadRequestf("max_stake=%q is not a number of coins", v)
		}
	}
	f, err := lf.Proto()
	var we *wire.Error
	if errors.As(err, &we) {
		return nil, apierr.BadRequestf("%s", we.Message)
	}
	return f, err
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
	// A page costs the tables up to its end, not the whole list.
	tables, more := a.deps.View.Page(f, offset, limit)
	resp := &lobbyv1.ListTablesResponse{Tables: tables}
	if more {
		resp.NextPageToken = strconv.Itoa(offset + len(tables))
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
	if err := names.Check(req.Name); err != nil {
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
		Fail(c, &apierr.LobbyRejection{Reason: res.GetReason(), Message: res.GetMessage(), RetryAfter: res.GetRetryAfter().AsDuration()})
		return
	}
	c.JSON(okStatus, gin.H{"table_id": res.GetTableId(), "command_id": res.GetCommandId()})
}
