package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/lobbyclient"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/services/lobby/internal/domain"
)

func table(t *testing.T, id string) *domain.Table {
	t.Helper()
	tb, err := domain.NewTable(id, domain.Player{ID: "h"}, &lobbyv1.CreateTable{Settings: &lobbyv1.TableSettings{
		Game: lobbyv1.Game_GAME_JAPANESE, Visibility: lobbyv1.TableVisibility_TABLE_VISIBILITY_PUBLIC,
	}}, time.Unix(1, 0), nil)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func accepted(cmd, tableID string) *lobbyv1.LobbyCommandResult {
	return &lobbyv1.LobbyCommandResult{CommandId: cmd, PlayerId: "h", Accepted: true, TableId: tableID}
}

func TestCommit_VersionIsPrependedAsAVarintOfAnySize(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	s := New(rdb, Config{})
	ctx := context.Background()
	for i, start := range []uint64{0, 127, 16_383, 1 << 40} {
		if err := rdb.HSet(ctx, MetaKey, "version", start).Err(); err != nil {
			t.Fatal(err)
		}
		id := string(rune('a' + i))
		done, err := s.Commit(ctx, Change{CommandID: "c" + id, Result: accepted("c"+id, id), Table: table(t, id), List: ListUpsert})
		if err != nil {
			t.Fatal(err)
		}
		msgs, _ := rdb.XRevRangeN(ctx, lobbyclient.ViewStream, "+", "-", 1).Result()
		var u lobbyv1.LobbyUpdate
		if err := proto.Unmarshal([]byte(msgs[0].Values["data"].(string)), &u); err != nil {
			t.Fatal(err)
		}
		if u.GetVersion() != start+1 || done.Version != start+1 || u.GetTableUpserted().GetTableId() != id {
			t.Fatalf("after %d: update %v, committed version %d", start, &u, done.Version)
		}
		if sid, _ := rdb.HGet(ctx, MetaKey, "stream_id").Result(); sid != msgs[0].ID {
			t.Fatalf("meta stream_id %q, entry %q", sid, msgs[0].ID)
		}
	}
}

func TestCommit_StaleRevisionIsAConflictAndWritesNothing(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	s := New(rdb, Config{})
	ctx := context.Background()
	tb := table(t, "x")
	if _, err := s.Commit(ctx, Change{CommandID: "c1", Result: accepted("c1", "x"), Table: tb, List: ListUpsert}); err != nil {
		t.Fatal(err)
	}
	// A second create of the same id (expected revision 0) must conflict.
	_, err := s.Commit(ctx, Change{CommandID: "c2", Result: accepted("c2", "x"), Table: tb, List: ListUpsert})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("err = %v", err)
	}
	if n, _ := rdb.Exists(ctx, ResultKey("c2")).Result(); n != 0 {
		t.Fatal("a conflicting commit stored its result")
	}
	if n, _ := rdb.XLen(ctx, lobbyclient.ViewStream).Result(); n != 1 {
		t.Fatalf("%d view updates", n)
	}
	loaded, rev, err := s.Load(ctx, "x")
	if err != nil || rev != 1 || loaded.ID != "x" {
		t.Fatalf("load: %v %d %v", loaded, rev, err)
	}
}

