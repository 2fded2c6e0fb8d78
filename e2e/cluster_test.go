package e2e

import (
	"context"
	"testing"
	"time"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/tools/stack/stacktest"
)

// startClusterStack starts a stack of two runners on a Redis Cluster of
// three masters, each with a replica (six redis-servers): every key of a
// table, of the lobby, of the wallet and of scoring lands on whichever
// master its slot says, so a script or transaction across slots fails.
func startClusterStack(t *testing.T, name string) *stack {
	t.Helper()
	o := options(name, 2)
	o.Cluster = stacktest.Cluster{Masters: 3, Replicas: 1}
	return &stack{stacktest.Start(t, o)}
}

// TestCluster_TheSuiteOnAThreeMasterCluster: on a real Redis Cluster, a
// whole classic game, a Japanese match and a classic coin game (at once)
// pass the checks they pass on one Redis — the log replays purely, every
// command is applied once, the sheets and the standings match the replay,
// the coins add up — and then a runner SIGKILLed mid-hand hands its game
// to the other runner with nothing written twice.
func TestCluster_TheSuiteOnAThreeMasterCluster(t *testing.T) {
	t.Parallel()
	s := startClusterStack(t, "cluster")
	t.Run("games", func(t *testing.T) {
		t.Run("classic", func(t *testing.T) { t.Parallel(); playClassicGame(t, s) })
		t.Run("japanese", func(t *testing.T) { t.Parallel(); playJapaneseMatch(t, s) })
		t.Run("coins", func(t *testing.T) { t.Parallel(); playClassicCoinGame(t, s) })
	})
	t.Run("runner SIGKILL", func(t *testing.T) { killOwnerMidHand(t, s) })
}

// TestCluster_AMasterFailsOverMidGame: a classic game of four players and
// a Japanese coin match are under way when the master of the classic
// table's slot is SIGKILLed (once its replica has every write it
// acknowledged: redistest's Failover); the replica takes over, and both
// games finish
// with nothing lost: every command the players sent is in the log once
// and no move was the server's, the log replays purely, the sheet equals
// the replay, and the coin match pays its pot once.
func TestCluster_AMasterFailsOverMidGame(t *testing.T) {
	t.Parallel()
	s := startClusterStack(t, "failover")
	cl := s.RedisCluster()
	var classicID, coinID string
	s.dumpOnFailure(t, &classicID, &coinID)

	players := []session{s.guest(t), s.register(t), s.guest(t), s.register(t)}
	classic := seatPlayers(t, s, tableSpec{moveTime: time.Minute, name: "e2e failover"}, players, &classicID)
	accounts := []session{s.coinAccount(t), s.coinAccount(t)}
	start := map[string]int64{}
	for _, ses := range accounts {
		start[ses.Player.ID], _ = s.balance(t, ses.Player.ID)
	}
	const stake = 100
	coins := seatPlayers(t, s, tableSpec{japanese: true, target: 11, stake: stake, moveTime: time.Minute, name: "e2e failover coins"}, accounts, &coinID)
	for _, c := range classic {
		c.autoPlay(classicID, true)
	}
	for _, c := range coins {
		c.autoPlay(coinID, true)
	}
	// Mid-game: the second hand of the classic game.
	classic[0].awaitEvent(0, 60*time.Second, classicID, "the second hand", func(ev *tablev1.Event) bool {
		return ev.GetHandStarted() != nil && ev.GetHandStarted().GetHandIndex() == 1
	})
	ctx := context.Background()
	killed, promoted, err := cl.Failover(ctx, streams.TableEvents(classicID))
	if err != nil {
		t.Fatalf("failover: %v", err)
	}
	t.Logf("SIGKILLed the master %s of table %s's slot; %s took over", killed.Addr(), classicID, promoted.Addr())
	// The old master comes back as the new one's replica.
	if err := killed.Restart(); err != nil {
		t.Fatal(err)
	}

	for _, c := range classic {
		c.awaitEvent(0, 120*time.Second, classicID, "the end of the classic game after the failover", gameEnded)
	}
	for _, c := range coins {
		c.awaitEvent(0, 120*time.Second, coinID, "the end of the coin match after the failover", gameEnded)
	}
	g := verifyGame(t, s, classicID, classic)
	checkAllMovesByPlayers(t, g.log, classic)
	if len(g.res.Classic.HandResults()) == 0 {
		t.Error("no hand of the classic game was scored")
	}
	cg := verifyGame(t, s, coinID, coins)
	checkAllMovesByPlayers(t, cg.log, coins)
	ended := coins[0].awaitEvent(0, time.Second, coinID, "the end", gameEnded).ev.GetGameEnded()
	want := map[string]int64{}
	for _, ses := range accounts {
		want[ses.Player.ID] = start[ses.Player.ID] - stake
	}
	for _, p := range ended.GetPlacings() {
		if p.GetPlace() == 1 {
			want[p.GetPlayerId()] += 2 * stake
		}
	}
	s.awaitBalances(t, want)
	s.settledOnce(t, coinID, 2*stake)
}
