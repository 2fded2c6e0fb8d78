package ledger

import (
	"fmt"

	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/payout"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// Collected is what a settlement's collect step took from one holder of the
// table's pot.
type Collected struct {
	Account   string
	Amount    int64
	Forfeited bool
}

// Plan divides a table's pot by the final standings: the pot is every stake
// collected; a standing's player is eligible when they staked (collected
// more than nothing) and did not forfeit — never a bot (no player id). The
// shares are listed in standings order, only those above zero; a pot nobody
// is eligible for is Unclaimed (the forfeit account's). Pure: the same
// inputs always give the same plan, so every run of a settlement (a
// redelivery, a restarted wallet) computes the one its first run stored.
func Plan(game tablesettings.Game, fs *scoringv1.FinalStandings, collected []Collected) (*walletv1.GameSettled, error) {
	var pot int64
	byAccount := make(map[string]Collected, len(collected))
	for _, c := range collected {
		pot += c.Amount
		byAccount[c.Account] = c
	}
	st := fs.GetStandings()
	if len(st) > game.Seats() {
		return nil, refuse(walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED,
			"%d standings for a %s game of %d seats", len(st), game, game.Seats())
	}
	players := make([]payout.Player, len(st))
	for i, s := range st {
		c, ok := byAccount[s.GetPlayerId()]
		players[i] = payout.Player{Seat: s.GetSeat(), Place: s.GetPlace(),
			Eligible: s.GetPlayerId() != "" && ok && c.Amount > 0 && !c.Forfeited}
	}
	res, err := payout.Split(game, pot, players)
	if err != nil {
		return nil, fmt.Errorf("ledger: plan of %s: %w", fs.GetTableId(), err)
	}
	out := &walletv1.GameSettled{TableId: fs.GetTableId(), GameId: fs.GetGameId(), Pot: pot, Unclaimed: res.Unclaimed}
	for i, s := range st {
		if res.Shares[i] > 0 {
			out.Shares = append(out.Shares, &walletv1.Share{AccountId: s.GetPlayerId(), Amount: res.Shares[i]})
		}
	}
	return out, nil
}
