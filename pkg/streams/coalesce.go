package streams

import (
	"context"
	"sync"
	"sync/atomic"
)

// coalescer turns concurrent calls into batches sent by one flush: while a
// batch is in flight the next calls queue, and are sent together when it
// returns. Under light load each call goes out at once (no linger timer);
// under heavy load batches grow up to maxBatch. Batcher (XADDs) and
// FencedBatcher (fenced appends) are both one.
//
// There is no sending goroutine: a caller that finds a flush slot free sends
// what is queued (its own request first in line) itself, so a lone call
// costs one round trip and no hand-over to another goroutine and back.
type coalescer[In, Out any] struct {
	ctx      context.Context // the flushes': the creator's values, no cancellation
	maxBatch int
	queue    chan *pending[In, Out]
	slots    chan struct{} // one token per flush that may be in flight
	mu       sync.RWMutex
	closed   bool
	calls    sync.WaitGroup // calls that queued a request
	once     sync.Once
	// flush sends a batch and sets every request's out and err; it must
	// not keep the requests.
	flush   func(ctx context.Context, batch []*pending[In, Out])
	reqs    sync.Pool // *pending[In, Out]
	batches sync.Pool // *[]*pending[In, Out]
}

// pending is one queued call.
type pending[In, Out any] struct {
	ctx   context.Context // the caller's (its trace), not the flush's
	in    In
	out   Out
	err   error
	taken atomic.Bool // a sender took it from the queue
	ready chan struct{}
}

// newCoalescer makes a coalescer with `flushers` batches in flight at most
// (1 keeps the order of concurrent calls; more raises throughput). Its
// flushes run with ctx's values but not its cancellation (a queued caller
// always gets an answer); when ctx ends it closes itself.
func newCoalescer[In, Out any](ctx context.Context, maxBatch, flushers int, flush func(context.Context, []*pending[In, Out])) *coalescer[In, Out] {
	if maxBatch <= 0 {
		maxBatch = 128
	}
	if flushers <= 0 {
		flushers = 1
	}
	c := &coalescer[In, Out]{ctx: context.WithoutCancel(ctx), maxBatch: maxBatch, flush: flush,
		queue: make(chan *pending[In, Out], maxBatch*flushers), slots: make(chan struct{}, flushers)}
	c.reqs.New = func() any { return &pending[In, Out]{ready: make(chan struct{}, 1)} }
	c.batches.New = func() any { return new([]*pending[In, Out]) }
	context.AfterFunc(ctx, c.close)
	return c
}

// do queues in and waits until its batch returned.
func (c *coalescer[In, Out]) do(ctx context.Context, in In) (Out, error) {
	var zero Out
	r := c.reqs.Get().(*pending[In, Out])
	r.ctx, r.in, r.out, r.err = ctx, in, zero, nil
	r.taken.Store(false)
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		c.reqs.Put(r)
		return zero, ErrClosed
	}
	c.calls.Add(1)
	select {
	case c.queue <- r:
		c.mu.RUnlock()
	case <-ctx.Done():
		c.calls.Done()
		c.mu.RUnlock()
		c.reqs.Put(r)
		return zero, ctx.Err()
	}
	// Once queued, the request is always sent and answered (by this call or
	// another), so waiting here cannot leak it.
	c.await(r)
	out, err := r.out, r.err
	var in0 In
	r.ctx, r.in, r.out = nil, in0, zero
	c.reqs.Put(r)
	c.calls.Done()
	return out, err
}

// await returns once r is answered. Until another caller takes r, whenever
// a flush slot is free this caller takes the queue (r included) and sends
// it. Every queued request's caller is here, so a non-empty queue always
// has someone to send it.
func (c *coalescer[In, Out]) await(r *pending[In, Out]) {
	for {
		select {
		case <-r.ready:
			return
		case c.slots <- struct{}{}:
		}
		if r.taken.Load() {
			// In another caller's batch: it answers r.
			<-c.slots
			<-r.ready
			return
		}
		batch := c.take()
		if len(*batch) > 0 {
			c.flush(c.ctx, *batch)
			for _, q := range *batch {
				q.ready <- struct{}{}
			}
		}
		empty := len(*batch) == 0
		clear(*batch)
		*batch = (*batch)[:0]
		c.batches.Put(batch)
		<-c.slots
		if empty {
			// r left the queue between the check and the take.
			<-r.ready
			return
		}
	}
}

// take removes up to maxBatch queued requests without waiting.
func (c *coalescer[In, Out]) take() *[]*pending[In, Out] {
	batch := c.batches.Get().(*[]*pending[In, Out])
	for len(*batch) < c.maxBatch {
		select {
		case r := <-c.queue:
			r.taken.Store(true)
			*batch = append(*batch, r)
		default:
			return batch
		}
	}
	return batch
}

// close stops taking requests (do returns ErrClosed) and waits until every
// queued request was sent and answered.
func (c *coalescer[In, Out]) close() {
	c.once.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		c.calls.Wait()
	})
}
