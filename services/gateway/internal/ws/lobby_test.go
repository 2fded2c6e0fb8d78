package ws

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/lobbyclient"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/ports"
)

// viewPort adapts a real lobbyclient.View (as the server package does).
type viewPort struct{ *lobbyclient.View }

func (v viewPort) Fetch(context.Context, string) (*lobbyv1.TableSummary, error) { return nil, nil }
func (v viewPort) Since(after uint64) ([]ports.LobbyChange, uint64, bool) {
	chs, ver, ok := v.View.Since(after)
	out := make([]ports.LobbyChange, len(chs))
	for i, c := range chs {
		out[i] = ports.LobbyChange{Version: c.Version, Upserted: c.Upserted, Removed: c.Removed}
	}
	return out, ver, ok
}

// lobbyWriter appends LobbyUpdates to the view stream as the lobby does.
type lobbyWriter struct {
	t       *testing.T
	rdb     *redis.Client
	mu      sync.Mutex
	version uint64
}

func lobbyTable(i int, game lobbyv1.Game) *lobbyv1.TableSummary {
	return &lobbyv1.TableSummary{TableId: fmt.Sprintf("t%05d", i), Name: fmt.Sprintf("table %d", i),
		CreatedAt: timestamppb.New(time.Unix(1_700_000_000+int64(i), 0)), Status: lobbyv1.TableStatus_TABLE_STATUS_WAITING,
		Settings: &lobbyv1.TableSettings{Game: game, Visibility: lobbyv1.TableVisibility_TABLE_VISIBILITY_PUBLIC}}
}

// listTables lists n tables (Japanese where japanese says so, classic
// otherwise) and waits until view has them all.
func listTables(lw *lobbyWriter, view *lobbyclient.View, n int, japanese func(int) bool) {
	ups := make([]*lobbyv1.LobbyUpdate, 0, n)
	for i := range n {
		game := lobbyv1.Game_GAME_CLASSIC
		if japanese(i) {
			game = lobbyv1.Game_GAME_JAPANESE
		}
		ups = append(ups, upsert(lobbyTable(i, game)))
	}
	lw.write(ups...)
	for view.Version() != uint64(n) {
		time.Sleep(5 * time.Millisecond)
	}
}

func (w *lobbyWriter) write(changes ...*lobbyv1.LobbyUpdate) {
	w.t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	pipe := w.rdb.Pipeline()
	for _, u := range changes {
		w.version++
		u.Version = w.version
		b, _ := proto.Marshal(u)
		pipe.XAdd(context.Background(), &redis.XAddArgs{Stream: lobbyclient.ViewStream, Values: []any{"data", b}})
	}
	if _, err := pipe.Exec(context.Background()); err != nil {
		w.t.Fatal(err)
	}
}

func upsert(t *lobbyv1.TableSummary) *lobbyv1.LobbyUpdate {
	return &lobbyv1.LobbyUpdate{Change: &lobbyv1.LobbyUpdate_TableUpserted{TableUpserted: t}}
}

func removal(id string) *lobbyv1.LobbyUpdate {
	return &lobbyv1.LobbyUpdate{Change: &lobbyv1.LobbyUpdate_TableRemoved{TableRemoved: id}}
}

// lobbyEnv is a gateway whose lobby view follows a real view stream.
func (e *env) lobbyEnv(t *testing.T, cfg Config) (*gateway, *lobbyWriter, *lobbyclient.View) {
	t.Helper()
	view := lobbyclient.NewView(e.redis.Client(t), lobbyclient.ViewOptions{Block: 50 * time.Millisecond, History: 8192})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = view.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	g := e.gatewayCfg(t, cfg, func(d *Deps) { d.Lobby = viewPort{view} })
	return g, &lobbyWriter{t: t, rdb: e.rdb}, view
}

// watcher is a client's copy of its lobby window, built from the frames
// as a client must: a lobby_view replaces it (and starts the numbering),
// each lobby_update must be numbered one after the last frame.
type watcher struct {
	c       *client
	tables  map[string]*lobbyv1.TableSummary
	more    bool
	seq     uint64
	views   int
	updates int
}

// watchLobby logs a player in, asks to watch the lobby (watch is the
// request's body), and returns the watcher once its first view came.
func watchLobby(t *testing.T, g *gateway, watch map[string]any) *watcher {
	t.Helper()
	w := &watcher{c: g.login(t, "ana")}
	w.c.send(map[string]any{"lobby": watch})
	w.readUntil(t, 5*time.Second, "the first view", func() bool { return w.views == 1 })
	return w
}

