package streams_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
)

func TestPresence_EntryParsesBack(t *testing.T) {
	for _, away := range []bool{true, false} {
		e := streams.PresenceEntry("t1", "alice", away)
		if e.Stream != streams.TableCommands("t1") || len(e.Data) != 0 {
			t.Fatalf("entry %+v: want a data-less entry on the table's command stream", e)
		}
		player, gotAway, is, err := streams.ParsePresence(streams.Message{Header: e.Header})
		if err != nil || !is || player != "alice" || gotAway != away {
			t.Fatalf("ParsePresence = %q %v %v %v, want alice %v", player, gotAway, is, err, away)
		}
	}
}

func TestPresence_CommandsAreNotPresenceAndJunkIsAnError(t *testing.T) {
	if _, _, is, err := streams.ParsePresence(streams.Message{Data: []byte{1}}); is || err != nil {
		t.Fatalf("a command entry read as presence: %v %v", is, err)
	}
	for _, h := range []map[string]string{
		{"presence": "away"},
		{"presence": "gone", "player": "bob"},
	} {
		if _, _, is, err := streams.ParsePresence(streams.Message{Header: h}); !is || !errors.Is(err, streams.ErrBadPresence) {
			t.Fatalf("header %v: is=%v err=%v, want ErrBadPresence", h, is, err)
		}
	}
}

func TestConnected_CountsOnlyConnectionsNotExpiredByRedisClock(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	connected := func() bool {
		t.Helper()
		ok, err := streams.Connected(ctx, rdb, "t1", "ana")
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if connected() {
		t.Fatal("connected with no presence at all")
	}
	key := streams.TablePresence("t1", "ana")
	expired := redis.Z{Score: float64(time.Now().Add(-time.Minute).UnixMilli()), Member: "gone"}
	if err := rdb.ZAdd(ctx, key, expired).Err(); err != nil {
		t.Fatal(err)
	}
	if connected() {
		t.Fatal("an expired connection counts")
	}
	live := redis.Z{Score: float64(time.Now().Add(time.Minute).UnixMilli()), Member: "live"}
	if err := rdb.ZAdd(ctx, key, live).Err(); err != nil {
		t.Fatal(err)
	}
	if !connected() {
		t.Fatal("a live connection does not count")
	}
	if ok, _ := streams.Connected(ctx, rdb, "t1", "bob"); ok {
		t.Fatal("another player counts as connected")
	}
}
