package runner

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/walletclient"
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
