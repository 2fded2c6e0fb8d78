package ws

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
)

var (
	errOutboxFull   = errors.New("ws: send queue full")
	errOutboxClosed = errors.New("ws: connection closed")
)

// outbox is one connection's bounded queue of frames to write. Producers
// (the hub's reader, other connections' goroutines) never block on it: a
// push that would exceed the bounds fails and the connection is dropped as
// too slow. Memory grows only with what is actually queued, so idle
// connections cost nothing.
type outbox struct {
	mu     sync.Mutex
	frames [][]byte
	// traces are the spans the writes of some queued frames belong to
	// (pushTraced): only frames of sampled traces have one, so the slice is
	// nil on the hot path.
	traces    []trace.SpanContext
	bytes     int
	maxFrames int
	maxBytes  int
	closed    bool
	ready     chan struct{} // signalled when frames were added
	space     chan struct{} // signalled when frames were taken
	// A frame pushed with pushLazy may wait up to lazyWait for company
	// (lazy signals ready then); every other push writes it at once.
	lazyWait time.Duration
	lazy     *time.Timer // made on the first lazy push: idle connections have none
}

func newOutbox(maxFrames, maxBytes int, lazyWait time.Duration) *outbox {
	return &outbox{maxFrames: maxFrames, maxBytes: maxBytes, lazyWait: lazyWait,
		ready: make(chan struct{}, 1), space: make(chan struct{}, 1)}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// push queues f without blocking, to be written at once.
func (o *outbox) push(f []byte) error { return o.pushTraced(f, trace.SpanContext{}) }

// pushTraced is push for a frame whose write belongs to the span sc (none
// when sc is not valid).
func (o *outbox) pushTraced(f []byte, sc trace.SpanContext) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.add(f); err != nil {
		return err
	}
	if sc.IsValid() {
		o.traces = append(o.traces, sc)
	}
	if o.lazy != nil {
		o.lazy.Stop()
	}
	signal(o.ready)
	return nil
}

// pushLazy queues f without blocking, to be written with the next frame
// pushed or after lazyWait, whichever comes first: an ack, which the
// table's answer to the command usually follows within a few
// milliseconds, then leaves in the same system call as that answer, and
// the client wakes once for both.
func (o *outbox) pushLazy(f []byte) error {
	if o.lazyWait <= 0 {
		return o.push(f)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	// Frames already queued were signalled or timed by their own push:
	// f goes with them.
	due := len(o.frames) > 0
	if err := o.add(f); err != nil {
		return err
	}
	if due {
		return nil
	}
	if o.lazy == nil {
		o.lazy = time.AfterFunc(o.lazyWait, o.lazyDue)
	} else {
		o.lazy.Reset(o.lazyWait)
	}
	return nil
}

// lazyDue wakes the writer for a lazy frame whose wait is over, unless a
// take already had it: a timer that fired as take stopped it must not
// leave a signal for a batch that is gone.
func (o *outbox) lazyDue() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.frames) > 0 {
		signal(o.ready)
	}
}

// add appends f within the bounds; o.mu is held.
func (o *outbox) add(f []byte) error {
	if o.closed {
		return errOutboxClosed
	}
	if len(o.frames) >= o.maxFrames || o.bytes+len(f) > o.maxBytes {
		return errOutboxFull
	}
	o.frames = append(o.frames, f)
	o.bytes += len(f)
	return nil
}

// pushWait queues f, waiting for room: only for the connection's own
// goroutine (a replay), which may wait for its own client.
func (o *outbox) pushWait(ctx context.Context, f []byte) error {
	for {
		err := o.push(f)
		if !errors.Is(err, errOutboxFull) {
			return err
		}
		select {
		case <-o.space:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// take removes and returns everything queued, and the spans the writes of
// those frames belong to.
func (o *outbox) take() ([][]byte, []trace.SpanContext) {
	o.mu.Lock()
	defer o.mu.Unlock()
	fs, ts := o.frames, o.traces
	o.frames, o.traces, o.bytes = nil, nil, 0
	if o.lazy != nil {
		o.lazy.Stop() // what it would have woken the writer for is taken
	}
	// A push between the writer's wake-up and this take signalled again
	// for frames taken now. Left there, that signal would wake the writer
	// for the next lazy frame at once instead of after its wait. Every
	// signal for queued frames is sent under o.mu, so what is drained here
	// is only ever for frames this take has.
	select {
	case <-o.ready:
	default:
	}
	if len(fs) > 0 {
		signal(o.space)
	}
	return fs, ts
}

// close refuses further pushes and wakes waiters.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	if o.lazy != nil {
		o.lazy.Stop()
	}
	o.mu.Unlock()
	signal(o.space)
	signal(o.ready)
}
