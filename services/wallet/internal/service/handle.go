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
	pub     streams.Appender // forwards standings
	replies *streams.Replier
}

// ReplyTTL is how long a reply stream lives after its last reply, so that
// a sender that went away leaves nothing behind.
const ReplyTTL = 10 * time.Minute

// Handle applies one message (scoring's standings are forwarded to their
// table's command shard first). It returns an error only when Redis failed
// (the message stays pending and is redelivered; every step it already did
// is remembered, so the redelivery finishes the work and answers with the
// first result). An undecodable message is an error too, and ends in the
// dead-letter stream after the delivery limit.
func (h *Handler) Handle(ctx context.Context, msg streams.Message) error {
	if msg.Stream == scoringclient.StandingsStream {
		// One stream is one worker: the standings are forwarded, as a
		// SettleGame, to their table's command shard, so that settlements
		// run in parallel. A repeat (a crash before the ack) forwards a
		// duplicate, which the settlement's idempotency absorbs.
		fs := &scoringv1.FinalStandings{}
		if err := proto.Unmarshal(msg.Data, fs); err != nil {
			return fmt.Errorf("wallet: undecodable standings %s: %w", msg.Key(), err)
		}
		cmd := &walletv1.WalletCommand{CommandId: "standings-" + fs.GetTableId(), Trace: fs.GetTrace(),
			Command: &walletv1.WalletCommand_SettleGame{SettleGame: &walletv1.SettleGame{Standings: fs}}}
		e, err := walletclient.Entry(cmd)
		if err != nil {
			return err
		}
		if _, err := h.pub.Publish(ctx, e); err != nil {
			return fmt.Errorf("wallet: forward standings of %s: %w", fs.GetTableId(), err)
		}
		return nil
	}
	cmd := &walletv1.WalletCommand{}
	if err := proto.Unmarshal(msg.Data, cmd); err != nil {
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