func (w *watcher) apply(t *testing.T, raw []byte) {
	t.Helper()
	var f gatewayv1.ServerFrame
	if err := protojson.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	switch wire.ServerFrameType(&f) {
	case "lobby_view":
		v := f.GetLobbyView()
		w.tables, w.more, w.seq = map[string]*lobbyv1.TableSummary{}, v.GetMore(), v.GetVersion()
		for _, tb := range v.GetTables() {
			w.tables[tb.GetTableId()] = tb
		}
		w.views++
	case "lobby_update":
		u := f.GetLobbyUpdate()
		if u.GetVersion() != w.seq+1 {
			t.Fatalf("lobby_update numbered %d after %d: a gap", u.GetVersion(), w.seq)
		}
		w.seq = u.GetVersion()
		if tb := u.GetTableUpserted(); tb != nil {
			w.tables[tb.GetTableId()] = tb
		} else {
			delete(w.tables, u.GetTableRemoved())
		}
		w.updates++
	default:
		t.Fatalf("unexpected frame %s", raw)
	}
}

// readUntil applies frames until ok holds or the time is up.
func (w *watcher) readUntil(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		_, b, err := w.c.c.Read(ctx)
		cancel()
		if err != nil {
			t.Fatalf("waiting for %s: %v (have %d tables, %d views, %d updates)", what, err, len(w.tables), w.views, w.updates)
		}
		w.apply(t, b)
	}
}

func (w *watcher) ids() []string {
	out := make([]string, 0, len(w.tables))
	for id := range w.tables {
		out = append(out, id)
	}
	sort.Sort(sort.Reverse(sort.StringSlice(out)))
	return out
}

func newest(from, n int) []string {
	var out []string
	for i := from; i > from-n && i >= 0; i-- {
		out = append(out, fmt.Sprintf("t%05d", i))
	}
	return out
}

func equal(a, b []string) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

func TestLobby_AWatcherSeesAWindowOfTheNewestAndItsChanges(t *testing.T) {
	e := newEnv(t)
	g, lw, view := e.lobbyEnv(t, Config{LobbyWindow: 10, LobbyInterval: 20 * time.Millisecond})
	var ups []*lobbyv1.LobbyUpdate
	for i := range 30 {
		ups = append(ups, upsert(lobbyTable(i, lobbyv1.Game_GAME_CLASSIC)))
	}
	lw.write(ups...)
	for view.Version() != 30 {
		time.Sleep(5 * time.Millisecond)
	}
	w := watchLobby(t, g, map[string]any{"watch": true})
	if !equal(w.ids(), newest(29, 10)) || !w.more {
		t.Fatalf("first view %v (more %v), want the newest 10 and more", w.ids(), w.more)
	}
	// A new table enters at the top and pushes the oldest out; a change of
	// a table outside the window is not sent; a table in it that changes is.
	changed := lobbyTable(25, lobbyv1.Game_GAME_CLASSIC)
	changed.Name = "renamed"
	lw.write(upsert(lobbyTable(30, lobbyv1.Game_GAME_CLASSIC)), upsert(lobbyTable(3, lobbyv1.Game_GAME_JAPANESE)), upsert(changed))
	w.readUntil(t, 5*time.Second, "the new table and the rename", func() bool {
		return equal(w.ids(), newest(30, 10)) && w.tables["t00025"].GetName() == "renamed"
	})
	// Removing a table in the window brings the next one in.
	lw.write(removal("t00028"))
	want := append(newest(30, 2), newest(27, 8)...)
	w.readUntil(t, 5*time.Second, "the removal", func() bool { return equal(w.ids(), want) })
	time.Sleep(100 * time.Millisecond)
	if w.updates != 5 {
		t.Fatalf("%d updates: want 5 (new, pushed out, renamed, removed, brought in), nothing for the table outside the window", w.updates)
	}
}

