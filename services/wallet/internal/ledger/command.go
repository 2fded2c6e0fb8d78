package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/pkg/walletclient"
)

// Limits of a command (docs/wallet.md, Limits).
const (
	// MaxCommandID bounds a command id: it is kept for ever, as a field of
	// the account's operations.
	MaxCommandID = 128
	// MaxAmount bounds one stake or grant, so that no balance can leave the
	// range where Lua numbers (doubles) are exact.
	MaxAmount = 1_000_000_000_000
	// InternalPrefix starts the ids of the wallet's own steps (collect,
	// void, pay); a sender's command id may not start with it.
	InternalPrefix = "~"
)

// Refusal is a command refused before it reaches the store: its reason and
// an English explanation. It changes nothing and is not remembered (the same
// command is refused the same way again).
type Refusal struct {
	Reason  walletv1.WalletRejectReason
	Message string
}

func (r *Refusal) Error() string { return r.Reason.String() + ": " + r.Message }

func refuse(reason walletv1.WalletRejectReason, format string, args ...any) *Refusal {
	return &Refusal{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Validate checks everything about cmd that does not depend on the ledger's
// state. A nil error means the store may apply it.
func Validate(cmd *walletv1.WalletCommand) *Refusal {
	id := cmd.GetCommandId()
	switch {
	case id == "" || len(id) > MaxCommandID:
		return refuse(walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED, "command_id must have 1..%d bytes", MaxCommandID)
	case strings.HasPrefix(id, InternalPrefix):
		return refuse(walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED, "command_id may not start with %q", InternalPrefix)
	}
	account := func(a string) *Refusal {
		if err := walletclient.CheckAccountID(a); err != nil {
			return refuse(walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED, "%v", err)
		}
		return nil
	}
	table := func(t string) *Refusal {
		if err := scoringclient.CheckID("table", t); err != nil {
			return refuse(walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED, "%v", err)
		}
		return nil
	}
	switch c := cmd.GetCommand().(type) {
	case *walletv1.WalletCommand_OpenAccount:
		return account(c.OpenAccount.GetAccountId())
	case *walletv1.WalletCommand_ClaimDailyBonus:
		return account(c.ClaimDailyBonus.GetAccountId())
	case *walletv1.WalletCommand_HoldStake:
		h := c.HoldStake
		if r := first(account(h.GetAccountId()), table(h.GetTableId())); r != nil {
			return r
		}
		if h.GetGameId() != "" {
			if err := scoringclient.CheckID("game", h.GetGameId()); err != nil {
				return refuse(walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED, "%v", err)
			}
		}
		if _, err := tablesettings.GameFromProto(h.GetGame()); err != nil {
			return refuse(walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED, "game %s is neither classic nor japanese", h.GetGame())
		}
		if h.GetAmount() <= 0 || h.GetAmount() > MaxAmount {
			return refuse(walletv1.WalletRejectReason_WALLET_REJECT_REASON_INVALID_AMOUNT, "amount %d is not in 1..%d", h.GetAmount(), int64(MaxAmount))
		}
		return nil
	case *walletv1.WalletCommand_ReleaseHold:
		return first(account(c.ReleaseHold.GetAccountId()), table(c.ReleaseHold.GetTableId()))
	case *walletv1.WalletCommand_ForfeitStake:
		return first(account(c.ForfeitStake.GetAccountId()), table(c.ForfeitStake.GetTableId()))
	case *walletv1.WalletCommand_ReleaseTable:
		return table(c.ReleaseTable.GetTableId())
	case *walletv1.WalletCommand_SettleGame:
		return ValidateStandings(c.SettleGame.GetStandings())
	case *walletv1.WalletCommand_Audit:
		return nil
	case *walletv1.WalletCommand_PayOut, *walletv1.WalletCommand_Credit, *walletv1.WalletCommand_Debit:
		return refuse(walletv1.WalletRejectReason_WALLET_REJECT_REASON_UNSUPPORTED,
			"the wallet computes payouts from the final standings and issues coins only as grants")
	}
	return refuse(walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED, "no command set")
}

func first(rs ...*Refusal) *Refusal {
	for _, r := range rs {
		if r != nil {
			return r
		}
	}
	return nil
}

// ValidateStandings checks final standings as the wallet needs them: ids
// usable in keys, 1..4 players on distinct seats, places in 1..n, player ids
// empty (a bot) or account ids, none twice.
func ValidateStandings(fs *scoringv1.FinalStandings) *Refusal {
	bad := func(format string, args ...any) *Refusal {
		return refuse(walletv1.WalletRejectReason_WALLET_REJECT_REASON_MALFORMED, format, args...)
	}
	if err := errors.Join(scoringclient.CheckID("table", fs.GetTableId()), scoringclient.CheckID("game", fs.GetGameId())); err != nil {
		return bad("%v", err)
	}
	st := fs.GetStandings()
	if len(st) == 0 || len(st) > tablesettings.Classic.Seats() {
		return bad("%d standings, want 1..%d", len(st), tablesettings.Classic.Seats())
	}
	var seats []uint32
	var players []string
	for _, s := range st {
		if slices.Contains(seats, s.GetSeat()) {
			return bad("seat %d twice", s.GetSeat())
		}
		seats = append(seats, s.GetSeat())
		if s.GetPlace() < 1 || int(s.GetPlace()) > len(st) {
			return bad("seat %d has place %d", s.GetSeat(), s.GetPlace())
		}
		if p := s.GetPlayerId(); p != "" {
			if err := walletclient.CheckAccountID(p); err != nil {
				return bad("%v", err)
			}
			if slices.Contains(players, p) {
				return bad("player %s on two seats", p)
			}
			players = append(players, p)
		}
	}
	return nil
}

// Digest identifies a command's content, without its id, reply stream and
// trace: the same id with another digest is a conflict.
func Digest(cmd *walletv1.WalletCommand) string {
	c := proto.CloneOf(cmd)
	c.CommandId, c.ReplyTo, c.Trace = "", "", nil
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(c) // a message of known types always marshals
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// StandingsDigest identifies a settlement's input: other standings for a
// table already settled are a conflict.
func StandingsDigest(fs *scoringv1.FinalStandings) string {
	c := proto.CloneOf(fs)
	c.Trace = nil
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(c)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

// CollectID is the id of a settlement's collect step on one account. The
// ids of the wallet's own steps are one per account and table: each is the
// idempotency key of that step, so it happens at most once whoever runs it
// how often.
func CollectID(table string) string { return InternalPrefix + "collect:" + table }

// VoidID is the id of a table release's step on one account.
func VoidID(table string) string { return InternalPrefix + "void:" + table }

// PayID is the id of a settlement's payment to one account.
func PayID(table string) string { return InternalPrefix + "pay:" + table }
