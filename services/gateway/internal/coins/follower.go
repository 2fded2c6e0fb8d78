package coins

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/walletclient"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/hub"
)

// Follower follows the ledgers of the accounts connected to this gateway
// instance and sends each new balance to their sockets. It has one reader
// for all of them (a streams.Tailer): the wallet's script rings a ledger's
// bell with each entry, and the reader reads just the ledgers that rang —
// no blocking read per socket, and at 10,000 sockets one Pub/Sub
// subscription per account instead.
type Follower struct {
	rdb    redis.UniversalClient
	tailer *streams.Tailer
	log    *slog.Logger

	// subMu orders the tailer's Add and Remove of one ledger with the
	// watcher count that decides them; mu guards the maps, and is all the
	// delivery takes.
	subMu    sync.Mutex
	mu       sync.Mutex
	watchers map[string]map[*watch]struct{} // by ledger stream
	accounts map[string]string              // ledger stream → account

	frames metric.Int64Counter
}

type watch struct {
	sink hub.Sink
	last uint64 // the version last sent, guarded by Follower.mu
}

// NewFollower makes a follower; Run it.
func NewFollower(rdb redis.UniversalClient, log *slog.Logger, meter metric.Meter, opts ...streams.Option) *Follower {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if meter == nil {
		meter = noop.NewMeterProvider().Meter("")
	}
	f := &Follower{rdb: rdb, log: log, watchers: map[string]map[*watch]struct{}{}, accounts: map[string]string{}}
	f.tailer = streams.NewTailer(rdb, f.deliver, opts...)
	f.frames, _ = meter.Int64Counter("pulka_gateway_balance_frames_sent",
		metric.WithDescription("balance frames queued to sockets (one per socket of an account whose ledger changed, and one at connection)"))
	_, _ = meter.Int64ObservableGauge("pulka_gateway_wallets_followed",
		metric.WithDescription("account ledgers this instance follows (accounts with a socket here)"),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			o.Observe(int64(len(f.watchers)))
			return nil
		}))
	return f
}

// Run reads the followed ledgers until ctx ends.
func (f *Follower) Run(ctx context.Context) error { return f.tailer.Run(ctx) }

// Accounts is the number of accounts followed.
func (f *Follower) Accounts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.watchers)
}

// Watch sends sink the account's balance now and after every change, until
// stop is called. Frames carry the balance's version; a sink never gets an
// older version after a newer one.
func (f *Follower) Watch(ctx context.Context, account string, sink hub.Sink) (stop func(), err error) {
	stream := walletclient.LedgerStream(account)
	last, err := f.rdb.XRevRangeN(ctx, stream, "+", "-", 1).Result()
	if err != nil {
		return nil, fmt.Errorf("coins: ledger of %s: %w", account, err)
	}
	w := &watch{sink: sink}
	f.subMu.Lock()
	f.mu.Lock()
	set := f.watchers[stream]
	if set == nil {
		set = map[*watch]struct{}{}
		f.watchers[stream], f.accounts[stream] = set, account
	}
	set[w] = struct{}{}
	first := len(set) == 1
	f.mu.Unlock()
	if first {
		// From the entry just read: what came since is delivered by the
		// tailer (and anything it delivers twice is dropped by version).
		from := "0-0"
		if len(last) == 1 {
			from = last[0].ID
		}
		err = f.tailer.Add(ctx, stream, from)
	}
	f.subMu.Unlock()
	// The socket stops watching when it closes, its context ended by then.
	stop = func() { f.unwatch(context.WithoutCancel(ctx), stream, w) }
	if err != nil {
		stop()
		return nil, fmt.Errorf("coins: follow %s: %w", account, err)
	}
	var frame *wire.Frame
	if len(last) == 1 {
		e, perr := walletclient.ParseLedgerEntry(account, last[0])
		if perr != nil {
			f.log.WarnContext(ctx, "coins: unreadable ledger entry", "account", account, "err", perr)
		} else {
			frame = balanceFrame(account, e)
		}
	}
	if frame == nil {
		// No ledger yet: a zero balance at version 0 (the wallet opens it).
		frame = wire.NewFrame(wire.Balance(&walletv1.Balance{AccountId: account}, nil))
	}
	f.mu.Lock()
	f.send(ctx, w, frame)
	f.mu.Unlock()
	return stop, nil
}

func (f *Follower) unwatch(ctx context.Context, stream string, w *watch) {
	f.subMu.Lock()
	defer f.subMu.Unlock()
	f.mu.Lock()
	set := f.watchers[stream]
	if _, ok := set[w]; !ok {
		f.mu.Unlock()
		return
	}
	delete(set, w)
	empty := len(set) == 0
	if empty {
		delete(f.watchers, stream)
		delete(f.accounts, stream)
	}
	f.mu.Unlock()
	if empty {
		f.tailer.Remove(ctx, stream)
	}
}

// send queues frame to w unless w has that version or a newer one; f.mu held.
func (f *Follower) send(ctx context.Context, w *watch, frame *wire.Frame) {
	v := frame.Message().GetBalance().GetBalance().GetVersion()
	if v < w.last || (v == w.last && v > 0) {
		return
	}
	if w.sink.Send(frame) {
		w.last = v
		f.frames.Add(ctx, 1)
	}
}

// deliver is the tailer's handler: one new ledger entry, sent to every
// socket of its account.
func (f *Follower) deliver(ctx context.Context, m streams.Message) {
	f.mu.Lock()
	account, ok := f.accounts[m.Stream]
	f.mu.Unlock()
	if !ok {
		return
	}
	values := make(map[string]interface{}, len(m.Header)+1)
	for k, v := range m.Header {
		values[k] = v
	}
	if len(m.Data) > 0 {
		values[streams.FieldData] = string(m.Data)
	}
	e, err := walletclient.ParseLedgerEntry(account, redis.XMessage{ID: m.ID, Values: values})
	if err != nil {
		f.log.WarnContext(ctx, "coins: unreadable ledger entry", "account", account, "err", err)
		return
	}
	frame := balanceFrame(account, e)
	f.mu.Lock()
	defer f.mu.Unlock()
	for w := range f.watchers[m.Stream] {
		f.send(ctx, w, frame)
	}
}

func balanceFrame(account string, e *walletv1.LedgerEntry) *wire.Frame {
	return wire.NewFrame(wire.Balance(&walletv1.Balance{AccountId: account, Available: e.GetAvailableAfter(),
		Held: e.GetHeldAfter(), Version: e.GetSeq()}, e))
}
