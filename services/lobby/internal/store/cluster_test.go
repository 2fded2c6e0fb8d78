package store

import (
	"context"
	"testing"
	"time"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/lobbyclient"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
)

// On a real three-master Redis Cluster every store operation works: the
// commit touches the lobby's keys and streams in its slot and forwards to a
// table's stream in another slot; the rate limits, snapshot and summaries
// too. A CROSSSLOT anywhere fails the test.
func TestStore_WorksOnAMultiNodeCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, 0)
	rdb := cl.Client(t)
	s := New(rdb, Config{})
	ctx := context.Background()
	tb := table(t, "x")
	if _, err := s.Commit(ctx, Change{CommandID: "c1", Result: accepted("c1", "x"), Table: tb, List: ListUpsert,
		Members: []string{"h"}, WaitingLimit: 3, IdleDeadline: time.Now().Add(time.Hour),
		Started: &lobbyv1.TableStarted{TableId: "x"}}); err != nil {
		t.Fatalf("commit: %v", err)
	}
	fwd := &tablev1.Command{CommandId: "fw", TableId: "x"}
	if _, err := s.Commit(ctx, Change{CommandID: "c2", Result: accepted("c2", "x"), Forward: fwd}); err != nil {
		t.Fatalf("commit a forward: %v", err)
	}
	if n := rdb.XLen(ctx, streams.TableCommands("x")).Val(); n != 1 {
		t.Fatalf("%d forwarded commands, want 1", n)
	}
	if n := rdb.XLen(ctx, lobbyclient.TableStartStream).Val(); n != 1 {
		t.Fatalf("%d starts, want 1", n)
	}
	if _, _, err := s.WriteSnapshot(ctx); err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	if _, err := lobbyclient.Fetch(ctx, rdb, "x"); err != nil {
		t.Fatalf("fetch the summary: %v", err)
	}
	if _, err := s.PublishSummaries(ctx); err != nil {
		t.Fatalf("publish summaries: %v", err)
	}
	if full, _, err := s.Take(ctx, time.Now(), "m", Rate{Key: CreateRateKey("h"), Limit: 2, Window: time.Minute},
		Rate{Key: GuessRateKey("x", "h"), Limit: 2, Window: time.Minute}, Rate{Key: GuesserRateKey("h"), Limit: 2, Window: time.Minute}); err != nil || full != -1 {
		t.Fatalf("take = %d, %v", full, err)
	}
	if _, _, err := s.Result(ctx, "c1"); err != nil {
		t.Fatal(err)
	}
}

// A lobby that died between a commit and its forward's append leaves the
// forward in ForwardKey: the command's redelivery (Result, or Commit's
// duplicate) appends it, once more at most.
func TestCommit_AForwardLeftBehindGoesOutWithTheRepeat(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	s := New(rdb, Config{})
	ctx := context.Background()
	fwd := &tablev1.Command{CommandId: "fw", TableId: "f"}
	if _, err := s.Commit(ctx, Change{CommandID: "c1", Result: accepted("c1", "f"), Forward: fwd}); err != nil {
		t.Fatal(err)
	}
	// As if the lobby had died before the append: the stream lost the
	// entry, the forward is still waiting.
	data := rdb.XRange(ctx, streams.TableCommands("f"), "-", "+").Val()[0].Values[streams.FieldData]
	rdb.Del(ctx, streams.TableCommands("f"))
	rdb.HSet(ctx, ForwardKey("c1"), "table", "f", "data", data)
	if _, ok, err := s.Result(ctx, "c1"); err != nil || !ok {
		t.Fatalf("result: %v, %v", ok, err)
	}
	if n := rdb.XLen(ctx, streams.TableCommands("f")).Val(); n != 1 {
		t.Fatalf("%d forwarded commands after the repeat, want 1", n)
	}
	if rdb.Exists(ctx, ForwardKey("c1")).Val() != 0 {
		t.Fatal("the forward is still waiting after its append")
	}
	// Commit's duplicate does the same.
	rdb.HSet(ctx, ForwardKey("c1"), "table", "f", "data", data)
	c, err := s.Commit(ctx, Change{CommandID: "c1", Result: accepted("c1", "f"), Forward: fwd})
	if err != nil || c.Duplicate == nil {
		t.Fatalf("repeat: %+v, %v", c, err)
	}
	if n := rdb.XLen(ctx, streams.TableCommands("f")).Val(); n != 2 {
		t.Fatalf("%d forwarded commands after the duplicate, want 2", n)
	}
	// Nothing waiting: a repeat appends nothing.
	if _, err := s.Commit(ctx, Change{CommandID: "c1", Result: accepted("c1", "f"), Forward: fwd}); err != nil {
		t.Fatal(err)
	}
	if n := rdb.XLen(ctx, streams.TableCommands("f")).Val(); n != 2 {
		t.Fatalf("%d forwarded commands, want still 2", n)
	}
}
