package ws

import (
	"context"
	"errors"
	"sync"
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
	mu        sync.Mutex
	frames    [][]byte
	bytes     int
	maxFrames int
	maxBytes  int
	closed    bool
	ready     chan struct{} // signalled when frames were added
	space     chan struct{} // signalled when frames were taken
}

func newOutbox(maxFrames, maxBytes int) *outbox {
	return &outbox{maxFrames: maxFrames, maxBytes: maxBytes,
		ready: make(chan struct{}, 1), space: make(chan struct{}, 1)}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// push queues f without blocking.
func (o *outbox) push(f []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return errOutboxClosed
	}
	if len(o.frames) >= o.maxFrames || o.bytes+len(f) > o.maxBytes {
		return errOutboxFull
	}
	o.frames = append(o.frames, f)
	o.bytes += len(f)
	signal(o.ready)
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

// take removes and returns everything queued.
func (o *outbox) take() [][]byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	fs := o.frames
	o.frames, o.bytes = nil, 0
	if len(fs) > 0 {
		signal(o.space)
	}
	return fs
}

// close refuses further pushes and wakes waiters.
func (o *outbox) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	signal(o.space)
	signal(o.ready)
}
