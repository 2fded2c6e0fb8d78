package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	"github.com/pulka/pulka/pkg/lobbyclient"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/scoringclient/scoringtest"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/services/gateway/internal/apierr"
)

// respond plays the lobby service on the real streams: every SitDown with a
// password other than "sesame" is refused as a wrong password.
func respond(ctx context.Context, t *testing.T, rdb *redis.Client) {
	pub := streams.NewPublisher(rdb)
	last := "0"
	for ctx.Err() == nil {
		res, err := rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{lobbyclient.CommandStream, last}, Block: 50 * time.Millisecond}).Result()
		if err != nil {
			continue
		}
		for _, m := range res[0].Messages {
			last = m.ID
			var cmd lobbyv1.LobbyCommand
			if err := proto.Unmarshal([]byte(m.Values[streams.FieldData].(string)), &cmd); err != nil {
				t.Errorf("undecodable command: %v", err)
				continue
			}
			r := &lobbyv1.LobbyCommandResult{CommandId: cmd.CommandId, PlayerId: cmd.PlayerId, Accepted: true,
				TableId: cmd.GetSitDown().GetTableId()}
			if cmd.GetSitDown().GetPassword() != "sesame" {
				r.Accepted, r.Reason, r.Message = false, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_WRONG_PASSWORD, "wrong password"
			}
			data, _ := proto.Marshal(r)
			if _, err := pub.Publish(ctx, streams.Entry{Stream: cmd.ReplyTo, Data: data}); err != nil && ctx.Err() == nil {
				t.Errorf("reply: %v", err)
			}
		}
	}
}

func TestLobbyAdapters_ThroughTheRealLobbyClient(t *testing.T) {
	r := redistest.Start(t)
	rdb := r.Client(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go respond(ctx, t, rdb)
	lc := lobbyclient.NewClient(rdb, lobbyclient.ClientOptions{Timeout: 5 * time.Second})
	go func() { _ = lc.Run(ctx) }()
	cmds := lobbyCommands{lc}

	sit := func(pw string) (*lobbyv1.LobbyCommandResult, error) {
		return cmds.Do(ctx, &lobbyv1.LobbyCommand{PlayerId: "u-1", Command: &lobbyv1.LobbyCommand_SitDown{
			SitDown: &lobbyv1.SitDown{TableId: "t1", Seat: 1, Password: pw}}})
	}
	res, err := sit("open")
	if err != nil || res.Accepted || res.Reason != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_WRONG_PASSWORD {
		t.Fatalf("wrong password: %v %v", res, err)
	}
	if res, err := sit("sesame"); err != nil || !res.Accepted {
		t.Fatalf("right password: %v %v", res, err)
	}

	view := lobbyView{v: lobbyclient.NewView(rdb, lobbyclient.ViewOptions{}), rdb: rdb}
	_, err = view.Fetch(ctx, "nope")
	var lr *apierr.LobbyRejection
	if !errors.As(err, &lr) || apierr.From(err).Code != "table_not_found" {
		t.Fatalf("missing table: %v", err)
	}
	summary, _ := proto.Marshal(&lobbyv1.TableSummary{TableId: "t9", Name: "Private"})
	rdb.Set(ctx, lobbyclient.SummaryKey("t9"), summary, 0)
	if got, err := view.Fetch(ctx, "t9"); err != nil || got.Name != "Private" {
		t.Fatalf("private table: %v %v", got, err)
	}
}

func TestLobbyAdapters_TimeoutIsAGatewayTimeout(t *testing.T) {
	r := redistest.Start(t)
	rdb := r.Client(t)
	lc := lobbyclient.NewClient(rdb, lobbyclient.ClientOptions{Timeout: 100 * time.Millisecond}) // no lobby answers
	_, err := lobbyCommands{lc}.Do(context.Background(), &lobbyv1.LobbyCommand{PlayerId: "u-1",
		Command: &lobbyv1.LobbyCommand_StandUp{StandUp: &lobbyv1.StandUp{TableId: "t1"}}})
	if p := apierr.From(err); p.Code != "timeout" || p.Status != 504 {
		t.Fatalf("err = %v → %d %s, want 504 timeout", err, p.Status, p.Code)
	}
}

func TestSheetsAdapter_AFinishedGameComesBackWithItsSheet(t *testing.T) {
	r := redistest.Start(t)
	rdb := r.Client(t)
	ctx := context.Background()
	sheet, _ := proto.Marshal(&scoringv1.Sheet{TableId: "t1", GameId: "g1", CurrentHand: 23})
	standings, _ := proto.Marshal(&scoringv1.FinalStandings{GameId: "g1", Standings: []*scoringv1.Standing{{Place: 1, PlayerId: "u-1"}}})
	ended := time.Unix(1_700_000_000, 0)
	if err := scoringtest.Archive(ctx, rdb, scoringtest.Game{TableID: "t1", GameID: "g1",
		EndedAt: ended, Sheet: sheet, Standings: standings, PlayerIDs: []string{"u-1", "u-2"}}); err != nil {
		t.Fatal(err)
	}
	gs, err := sheets{scoringclient.NewReader(rdb)}.History(ctx, "u-2", time.Time{}, 10)
	if err != nil || len(gs) != 1 {
		t.Fatalf("history = %v, %v", gs, err)
	}
	g := gs[0]
	if g.GameID != "g1" || g.TableID != "t1" || !g.EndedAt.Equal(ended) || g.Sheet.GetCurrentHand() != 23 || g.Standings.GetStandings()[0].GetPlayerId() != "u-1" {
		t.Fatalf("game = %+v", g)
	}
	if _, err := (sheets{scoringclient.NewReader(rdb)}).History(ctx, "bad{id}", time.Time{}, 10); apierr.From(err).Code != "bad_request" {
		t.Fatalf("bad id: %v", err)
	}
}
