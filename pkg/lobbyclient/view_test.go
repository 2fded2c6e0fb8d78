package lobbyclient

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/redistest"
)

// fakeLobby writes the view stream and snapshot the way the lobby does, so
// the View can be driven through gaps and resets the real lobby only
// produces under load or data loss.
type fakeLobby struct {
	t       *testing.T
	rdb     *redis.Client
	version uint64
	tables  map[string]*lobbyv1.TableSummary
	lastID  string
}

func newFakeLobby(t *testing.T, rdb *redis.Client) *fakeLobby {
	return &fakeLobby{t: t, rdb: rdb, tables: map[string]*lobbyv1.TableSummary{}, lastID: "0"}
}

func summary(id string, created int64) *lobbyv1.TableSummary {
	return &lobbyv1.TableSummary{TableId: id, Name: "t " + id, CreatedAt: timestamppb.New(time.Unix(created, 0)),
		Settings: &lobbyv1.TableSettings{Game: lobbyv1.Game_GAME_CLASSIC}}
}

// update applies and publishes one change; publish=false makes a gap.
func (f *fakeLobby) update(u *lobbyv1.LobbyUpdate, publish bool) {
	f.t.Helper()
	f.version++
	u.Version = f.version
	switch c := u.GetChange().(type) {
	case *lobbyv1.LobbyUpdate_TableUpserted:
		f.tables[c.TableUpserted.GetTableId()] = c.TableUpserted
	case *lobbyv1.LobbyUpdate_TableRemoved:
		delete(f.tables, c.TableRemoved)
	}
	if !publish {
		return
	}
	b, _ := proto.Marshal(u)
	id, err := f.rdb.XAdd(context.Background(), &redis.XAddArgs{Stream: ViewStream, Values: []interface{}{"data", b}}).Result()
	if err != nil {
		f.t.Fatal(err)
	}
	f.lastID = id
}

func (f *fakeLobby) upsert(id string, created int64, publish bool) {
	f.update(&lobbyv1.LobbyUpdate{Change: &lobbyv1.LobbyUpdate_TableUpserted{TableUpserted: summary(id, created)}}, publish)
}

func (f *fakeLobby) snapshot() {
	f.t.Helper()
	v := &lobbyv1.LobbyView{Version: f.version, StreamId: f.lastID}
	for _, t := range f.tables {
		v.Tables = append(v.Tables, t)
	}
	b, _ := proto.Marshal(v)
	if err := f.rdb.Set(context.Background(), SnapshotKey, b, 0).Err(); err != nil {
		f.t.Fatal(err)
	}
}

func startView(t *testing.T, srv *redistest.Server) *View {
	v := NewView(srv.Client(t), ViewOptions{Block: 50 * time.Millisecond, History: 4})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = v.Run(ctx) }()
	t.Cleanup(func() { cancel(); wg.Wait() })
	return v
}

func waitFor(t *testing.T, v *View, what string, ok func() bool) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		ch := v.Changed()
		if ok() {
			return
		}
		select {
		case <-ch:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("view never got %s (version %d, %d tables)", what, v.Version(), len(v.List(nil)))
		}
	}
}

func (f *fakeLobby) matches(v *View) bool {
	if v.Version() != f.version || len(v.List(nil)) != len(f.tables) {
		return false
	}
	for id, want := range f.tables {
		if got, ok := v.Get(id); !ok || !proto.Equal(got, want) {
			return false
		}
	}
	return true
}

func TestView_LoadsSnapshotThenAppliesLaterUpdates(t *testing.T) {
	srv := redistest.Start(t)
	f := newFakeLobby(t, srv.Client(t))
	f.upsert("a", 1, true)
	f.upsert("b", 2, true)
	f.snapshot()
	f.upsert("c", 3, true)
	v := startView(t, srv)
	waitFor(t, v, "the lobby's list", func() bool { return f.matches(v) })
	if got := v.List(nil); got[0].GetTableId() != "c" || got[2].GetTableId() != "a" {
		t.Fatalf("not newest first: %v", got)
	}
	f.update(&lobbyv1.LobbyUpdate{Change: &lobbyv1.LobbyUpdate_TableRemoved{TableRemoved: "b"}}, true)
	waitFor(t, v, "the removal", func() bool { return f.matches(v) })
}

func TestView_GapInVersionsReloadsTheSnapshot(t *testing.T) {
	srv := redistest.Start(t)
	f := newFakeLobby(t, srv.Client(t))
	f.upsert("a", 1, true)
	f.snapshot()
	v := startView(t, srv)
	waitFor(t, v, "the first table", func() bool { return f.matches(v) })
	f.upsert("lost", 2, false) // never reaches the stream (trimmed away)
	f.upsert("c", 3, true)
	time.Sleep(150 * time.Millisecond)
	if _, ok := v.Get("c"); ok {
		t.Fatal("an update after a gap was applied")
	}
	f.snapshot() // the lobby's next snapshot covers the gap
	waitFor(t, v, "the state after the gap", func() bool { return f.matches(v) })
}

func TestView_VersionsGoingBackwardsReloads(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	f := newFakeLobby(t, rdb)
	for i := range 5 {
		f.upsert(fmt.Sprint("old", i), int64(i), true)
	}
	f.snapshot()
	v := startView(t, srv)
	waitFor(t, v, "the old list", func() bool { return f.matches(v) })
	// Redis lost everything (no persistence) and the lobby started over.
	if err := rdb.FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	f = newFakeLobby(t, rdb)
	f.upsert("new", 10, true)
	waitFor(t, v, "the new list", func() bool { return f.matches(v) })
}

