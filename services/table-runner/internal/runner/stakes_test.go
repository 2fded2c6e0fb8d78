package runner

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/pkg/walletclient"
	"github.com/pulka/pulka/services/table-runner/internal/table"
)

func withStake(ts *lobbyv1.TableStarted, coins int64) *lobbyv1.TableStarted {
	ts.Settings.Stake = &lobbyv1.Stake{Kind: &lobbyv1.Stake_Coins{Coins: &lobbyv1.CoinStake{Amount: coins}}}
	return ts
}

// walletCommands reads every wallet command shard.
func walletCommands(t *testing.T, rdb redis.UniversalClient) []*walletv1.WalletCommand {
	t.Helper()
	var out []*walletv1.WalletCommand
	for _, s := range walletclient.CommandStreams() {
		msgs, err := rdb.XRange(context.Background(), s, "-", "+").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			c := &walletv1.WalletCommand{}
			if err := proto.Unmarshal([]byte(m.Values[streams.FieldData].(string)), c); err != nil {
				t.Fatal(err)
			}
			if walletclient.Stream(c) != s {
				t.Errorf("command %s on %s, not its shard %s", c.GetCommandId(), s, walletclient.Stream(c))
			}
			out = append(out, c)
		}
	}
	return out
}

func forfeits(cmds []*walletv1.WalletCommand) map[string]string {
	out := map[string]string{}
	for _, c := range cmds {
		if f := c.GetForfeitStake(); f != nil {
			out[f.GetAccountId()] = f.GetTableId()
		}
	}
	return out
}

// A classic player who leaves a running coin game forfeits the stake; a
// restored table still knows its stake (from its start); a free table
// sends the wallet nothing.
func TestStakes_AClassicLeaverForfeitsAtACoinTableOnly(t *testing.T) {
	_, rdb := startRedis(t)
	r := startRunner(t, rdb, testOptions("r1"))
	place(t, rdb, withStake(classicStart("coin", 7, "alice", "bob", "carol"), 100), "r1")
	place(t, rdb, classicStart("free", 8, "dave", "erin"), "r1")
	waitEvent(t, rdb, "coin", "0", 5*time.Second, "the coin game", isKind("game_started"))
	waitEvent(t, rdb, "free", "0", 5*time.Second, "the free game", isKind("game_started"))

	send(t, rdb, "coin", "alice", &tablev1.Command{Command: &tablev1.Command_Leave{Leave: &tablev1.LeaveCommand{}}})
	send(t, rdb, "free", "dave", &tablev1.Command{Command: &tablev1.Command_Leave{Leave: &tablev1.LeaveCommand{}}})
	waitEvent(t, rdb, "free", "0", 5*time.Second, "dave left", isKind("player_left"))
	waitFor(t, 5*time.Second, "alice's forfeit", func() bool { return forfeits(walletCommands(t, rdb))["alice"] == "coin" })

	// Another runner takes the table over: restored from its log, it
	// learns the stake from the start.
	r.stop()
	startRunner(t, rdb, testOptions("r1"))
	send(t, rdb, "coin", "bob", &tablev1.Command{Command: &tablev1.Command_Resign{Resign: &tablev1.ResignCommand{}}})
	waitFor(t, 10*time.Second, "bob's forfeit after the restore", func() bool { return forfeits(walletCommands(t, rdb))["bob"] == "coin" })

	cmds := walletCommands(t, rdb)
	if f := forfeits(cmds); len(f) != 2 || len(cmds) != 2 {
		t.Fatalf("wallet commands %v; want the forfeits of alice and bob only (none for the free table, each once)", cmds)
	}
}

// A Japanese match lost by resignation forfeits the loser's stake, so the
// opponent takes the pot.
func TestStakes_AJapaneseResignationForfeitsTheLoser(t *testing.T) {
	_, rdb := startRedis(t)
	startRunner(t, rdb, testOptions("r1"))
	place(t, rdb, withStake(japaneseStart("j1", 5, 11, "alice", "bob"), 500), "r1")
	waitEvent(t, rdb, "j1", "0", 5*time.Second, "the match", isKind("game_started"))
	send(t, rdb, "j1", "bob", &tablev1.Command{Command: &tablev1.Command_Resign{Resign: &tablev1.ResignCommand{}}})
	waitEvent(t, rdb, "j1", "0", 5*time.Second, "the end", isKind("game_ended"))
	waitFor(t, 5*time.Second, "bob's forfeit", func() bool { return forfeits(walletCommands(t, rdb))["bob"] == "j1" })
	time.Sleep(100 * time.Millisecond)
	if f := forfeits(walletCommands(t, rdb)); len(f) != 1 {
		t.Fatalf("forfeits %v; want bob's only", f)
	}
}

