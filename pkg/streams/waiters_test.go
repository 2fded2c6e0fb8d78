package streams_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/streams"
)

func TestWaiters_DeliverReachesEveryCallOfTheIdAndForgetCleansUp(t *testing.T) {
	w := streams.NewWaiters[string]()
	a, forgetA := w.Register("x")
	b, forgetB := w.Register("x")
	_, forgetC := w.Register("y")
	w.Deliver("x", "done")
	for _, ch := range []<-chan string{a, b} {
		if v, err := streams.Await(context.Background(), ch, errors.New("timeout")); err != nil || v != "done" {
			t.Fatalf("got %q, %v", v, err)
		}
	}
	forgetA()
	forgetB()
	if w.Len() != 1 {
		t.Fatalf("%d ids waiting, want 1 (y)", w.Len())
	}
	forgetC()
	if w.Len() != 0 {
		t.Fatalf("%d ids waiting after forget", w.Len())
	}
	w.Deliver("nobody", "dropped") // no waiter: nothing blocks
}

func TestAwait_ADeadlineIsTheTimeoutError(t *testing.T) {
	w := streams.NewWaiters[int]()
	ch, forget := w.Register("z")
	defer forget()
	timeout := errors.New("no reply")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := streams.Await(ctx, ch, timeout); !errors.Is(err, timeout) {
		t.Fatalf("err = %v", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if _, err := streams.Await(ctx, ch, timeout); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}
