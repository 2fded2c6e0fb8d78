package lobbyclient

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/cenkalti/backoff/v5"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"
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
	DefaultTimeout        = 5 * time.Second
	DefaultCommandMaxLen  = 100_000
	DefaultReplyBlock     = 2 * time.Second
	defaultBackoffMax     = 2 * time.Second
	defaultBackoffInitial = 50 * time.Millisecond
)

// ClientOptions configure a Client; zero values take the defaults.
type ClientOptions struct {
	// Instance names this gateway instance's reply stream. Empty: a random
	// name, so a restarted process never reads an old instance's replies.
	Instance string
	// Timeout bounds Do when ctx has no earlier deadline.
	Timeout time.Duration
	// CommandMaxLen trims the command stream when publishing (a guard: the
	// lobby deletes entries as it handles them).
	CommandMaxLen int64
	// Block is how long one read of the reply stream blocks.
	Block time.Duration
	// Logger gets errors the reply reader recovers from.
	Logger *slog.Logger
	// TracerProvider for the publish spans (default: none).
	TracerProvider trace.TracerProvider
}

// Client sends lobby commands and waits for their results.
type Client struct {
	rdb   redis.UniversalClient
	opt   ClientOptions
	reply string
	pub   *streams.Publisher

	waiters *streams.Waiters[*lobbyv1.LobbyCommandResult]
}

// NewClient makes a client. Run must be running for Do to get answers.
func NewClient(rdb redis.UniversalClient, opt ClientOptions) *Client {
	if opt.Instance == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		opt.Instance = "gw-" + hex.EncodeToString(b[:])
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultTimeout
	}
	if opt.CommandMaxLen <= 0 {
		opt.CommandMaxLen = DefaultCommandMaxLen
	}
	if opt.Block <= 0 {
		opt.Block = DefaultReplyBlock
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	popts := []streams.Option{streams.WithMaxLen(opt.CommandMaxLen)}
	if opt.TracerProvider != nil {
		popts = append(popts, streams.WithTracerProvider(opt.TracerProvider))
	}
	return &Client{
		rdb: rdb, opt: opt, reply: ReplyStream(opt.Instance),
		pub:     streams.NewPublisher(rdb, popts...),
		waiters: streams.NewWaiters[*lobbyv1.LobbyCommandResult](),
	}
}

// ReplyStream is the stream this client reads its results from.
func (c *Client) ReplyStream() string { return c.reply }

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
		var b [16]byte
		_, _ = rand.Read(b[:])
		cmd.CommandId = hex.EncodeToString(b[:])
	}
	cmd.ReplyTo = c.reply
	if cmd.GetTrace() == nil {
		cmd.Trace = telemetry.TraceContextFrom(ctx)
	}
	data, err := proto.Marshal(cmd)
	if err != nil {
		return nil, fmt.Errorf("lobbyclient: %w", err)
	}
	id := cmd.GetCommandId()
	reply, forget := c.waiters.Register(id)
	defer forget()

	ctx, cancel := context.WithTimeout(ctx, c.opt.Timeout)
	defer cancel()
	if _, err := c.pub.Publish(ctx, streams.Entry{Stream: CommandStream, Data: data}); err != nil {
		return nil, fmt.Errorf("lobbyclient: %w", err)
	}
	return streams.Await(ctx, reply, fmt.Errorf("%w (command %s)", ErrTimeout, id))
}

// Run reads this instance's reply stream and hands each result to the Do
// waiting for it, until ctx is cancelled. It starts at the beginning of the
// stream, so replies that arrived before Run started are not missed.
func (c *Client) Run(ctx context.Context) error {
	last := "0"
	retry := newBackoff()
	for ctx.Err() == nil {
		res, err := c.rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{c.reply, last}, Count: 256, Block: c.opt.Block}).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			if ctx.Err() == nil { // else: shutting down, the loop ends
				c.opt.Logger.WarnContext(ctx, "lobbyclient: reading replies failed", "stream", c.reply, "err", err)
				retry.wait(ctx)
			}
			continue
		}
		retry.reset()
		for _, s := range res {
			for _, m := range s.Messages {
				last = m.ID
				c.deliver(ctx, m)
			}
		}
	}
	return nil
}

func (c *Client) deliver(ctx context.Context, m redis.XMessage) {
	data, _ := m.Values[streams.FieldData].(string)
	var r lobbyv1.LobbyCommandResult
	if err := proto.Unmarshal([]byte(data), &r); err != nil {
		c.opt.Logger.WarnContext(ctx, "lobbyclient: undecodable reply", "id", m.ID, "err", err)
		return
	}
	c.waiters.Deliver(r.GetCommandId(), &r)
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

// retryWait paces a loop's retries after Redis errors: the wait doubles
// from defaultBackoffInitial up to defaultBackoffMax, without jitter, and
// starts again at defaultBackoffInitial after a success (reset).
type retryWait struct{ b backoff.ExponentialBackOff }

func newBackoff() *retryWait {
	w := &retryWait{b: backoff.ExponentialBackOff{
		InitialInterval: defaultBackoffInitial, Multiplier: 2, MaxInterval: defaultBackoffMax,
	}}
	w.b.Reset()
	return w
}

func (w *retryWait) reset() { w.b.Reset() }

// wait sleeps the next wait, or until ctx ends.
func (w *retryWait) wait(ctx context.Context) {
	t := time.NewTimer(w.b.NextBackOff())
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
