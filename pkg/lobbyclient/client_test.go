package lobbyclient

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
)

// echoLobby answers every command on its reply stream, like the lobby does
// (a streams.Replier), after delay.
func echoLobby(ctx context.Context, t *testing.T, rdb *redis.Client, delay time.Duration) {
	replier := streams.NewReplier(rdb, streams.NewPublisher(rdb), ReplyStream(""), time.Minute)
	last := "0"
	for ctx.Err() == nil {
		res, err := rdb.XRead(ctx, &redis.XReadArgs{Streams: []string{CommandStream, last}, Block: 50 * time.Millisecond}).Result()
		if err != nil {
			continue
		}
		for _, m := range res[0].Messages {
			last = m.ID
			var cmd lobbyv1.LobbyCommand
			if err := proto.Unmarshal([]byte(m.Values["data"].(string)), &cmd); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(delay)
			b, _ := proto.Marshal(&lobbyv1.LobbyCommandResult{CommandId: cmd.GetCommandId(), PlayerId: cmd.GetPlayerId(), Accepted: true})
			if err := replier.Reply(ctx, cmd.GetReplyTo(), b); err != nil && ctx.Err() == nil {
				t.Error(err)
			}
		}
	}
}

func runBG(t *testing.T, fn func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); fn(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
}

func TestDo_WaitsForItsOwnReply(t *testing.T) {
	srv := redistest.Start(t)
	runBG(t, func(ctx context.Context) { echoLobby(ctx, t, srv.Client(t), 0) })
	c := NewClient(srv.Client(t), ClientOptions{})
	runBG(t, func(ctx context.Context) { _ = c.Run(ctx) })
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := &lobbyv1.LobbyCommand{PlayerId: string(rune('a' + i))}
			r, err := c.Do(context.Background(), cmd)
			if err != nil || r.GetPlayerId() != cmd.GetPlayerId() || r.GetCommandId() == "" {
				t.Errorf("Do: %v, %v", r, err)
			}
			if cmd.GetReplyTo() != "" || cmd.GetCommandId() != "" {
				t.Error("Do changed the caller's command")
			}
		}()
	}
	wg.Wait()
}

func TestDo_SameCommandIDTwiceBothGetTheResult(t *testing.T) {
	srv := redistest.Start(t)
	runBG(t, func(ctx context.Context) { echoLobby(ctx, t, srv.Client(t), 50*time.Millisecond) })
	c := NewClient(srv.Client(t), ClientOptions{})
	runBG(t, func(ctx context.Context) { _ = c.Run(ctx) })
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r, err := c.Do(context.Background(), &lobbyv1.LobbyCommand{CommandId: "same"}); err != nil || r.GetCommandId() != "same" {
				t.Errorf("Do: %v, %v", r, err)
			}
		}()
	}
	wg.Wait()
}

func TestDo_TimesOutWithoutALobby(t *testing.T) {
	srv := redistest.Start(t)
	c := NewClient(srv.Client(t), ClientOptions{Timeout: 100 * time.Millisecond})
	runBG(t, func(ctx context.Context) { _ = c.Run(ctx) })
	start := time.Now()
	_, err := c.Do(context.Background(), &lobbyv1.LobbyCommand{})
	if !errors.Is(err, ErrTimeout) || time.Since(start) > 2*time.Second {
		t.Fatalf("err = %v after %v", err, time.Since(start))
	}
	if c.caller.Pending() != 0 {
		t.Fatalf("%d waiters left behind", c.caller.Pending())
	}
}

func TestRun_StartedLateStillDeliversEarlierReplies(t *testing.T) {
	srv := redistest.Start(t)
	runBG(t, func(ctx context.Context) { echoLobby(ctx, t, srv.Client(t), 0) })
	c := NewClient(srv.Client(t), ClientOptions{})
	done := make(chan error, 1)
	go func() {
		_, err := c.Do(context.Background(), &lobbyv1.LobbyCommand{CommandId: "early"})
		done <- err
	}()
	time.Sleep(200 * time.Millisecond) // the reply is in the stream by now
	runBG(t, func(ctx context.Context) { _ = c.Run(ctx) })
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
