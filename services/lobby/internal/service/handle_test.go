package service

import (
	"context"
	"testing"

	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/lobbyclient"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
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
	rdb.HSet(ctx, lobbyclient.TableKey("broken"), "rev", 1, "summary", "\xff\xff")
	reply := lobbyclient.ReplyStream("test")
	cmd := sit("broken", 1, "secret")
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
		t.Fatalf("last delivery: %v (it would go to the dead-letter stream, password and all)", err)
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
	if rdb.Exists(ctx, lobbyclient.ResultKey("c1")).Val() != 0 {
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
