package server

import (
	"context"
	"errors"
	"fmt"
	"time"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/lobbyclient"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/services/gateway/internal/apierr"
	"github.com/pulka/pulka/services/gateway/internal/ports"
)

// lobbyCommands adapts lobbyclient.Client, translating its errors into the
// gateway's.
type lobbyCommands struct{ c *lobbyclient.Client }

func (l lobbyCommands) Do(ctx context.Context, cmd *lobbyv1.LobbyCommand) (*lobbyv1.LobbyCommandResult, error) {
	res, err := l.c.Do(ctx, cmd)
	if errors.Is(err, lobbyclient.ErrTimeout) {
		return nil, fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
	}
	return res, err
}

// lobbyView adapts lobbyclient.View (and Fetch for private tables).
type lobbyView struct {
	v   *lobbyclient.View
	rdb redis.UniversalClient
}

func (l lobbyView) List(f *lobbyv1.TableFilter) []*lobbyv1.TableSummary { return l.v.List(f) }
func (l lobbyView) Get(id string) (*lobbyv1.TableSummary, bool)         { return l.v.Get(id) }
func (l lobbyView) Page(f *lobbyv1.TableFilter, offset, limit int) ([]*lobbyv1.TableSummary, bool) {
	return l.v.Page(f, offset, limit)
}
func (l lobbyView) Version() uint64          { return l.v.Version() }
func (l lobbyView) Changed() <-chan struct{} { return l.v.Changed() }

func (l lobbyView) Fetch(ctx context.Context, id string) (*lobbyv1.TableSummary, error) {
	t, err := lobbyclient.Fetch(ctx, l.rdb, id)
	if errors.Is(err, lobbyclient.ErrTableNotFound) {
		return nil, &apierr.LobbyRejection{Reason: lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TABLE_NOT_FOUND, Message: "no such table"}
	}
	return t, err
}

func (l lobbyView) Since(after uint64) ([]ports.LobbyChange, uint64, bool) {
	chs, v, complete := l.v.Since(after)
	out := make([]ports.LobbyChange, len(chs))
	for i, c := range chs {
		out[i] = ports.LobbyChange{Version: c.Version, Upserted: c.Upserted, Removed: c.Removed}
	}
	return out, v, complete
}

// sheets adapts scoringclient.Reader.
type sheets struct{ r *scoringclient.Reader }

func (s sheets) History(ctx context.Context, player string, before time.Time, limit int) ([]ports.FinishedGame, error) {
	gs, err := s.r.History(ctx, player, scoringclient.Page{Before: before, Limit: limit})
	return finished(player, gs, err)
}

func (s sheets) Shared(ctx context.Context, player, viewer string, before time.Time, limit int) ([]ports.FinishedGame, time.Time, error) {
	gs, next, err := s.r.SharedHistory(ctx, player, viewer, scoringclient.Page{Before: before, Limit: limit})
	out, err := finished(player, gs, err)
	return out, next, err
}

func finished(player string, gs []scoringclient.FinishedGame, err error) ([]ports.FinishedGame, error) {
	if errors.Is(err, scoringclient.ErrBadID) {
		return nil, apierr.BadRequestf("%q is not a player id", player)
	}
	if err != nil {
		return nil, err
	}
	out := make([]ports.FinishedGame, len(gs))
	for i, g := range gs {
		out[i] = ports.FinishedGame{GameID: g.GameID, TableID: g.TableID, EndedAt: g.EndedAt, Sheet: g.Sheet, Standings: g.Standings}
	}
	return out, nil
}