func TestView_SinceIsIncompleteBeyondItsHistory(t *testing.T) {
	srv := redistest.Start(t)
	f := newFakeLobby(t, srv.Client(t))
	f.snapshot()
	v := startView(t, srv)
	waitFor(t, v, "the empty list", func() bool { return v.Loaded() })
	for i := range 6 {
		f.upsert(fmt.Sprint("t", i), int64(i), true)
	}
	waitFor(t, v, "six tables", func() bool { return f.matches(v) })
	if changes, _, complete := v.Since(4); !complete || len(changes) != 2 || changes[0].Upserted.GetTableId() != "t4" {
		t.Fatalf("Since(4) = %v, %v", changes, complete)
	}
	if _, _, complete := v.Since(1); complete {
		t.Fatal("Since beyond the history (4 changes) claims to be complete")
	}
	if changes, version, complete := v.Since(6); !complete || len(changes) != 0 || version != 6 {
		t.Fatalf("Since(now) = %v, %d, %v", changes, version, complete)
	}
}

func TestFetch_UnknownTable(t *testing.T) {
	srv := redistest.Start(t)
	if _, err := Fetch(context.Background(), srv.Client(t), "nope"); !errors.Is(err, ErrTableNotFound) {
		t.Fatalf("err = %v", err)
	}
}

func TestView_PageIsAWindowOfTheFilteredList(t *testing.T) {
	srv := redistest.Start(t)
	f := newFakeLobby(t, srv.Client(t))
	for i := range 10 {
		f.upsert(fmt.Sprint("t", i), int64(i), true)
	}
	// Japanese tables: t10, t11.
	for i := 10; i < 12; i++ {
		s := summary(fmt.Sprint("t", i), int64(i))
		s.Settings.Game = lobbyv1.Game_GAME_JAPANESE
		f.update(&lobbyv1.LobbyUpdate{Change: &lobbyv1.LobbyUpdate_TableUpserted{TableUpserted: s}}, true)
	}
	v := startView(t, srv)
	waitFor(t, v, "the lobby's list", func() bool { return f.matches(v) })
	ids := func(ts []*lobbyv1.TableSummary) string {
		out := ""
		for _, t := range ts {
			out += t.GetTableId() + " "
		}
		return out
	}
	classic := &lobbyv1.TableFilter{Game: lobbyv1.Game_GAME_CLASSIC}
	for _, tc := range []struct {
		name          string
		filter        *lobbyv1.TableFilter
		offset, limit int
		want          string
		more          bool
	}{
		{"the newest three", nil, 0, 3, "t11 t10 t9 ", true},
		{"the newest three classic", classic, 0, 3, "t9 t8 t7 ", true},
		{"a later page", classic, 3, 3, "t6 t5 t4 ", true},
		{"the last page, exactly full", classic, 7, 3, "t2 t1 t0 ", false},
		{"past the end", classic, 10, 3, "", false},
		{"a window larger than the list", nil, 0, 100, "t11 t10 t9 t8 t7 t6 t5 t4 t3 t2 t1 t0 ", false},
		{"an empty window", nil, 0, 0, "", true},
	} {
		got, more := v.Page(tc.filter, tc.offset, tc.limit)
		if ids(got) != tc.want || more != tc.more {
			t.Errorf("%s: %q more %v; want %q more %v", tc.name, ids(got), more, tc.want, tc.more)
		}
	}
}

// A page is walked once per change of the view and shared by everyone who
// asks for it (lobby watchers with the same filter); the next change, an
// update or a reload, walks again.
func TestView_PageIsSharedUntilTheNextChange(t *testing.T) {
	srv := redistest.Start(t)
	f := newFakeLobby(t, srv.Client(t))
	for i := range 3 {
		f.upsert(fmt.Sprint("t", i), int64(i), true)
	}
	v := startView(t, srv)
	waitFor(t, v, "the lobby's list", func() bool { return f.matches(v) })
	japanese := &lobbyv1.TableFilter{Game: lobbyv1.Game_GAME_JAPANESE}
	first, _ := v.Page(japanese, 0, 10)
	again, _ := v.Page(&lobbyv1.TableFilter{Game: lobbyv1.Game_GAME_JAPANESE}, 0, 10) // an equal filter
	if len(first) != 0 || len(again) != 0 {
		t.Fatalf("japanese tables %v %v", first, again)
	}
	if all, _ := v.Page(nil, 0, 10); len(all) != 3 {
		t.Fatalf("another filter shares nothing: %d tables", len(all))
	}
	if v.pagesGen != v.gen || len(v.pages) != 2 {
		t.Fatalf("%d pages kept for generation %d (view at %d), want 2 for the current", len(v.pages), v.pagesGen, v.gen)
	}
	s := summary("j", 10)
	s.Settings.Game = lobbyv1.Game_GAME_JAPANESE
	f.update(&lobbyv1.LobbyUpdate{Change: &lobbyv1.LobbyUpdate_TableUpserted{TableUpserted: s}}, true)
	waitFor(t, v, "the japanese table", func() bool { return f.matches(v) })
	if got, _ := v.Page(japanese, 0, 10); len(got) != 1 || got[0].GetTableId() != "j" {
		t.Fatalf("after the change: %v", got)
	}
}
