package service

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/pkg/walletclient"
	"github.com/pulka/pulka/services/lobby/internal/domain"
)

// Wallet is what the lobby asks of the wallet: walletclient.Client (whose
// Run must be running). Do sends a command and waits for its result; a
// refusal is a result, an error means no answer came (the command may
// still be applied, and sending it again with the same id is safe).
type Wallet interface {
	Do(ctx context.Context, cmd *walletv1.WalletCommand) (*walletv1.WalletResult, error)
}

// stakes is what a command must do at the wallet: hold the sender's stake
// before its change is committed (the seat is taken only once the stake is
// held), and release holds once the change is committed (a seat given up,
// a table closed). docs/wallet.md ("The lobby's holds") tells why in this
// order and how a hold whose seat was never recorded is released.
type stakes struct {
	// hold is the stake to hold before the commit, nil for none.
	hold *walletv1.WalletCommand
	// created: the hold is at the table this command creates, which does
	// not exist until the commit (undone with ReleaseTable).
	created bool
	// after are sent once the change is committed.
	after []*walletv1.WalletCommand
	// table is the table as the command leaves it.
	table *domain.Table
}

// walletID derives a wallet command id from what caused it: the lobby's
// prefix, the kind, the table and a digest of the rest (the lobby command
// id, a seat, a player), so that a redelivered or retried lobby command
// sends the same wallet command, which the wallet applies once.
func walletID(kind, tableID string, parts ...string) string {
	if len(parts) == 0 {
		return "lobby:" + kind + ":" + tableID
	}
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return "lobby:" + kind + ":" + tableID + ":" + hex.EncodeToString(h[:12])
}

// planStakes decides the wallet commands of a command that changed a table
// from (wasSeated, wasStatus) to t. Only coin tables have any.
func planStakes(cmd *lobbyv1.LobbyCommand, player domain.Player, wasSeated bool, wasStatus domain.Status, t *domain.Table, created bool) stakes {
	st := stakes{table: t}
	if !t.Settings.Coins() {
		return st
	}
	seat := t.SeatOf(player.ID)
	switch {
	case player.ID != "" && !wasSeated && seat >= 0 && t.Status != domain.Finished:
		// Sitting down (or creating a table seated): the stake first.
		st.hold = &walletv1.WalletCommand{
			CommandId: walletID("hold", t.ID, cmd.GetCommandId(), fmt.Sprint(seat)),
			Command: &walletv1.WalletCommand_HoldStake{HoldStake: &walletv1.HoldStake{
				AccountId: player.ID, TableId: t.ID, Amount: t.Settings.Stake.Coins, Game: gameProto(t.Settings.Game)}},
		}
		st.created = created
	case wasStatus == domain.Waiting && t.Status == domain.Finished:
		// Closed before a game: every hold at the table goes back, those of
		// seats never recorded too (ReleaseTable voids every holder's).
		st.after = append(st.after, releaseTable(t.ID))
	case wasStatus == domain.Waiting && t.Status == domain.Waiting && wasSeated && seat < 0:
		// Stood up or left before the game.
		st.after = append(st.after, releaseHold(walletID("release", t.ID, cmd.GetCommandId()), player.ID, t.ID))
	}
	return st
}

func releaseTable(tableID string) *walletv1.WalletCommand {
	return &walletv1.WalletCommand{CommandId: walletID("close", tableID),
		Command: &walletv1.WalletCommand_ReleaseTable{ReleaseTable: &walletv1.ReleaseTable{TableId: tableID}}}
}

func releaseHold(id, player, tableID string) *walletv1.WalletCommand {
	return &walletv1.WalletCommand{CommandId: id,
		Command: &walletv1.WalletCommand_ReleaseHold{ReleaseHold: &walletv1.ReleaseHold{AccountId: player, TableId: tableID}}}
}

func gameProto(g tablesettings.Game) lobbyv1.Game {
	if g == tablesettings.Japanese {
		return lobbyv1.Game_GAME_JAPANESE
	}
	return lobbyv1.Game_GAME_CLASSIC
}

// holdStake holds the stake of st.hold. It returns nil when the stake is
// held (now, by an earlier delivery of the same command, or by an earlier
// sit-down whose seat was never recorded: HOLD_EXISTS), a domain refusal
// when the wallet refused it (nothing is held), or an error when the wallet
// did not answer (the command is tried again, with the same id).
func (s *Service) holdStake(ctx context.Context, st stakes) (refusal error, err error) {
	h := st.hold.GetHoldStake()
	// Recorded before the hold: whatever happens between the hold and the
	// commit, the table's start finds this player among its stakers and
	// releases the hold if they are not seated (releaseOrphans).
	if err := s.store.AddStaker(ctx, h.GetTableId(), h.GetAccountId()); err != nil {
		return nil, err
	}
	res, err := s.wallet(ctx, "hold", st.hold)
	if err != nil {
		return nil, err
	}
	if res.GetAccepted() {
		return nil, nil
	}
	switch res.GetReason() {
	case walletv1.WalletRejectReason_WALLET_REJECT_REASON_HOLD_EXISTS:
		// The player's stake at this table is held already: by a sit-down
		// whose seat was never recorded (the lobby died, or its commit
		// failed, after the hold), or by a concurrent sit-down of theirs.
		// It is the same stake; taking it over seats the player once on
		// one hold.
		return nil, nil
	case walletv1.WalletRejectReason_WALLET_REJECT_REASON_INSUFFICIENT_FUNDS:
		return fmt.Errorf("%w: this table's stake is %d Domino Coins",
			domain.ErrInsufficientFunds, h.GetAmount()), nil
	case walletv1.WalletRejectReason_WALLET_REJECT_REASON_UNKNOWN_ACCOUNT:
		return fmt.Errorf("%w: you have no Domino Coin account", domain.ErrAccountRequired), nil
	case walletv1.WalletRejectReason_WALLET_REJECT_REASON_TABLE_CLOSED:
		return fmt.Errorf("%w: the table's stakes are closed", domain.ErrAlreadyStarted), nil
	default:
		return fmt.Errorf("%w: the wallet refused the stake: %s", domain.ErrNotAllowed, res.GetMessage()), nil
	}
}

