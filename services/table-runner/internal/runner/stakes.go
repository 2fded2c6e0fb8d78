package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/assign"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/pkg/walletclient"
)

// stakeOf is the Domino Coin stake of a started table; 0 for a free one.
func stakeOf(ts *lobbyv1.TableStarted) int64 {
	return ts.GetSettings().GetStake().GetCoins().GetAmount()
}

// loadStake reads the table's stake from its start (assign.StartKey, kept
// while the table lives): the table's state (internal/table) carries the game's
// rules, not what the seats cost, so a restored table learns it here.
func (a *actor) loadStake(ctx context.Context) error {
	raw, err := a.r.rdb.Get(ctx, assign.StartKey(a.s.id)).Bytes()
	if errors.Is(err, redis.Nil) {
		// Only after StartTTL (7 days): the game's stakes are left to the
		// wallet's audit (a pot open too long).
		a.r.log.Warn("runner: the table's start is gone; its stake is unknown and no forfeit will be sent", "table", a.s.id)
		return nil
	}
	if err != nil {
		return fmt.Errorf("read start of %s: %w", a.s.id, err)
	}
	ts := &lobbyv1.TableStarted{}
	if err := proto.Unmarshal(raw, ts); err != nil {
		return fmt.Errorf("decode start of %s: %w", a.s.id, err)
	}
	a.stake = stakeOf(ts)
	return nil
}

// walletCommands is what the wallet must hear of e at a coin table (none at
// a free one): a classic player who left a running game forfeits the stake
// (the bot that plays on cannot win coins; the stake stays in the pot for
// the players who stayed, docs/wallet.md); a Japanese match lost by
// resignation, leaving or an expired grace forfeits the loser's stake, so
// that the opponent is the only player eligible for the pot whatever the
// standings say; a game the platform aborted gives every stake back. Each
// id is derived from the event, so a republished one has one effect.
func (a *actor) walletCommands(e *tablev1.Event) []*walletv1.WalletCommand {
	if a.stake <= 0 {
		return nil
	}
	forfeit := func(id, player string) *walletv1.WalletCommand {
		return &walletv1.WalletCommand{CommandId: id, Command: &walletv1.WalletCommand_ForfeitStake{
			ForfeitStake: &walletv1.ForfeitStake{AccountId: player, TableId: a.s.id}}}
	}
	game := a.t.Settings().Game
	switch ev := e.GetEvent().(type) {
	case *tablev1.Event_PlayerLeft:
		if game == tablesettings.Classic && ev.PlayerLeft.GetPlayerId() != "" {
			return []*walletv1.WalletCommand{forfeit(fmt.Sprintf("table-runner:forfeit:%s:%d", e.GetGameId(), e.GetSeq()), ev.PlayerLeft.GetPlayerId())}
		}
	case *tablev1.Event_GameEnded:
		switch ev.GameEnded.GetReason() {
		case tablev1.GameEndReason_GAME_END_REASON_ABORTED:
			return []*walletv1.WalletCommand{{CommandId: "table-runner:release:" + e.GetGameId(),
				Command: &walletv1.WalletCommand_ReleaseTable{ReleaseTable: &walletv1.ReleaseTable{TableId: a.s.id}}}}
		case tablev1.GameEndReason_GAME_END_REASON_RESIGNED, tablev1.GameEndReason_GAME_END_REASON_FORFEITED:
			if game != tablesettings.Japanese {
				return nil
			}
			var out []*walletv1.WalletCommand
			for _, p := range ev.GameEnded.GetPlacings() {
				if p.GetPlace() > 1 && p.GetPlayerId() != "" {
					out = append(out, forfeit(fmt.Sprintf("table-runner:forfeit:%s:%d:%d", e.GetGameId(), e.GetSeq(), p.GetSeat()), p.GetPlayerId()))
				}
			}
			return out
		}
	}
	return nil
}

// walletEntries encodes the wallet commands of evs for publishing with the
// table's other effects (no reply is wanted: the wallet remembers each
// outcome, and the settlement reads the forfeits from the ledger).
func (a *actor) walletEntries(ctx context.Context, evs []*tablev1.Event) ([]streams.Entry, error) {
	var out []streams.Entry
	for _, e := range evs {
		for _, c := range a.walletCommands(e) {
			en, err := walletclient.Entry(c)
			if err != nil {
				return nil, err
			}
			out = append(out, en)
			a.r.m.wallet.Add(ctx, 1, metric.WithAttributes(attribute.String("command", walletKind(c))))
		}
	}
	return out, nil
}

func walletKind(c *walletv1.WalletCommand) string {
	if c.GetReleaseTable() != nil {
		return "release_table"
	}
	return "forfeit"
}

// releaseTableEntry is the ReleaseTable of a table the runner gives up
// before its game could end (Runner.giveUp): every stake held at it goes
// back. Sent whatever the stake (a start that cannot be read says none): at
// a free table the wallet closes an empty pot.
func releaseTableEntry(id string) (streams.Entry, error) {
	return walletclient.Entry(&walletv1.WalletCommand{CommandId: "table-runner:abandon:" + id,
		Command: &walletv1.WalletCommand_ReleaseTable{ReleaseTable: &walletv1.ReleaseTable{TableId: id}}})
}