func TestWriteSnapshot_NeverGoesBackwards(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	s := New(rdb, Config{})
	ctx := context.Background()
	if _, err := s.Commit(ctx, Change{CommandID: "c1", Result: accepted("c1", "x"), Table: table(t, "x"), List: ListUpsert}); err != nil {
		t.Fatal(err)
	}
	if v, wrote, err := s.WriteSnapshot(ctx); err != nil || !wrote || v != 1 {
		t.Fatalf("first snapshot: %d %v %v", v, wrote, err)
	}
	if _, wrote, _ := s.WriteSnapshot(ctx); wrote {
		t.Fatal("an unchanged list was written again")
	}
	// A slow replica that read version 1 must not overwrite version 2.
	if _, err := s.Commit(ctx, Change{CommandID: "c2", Result: accepted("c2", "y"), Table: table(t, "y"), List: ListUpsert}); err != nil {
		t.Fatal(err)
	}
	if _, wrote, _ := s.WriteSnapshot(ctx); !wrote {
		t.Fatal("version 2 not written")
	}
	stale, _ := proto.Marshal(&lobbyv1.LobbyView{Version: 1})
	if n, _ := snapshotWriteScript.Run(ctx, rdb, []string{MetaKey, lobbyclient.SnapshotKey}, 1, stale).Int(); n != 0 {
		t.Fatal("an older snapshot replaced a newer one")
	}
	b, _ := rdb.Get(ctx, lobbyclient.SnapshotKey).Bytes()
	var view lobbyv1.LobbyView
	if err := proto.Unmarshal(b, &view); err != nil || view.GetVersion() != 2 || len(view.GetTables()) != 2 || view.GetStreamId() == "" {
		t.Fatalf("snapshot %v, %v", &view, err)
	}
}

// A command forwarded to a table rings its command stream's bell: the
// table's runner follows that stream with a streams.Tailer, which reads it at
// once only when it rings.
func TestCommit_ForwardRingsTheTableCommandStreamsBell(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	s := New(rdb, Config{})
	ctx := context.Background()
	ps := rdb.Subscribe(ctx, streams.Bell(streams.TableCommands("f")))
	defer ps.Close()
	if _, err := ps.Receive(ctx); err != nil { // the subscription's confirmation
		t.Fatal(err)
	}
	fwd := &tablev1.Command{CommandId: "fw1"}
	if _, err := s.Commit(ctx, Change{CommandID: "c1", Result: accepted("c1", "f"), Forward: fwd}); err != nil {
		t.Fatal(err)
	}
	if n, _ := rdb.XLen(ctx, streams.TableCommands("f")).Result(); n != 1 {
		t.Fatalf("%d forwarded commands", n)
	}
	if _, err := ps.ReceiveTimeout(ctx, 2*time.Second); err != nil {
		t.Fatalf("no bell after a forward: %v", err)
	}
}

// Tables written before the lobby kept the summary read model get it, with
// their expiry, and Fetch finds them; a second run writes nothing.
func TestPublishSummaries_FillsInTheReadModelOfOlderTables(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	s := New(rdb, Config{})
	for _, id := range []string{"old", "new"} {
		if _, err := s.Commit(ctx, Change{CommandID: "c-" + id, Result: accepted("c-"+id, id), Table: table(t, id), List: ListUpsert}); err != nil {
			t.Fatal(err)
		}
	}
	// "old" as an older lobby left it: no read model, an expiry.
	rdb.Del(ctx, lobbyclient.SummaryKey("old"))
	rdb.PExpire(ctx, TableKey("old"), time.Hour)
	if _, err := lobbyclient.Fetch(ctx, rdb, "old"); !errors.Is(err, lobbyclient.ErrTableNotFound) {
		t.Fatalf("Fetch before: %v", err)
	}
	if n, err := s.PublishSummaries(ctx); err != nil || n != 1 {
		t.Fatalf("PublishSummaries = %d, %v; want 1", n, err)
	}
	got, err := lobbyclient.Fetch(ctx, rdb, "old")
	if err != nil || got.GetTableId() != "old" {
		t.Fatalf("Fetch after: %v, %v", got, err)
	}
	if ttl := rdb.PTTL(ctx, lobbyclient.SummaryKey("old")).Val(); ttl <= 0 || ttl > time.Hour {
		t.Fatalf("summary ttl %v, want the table's", ttl)
	}
	if n, err := s.PublishSummaries(ctx); err != nil || n != 0 {
		t.Fatalf("second PublishSummaries = %d, %v; want 0", n, err)
	}
}