// undoHold gives back a stake held for a command that in the end did not
// seat the player (decided again after a conflict, refused by a limit, or
// its commit failed): ReleaseTable when the table was never created, else
// ReleaseHold unless the player sits at the table after all (a concurrent
// sit-down of theirs that took the same hold over). Best effort: a hold it
// misses is released when the table starts or closes (releaseOrphans,
// ReleaseTable).
func (s *Service) undoHold(ctx context.Context, cmd *lobbyv1.LobbyCommand, st stakes, t *domain.Table) {
	h := st.hold.GetHoldStake()
	var c *walletv1.WalletCommand
	switch {
	case st.created:
		c = releaseTable(h.GetTableId())
	case t != nil && t.SeatOf(h.GetAccountId()) >= 0:
		return
	default:
		c = releaseHold(walletID("undo", h.GetTableId(), cmd.GetCommandId()), h.GetAccountId(), h.GetTableId())
	}
	s.send(ctx, c)
}

// afterCommit sends the releases of a committed change, and at a coin
// table's start releases the holds of stakers who are not seated.
func (s *Service) afterCommit(ctx context.Context, st stakes, started bool) {
	for _, c := range st.after {
		if c.GetReleaseTable() != nil {
			s.closeTable(ctx, c.GetReleaseTable().GetTableId())
			continue
		}
		s.send(ctx, c)
	}
	if started && st.table != nil && st.table.Settings.Coins() {
		s.releaseOrphans(ctx, st.table)
	}
}

// closeTable releases every stake held at a coin table that closed
// without a game. A table nobody ever asked to hold at (no stakers) has no
// pot at the wallet: nothing is sent.
func (s *Service) closeTable(ctx context.Context, tableID string) {
	stakers, err := s.store.Stakers(ctx, tableID)
	if err == nil && len(stakers) == 0 {
		return
	}
	s.send(ctx, releaseTable(tableID))
}

// releaseOrphans releases, when a coin table starts, the holds of everyone
// who asked to hold a stake there but is not seated: a sit-down whose hold
// was accepted and whose seat was never recorded, or a stand-up whose
// release was lost. Without this their stake would be collected into the
// pot of a game they do not play.
func (s *Service) releaseOrphans(ctx context.Context, t *domain.Table) {
	stakers, err := s.store.Stakers(ctx, t.ID)
	if err != nil {
		s.log.WarnContext(ctx, "lobby: reading a started coin table's stakers failed; unseated holds stay until the wallet's audit", "table_id", t.ID, "err", err)
		return
	}
	seated := t.Seated()
	for _, p := range stakers {
		if !contains(seated, p) {
			s.send(ctx, releaseHold(walletID("orphan", t.ID, p), p, t.ID))
		}
	}
}

// waitingFull reports whether player holds as many waiting tables as the
// limit allows, tableID not among them.
func (s *Service) waitingFull(ctx context.Context, player, tableID string) (bool, error) {
	held, err := s.store.Held(ctx, player)
	if err != nil {
		return false, err
	}
	return len(held) >= s.opt.Limits.WaitingPerPlayer && !contains(held, tableID), nil
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// send sends a release whose refusal is expected when there is nothing to
// release (HOLD_NOT_FOUND, ALREADY_SETTLED) and whose failure is only
// logged: the change it follows is committed.
func (s *Service) send(ctx context.Context, c *walletv1.WalletCommand) {
	kind := "release"
	if c.GetReleaseTable() != nil {
		kind = "release_table"
	}
	if _, err := s.wallet(ctx, kind, c); err != nil {
		s.log.WarnContext(ctx, "lobby: a wallet release was not answered", "command_id", c.GetCommandId(), "err", err)
	}
}

// wallet sends c and counts its outcome (pulka_lobby_wallet_commands).
func (s *Service) wallet(ctx context.Context, kind string, c *walletv1.WalletCommand) (*walletv1.WalletResult, error) {
	if s.opt.Wallet == nil {
		return nil, errors.New("lobby: no wallet")
	}
	res, err := s.opt.Wallet.Do(ctx, c)
	result := "accepted"
	switch {
	case errors.Is(err, walletclient.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		result = "timeout"
	case err != nil:
		result = "error"
	case !res.GetAccepted():
		result = strings.ToLower(strings.TrimPrefix(res.GetReason().String(), "WALLET_REJECT_REASON_"))
	}
	s.m.wallet.Add(ctx, 1, metric.WithAttributes(attribute.String("command", kind), attribute.String("result", result)))
	return res, err
}