// Only a lobby_view carries More: when the tables beyond the window come or
// go without the window changing, the watcher gets a new view, or it would
// keep offering more tables than there are (found by the flood test, which
// met it when the last of many removals left the window as it was).
func TestLobby_MoreFollowsTheTablesBeyondTheWindow(t *testing.T) {
	e := newEnv(t)
	g, lw, view := e.lobbyEnv(t, Config{LobbyWindow: 2, LobbyInterval: 10 * time.Millisecond})
	lw.write(upsert(lobbyTable(0, lobbyv1.Game_GAME_CLASSIC)), upsert(lobbyTable(1, lobbyv1.Game_GAME_CLASSIC)),
		upsert(lobbyTable(2, lobbyv1.Game_GAME_CLASSIC)))
	for view.Version() != 3 {
		time.Sleep(5 * time.Millisecond)
	}
	w := watchLobby(t, g, map[string]any{"watch": true})
	if !equal(w.ids(), newest(2, 2)) || !w.more {
		t.Fatalf("first view %v (more %v), want the newest 2 and more", w.ids(), w.more)
	}
	lw.write(removal("t00000")) // beyond the window: the window stays, More goes
	w.readUntil(t, 5*time.Second, "a view without more", func() bool { return !w.more })
	if !equal(w.ids(), newest(2, 2)) || w.views != 2 {
		t.Fatalf("window %v after %d views, want the same 2 tables in a second view", w.ids(), w.views)
	}
	lw.write(upsert(lobbyTable(0, lobbyv1.Game_GAME_CLASSIC))) // and back
	w.readUntil(t, 5*time.Second, "a view with more", func() bool { return w.more })
	if !equal(w.ids(), newest(2, 2)) || w.views != 3 {
		t.Fatalf("window %v after %d views, want the same 2 tables in a third view", w.ids(), w.views)
	}
}

func TestLobby_AWatcherChoosesAFilterAndASmallerWindow(t *testing.T) {
	e := newEnv(t)
	g, lw, view := e.lobbyEnv(t, Config{LobbyWindow: 10, LobbyInterval: 20 * time.Millisecond})
	listTables(lw, view, 30, func(i int) bool { return i%3 == 0 })
	w := watchLobby(t, g, map[string]any{"watch": true, "filter": map[string]any{"game": "GAME_JAPANESE"}, "limit": 4})
	if !equal(w.ids(), []string{"t00027", "t00024", "t00021", "t00018"}) || !w.more {
		t.Fatalf("japanese window %v", w.ids())
	}
	// Asking for more than the gateway's window gets the gateway's window.
	w.c.send(map[string]any{"lobby": map[string]any{"watch": true, "limit": 1000}})
	w.readUntil(t, 5*time.Second, "the second view", func() bool { return w.views == 2 })
	if len(w.tables) != 10 {
		t.Fatalf("a window of %d, the gateway's is 10", len(w.tables))
	}
	// A bad filter is refused with the frame's error.
	w.c.send(map[string]any{"lobby": map[string]any{"watch": true, "filter": map[string]any{"game": 9}}})
	if f := w.c.nextOf("error"); f["code"] != "invalid_message" {
		t.Fatalf("bad filter: %v", f)
	}
}

// 3,000 tables created in a burst, then closed in a burst: a watcher whose
// send queue holds only 64 frames stays connected, gets a bounded number
// of frames, and ends with the newest window.
func TestLobby_AFloodOfTablesCannotDropAWatcher(t *testing.T) {
	e := newEnv(t)
	g, lw, _ := e.lobbyEnv(t, Config{LobbyWindow: 100, LobbyInterval: 50 * time.Millisecond, SendQueueFrames: 64})
	w := watchLobby(t, g, map[string]any{"watch": true})
	const n = 3000
	go func() {
		for i := 0; i < n; i += 100 {
			var ups []*lobbyv1.LobbyUpdate
			for j := i; j < i+100; j++ {
				ups = append(ups, upsert(lobbyTable(j, lobbyv1.Game_GAME_CLASSIC)))
			}
			lw.write(ups...)
			time.Sleep(5 * time.Millisecond)
		}
	}()
	w.readUntil(t, 30*time.Second, "the newest 100 of 3000", func() bool { return equal(w.ids(), newest(n-1, 100)) })
	t.Logf("3000 tables: %d views and %d updates", w.views, w.updates)
	if w.views+w.updates > 300 {
		t.Fatalf("%d frames for one flood: not bounded by the interval", w.views+w.updates)
	}
	var rem []*lobbyv1.LobbyUpdate
	for i := n - 1; i >= 100; i-- {
		rem = append(rem, removal(fmt.Sprintf("t%05d", i)))
	}
	lw.write(rem...)
	w.readUntil(t, 30*time.Second, "the 100 left", func() bool { return equal(w.ids(), newest(99, 100)) && !w.more })
	// Still connected: a ping is answered.
	w.c.send(map[string]any{"ref": "p", "ping": map[string]any{}})
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, b, err := w.c.c.Read(ctx)
		cancel()
		if err != nil {
			t.Fatalf("the watcher was dropped: %v", err)
		}
		if typ, _ := typeOf(b); typ == "pong" {
			break
		}
		w.apply(t, b)
	}
}

