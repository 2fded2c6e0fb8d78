package walletclient

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/telemetry"
)

// ErrTimeout means no result arrived in time. The command may still be
// applied; sending it again with the same command_id is safe and returns
// the first result.
var ErrTimeout = errors.New("walletclient: no reply from the wallet in time")

// Defaults of Options.
const (
	DefaultTimeout       = streams.DefaultCallTimeout
	DefaultCommandMaxLen = streams.DefaultCommandMaxLen
	DefaultReplyMaxLen   = 10_000
)

// Options configure a Client (Instance names its reply stream; ErrTimeout
// is always ErrTimeout); zero values take the defaults.
type Options = streams.CallerOptions

// Client sends wallet commands and waits for their results. Run must be
// running for Do to get answers.
type Client struct {
	caller *streams.Caller[*walletv1.WalletResult]
}

// NewClient makes a client.
func NewClient(rdb redis.UniversalClient, opt Options) *Client {
	opt.ErrTimeout = ErrTimeout
	return &Client{caller: streams.NewCaller(rdb, ReplyStream(""), decodeResult, opt)}
}

func decodeResult(data []byte) (string, *walletv1.WalletResult, error) {
	var r walletv1.WalletResult
	if err := proto.Unmarshal(data, &r); err != nil {
		return "", nil, err
	}
	return r.GetCommandId(), &r, nil
}

// Stream is the command stream cmd belongs on: its account's shard, or its
// table's for table-wide commands.
func Stream(cmd *walletv1.WalletCommand) string {
	id, table := subject(cmd)
	if table {
		return CommandStreamForTable(id)
	}
	return CommandStreamForAccount(id)
}

// OrderKey is what the wallet keeps cmd in order with: the commands about
// one account ("a:" and its id), or about one table ("t:" and its id; the
// table's final standings too, TableOrderKey). Commands with different keys
// may be handled in parallel even on one shard, so the wallet's parallelism
// is its workers', not its shards'.
func OrderKey(cmd *walletv1.WalletCommand) string {
	id, table := subject(cmd)
	if table {
		return TableOrderKey(id)
	}
	return "a:" + id
}

// TableOrderKey is OrderKey of the commands about table.
func TableOrderKey(table string) string { return "t:" + table }

// subject is the account, or the table (table true), that cmd is about.
func subject(cmd *walletv1.WalletCommand) (id string, table bool) {
	switch c := cmd.GetCommand().(type) {
	case *walletv1.WalletCommand_HoldStake:
		return c.HoldStake.GetAccountId(), false
	case *walletv1.WalletCommand_ReleaseHold:
		return c.ReleaseHold.GetAccountId(), false
	case *walletv1.WalletCommand_OpenAccount:
		return c.OpenAccount.GetAccountId(), false
	case *walletv1.WalletCommand_ClaimDailyBonus:
		return c.ClaimDailyBonus.GetAccountId(), false
	case *walletv1.WalletCommand_ForfeitStake:
		return c.ForfeitStake.GetAccountId(), false
	case *walletv1.WalletCommand_ReleaseTable:
		return c.ReleaseTable.GetTableId(), true
	case *walletv1.WalletCommand_SettleGame:
		return c.SettleGame.GetStandings().GetTableId(), true
	}
	return "", false
}

// Entry encodes cmd for its command stream (for senders that publish
// without waiting, e.g. a table-runner's forfeit).
func Entry(cmd *walletv1.WalletCommand) (streams.Entry, error) {
	data, err := proto.Marshal(cmd)
	if err != nil {
		return streams.Entry{}, fmt.Errorf("walletclient: %w", err)
	}
	return streams.Entry{Stream: Stream(cmd), Data: data}, nil
}

// ReplyStream is the stream this client reads its results from.
func (c *Client) ReplyStream() string { return c.caller.ReplyStream() }

// Do sends cmd and waits for its result, until ctx ends or the timeout
// passes (ErrTimeout). The command_id must be set: it is the idempotency
// key, derived by the sender from what caused it (e.g. table + seat +
// sit-down). reply_to and (if unset) the trace are filled in a copy.
// A refusal is a result with accepted = false, not an error.
func (c *Client) Do(ctx context.Context, cmd *walletv1.WalletCommand) (*walletv1.WalletResult, error) {
	if cmd.GetCommandId() == "" {
		return nil, errors.New("walletclient: the command has no command_id")
	}
	cmd = proto.CloneOf(cmd)
	cmd.ReplyTo = c.ReplyStream()
	if cmd.GetTrace() == nil {
		cmd.Trace = telemetry.TraceContextFrom(ctx)
	}
	e, err := Entry(cmd)
	if err != nil {
		return nil, err
	}
	r, err := c.caller.Call(ctx, e, cmd.GetCommandId())
	if err != nil && !errors.Is(err, ErrTimeout) {
		return nil, fmt.Errorf("walletclient: %w", err)
	}
	return r, err
}

// Run follows this client's reply stream and hands each result to the Do
// calls waiting for it, until ctx is cancelled. It starts at the beginning
// of the stream, so replies that came before Run started are not missed.
func (c *Client) Run(ctx context.Context) error {
	if err := c.caller.Run(ctx); err != nil {
		return fmt.Errorf("walletclient: %w", err)
	}
	return nil
}
