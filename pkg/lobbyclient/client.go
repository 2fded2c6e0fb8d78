package lobbyclient

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/telemetry"
)

// ErrTimeout means no result arrived in time. The command may still be
// applied later; sending it again with the same command_id is safe and
// returns the first result.
var ErrTimeout = errors.New("lobbyclient: no reply from the lobby in time")

// ErrTableNotFound means Fetch found no table with that id.
var ErrTableNotFound = errors.New("lobbyclient: table not found")

// Defaults of ClientOptions.
const (
	DefaultTimeout = streams.DefaultCallTimeout
	// DefaultReplyBlock is how long one read of the view stream blocks.
	DefaultReplyBlock = 2 * time.Second
)

// ClientOptions configure a Client (Instance names a gateway instance's
// reply stream; ErrTimeout is always ErrTimeout); zero values take the
// defaults.
type ClientOptions = streams.CallerOptions

// Client sends lobby commands and waits for their results.
type Client struct {
	caller *streams.Caller[*lobbyv1.LobbyCommandResult]
}

// NewClient makes a client. Run must be running for Do to get answers.
func NewClient(rdb redis.UniversalClient, opt ClientOptions) *Client {
	opt.ErrTimeout = ErrTimeout
	return &Client{caller: streams.NewCaller(rdb, ReplyStream(""), decodeResult, opt)}
}

func decodeResult(data []byte) (string, *lobbyv1.LobbyCommandResult, error) {
	var r lobbyv1.LobbyCommandResult
	if err := proto.Unmarshal(data, &r); err != nil {
		return "", nil, err
	}
	return r.GetCommandId(), &r, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ReplyStream is the stream this client reads its results from.
func (c *Client) ReplyStream() string { return c.caller.ReplyStream() }

// Do sends cmd to the lobby and waits for its result, until ctx ends or the
// client's timeout passes (ErrTimeout). An empty command_id is filled with a
// random one; reply_to and (if unset) the trace context are filled in a copy
// of cmd. A refusal is a result with accepted = false, not an error.
func (c *Client) Do(ctx context.Context, cmd *lobbyv1.LobbyCommand) (*lobbyv1.LobbyCommandResult, error) {
	if cmd == nil {
		return nil, errors.New("lobbyclient: nil command")
	}
	cmd = proto.CloneOf(cmd)
	if cmd.GetCommandId() == "" {
		cmd.CommandId = randomHex(16)
	}
	cmd.ReplyTo = c.ReplyStream()
	if cmd.GetTrace() == nil {
		cmd.Trace = telemetry.TraceContextFrom(ctx)
	}
	data, err := proto.Marshal(cmd)
	if err != nil {
		return nil, fmt.Errorf("lobbyclient: %w", err)
	}
	r, err := c.caller.Call(ctx, streams.Entry{Stream: CommandStream, Data: data}, cmd.GetCommandId())
	if err != nil && !errors.Is(err, ErrTimeout) {
		return nil, fmt.Errorf("lobbyclient: %w", err)
	}
	return r, err
}

// Run reads this instance's reply stream and hands each result to the Do
// waiting for it, until ctx is cancelled. It starts at the beginning of the
// stream, so replies that arrived before Run started are not missed.
func (c *Client) Run(ctx context.Context) error {
	if err := c.caller.Run(ctx); err != nil {
		return fmt.Errorf("lobbyclient: %w", err)
	}
	return nil
}

// Fetch reads one table's summary (SummaryKey), private tables included: a
// private table's id is its link, so whoever has the id may read it. It
// never holds the password.
func Fetch(ctx context.Context, rdb redis.Cmdable, tableID string) (*lobbyv1.TableSummary, error) {
	b, err := rdb.Get(ctx, SummaryKey(tableID)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("%w: %s", ErrTableNotFound, tableID)
	}
	if err != nil {
		return nil, fmt.Errorf("lobbyclient: fetch %s: %w", tableID, err)
	}
	var t lobbyv1.TableSummary
	if err := proto.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("lobbyclient: fetch %s: %w", tableID, err)
	}
	return &t, nil
}
