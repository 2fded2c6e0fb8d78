package service

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/lobbyclient"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/services/lobby/internal/store"
)

func TestHandle_FailingCommandIsRetriedThenAnsweredUnavailable(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	svc, err := New(rdb, Options{MaxDeliveries: 3, Password: cheapPasswords})
	if err != nil {
		t.Fatal(err)
	}
	// A table record that cannot be read: every attempt fails the same way.
	rdb.HSet(ctx, store.TableKey("broken"), "rev", 1, "summary", "\xff\xff")
	reply := lobbyclient.ReplyStream("test")
	// A command without a password: those are handled by the consumer
	// itself (password commands: TestHandle_FailingPasswordCommand...).
	cmd := standUp("broken")
	cmd.CommandId, cmd.PlayerId, cmd.ReplyTo = "c1", "p", reply
	data, _ := proto.Marshal(cmd)
	id := rdb.XAdd(ctx, (&redisXAdd{lobbyclient.CommandStream, data}).args()).Val()
	msg := streams.Message{Stream: lobbyclient.CommandStream, ID: id, Data: data}

	for d := int64(1); d < 3; d++ {
		msg.Deliveries = d
		if err := svc.handle(ctx, msg); err == nil {
			t.Fatalf("delivery %d: a failing command was acknowledged", d)
		}
		if n := rdb.XLen(ctx, reply).Val(); n != 0 {
			t.Fatalf("delivery %d answered early", d)
		}
	}
	msg.Deliveries = 3
	if err := svc.handle(ctx, msg); err != nil {
		t.Fatalf("last delivery: %v (it would go to the dead-letter stream)", err)
	}
	msgs := rdb.XRange(ctx, reply, "-", "+").Val()
	var r lobbyv1.LobbyCommandResult
	if len(msgs) != 1 || proto.Unmarshal([]byte(msgs[0].Values["data"].(string)), &r) != nil ||
		r.GetReason() != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_UNAVAILABLE || r.GetCommandId() != "c1" {
		t.Fatalf("answer %v", msgs)
	}
	if rdb.XLen(ctx, lobbyclient.CommandStream).Val() != 0 {
		t.Fatal("the command (with its password) is still in the stream")
	}
	if rdb.Exists(ctx, store.ResultKey("c1")).Val() != 0 {
		t.Fatal("UNAVAILABLE was stored: a later retry could never succeed")
	}
}

// A command with a password is acknowledged at once and handed to a
// password worker, so it never reaches the dead-letter stream with its
// password; when it keeps failing the worker answers UNAVAILABLE, stores
// nothing and deletes the entry.
func TestHandle_FailingPasswordCommandIsAnsweredUnavailableAndNeverKept(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	svc, err := New(rdb, Options{Password: cheapPasswords, Limits: Limits{PasswordWorkers: 1}})
	if err != nil {
		t.Fatal(err)
	}
	rdb.HSet(ctx, store.TableKey("broken"), "rev", 1, "summary", "\xff\xff")
	reply := lobbyclient.ReplyStream("test")
	cmd := sit("broken", 1, "secret")
	cmd.CommandId, cmd.PlayerId, cmd.ReplyTo = "c1", "p", reply
	data, _ := proto.Marshal(cmd)
	id := rdb.XAdd(ctx, (&redisXAdd{lobbyclient.CommandStream, data}).args()).Val()
	msg := streams.Message{Stream: lobbyclient.CommandStream, ID: id, Data: data, Deliveries: 1}
	if err := svc.handle(ctx, msg); err != nil {
		t.Fatalf("a password command was left pending: %v", err)
	}
	done := make(chan struct{})
	go func() { defer close(done); svc.hashWorker() }()
	deadline := time.Now().Add(5 * time.Second)
	for rdb.XLen(ctx, reply).Val() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no answer")
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(svc.hashJobs)
	close(svc.createJobs)
	<-done
	msgs := rdb.XRange(ctx, reply, "-", "+").Val()
	var r lobbyv1.LobbyCommandResult
	if len(msgs) != 1 || proto.Unmarshal([]byte(msgs[0].Values["data"].(string)), &r) != nil ||
		r.GetReason() != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_UNAVAILABLE || r.GetCommandId() != "c1" {
		t.Fatalf("answer %v", msgs)
	}
	if rdb.XLen(ctx, lobbyclient.CommandStream).Val() != 0 {
		t.Fatal("the command (with its password) is still in the stream")
	}
	if rdb.Exists(ctx, store.ResultKey("c1")).Val() != 0 {
		t.Fatal("UNAVAILABLE was stored: a later retry could never succeed")
	}
}

func TestHandle_UndecodableEntryIsDropped(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	svc, err := New(rdb, Options{})
	if err != nil {
		t.Fatal(err)
	}
	id := rdb.XAdd(ctx, (&redisXAdd{lobbyclient.CommandStream, []byte("\xff\xff")}).args()).Val()
	if err := svc.handle(ctx, streams.Message{Stream: lobbyclient.CommandStream, ID: id, Data: []byte("\xff\xff"), Deliveries: 1}); err != nil {
		t.Fatalf("poison entry not acknowledged: %v", err)
	}
	if rdb.XLen(ctx, lobbyclient.CommandStream).Val() != 0 {
		t.Fatal("poison entry kept")
	}
}
