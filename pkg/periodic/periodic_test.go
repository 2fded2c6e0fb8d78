package periodic

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

func TestEvery_CallsOnThePeriodAndStopsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int32
	done := make(chan struct{})
	go func() {
		Every(ctx, 10*time.Millisecond, func(context.Context) { n.Add(1) })
		close(done)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for n.Load() < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls in 5 s at a 10 ms period", n.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Every did not return when its context ended")
	}
	after := n.Load()
	time.Sleep(50 * time.Millisecond)
	if n.Load() != after {
		t.Fatal("f was called after Every returned")
	}
}

func TestEvery_FirstCallAfterOnePeriod(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	var n atomic.Int32
	Every(ctx, time.Hour, func(context.Context) { n.Add(1) })
	if n.Load() != 0 {
		t.Fatal("f was called before its first period")
	}
}
