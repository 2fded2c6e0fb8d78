package streams

import (
	"context"
	"errors"
	"sync"
)

// Waiters matches the replies a client reads from its reply stream to the
// calls waiting for them, by request id (a command's idempotency key). The
// clients of the services that answer on reply streams (lobbyclient,
// walletclient) register a call before publishing its request and the
// reply reader delivers each reply to every call registered under its id.
type Waiters[T any] struct {
	mu sync.Mutex
	m  map[string][]chan T
}

// NewWaiters makes an empty set of waiters.
func NewWaiters[T any]() *Waiters[T] { return &Waiters[T]{m: map[string][]chan T{}} }

// Register adds a call waiting for id's reply; forget removes it (call it
// when the call returns, answered or not).
func (w *Waiters[T]) Register(id string) (reply <-chan T, forget func()) {
	ch := make(chan T, 1)
	w.mu.Lock()
	w.m[id] = append(w.m[id], ch)
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		ws := w.m[id]
		for i, x := range ws {
			if x == ch {
				ws = append(ws[:i], ws[i+1:]...)
				break
			}
		}
		if len(ws) == 0 {
			delete(w.m, id)
		} else {
			w.m[id] = ws
		}
	}
}

// Deliver hands v to every call waiting for id (none: it is dropped, e.g.
// the reply of a call that timed out).
func (w *Waiters[T]) Deliver(id string, v T) {
	w.mu.Lock()
	ws := w.m[id]
	delete(w.m, id)
	w.mu.Unlock()
	for _, ch := range ws {
		ch <- v // buffered: one reply per registration
	}
}

// Len is the number of ids with waiting calls.
func (w *Waiters[T]) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.m)
}

// Await waits for a registered call's reply until ctx ends; a deadline
// that passes is returned as timeout.
func Await[T any](ctx context.Context, reply <-chan T, timeout error) (T, error) {
	select {
	case v := <-reply:
		return v, nil
	case <-ctx.Done():
		var zero T
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return zero, timeout
		}
		return zero, ctx.Err()
	}
}
