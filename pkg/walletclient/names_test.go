package walletclient_test

import (
	"errors"
	"testing"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/walletclient"
)

// An account's keys share its hash tag (one Cluster slot), and its
// commands one shard, so they are handled in order.
func TestNames_AnAccountIsOneSlotAndOneShard(t *testing.T) {
	if got := walletclient.LedgerStream("ana"); got != "pulka:{w:ana}:ledger" {
		t.Fatalf("ledger stream %s", got)
	}
	if streams.HashSlot(walletclient.LedgerStream("ana")) != streams.HashSlot("x"+walletclient.AccountTag("ana")+"y") {
		t.Fatal("the ledger is not in the account's slot")
	}
	hold := &walletv1.WalletCommand{Command: &walletv1.WalletCommand_HoldStake{HoldStake: &walletv1.HoldStake{AccountId: "ana", TableId: "t1", Game: lobbyv1.Game_GAME_CLASSIC}}}
	bonus := &walletv1.WalletCommand{Command: &walletv1.WalletCommand_ClaimDailyBonus{ClaimDailyBonus: &walletv1.ClaimDailyBonus{AccountId: "ana"}}}
	if walletclient.Stream(hold) != walletclient.Stream(bonus) || walletclient.Stream(hold) != walletclient.CommandStreamForAccount("ana") {
		t.Fatal("one account's commands are on different shards")
	}
	settle := &walletv1.WalletCommand{Command: &walletv1.WalletCommand_SettleGame{SettleGame: &walletv1.SettleGame{Standings: &scoringv1.FinalStandings{TableId: "t1"}}}}
	release := &walletv1.WalletCommand{Command: &walletv1.WalletCommand_ReleaseTable{ReleaseTable: &walletv1.ReleaseTable{TableId: "t1"}}}
	if walletclient.Stream(settle) != walletclient.Stream(release) || walletclient.Stream(release) != walletclient.CommandStreamForTable("t1") {
		t.Fatal("one table's commands are on different shards")
	}
	// The order keys: one per account, one per table (its standings' too),
	// never the same for an account and a table of the same name.
	if walletclient.OrderKey(hold) != "a:ana" || walletclient.OrderKey(bonus) != "a:ana" ||
		walletclient.OrderKey(settle) != "t:t1" || walletclient.OrderKey(release) != walletclient.TableOrderKey("t1") {
		t.Fatalf("order keys %q %q %q %q", walletclient.OrderKey(hold), walletclient.OrderKey(bonus),
			walletclient.OrderKey(settle), walletclient.OrderKey(release))
	}
	seen := map[int]bool{}
	for i := range 1000 {
		seen[walletclient.ShardOf(string(rune('a'+i%26))+string(rune('0'+i/26%10))+string(rune('a'+i/260)))] = true
	}
	if len(seen) != walletclient.CommandShards || len(walletclient.CommandStreams()) != walletclient.CommandShards {
		t.Fatalf("accounts spread over %d of %d shards", len(seen), walletclient.CommandShards)
	}
}

func TestCheckAccountID(t *testing.T) {
	for id, ok := range map[string]bool{"ana": true, "u-123_x.y": true, "": false, "~forfeit": false, "a}b": false, "a:b": false, "a b": false} {
		err := walletclient.CheckAccountID(id)
		if (err == nil) != ok || (err != nil && !errors.Is(err, walletclient.ErrBadAccount)) {
			t.Errorf("%q: %v", id, err)
		}
	}
}
