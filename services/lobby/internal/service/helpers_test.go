package service

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/lobbyclient"
	"github.com/pulka/pulka/pkg/passhash"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/services/lobby/internal/store"
)

// cheapPasswords keep the tests fast; the hashing itself is package
// password's to test.
var cheapPasswords = passhash.Params{Time: 1, MemoryKiB: 64, Threads: 1}

type env struct {
	t      *testing.T
	srv    *redistest.Server
	rdb    *redis.Client
	client *lobbyclient.Client
	view   *lobbyclient.View
	ids    atomic.Int64
	// clock is the lobbies' shared clock: one second per reading, so
	// tables created one after the other never share a creation time.
	clock atomic.Int64
}

func (e *env) now() time.Time {
	return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(e.clock.Add(1)) * time.Second)
}

func newEnv(t *testing.T, opts ...redistest.Option) *env {
	t.Helper()
	srv := redistest.Start(t, opts...)
	e := &env{t: t, srv: srv, rdb: srv.Client(t)}
	e.client = newTestClient(srv)
	e.view = lobbyclient.NewView(srv.Client(t), lobbyclient.ViewOptions{Block: 100 * time.Millisecond})
	e.run(e.client.Run)
	e.run(e.view.Run)
	return e
}

// run runs fn until the test ends, and waits for it to return.
func (e *env) run(fn func(context.Context) error) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := fn(ctx); err != nil {
			e.t.Errorf("run: %v", err)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	e.t.Cleanup(stop)
	return stop
}

