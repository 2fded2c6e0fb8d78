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
// connections cost nothing: not even a writer. A push that finds no writer
// running starts one (start), which writes until nothing is due and ends;
// a goroutine waiting for frames held a stack of 8 KB, a third of an idle
// connection's memory (issue 24).
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
	// due says the queued frames are to be written now (an eager push, or
	// a lazy frame's wait over); running, that a writer is at work. start
	// begins a writer; it is called with mu held, so it must not block.
	due     bool
	running bool
	start   func()
	space   chan struct{} // signalled when frames were taken
	// A frame pushed with pushLazy may wait up to lazyWait for company
	// (lazy makes it due then); every other push makes it due at once.
	lazyWait time.Duration
	lazy     *time.Timer // made on the first lazy push: idle connections have none
	lazyAt   time.Time   // when the lazy frames queued are due
}

func newOutbox(maxFrames, maxBytes int, lazyWait time.Duration, start func()) *outbox {
	return &outbox{maxFrames: maxFrames, maxBytes: maxBytes, lazyWait: lazyWait, start: start,
		space: make(chan struct{}, 1)}
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
	o.makeDue()
	return nil
}

// makeDue has the queued frames written now, starting a writer if none is
// running; o.mu is held.
func (o *outbox) makeDue() {
	o.due = true
	o.ensureWriter()
}

// ensureWriter starts a writer unless one is running; o.mu is held.
func (o *outbox) ensureWriter() {
	if !o.running {
		o.running = true
		o.start()
	}
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
	// Frames already queued are due or timed by their own push: f goes
	// with them.
	queued := len(o.frames) > 0
	if err := o.add(f); err != nil {
		return err
	}
	if queued {
		return nil
	}
	o.lazyAt = time.Now().Add(o.lazyWait)
	if o.lazy == nil {
		o.lazy = time.AfterFunc(o.lazyWait, o.lazyDue)
	} else {
		o.lazy.Reset(o.lazyWait)
	}
	return nil
}

// lazyDue makes a lazy frame whose wait is over due, unless a writer
// already took it (a timer that fired as next stopped it), the outbox
// closed (its last writer takes what is left), or the frames queued now
// came after that timer fired and wait for the timer reset by their push.
func (o *outbox) lazyDue() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.frames) > 0 && !o.closed && !time.Now().Before(o.lazyAt) {
		o.makeDue()
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

// next is the writer's next batch: every frame queued, and the spans their
// writes belong to, when they are due. With nothing due the writer is done
// (ok false): the next push that is due starts another. Once the outbox is
// closed, closed is true and the batch is whatever was left, due or not;
// the writer then ends after dealing with it.
func (o *outbox) next() (frames [][]byte, traces []trace.SpanContext, closed, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if !o.due && !o.closed {
		o.running = false
		return nil, nil, false, false
	}
	frames, traces = o.frames, o.traces
	o.frames, o.traces, o.bytes, o.due = nil, nil, 0, false
	if o.lazy != nil {
		o.lazy.Stop() // what it would have made due is taken
	}
	if len(frames) > 0 {
		signal(o.space)
	}
	return frames, traces, o.closed, true
}

// close refuses further pushes and wakes waiters. With flush a writer
// deals with what is left (next says closed): the running one, or one
// started here; without, a running writer stops at its next batch and
// what is queued stays unwritten.
func (o *outbox) close(flush bool) {
	o.mu.Lock()
	o.closed = true
	if o.lazy != nil {
		o.lazy.Stop()
	}
	if flush {
		o.ensureWriter()
	}
	o.mu.Unlock()
	signal(o.space)
}
