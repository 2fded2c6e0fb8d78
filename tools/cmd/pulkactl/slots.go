package main

import (
	"container/heap"
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"time"
)

// slotClock hands out the paced load's move slots: every table gets one
// every 1/rate seconds from its own random phase, and the slots of all the
// tables come from this one clock.
//
// Why not a time.Timer per table: a Go timer wakes an idle process through
// epoll_wait, whose timeout is in whole milliseconds, so it fires up to a
// millisecond late — on an idle core, 1,000 tables' timers at 1/s were
// 0.55 ms late at the median and 7.7 % of them more than 1 ms late, which is
// the paced run's own lateness rule (issue 24). The clock's wake-ups come
// from a kernel timer the netpoller waits on (a timerfd on Linux), exact
// to microseconds: same core, same load, 28 µs at the median and 0.4 % over
// 1 ms. Where there is no timerfd it falls back to a time.Timer.
type slotClock struct {
	mu    sync.Mutex
	slots slotHeap
	wake  waker
	armed time.Time // the instant wake is armed for (zero: disarmed)
	queue int       // slots a table may fall behind (slotQueue)
	// late counts slots dropped because their table was over slotQueue
	// behind (the run is saturated).
	late func()
}

// slotQueue is how many slots a table may fall behind before its slots are
// dropped and counted late.
const slotQueue = 4096

// waker wakes the clock's goroutine at an instant: arm sets (or moves) it,
// wait blocks until it passes or the waker is closed.
type waker interface {
	arm(at time.Time) error
	wait() error
	close() error
}

// errWakerClosed ends the clock's goroutine.
var errWakerClosed = errors.New("slot clock: closed")

// newSlotClock starts the clock; it stops when ctx ends. late is called for
// each slot dropped because its table's queue was full.
func newSlotClock(ctx context.Context, late func()) *slotClock {
	return startSlotClock(ctx, newWaker(), late)
}

// startSlotClock runs a clock on w.
func startSlotClock(ctx context.Context, w waker, late func()) *slotClock {
	c := &slotClock{wake: w, late: late, queue: slotQueue}
	go func() {
		<-ctx.Done()
		_ = w.close()
	}()
	go c.run()
	return c
}

// table starts a table's slots, one every 1/rate seconds from a random
// phase within max(1/rate, stagger) (tables that started together would
// otherwise reach every hand's end together), until ctx ends. It never
// waits for answers: when the table falls behind, slots queue up and
// count from their own instants.
func (c *slotClock) table(ctx context.Context, rate float64, stagger time.Duration) <-chan time.Time {
	every := time.Duration(float64(time.Second) / rate)
	s := &tableSlots{ctx: ctx, every: every, out: make(chan time.Time, c.queue),
		next: time.Now().Add(rand.N(max(every, stagger)))}
	c.mu.Lock()
	defer c.mu.Unlock()
	heap.Push(&c.slots, s)
	c.rearm()
	return s.out
}

// run hands out the due slots each time the waker fires.
func (c *slotClock) run() {
	for {
		if err := c.wake.wait(); err != nil {
			return
		}
		now := time.Now()
		c.mu.Lock()
		c.armed = time.Time{}
		for len(c.slots) > 0 && !c.slots[0].next.After(now) {
			s := c.slots[0]
			if s.ctx.Err() != nil { // its game is over
				heap.Pop(&c.slots)
				continue
			}
			select {
			case s.out <- s.next:
			default:
				c.late()
			}
			s.next = s.next.Add(s.every)
			heap.Fix(&c.slots, 0)
		}
		c.rearm()
		c.mu.Unlock()
	}
}

// rearm points the waker at the earliest slot; c.mu is held.
func (c *slotClock) rearm() {
	if len(c.slots) == 0 {
		return
	}
	at := c.slots[0].next
	if !c.armed.IsZero() && !at.Before(c.armed) {
		return // it wakes in time for this one already
	}
	if err := c.wake.arm(at); err == nil {
		c.armed = at
	}
}

// tableSlots is one table's schedule.
type tableSlots struct {
	ctx   context.Context
	every time.Duration
	next  time.Time
	out   chan time.Time
}

// slotHeap orders the tables by their next slot.
type slotHeap []*tableSlots

func (h slotHeap) Len() int           { return len(h) }
func (h slotHeap) Less(i, j int) bool { return h[i].next.Before(h[j].next) }
func (h slotHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *slotHeap) Push(x any)        { *h = append(*h, x.(*tableSlots)) }
func (h *slotHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return x
}

// timerWaker is the portable waker: a time.Timer, which an idle process
// sees up to a millisecond late.
type timerWaker struct {
	t    *time.Timer
	done chan struct{}
	once sync.Once
}

func newTimerWaker() *timerWaker {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &timerWaker{t: t, done: make(chan struct{})}
}

func (w *timerWaker) arm(at time.Time) error {
	w.t.Reset(time.Until(at))
	return nil
}

func (w *timerWaker) wait() error {
	select {
	case <-w.t.C:
		return nil
	case <-w.done:
		return errWakerClosed
	}
}

func (w *timerWaker) close() error {
	w.once.Do(func() { close(w.done) })
	return nil
}
