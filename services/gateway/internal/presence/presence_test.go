package presence

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/redistest"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestTracker_FirstAndLastConnectionAcrossInstances(t *testing.T) {
	srv := redistest.Start(t)
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	a := New(srv.Client(t), time.Minute, c.now) // two gateway instances
	b := New(srv.Client(t), time.Minute, c.now)
	ctx := context.Background()
	if first, err := a.Connect(ctx, "t1", "ana", "a-1"); err != nil || !first {
		t.Fatalf("first connection: %v %v", first, err)
	}
	if first, _ := b.Connect(ctx, "t1", "ana", "b-1"); first {
		t.Fatal("second connection (other instance) counted as first")
	}
	if first, _ := a.Connect(ctx, "t1", "bob", "a-2"); !first {
		t.Fatal("another player's connection is not their first")
	}
	if last, _ := a.Disconnect(ctx, "t1", "ana", "a-1"); last {
		t.Fatal("ana is still connected on b")
	}
	if last, _ := a.Disconnect(ctx, "t1", "ana", "a-1"); last {
		t.Fatal("a repeated disconnect counted as last")
	}
	if last, _ := b.Disconnect(ctx, "t1", "ana", "b-1"); !last {
		t.Fatal("the last connection was not last")
	}
}

func TestTracker_DeadInstanceExpires(t *testing.T) {
	srv := redistest.Start(t)
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	tr := New(srv.Client(t), time.Minute, c.now)
	ctx := context.Background()
	_, _ = tr.Connect(ctx, "t1", "ana", "dead")   // its gateway dies: never disconnects
	_, _ = tr.Connect(ctx, "t1", "ana", "living") // refreshed
	c.add(50 * time.Second)
	if err := tr.Refresh(ctx, "t1", "ana", "living"); err != nil {
		t.Fatal(err)
	}
	c.add(20 * time.Second)
	if last, _ := tr.Disconnect(ctx, "t1", "ana", "living"); !last {
		t.Fatal("an expired connection still counts")
	}
	if first, _ := tr.Connect(ctx, "t1", "ana", "new"); !first {
		t.Fatal("reconnect after everything expired is not first")
	}
}
