package main

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// wakers are the clock's two ways to wake: the timerfd's (where the kernel
// has one) and the portable time.Timer's.
var wakers = map[string]func() waker{"newWaker": newWaker, "timer": func() waker { return newTimerWaker() }}

// --stagger spreads the tables' first move slots over its length; without
// it they all fall within the first 1/rate. (The bounds allow 50 ms for
// starting on a busy machine under -race.)
func TestSlotClock_StaggerSpreadsTheFirstSlots(t *testing.T) {
	const slack = 50 * time.Millisecond
	for name, w := range wakers {
		t.Run(name, func(t *testing.T) {
			first := func(stagger time.Duration) (lo, hi time.Duration) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				clock := startSlotClock(ctx, w(), func() {})
				start := time.Now()
				chans := make([]<-chan time.Time, 40)
				for i := range chans {
					chans[i] = clock.table(ctx, 10, stagger)
				}
				lo = time.Hour
				for _, c := range chans {
					at := (<-c).Sub(start) // a slot is its scheduled instant, not when it was read
					lo, hi = min(lo, at), max(hi, at)
				}
				return lo, hi
			}
			if lo, hi := first(0); hi > 100*time.Millisecond+slack {
				t.Errorf("without stagger the first slots lie in [%v, %v], want within 1/rate = 100ms", lo, hi)
			}
			lo, hi := first(time.Second)
			if hi > time.Second+slack || hi-lo < 400*time.Millisecond {
				t.Errorf("staggered over 1s, the first slots lie in [%v, %v]", lo, hi)
			}
		})
	}
}

// Each table's slots are its own instants, exactly 1/rate apart, and none
// is handed out before its instant — however the tables interleave, and
// whether or not the reader keeps up.
func TestSlotClock_EachTableGetsItsInstantsInOrderNeverEarly(t *testing.T) {
	for name, w := range wakers {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			clock := startSlotClock(ctx, w(), func() { t.Error("a slot was dropped") })
			rates := []float64{50, 20, 33}
			chans := make([]<-chan time.Time, len(rates))
			for i, r := range rates {
				chans[i] = clock.table(ctx, r, 0)
			}
			for i, c := range chans {
				every := time.Duration(float64(time.Second) / rates[i])
				var prev time.Time
				for n := range 8 {
					if i == 1 && n == 0 {
						time.Sleep(150 * time.Millisecond) // fall behind: slots queue
					}
					at := <-c
					if now := time.Now(); now.Before(at) {
						t.Fatalf("table %d: slot for %v handed out %v early", i, at, at.Sub(now))
					}
					if n > 0 && at.Sub(prev) != every {
						t.Fatalf("table %d: slots %v apart, want %v", i, at.Sub(prev), every)
					}
					prev = at
				}
			}
		})
	}
}

// A table that falls more than its queue behind has its slots dropped and
// counted late; a table whose game ended gets no more slots and leaves
// the schedule.
func TestSlotClock_DropsSlotsOfASaturatedTableAndForgetsAnEndedOne(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var dropped atomic.Int64
	clock := startSlotClock(ctx, newWaker(), func() { dropped.Add(1) })
	clock.queue = 2
	_ = clock.table(ctx, 200, 0) // never read
	gameCtx, endGame := context.WithCancel(ctx)
	ended := clock.table(gameCtx, 200, 0)
	<-ended
	endGame()
	time.Sleep(100 * time.Millisecond) // 20 slots of each table
	if n := dropped.Load(); n < 10 {
		t.Fatalf("%d slots dropped over 20 slots with a queue of 2, want the saturated table's", n)
	}
	clock.mu.Lock()
	left := len(clock.slots)
	clock.mu.Unlock()
	if left != 1 {
		t.Fatalf("%d tables on the schedule, want 1: the ended game's must leave it", left)
	}
	for len(ended) > 0 {
		<-ended
	}
	time.Sleep(30 * time.Millisecond)
	if len(ended) != 0 {
		t.Fatal("the ended game still gets slots")
	}
}

// The clock stops with its context: a table gets nothing more.
func TestSlotClock_StopsWithItsContext(t *testing.T) {
	for name, w := range wakers {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			clock := startSlotClock(ctx, w(), func() {})
			c := clock.table(context.Background(), 50, 0)
			<-c
			cancel()
			time.Sleep(50 * time.Millisecond) // a slot due as it stopped may still come
			for len(c) > 0 {
				<-c
			}
			select {
			case <-c:
				t.Fatal("a stopped clock handed out a slot")
			case <-time.After(300 * time.Millisecond): // 15 slots' time
			}
		})
	}
}

// How late the slots reach their tables: 100 tables at 100 slots a second
// each, read at once. The figure the paced load's lateness rule meets is
// late>1ms (over 1 % and the run reports no latency).
func BenchmarkSlotClock_Lateness(b *testing.B) {
	for _, name := range []string{"newWaker", "timer"} {
		b.Run(name, func(b *testing.B) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			clock := startSlotClock(ctx, wakers[name](), func() {})
			const tables = 100
			lags := make(chan time.Duration, 1024)
			for range tables {
				c := clock.table(ctx, 100, 0)
				go func() {
					for {
						select {
						case at := <-c:
							lags <- time.Since(at)
						case <-ctx.Done():
							return
						}
					}
				}()
			}
			all := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				all = append(all, <-lags)
			}
			b.StopTimer()
			slices.Sort(all)
			q := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))].Microseconds()) }
			late := len(all) - sortSearch(all, time.Millisecond)
			b.ReportMetric(q(0.5), "p50-µs")
			b.ReportMetric(q(0.99), "p99-µs")
			b.ReportMetric(100*float64(late)/float64(len(all)), "late>1ms-%")
		})
	}
}

// sortSearch is the index of the first lag over d in sorted lags.
func sortSearch(lags []time.Duration, d time.Duration) int {
	i, _ := slices.BinarySearchFunc(lags, d, func(l, d time.Duration) int {
		if l > d {
			return 1
		}
		return -1
	})
	return i
}
