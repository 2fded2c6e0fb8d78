package streams

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"
)

// Request and reply over streams. A service that answers its commands (the
// lobby, the wallet) writes each result to the reply stream the command
// names; the sender's Caller follows its own reply stream and hands each
// result to the call waiting for it. The two halves are here once, for
// every such service: a Caller publishes, waits and reads its replies, a
// Replier refuses reply streams outside the service's prefix and keeps the
// ones it writes expiring.

// ErrNotReplyStream means a command named a reply stream outside the
// replier's prefix: answering would let a sender make the service write
// into any key (a table's event stream, say).
var ErrNotReplyStream = errors.New("streams: not a reply stream of this service")

// Appender is what a Replier writes with: a Publisher or a Batcher.
type Appender interface {
	Publish(ctx context.Context, e Entry) (string, error)
}

// Replier writes results to senders' reply streams.
type Replier struct {
	rdb    redis.Cmdable
	pub    Appender
	prefix string
	ttl    time.Duration

	mu      sync.Mutex
	renewed map[string]time.Time // reply stream → when its expiry was last set
}

// maxRenewed bounds the reply streams a Replier remembers; past it the
// memory starts again (costing one extra PEXPIRE per stream).
const maxRenewed = 100_000

// NewReplier makes a replier that answers on streams named under prefix,
// with pub (whose MaxLen bounds each reply stream), and lets a reply stream
// expire ttl after its last reply: a sender that went away leaves nothing
// behind.
func NewReplier(rdb redis.Cmdable, pub Appender, prefix string, ttl time.Duration) *Replier {
	return &Replier{rdb: rdb, pub: pub, prefix: prefix, ttl: ttl, renewed: map[string]time.Time{}}
}

// Reply appends data to the reply stream to (ErrNotReplyStream when it is
// not under the prefix; nothing is written). The stream's expiry is set
// with its first reply and renewed at most once per tenth of the TTL, not
// with every reply: with appendfsync always every round trip waits for the
// disk.
func (r *Replier) Reply(ctx context.Context, to string, data []byte) error {
	if !strings.HasPrefix(to, r.prefix) || len(to) == len(r.prefix) {
		return fmt.Errorf("%w: %q", ErrNotReplyStream, to)
	}
	if _, err := r.pub.Publish(ctx, Entry{Stream: to, Data: data}); err != nil {
		return fmt.Errorf("streams: reply to %s: %w", to, err)
	}
	now := time.Now()
	r.mu.Lock()
	if len(r.renewed) > maxRenewed {
		clear(r.renewed)
	}
	last, ok := r.renewed[to]
	due := !ok || now.Sub(last) >= r.ttl/10
	if due {
		r.renewed[to] = now
	}
	r.mu.Unlock()
	if !due {
		return nil
	}
	if err := r.rdb.PExpire(ctx, to, r.ttl).Err(); err != nil {
		r.mu.Lock()
		delete(r.renewed, to) // try again with the next reply
		r.mu.Unlock()
		return fmt.Errorf("streams: expire %s: %w", to, err)
	}
	return nil
}

// Defaults of CallerOptions.
const (
	DefaultCallTimeout   = 5 * time.Second
	DefaultCommandMaxLen = 100_000
)

// CallerOptions configure a Caller; zero values take the defaults.
type CallerOptions struct {
	// Instance names this process's reply stream (under the service's reply
	// prefix). Empty: a random name, so that a restarted process never reads
	// an old one's replies.
	Instance string
	// Timeout bounds Call when ctx has no earlier deadline
	// (DefaultCallTimeout).
	Timeout time.Duration
	// MaxLen trims each command stream when publishing (a guard;
	// DefaultCommandMaxLen).
	MaxLen int64
	// ErrTimeout is the client's own error for a call that had no answer
	// in time; Call wraps it with the request's id.
	ErrTimeout error
	// Logger gets the errors the reply reader recovers from.
	Logger *slog.Logger
	// TracerProvider for the publish spans (default: none).
	TracerProvider trace.TracerProvider
}

// Caller sends requests and waits for their replies, matched by request id.
// Run must be running for Call to get answers.
type Caller[R any] struct {
	rdb     redis.UniversalClient
	reply   string
	opt     CallerOptions
	pub     *Publisher
	waiters *Waiters[R]
	decode  func(data []byte) (id string, r R, err error)
}

// NewCaller makes a caller whose replies arrive on the stream replyPrefix +
// opt.Instance (the prefix is the answering service's: its Replier writes
// only there); decode reads a reply and the id of the request it answers.
func NewCaller[R any](rdb redis.UniversalClient, replyPrefix string, decode func(data []byte) (string, R, error), opt CallerOptions) *Caller[R] {
	if opt.Instance == "" {
		b := make([]byte, 8)
		_, _ = rand.Read(b)
		opt.Instance = "c-" + hex.EncodeToString(b)
	}
	if opt.Timeout <= 0 {
		opt.Timeout = DefaultCallTimeout
	}
	if opt.MaxLen <= 0 {
		opt.MaxLen = DefaultCommandMaxLen
	}
	if opt.ErrTimeout == nil {
		opt.ErrTimeout = errors.New("streams: no reply in time")
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	popts := []Option{WithMaxLen(opt.MaxLen)}
	if opt.TracerProvider != nil {
		popts = append(popts, WithTracerProvider(opt.TracerProvider))
	}
	return &Caller[R]{rdb: rdb, reply: replyPrefix + opt.Instance, opt: opt, pub: NewPublisher(rdb, popts...),
		waiters: NewWaiters[R](), decode: decode}
}

// ReplyStream is the stream this caller reads its replies from.
func (c *Caller[R]) ReplyStream() string { return c.reply }

// Call publishes the request e, whose id the reply will carry, and waits
// for the reply until ctx ends or the timeout passes (ErrTimeout). The
// request must name ReplyStream as its reply stream.
func (c *Caller[R]) Call(ctx context.Context, e Entry, id string) (R, error) {
	reply, forget := c.waiters.Register(id)
	defer forget()
	ctx, cancel := context.WithTimeout(ctx, c.opt.Timeout)
	defer cancel()
	if _, err := c.pub.Publish(ctx, e); err != nil {
		var zero R
		return zero, err
	}
	return Await(ctx, reply, fmt.Errorf("%w (command %s)", c.opt.ErrTimeout, id))
}

// Run follows the reply stream from its start (replies that came before Run
// started are not missed) and hands each reply to the calls waiting for it,
// until ctx is cancelled.
func (c *Caller[R]) Run(ctx context.Context) error {
	t := NewTailer(c.rdb, func(_ context.Context, m Message) {
		id, r, err := c.decode(m.Data)
		if err != nil {
			c.opt.Logger.WarnContext(ctx, "streams: undecodable reply", "stream", c.reply, "id", m.ID, "err", err)
			return
		}
		c.waiters.Deliver(id, r)
	}, WithLogger(c.opt.Logger))
	if err := t.Add(ctx, c.reply, "0"); err != nil {
		return err
	}
	return t.Run(ctx)
}

// Pending is how many calls are waiting for their reply.
func (c *Caller[R]) Pending() int { return c.waiters.Len() }