// A table the runner gives up (its start cannot become a game) releases
// every stake held at it.
func TestStakes_AnAbandonedTableReleasesItsStakes(t *testing.T) {
	_, rdb := startRedis(t)
	startRunner(t, rdb, testOptions("r1"))
	ts := withStake(classicStart("bad", 3, "alice"), 50)
	ts.Settings.Khishti = 99
	place(t, rdb, ts, "r1")
	waitFor(t, 5*time.Second, "the table's release", func() bool {
		for _, c := range walletCommands(t, rdb) {
			if c.GetReleaseTable().GetTableId() == "bad" {
				return true
			}
		}
		return false
	})
}

// The wallet's commands of each event, by the rule that makes them (pure:
// no Redis).
func TestWalletCommands_Rules(t *testing.T) {
	actorOf := func(ts *lobbyv1.TableStarted) *actor {
		set, err := tablesettings.FromProto(ts.GetSettings())
		if err != nil {
			t.Fatal(err)
		}
		seats := make([]table.SeatInfo, len(ts.GetSeats()))
		for i, s := range ts.GetSeats() {
			seats[i] = table.SeatInfo{PlayerID: s.GetPlayerId(), Name: s.GetDisplayName(), Bot: s.GetBot()}
		}
		tb, _, err := table.New(ts.GetTableId(), ts.GetGameId(), set, seats, time.Now(), newEntropy())
		if err != nil {
			t.Fatal(err)
		}
		return &actor{s: &slot{id: ts.GetTableId()}, t: tb, stake: stakeOf(ts)}
	}
	classicCoin := actorOf(withStake(classicStart("c", 1, "alice", "bob"), 100))
	classicFree := actorOf(classicStart("f", 2, "alice", "bob"))
	japaneseCoin := actorOf(withStake(japaneseStart("j", 3, 11, "alice", "bob"), 500))
	left := func(player string) *tablev1.Event {
		return &tablev1.Event{GameId: "g", Seq: 7, Event: &tablev1.Event_PlayerLeft{PlayerLeft: &tablev1.PlayerLeft{Seat: 1, PlayerId: player}}}
	}
	ended := func(r tablev1.GameEndReason) *tablev1.Event {
		return &tablev1.Event{GameId: "g", Seq: 9, Event: &tablev1.Event_GameEnded{GameEnded: &tablev1.GameEnded{Reason: r,
			Placings: []*tablev1.Placing{{Place: 1, Seat: 0, PlayerId: "alice"}, {Place: 2, Seat: 1, PlayerId: "bob"}}}}}
	}
	forfeit := func(id, player, tableID string) string { return id + " forfeit " + player + "@" + tableID }
	for _, tc := range []struct {
		rule string
		a    *actor
		ev   *tablev1.Event
		want []string
	}{
		{"a classic leaver forfeits the stake", classicCoin, left("bob"), []string{forfeit("table-runner:forfeit:g:7", "bob", "c")}},
		{"a free table sends the wallet nothing", classicFree, left("bob"), nil},
		{"a seat without a player forfeits nothing", classicCoin, left(""), nil},
		{"a classic game's end is settled by scoring's standings", classicCoin, ended(tablev1.GameEndReason_GAME_END_REASON_COMPLETED), nil},
		{"a Japanese leave is forfeited through the match's end", japaneseCoin, left("bob"), nil},
		{"a Japanese resignation forfeits the loser's stake", japaneseCoin, ended(tablev1.GameEndReason_GAME_END_REASON_RESIGNED), []string{forfeit("table-runner:forfeit:g:9:1", "bob", "j")}},
		{"a Japanese expired grace forfeits the loser's stake", japaneseCoin, ended(tablev1.GameEndReason_GAME_END_REASON_FORFEITED), []string{forfeit("table-runner:forfeit:g:9:1", "bob", "j")}},
		{"a Japanese match played out is settled by the standings", japaneseCoin, ended(tablev1.GameEndReason_GAME_END_REASON_COMPLETED), nil},
		{"a game the platform aborted gives every stake back", classicCoin, ended(tablev1.GameEndReason_GAME_END_REASON_ABORTED), []string{"table-runner:release:g release c"}},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			var got []string
			for _, c := range tc.a.walletCommands(tc.ev) {
				switch x := c.GetCommand().(type) {
				case *walletv1.WalletCommand_ForfeitStake:
					got = append(got, forfeit(c.GetCommandId(), x.ForfeitStake.GetAccountId(), x.ForfeitStake.GetTableId()))
				case *walletv1.WalletCommand_ReleaseTable:
					got = append(got, c.GetCommandId()+" release "+x.ReleaseTable.GetTableId())
				default:
					got = append(got, c.String())
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}
