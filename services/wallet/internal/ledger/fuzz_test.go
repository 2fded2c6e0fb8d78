package ledger_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/services/wallet/internal/ledger"
)

// FuzzCommand: any bytes a sender can put on a command stream are either
// refused by Validate or, for a settlement, planned so that the shares and
// the unclaimed coins add up to the collected pot, none negative, and only
// stakers are paid.
func FuzzCommand(f *testing.F) {
	seed := settle(standings("t", "a:1", "b:2", ":3", "d:4"))
	seed.CommandId = "s1"
	b, _ := proto.Marshal(seed)
	f.Add(b, int64(100), uint8(0b0101))
	f.Add([]byte{0x0a, 0x01, 'x'}, int64(0), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, stake int64, forfeits uint8) {
		cmd := &walletv1.WalletCommand{}
		if proto.Unmarshal(data, cmd) != nil {
			return
		}
		_ = ledger.Digest(cmd)
		if r := ledger.Validate(cmd); r != nil || cmd.GetSettleGame() == nil {
			return
		}
		if stake < 0 {
			stake = -stake
		}
		stake %= ledger.MaxAmount
		fs := cmd.GetSettleGame().GetStandings()
		var collected []ledger.Collected
		for i, s := range fs.GetStandings() {
			if s.GetPlayerId() != "" {
				collected = append(collected, ledger.Collected{Account: s.GetPlayerId(), Amount: stake, Forfeited: forfeits&(1<<i) != 0})
			}
		}
		for _, g := range []tablesettings.Game{tablesettings.Classic, tablesettings.Japanese} {
			plan, err := ledger.Plan(g, fs, collected)
			if err != nil {
				if len(fs.GetStandings()) <= g.Seats() {
					t.Fatalf("valid standings not planned: %v", err)
				}
				continue
			}
			sum := plan.GetUnclaimed()
			for _, s := range plan.GetShares() {
				if s.GetAmount() <= 0 || s.GetAccountId() == "" {
					t.Fatalf("share %v", s)
				}
				sum += s.GetAmount()
			}
			if sum != plan.GetPot() || plan.GetPot() != stake*int64(len(collected)) {
				t.Fatalf("plan %v adds up to %d", plan, sum)
			}
		}
	})
}
