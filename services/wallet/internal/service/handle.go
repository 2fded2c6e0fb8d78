package service

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/telemetry"
	"github.com/pulka/pulka/pkg/walletclient"
)

// Handler handles the consumer's messages: WalletCommands from the command
// shards and FinalStandings from scoring.
type Handler struct {
	w       *Wallet
	replies *streams.Replier
}

// ReplyTTL is how long a reply stream lives after its last reply, so that
// a sender that went away leaves nothing behind.
const ReplyTTL = 10 * time.Minute

// Handle applies one message (scoring's standings as their table's
// SettleGame). It returns an error only when Redis failed (the message stays
// pending and is redelivered; every step it already did is remembered, so
// the redelivery finishes the work and answers with the first result). An
// undecodable message is an error too, and ends in the dead-letter stream
// after the delivery limit.
func (h *Handler) Handle(ctx context.Context, msg streams.Message) error {
	cmd := &walletv1.WalletCommand{}
	if msg.Stream == scoringclient.StandingsStream {
		// Settled right here, on the worker of the table's order key
		// (OrderKey), in order with the table's other commands.
		fs := &scoringv1.FinalStandings{}
		if err := proto.Unmarshal(msg.Data, fs); err != nil {
			return fmt.Errorf("wallet: undecodable standings %s: %w", msg.Key(), err)
		}
		cmd = settleCommand(fs)
	} else if err := proto.Unmarshal(msg.Data, cmd); err != nil {
		return fmt.Errorf("wallet: undecodable command %s: %w", msg.Key(), err)
	}
	if cmd.GetTrace() != nil {
		ctx = telemetry.ContextWithTrace(ctx, cmd.GetTrace())
	}
	res, err := h.w.Apply(ctx, cmd)
	if err != nil {
		return err
	}
	h.w.m.command(ctx, kindOf(cmd), res)
	if !res.GetAccepted() && kindOf(cmd) == "settle" {
		h.w.opt.Logger.ErrorContext(ctx, "wallet: a game was not settled", "command", cmd.GetCommandId(),
			"reason", res.GetReason(), "message", res.GetMessage())
	}
	if to := cmd.GetReplyTo(); to != "" {
		data, err := proto.Marshal(res)
		if err != nil {
			return fmt.Errorf("wallet: encode result: %w", err)
		}
		// Not a reply stream: a sender cannot make the wallet write
		// elsewhere, and nothing is written.
		if err := h.replies.Reply(ctx, to, data); err != nil && !errors.Is(err, streams.ErrNotReplyStream) {
			return fmt.Errorf("wallet: %w", err)
		}
	}
	return nil
}

// settleCommand is the SettleGame of scoring's final standings; its id is
// the table's, so the standings published again (or read again) settle
// nothing twice.
func settleCommand(fs *scoringv1.FinalStandings) *walletv1.WalletCommand {
	return &walletv1.WalletCommand{CommandId: "standings-" + fs.GetTableId(), Trace: fs.GetTrace(),
		Command: &walletv1.WalletCommand_SettleGame{SettleGame: &walletv1.SettleGame{Standings: fs}}}
}

// OrderKey is the consumer's order key: the subject of the message
// (walletclient.OrderKey) — one account's commands in their order, one
// table's (its release, its settlement) in theirs — so that the commands of
// different accounts run in parallel even when they share a shard, and the
// wallet has as many operations in flight as it has workers (with one key
// per shard it had at most CommandShards). Scoring's standings, which come
// on one stream for every table, take their table's key, so a settlement
// runs in order with that table's release; settling them where they are
// read, rather than forwarding them to the table's shard first, spares an
// append and a read. A message it cannot read keeps its stream (the handler
// refuses it).
func OrderKey(m streams.Message) string {
	if m.Stream == scoringclient.StandingsStream {
		if t, ok := scoringclient.TableOf(m.Data); ok {
			return walletclient.TableOrderKey(t)
		}
		return m.Stream
	}
	var cmd walletv1.WalletCommand
	if err := proto.Unmarshal(m.Data, &cmd); err != nil {
		return m.Stream
	}
	return walletclient.OrderKey(&cmd)
}

func kindOf(cmd *walletv1.WalletCommand) string {
	switch cmd.GetCommand().(type) {
	case *walletv1.WalletCommand_OpenAccount:
		return "open"
	case *walletv1.WalletCommand_ClaimDailyBonus:
		return "bonus"
	case *walletv1.WalletCommand_HoldStake:
		return "hold"
	case *walletv1.WalletCommand_ReleaseHold:
		return "release"
	case *walletv1.WalletCommand_ForfeitStake:
		return "forfeit"
	case *walletv1.WalletCommand_ReleaseTable:
		return "release_table"
	case *walletv1.WalletCommand_SettleGame:
		return "settle"
	case *walletv1.WalletCommand_Audit:
		return "audit"
	}
	return "other"
}