// Property: whatever the lobby does (tables appear, change game and name,
// leave), a watcher's window, rebuilt from its frames without a gap,
// converges to the view's newest tables that pass its filter, each as the
// lobby shows it now.
func TestLobby_TheWindowFollowsRandomChanges(t *testing.T) {
	e := newEnv(t)
	g, lw, view := e.lobbyEnv(t, Config{LobbyWindow: 12, LobbyInterval: 10 * time.Millisecond})
	rng := rand.New(rand.NewPCG(17, 4))
	filter := &lobbyv1.TableFilter{Game: lobbyv1.Game_GAME_CLASSIC}
	w := watchLobby(t, g, map[string]any{"watch": true, "filter": map[string]any{"game": "GAME_CLASSIC"}})
	next := 0
	live := map[int]bool{}
	for burst := range 30 {
		var ups []*lobbyv1.LobbyUpdate
		for range 1 + rng.IntN(40) {
			switch op := rng.IntN(10); {
			case op < 5 || len(live) == 0: // a new table
				game := lobbyv1.Game_GAME_CLASSIC
				if rng.IntN(3) == 0 {
					game = lobbyv1.Game_GAME_JAPANESE
				}
				ups = append(ups, upsert(lobbyTable(next, game)))
				live[next] = true
				next++
			default: // change or remove a live one
				ids := make([]int, 0, len(live))
				for id := range live {
					ids = append(ids, id)
				}
				sort.Ints(ids)
				id := ids[rng.IntN(len(ids))]
				if op < 8 {
					game := lobbyv1.Game_GAME_CLASSIC
					if rng.IntN(2) == 0 {
						game = lobbyv1.Game_GAME_JAPANESE
					}
					tb := lobbyTable(id, game)
					tb.Name = fmt.Sprint("burst ", burst)
					ups = append(ups, upsert(tb))
				} else {
					ups = append(ups, removal(fmt.Sprintf("t%05d", id)))
					delete(live, id)
				}
			}
		}
		lw.write(ups...)
		for view.Version() != lw.version {
			time.Sleep(2 * time.Millisecond)
		}
		want, _ := view.Page(filter, 0, 12)
		w.readUntil(t, 5*time.Second, fmt.Sprint("the window after burst ", burst), func() bool {
			if len(w.tables) != len(want) {
				return false
			}
			for _, tb := range want {
				if got, ok := w.tables[tb.GetTableId()]; !ok || !proto.Equal(got, tb) {
					return false
				}
			}
			return true
		})
	}
	t.Logf("%d tables over 30 bursts: %d views, %d updates", next, w.views, w.updates)
}

// A watch sent again restarted the watch with a whole view at once, so a
// client looping on it drew a window's worth per frame (780 times what it
// sent). A new watch's first view now waits until an interval after the
// last, and only the last of the watches sent meanwhile gets one: the one
// with the filter the client wants now.
func TestLobby_AWatchSentAgainWaitsForTheInterval(t *testing.T) {
	e := newEnv(t)
	const interval = 600 * time.Millisecond
	g, lw, view := e.lobbyEnv(t, Config{LobbyWindow: 100, LobbyInterval: interval, Rate: 1000, Burst: 1000})
	listTables(lw, view, 100, func(i int) bool { return i%2 == 1 })
	w := watchLobby(t, g, map[string]any{"watch": true})
	first := time.Now()
	for range 39 {
		w.c.send(map[string]any{"lobby": map[string]any{"watch": true}})
	}
	w.c.send(map[string]any{"lobby": map[string]any{"watch": true, "filter": map[string]any{"game": "GAME_JAPANESE"}}})
	w.readUntil(t, 5*time.Second, "the last watch's view", func() bool { return w.views == 2 })
	if since := time.Since(first); since < interval-50*time.Millisecond {
		t.Fatalf("the second view came %v after the first, within the interval (%v)", since, interval)
	}
	for id, tb := range w.tables {
		if tb.GetSettings().GetGame() != lobbyv1.Game_GAME_JAPANESE {
			t.Fatalf("the view after the last watch shows %s, a %v table: not the last watch's filter", id, tb.GetSettings().GetGame())
		}
	}
	// Nothing more: the 39 watches replaced before their turn got no view.
	ctx, cancel := context.WithTimeout(context.Background(), 2*interval)
	defer cancel()
	for {
		_, b, err := w.c.c.Read(ctx)
		if err != nil {
			break
		}
		if typ, _ := typeOf(b); typ == "lobby_view" {
			t.Fatal("a third view for watches replaced before their turn")
		}
	}
}
