package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/apierr"
	"github.com/pulka/pulka/services/gateway/internal/ports"
)

// Game is one finished game in a player's history.
type Game struct {
	GameID    string          `json:"game_id"`
	TableID   string          `json:"table_id"`
	EndedAt   time.Time       `json:"ended_at"`
	Sheet     json.RawMessage `json:"sheet,omitempty"`     // pulka.scoring.v1.Sheet
	Standings json.RawMessage `json:"standings,omitempty"` // pulka.scoring.v1.FinalStandings
}

// Games is a page of a player's history, newest first. NextBefore is the
// `before` of the next page; empty on the last one.
type Games struct {
	Games      []Game `json:"games"`
	NextBefore string `json:"next_before,omitempty"`
}

func (a *API) myGames(c *gin.Context) { a.games(c, claimsOf(c).PlayerID, "") }

// playerGames answers another player's history as far as the asker shared
// it: only the games both played in (a game's sheet is no secret to the
// people at its table; the rest of someone's history is nobody else's
// business, its end times included: the store filters before paging, and
// the cursor never points at a game the asker did not play). A page may
// hold fewer than limit games and still have a next page.
func (a *API) playerGames(c *gin.Context) {
	id := c.Param("id")
	if !wire.ValidTableID(id) { // the same id rules
		Fail(c, apierr.BadRequestf("%q is not a player id", id))
		return
	}
	viewer := claimsOf(c).PlayerID
	if id == viewer {
		viewer = ""
	}
	a.games(c, id, viewer)
}

// games answers a player's finished games: ?before=<RFC 3339>&limit=1..100;
// with a viewer other than the player, only the games the viewer played in.
func (a *API) games(c *gin.Context, player, viewer string) {
	if a.deps.Sheets == nil {
		Fail(c, apierr.ErrUnavailable)
		return
	}
	var before time.Time
	if v := c.Query("before"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			Fail(c, apierr.BadRequestf("before=%q is not an RFC 3339 time", v))
			return
		}
		before = t
	}
	limit := 20
	if v := c.Query("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			Fail(c, apierr.BadRequestf("limit=%q is not 1..100", v))
			return
		}
		limit = n
	}
	var gs []ports.FinishedGame
	var next time.Time
	var err error
	if viewer == "" {
		gs, err = a.deps.Sheets.History(c.Request.Context(), player, before, limit)
		if err == nil && len(gs) == limit {
			next = gs[len(gs)-1].EndedAt
		}
	} else {
		gs, next, err = a.deps.Sheets.Shared(c.Request.Context(), player, viewer, before, limit)
	}
	if err != nil {
		Fail(c, err)
		return
	}
	out := Games{Games: make([]Game, 0, len(gs))}
	for _, g := range gs {
		item := Game{GameID: g.GameID, TableID: g.TableID, EndedAt: g.EndedAt.UTC()}
		if g.Sheet != nil {
			if item.Sheet, err = wire.ProtoJSON(g.Sheet); err != nil {
				Fail(c, err)
				return
			}
		}
		if g.Standings != nil {
			if item.Standings, err = wire.ProtoJSON(g.Standings); err != nil {
				Fail(c, err)
				return
			}
		}
		out.Games = append(out.Games, item)
	}
	if !next.IsZero() {
		out.NextBefore = next.UTC().Format(time.RFC3339Nano)
	}
	c.JSON(http.StatusOK, out)
}