// lobby starts one lobby replica; stop ends it (also done at cleanup).
func (e *env) lobby(name string, mut ...func(*Options)) (svc *Service, stop func()) {
	e.t.Helper()
	opt := Options{
		Name: name, Consumers: 2, SnapshotInterval: 20 * time.Millisecond,
		Password: cheapPasswords, MinIdle: 500 * time.Millisecond, Now: e.now,
		// Tests of other things than the limits create many tables as one
		// player; the limits' own tests set them.
		Limits: Limits{WaitingPerPlayer: 1000, CreatesPerMinute: 1000, GuessesPerPlayer: 1000, GuessesPerTable: 1000, GuessesPerGuesser: 1000,
			CommandsPerMinute: 1000, CoinSitsPerMinute: 1000},
	}
	for _, m := range mut {
		m(&opt)
	}
	svc, err := New(e.srv.Client(e.t), opt)
	if err != nil {
		e.t.Fatal(err)
	}
	stop = e.run(svc.Run)
	deadline := time.Now().Add(5 * time.Second)
	for svc.Ready(context.Background()) != nil {
		if time.Now().After(deadline) {
			e.t.Fatal("lobby not ready")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return svc, stop
}

func (e *env) cmdID() string { return fmt.Sprintf("cmd-%d", e.ids.Add(1)) }

func (e *env) do(player string, cmd *lobbyv1.LobbyCommand) *lobbyv1.LobbyCommandResult {
	e.t.Helper()
	cmd.PlayerId = player
	if cmd.DisplayName == "" {
		cmd.DisplayName = "name of " + player
	}
	if cmd.CommandId == "" {
		cmd.CommandId = e.cmdID()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	r, err := e.client.Do(ctx, cmd)
	if err != nil {
		e.t.Fatalf("Do(%v): %v", cmd, err)
	}
	if r.GetCommandId() != cmd.GetCommandId() {
		e.t.Fatalf("result for %q answers %q", cmd.GetCommandId(), r.GetCommandId())
	}
	return r
}

func (e *env) create(player string, s *lobbyv1.TableSettings, pw string, sit bool) *lobbyv1.LobbyCommandResult {
	e.t.Helper()
	return e.do(player, &lobbyv1.LobbyCommand{Command: &lobbyv1.LobbyCommand_CreateTable{
		CreateTable: &lobbyv1.CreateTable{Name: "table of " + player, Settings: s, Password: pw, SitDown: sit}}})
}

func (e *env) mustCreate(player string, s *lobbyv1.TableSettings, pw string, sit bool) string {
	e.t.Helper()
	r := e.create(player, s, pw, sit)
	if !r.GetAccepted() || r.GetTableId() == "" {
		e.t.Fatalf("create refused: %v", r)
	}
	return r.GetTableId()
}

func sit(table string, seat uint32, pw string) *lobbyv1.LobbyCommand {
	return &lobbyv1.LobbyCommand{Command: &lobbyv1.LobbyCommand_SitDown{SitDown: &lobbyv1.SitDown{TableId: table, Seat: seat, Password: pw}}}
}

func standUp(table string) *lobbyv1.LobbyCommand {
	return &lobbyv1.LobbyCommand{Command: &lobbyv1.LobbyCommand_StandUp{StandUp: &lobbyv1.StandUp{TableId: table}}}
}

func leave(table string) *lobbyv1.LobbyCommand {
	return &lobbyv1.LobbyCommand{Command: &lobbyv1.LobbyCommand_LeaveTable{LeaveTable: &lobbyv1.LeaveTable{TableId: table}}}
}

func fillBots(table string) *lobbyv1.LobbyCommand {
	return &lobbyv1.LobbyCommand{Command: &lobbyv1.LobbyCommand_FillWithBots{FillWithBots: &lobbyv1.FillWithBots{TableId: table}}}
}

func finish(table string) *lobbyv1.LobbyCommand {
	return &lobbyv1.LobbyCommand{Command: &lobbyv1.LobbyCommand_FinishTable{FinishTable: &lobbyv1.FinishTable{TableId: table}}}
}

func (e *env) fetch(id string) *lobbyv1.TableSummary {
	e.t.Helper()
	s, err := lobbyclient.Fetch(context.Background(), e.rdb, id)
	if err != nil {
		e.t.Fatalf("fetch %s: %v", id, err)
	}
	return s
}

// starts returns every TableStarted on lobbyclient.TableStartStream.
func (e *env) starts() []*lobbyv1.TableStarted {
	e.t.Helper()
	msgs, err := e.rdb.XRange(context.Background(), lobbyclient.TableStartStream, "-", "+").Result()
	if err != nil {
		e.t.Fatal(err)
	}
	out := make([]*lobbyv1.TableStarted, len(msgs))
	for i, m := range msgs {
		out[i] = &lobbyv1.TableStarted{}
		if err := proto.Unmarshal([]byte(m.Values["data"].(string)), out[i]); err != nil {
			e.t.Fatal(err)
		}
	}
	return out
}

// lobbyState is the lobby's own list, read straight from Redis, in the
// snapshot's order.
func (e *env) lobbyState() *lobbyv1.LobbyView {
	e.t.Helper()
	ctx := context.Background()
	meta, err := e.rdb.HGetAll(ctx, store.MetaKey).Result()
	if err != nil {
		e.t.Fatal(err)
	}
	vals, err := e.rdb.HVals(ctx, store.ListedKey).Result()
	if err != nil {
		e.t.Fatal(err)
	}
	var version uint64
	if meta["version"] != "" {
		if _, err := fmt.Sscan(meta["version"], &version); err != nil {
			e.t.Fatal(err)
		}
	}
	v, err := store.BuildView(version, meta["stream_id"], vals)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

// converge waits until view shows exactly the lobby's current list.
func (e *env) converge(view *lobbyclient.View) {
	e.t.Helper()
	want := e.lobbyState()
	deadline := time.After(10 * time.Second)
	for {
		changed := view.Changed()
		if view.Version() == want.GetVersion() {
			got := view.List(nil)
			if len(got) != len(want.GetTables()) {
				e.t.Fatalf("view at version %d has %d tables, lobby %d", want.GetVersion(), len(got), len(want.GetTables()))
			}
			for i := range got {
				if !proto.Equal(got[i], want.GetTables()[i]) {
					e.t.Fatalf("view table %d:\n got %v\nwant %v", i, got[i], want.GetTables()[i])
				}
			}
			return
		}
		select {
		case <-changed:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			e.t.Fatalf("view stuck at version %d, lobby at %d", view.Version(), want.GetVersion())
		}
	}
}

func classic(mut ...func(*lobbyv1.TableSettings)) *lobbyv1.TableSettings {
	s := &lobbyv1.TableSettings{
		Game:           lobbyv1.Game_GAME_CLASSIC,
		ClassicVariant: lobbyv1.ClassicVariant_CLASSIC_VARIANT_STANDARD,
		Khishti:        lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_200,
		Premia:         true, Moshla: true, RestDocked: true,
		Visibility: lobbyv1.TableVisibility_TABLE_VISIBILITY_PUBLIC,
	}
	for _, m := range mut {
		m(s)
	}
	return s
}

func japanese(target uint32, mut ...func(*lobbyv1.TableSettings)) *lobbyv1.TableSettings {
	s := &lobbyv1.TableSettings{
		Game: lobbyv1.Game_GAME_JAPANESE, JapaneseTarget: target,
		Visibility: lobbyv1.TableVisibility_TABLE_VISIBILITY_PUBLIC,
	}
	for _, m := range mut {
		m(s)
	}
	return s
}

func private(s *lobbyv1.TableSettings) {
	s.Visibility = lobbyv1.TableVisibility_TABLE_VISIBILITY_PRIVATE
}

var freeStake = &lobbyv1.Stake{Kind: &lobbyv1.Stake_Free{Free: &lobbyv1.FreeStake{}}}

func redistestPersistence() redistest.Option { return redistest.WithPersistence() }

type redisXAdd struct {
	stream string
	data   []byte
}

func (x *redisXAdd) args() *redis.XAddArgs {
	return &redis.XAddArgs{Stream: x.stream, Values: []interface{}{"data", x.data}}
}

func newTestClient(srv *redistest.Server) *lobbyclient.Client {
	return lobbyclient.NewClient(srv.NewClient(), lobbyclient.ClientOptions{Timeout: 10 * time.Second})
}

func seatChanged(table string, seat uint32, player, name string, bot bool, seq uint64) *lobbyv1.LobbyCommand {
	return &lobbyv1.LobbyCommand{Command: &lobbyv1.LobbyCommand_SeatChanged{SeatChanged: &lobbyv1.SeatChanged{
		TableId: table, Seat: seat, PlayerId: player, DisplayName: name, Bot: bot, EventSeq: seq}}}
}
