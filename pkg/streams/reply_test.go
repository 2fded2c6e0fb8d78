package streams_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
)

var errNoAnswer = errors.New("test: no answer")

// echo is a service answering every request of stream "cmd" (whose data is
// "<reply stream> <id>") with the id, through a Replier under "rep:".
func echo(ctx context.Context, t *testing.T, srv *redistest.Server, delay time.Duration) {
	rdb := srv.Client(t)
	replier := streams.NewReplier(rdb, streams.NewPublisher(rdb), "rep:", time.Minute)
	last := "0"
	for ctx.Err() == nil {
		msgs, err := streams.ReadAfter(ctx, rdb, "cmd", last, 100)
		if err != nil || len(msgs) == 0 {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		for _, m := range msgs {
			last = m.ID
			to, id, _ := strings.Cut(string(m.Data), " ")
			time.Sleep(delay)
			if err := replier.Reply(ctx, to, []byte(id)); err != nil && ctx.Err() == nil {
				t.Error(err)
			}
		}
	}
}

func newEchoCaller(srv *redistest.Server, t *testing.T, timeout time.Duration) *streams.Caller[string] {
	return streams.NewCaller(srv.Client(t), "rep:", func(data []byte) (string, string, error) {
		return string(data), "reply " + string(data), nil
	}, streams.CallerOptions{Instance: "one", Timeout: timeout, ErrTimeout: errNoAnswer})
}

func background(t *testing.T, fn func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { fn(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
}

// Each call gets the reply to its own request, however many run at once, and
// a reply that came before the caller's reader started is not missed.
func TestCaller_EachCallGetsItsOwnReplyEvenOneThatCameBeforeRun(t *testing.T) {
	srv := redistest.Start(t)
	c := newEchoCaller(srv, t, 10*time.Second)
	background(t, func(ctx context.Context) { echo(ctx, t, srv, 0) })
	early := make(chan error, 1)
	go func() {
		r, err := c.Call(context.Background(), streams.Entry{Stream: "cmd", Data: []byte("rep:one early")}, "early")
		if err == nil && r != "reply early" {
			err = errors.New("got " + r)
		}
		early <- err
	}()
	time.Sleep(300 * time.Millisecond) // the reply is in the stream by now
	background(t, func(ctx context.Context) { _ = c.Run(ctx) })
	if err := <-early; err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 50 {
		id := "c" + string(rune('A'+i%26)) + string(rune('a'+i/26))
		wg.Go(func() {
			r, err := c.Call(context.Background(), streams.Entry{Stream: "cmd", Data: []byte("rep:one " + id)}, id)
			if err != nil || r != "reply "+id {
				t.Errorf("call %s: %q, %v", id, r, err)
			}
		})
	}
	wg.Wait()
	if c.Pending() != 0 {
		t.Fatalf("%d calls left waiting", c.Pending())
	}
}

// A call nobody answers ends with the client's own timeout error, and
// leaves nothing waiting.
func TestCaller_UnansweredCallTimesOutWithTheClientsError(t *testing.T) {
	srv := redistest.Start(t)
	c := newEchoCaller(srv, t, 100*time.Millisecond)
	background(t, func(ctx context.Context) { _ = c.Run(ctx) })
	start := time.Now()
	_, err := c.Call(context.Background(), streams.Entry{Stream: "nobody", Data: []byte("x")}, "lost")
	if !errors.Is(err, errNoAnswer) || !strings.Contains(err.Error(), "lost") || time.Since(start) > 2*time.Second {
		t.Fatalf("err = %v after %v", err, time.Since(start))
	}
	if c.Pending() != 0 {
		t.Fatalf("%d calls left waiting", c.Pending())
	}
}

// A Replier writes only under its prefix (a request cannot make a service
// write into another key) and lets what it writes expire.
func TestReplier_RefusesStreamsOutsideItsPrefixAndSetsTheExpiry(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	r := streams.NewReplier(rdb, streams.NewPublisher(rdb), "rep:", time.Minute)
	for _, to := range []string{"table:1:events", "rep:", "re", ""} {
		if err := r.Reply(ctx, to, []byte("x")); !errors.Is(err, streams.ErrNotReplyStream) {
			t.Errorf("reply to %q: %v, want ErrNotReplyStream", to, err)
		}
		if n, _ := rdb.Exists(ctx, to).Result(); n != 0 {
			t.Errorf("reply to %q wrote the key", to)
		}
	}
	if err := r.Reply(ctx, "rep:a", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.PTTL(ctx, "rep:a").Val(); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("reply stream ttl %v, want (0, 1m]", ttl)
	}
	if n := rdb.XLen(ctx, "rep:a").Val(); n != 1 {
		t.Fatalf("reply stream holds %d entries", n)
	}
}
