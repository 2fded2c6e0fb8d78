package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/tools/stack/stacktest"
)

// The lobby's abuse suite (issue 17, "Limits no client can exhaust":
// tables and table passwords). Each test starts a stack of its own with the
// lobby's default limits (docs/limits.md, "Lobby"), plays an honest game at
// another table all along and checks that its moves keep their latency,
// replays one attack in loops bounded in count and time, checks that the
// limit held, and that no service logged a panic.

// abuseHTTP is a client for many requests in parallel (the shared one keeps
// two idle connections).
var abuseHTTP = &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 128}}

// answer is what one API request got.
type answer struct {
	status     int
	code       string // the error code, "" on success
	retryAfter string // the Retry-After header
	tableID    string
	took       time.Duration
}

// request does one API request; safe from any goroutine (it never fails
// the test).
func (s *stack) request(ctx context.Context, method, path, token string, body any) (answer, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return answer{}, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL()+path, rd)
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	start := time.Now()
	resp, err := abuseHTTP.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), took: time.Since(start)}
	if err != nil {
		return a, err
	}
	var out struct {
		TableID string `json:"table_id"`
		Error   struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(raw, &out)
	a.code, a.tableID = out.Error.Code, out.TableID
	return a, nil
}

// createBody is a POST /tables body for a classic table.
func createBody(t testing.TB, sp tableSpec, sit bool) map[string]any {
	t.Helper()
	settings, err := protojson.Marshal(sp.settings())
	if err != nil {
		t.Fatal(err)
	}
	return map[string]any{"name": sp.name, "settings": json.RawMessage(settings), "password": sp.password, "sit_down": sit}
}

// lobbyAbuseStack starts a stack of one runner for one abuse test.
func lobbyAbuseStack(t *testing.T, name string) *stack {
	t.Helper()
	return startStack(t, name, 1)
}

// lobbyKeys counts the lobby's keys in Redis.
func (s *stack) lobbyKeys(t *testing.T) int {
	t.Helper()
	n := 0
	iter := s.Redis().Scan(context.Background(), 0, lobbyKeysPattern, 1000).Iterator()
	for iter.Next(context.Background()) {
		n++
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return n
}

// One player floods the lobby with table creations, 200 at once and
// then one after the other for 4 s: three tables are made (the waiting-table
// limit), the rest are refused with too_many_tables_waiting and, past ten
// in a minute, too_many_requests with Retry-After; the lobby's Redis keys
// grow by those three tables and a few counters.
func TestAbuseLobby_TableFloodFromOnePlayer(t *testing.T) {
	s := lobbyAbuseStack(t, "abuse-flood")
	s.dumpOnFailure(t)
	g := s.startHonestGame(t)
	before := time.Now()
	time.Sleep(2 * time.Second)
	keysBefore := s.lobbyKeys(t)
	flooder := s.guest(t)

	attack := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var mu sync.Mutex
	byCode := map[string]int{}
	var ids []string
	record := func(a answer) {
		mu.Lock()
		defer mu.Unlock()
		byCode[fmt.Sprint(a.status, " ", a.code)]++
		if a.status == http.StatusCreated {
			ids = append(ids, a.tableID)
		}
		if a.status == http.StatusTooManyRequests && a.retryAfter == "" {
			t.Errorf("429 %s without Retry-After", a.code)
		}
	}
	var wg sync.WaitGroup
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a, err := s.request(ctx, http.MethodPost, "/api/v1/tables", flooder.Token, createBody(t, tableSpec{name: fmt.Sprint("flood ", i)}, i%2 == 0))
			if err != nil {
				t.Errorf("create %d: %v", i, err)
				return
			}
			record(a)
		}()
	}
	wg.Wait()
	// Then one after the other, for 4 s (at most 2,000), while the honest
	// game goes on.
	for i := 0; i < 2000 && time.Since(attack) < 4*time.Second && ctx.Err() == nil; i++ {
		a, err := s.request(ctx, http.MethodPost, "/api/v1/tables", flooder.Token, createBody(t, tableSpec{name: "flood"}, true))
		if err != nil {
			t.Fatal(err)
		}
		record(a)
	}
	after := time.Now()
	t.Logf("creations by one player: %v", byCode)
	if len(ids) != 3 {
		t.Fatalf("%d tables created, the limit is 3 waiting tables", len(ids))
	}
	for k, n := range byCode {
		switch k {
		case "201 ", "409 too_many_tables_waiting", "429 too_many_requests":
		default:
			t.Errorf("%d answers %q", n, k)
		}
	}
	if byCode["429 too_many_requests"] < 250 {
		t.Errorf("%d creations refused by the rate limit, want all but the first 10", byCode["429 too_many_requests"])
	}
	// Keys: three tables, their summaries and results, the player's held set, the
	// creation counter and the idle set.
	if keysAfter := s.lobbyKeys(t); keysAfter-keysBefore > 15 {
		t.Errorf("the lobby's keys went from %d to %d for a flood of refusals", keysBefore, keysAfter)
	}
	if n := s.Redis().ZCard(context.Background(), lobbyCreateRatePrefix+flooder.Player.ID).Val(); n > 10 {
		t.Errorf("the creation counter holds %d entries, more than the limit", n)
	}
	// The three tables are listed; leaving one makes room again (after the
	// minute of the rate limit, which the test does not wait for).
	listed := 0
	var list lobbyv1.ListTablesResponse
	status, raw := s.call(t, http.MethodGet, "/api/v1/tables?page_size=200", flooder.Token, nil)
	if status != http.StatusOK || protojson.Unmarshal(raw, &list) != nil {
		t.Fatalf("list: %d %s", status, raw)
	}
	for _, tb := range list.GetTables() {
		if tb.GetHostPlayerId() == flooder.Player.ID {
			listed++
		}
	}
	if listed != 3 {
		t.Errorf("%d of the flooder's tables listed, want 3", listed)
	}
	g.checkHonest(t, before, attack, after.Add(time.Second))
	s.noPanics(t)
}

// A thousand players make 3,000 tables (three each, the limit) while a
// lobby watcher watches: it is never dropped, gets a bounded number of
// frames, and ends with the newest 100 tables (its window), the same the
// HTTP list shows; a watcher who arrives after them gets that window in one
// small frame.
func TestAbuseLobby_ThreeThousandTablesNeverDropAWatcher(t *testing.T) {
	s := lobbyAbuseStack(t, "abuse-3000")
	s.dumpOnFailure(t)
	g := s.startHonestGame(t)
	watcher := s.newClient(t, "watcher", s.guest(t))
	watcher.connect()
	watcher.send(map[string]any{"type": "lobby", "watch": true})
	watcher.await(0, 10*time.Second, "the first lobby_view", func(f *frame) bool { return f.Type == "lobby_view" })
	watchFrom := time.Now()
	before := time.Now()
	time.Sleep(2 * time.Second)

	const players, perPlayer = 1000, 3
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	guests := make(chan session, players)
	for range players {
		guests <- s.guest(t)
	}
	close(guests)
	attack := time.Now()
	var created, failed atomic.Int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range guests {
				for i := 0; i < perPlayer && ctx.Err() == nil; i++ {
					a, err := s.request(ctx, http.MethodPost, "/api/v1/tables", p.Token, createBody(t, tableSpec{name: "many"}, true))
					if err != nil || a.status != http.StatusCreated {
						failed.Add(1)
						continue
					}
					created.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	after := time.Now()
	t.Logf("%d tables created in %v (%d failed)", created.Load(), after.Sub(attack).Round(time.Millisecond), failed.Load())
	if created.Load() != players*perPlayer {
		t.Fatalf("%d tables created, want %d", created.Load(), players*perPlayer)
	}

	var list lobbyv1.ListTablesResponse
	status, raw := s.call(t, http.MethodGet, "/api/v1/tables?page_size=100", g.c.ses.Token, nil)
	if status != http.StatusOK || protojson.Unmarshal(raw, &list) != nil {
		t.Fatalf("list: %d %s", status, raw)
	}
	var want []string
	for _, tb := range list.GetTables() {
		want = append(want, tb.GetTableId())
	}
	slices.Sort(want)
	var w lobbyWindow
	eventually(t, 30*time.Second, "the watcher's window is the newest 100 tables", func() bool {
		w = lobbyWindowOf(t, watcher)
		return slices.Equal(w.ids(), want)
	})
	if closed, err := watcher.isClosed(); closed {
		t.Fatalf("the watcher was dropped: %v", err)
	}
	t.Logf("the watcher got %d lobby_view and %d lobby_update frames for %d tables, the largest %d bytes",
		w.views, w.updates, players*perPlayer, w.largest)
	// At most one interval's difference (half the window, or one view) per
	// interval, however fast the tables came.
	if bound := int(time.Since(watchFrom)/(250*time.Millisecond)+4) * 51; w.views+w.updates > bound {
		t.Errorf("%d lobby frames in %v: more than one window's difference per interval (%d)", w.views+w.updates, time.Since(watchFrom), bound)
	}
	// A watcher arriving now (the case that used to loop: a view of every
	// table no longer fitted the send queue) gets the same window at once.
	late := s.newClient(t, "late watcher", s.guest(t))
	late.connect()
	late.send(map[string]any{"type": "lobby", "watch": true})
	late.await(0, 10*time.Second, "the late watcher's lobby_view", func(f *frame) bool { return f.Type == "lobby_view" })
	if lw := lobbyWindowOf(t, late); !slices.Equal(lw.ids(), want) || lw.largest > 128<<10 {
		t.Errorf("the late watcher's view: %d tables, %d bytes; want the newest 100", len(lw.tables), lw.largest)
	}
	time.Sleep(500 * time.Millisecond)
	if closed, err := late.isClosed(); closed {
		t.Fatalf("the late watcher was dropped: %v", err)
	}
	if len(list.GetTables()) != 100 || list.GetNextPageToken() == "" {
		t.Errorf("the HTTP list's first page: %d tables, next page %q", len(list.GetTables()), list.GetNextPageToken())
	}
	g.checkHonest(t, before, attack, after)
	s.noPanics(t)
}

// lobbyWindow is a watcher's copy of its window, rebuilt from its frames.
type lobbyWindow struct {
	tables         map[string]bool
	views, updates int
	largest        int
	seq            uint64
}

func (w lobbyWindow) ids() []string {
	out := make([]string, 0, len(w.tables))
	for id := range w.tables {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

func lobbyWindowOf(t *testing.T, c *client) lobbyWindow {
	t.Helper()
	w := lobbyWindow{tables: map[string]bool{}}
	for _, f := range c.snapshot() {
		switch f.Type {
		case "lobby_view":
			v := f.wf.LobbyView
			clear(w.tables)
			for _, tb := range v.GetTables() {
				w.tables[tb.GetTableId()] = true
			}
			w.seq = v.GetVersion()
			w.views++
		case "lobby_update":
			u := f.wf.LobbyUpdate
			if u.GetVersion() != w.seq+1 {
				t.Fatalf("lobby_update %d after %d: the watch's frames have a gap", u.GetVersion(), w.seq)
			}
			w.seq = u.GetVersion()
			if tb := u.GetTableUpserted(); tb != nil {
				w.tables[tb.GetTableId()] = true
			} else {
				delete(w.tables, u.GetTableRemoved())
			}
			w.updates++
		default:
			continue
		}
		w.largest = max(w.largest, len(f.Raw))
	}
	return w
}

// Password guessing: 40 players guess at 20 password tables as fast as
// they can. Per table at most 20 guesses are checked in the minute, per
// player and table at most 5; the rest are refused with
// too_many_password_guesses and Retry-After before any hashing. Meanwhile
// another player's table creations stay fast (the hashing runs on the
// lobby's password workers, not on the consumers that create tables).
func TestAbuseLobby_PasswordGuessingIsThrottledAndCreationStaysFast(t *testing.T) {
	s := lobbyAbuseStack(t, "abuse-guess")
	s.dumpOnFailure(t)
	g := s.startHonestGame(t)
	const tables, guessers, rounds = 20, 40, 8
	ids := make([]string, tables)
	for i := range ids {
		ids[i] = s.createTable(t, s.guest(t), tableSpec{name: "locked", password: fmt.Sprint("secret-", i)})
	}
	creators := make([]session, 20)
	for i := range creators {
		creators[i] = s.guest(t)
	}
	// createLatencies creates (and leaves) tables one after the other,
	// cycling through the creators (each stays under its limits).
	var creatorTurn atomic.Int64
	createLatencies := func(ctx context.Context, n int) []time.Duration {
		var out []time.Duration
		for range n {
			if ctx.Err() != nil {
				break
			}
			p := creators[creatorTurn.Add(1)%int64(len(creators))]
			a, err := s.request(ctx, http.MethodPost, "/api/v1/tables", p.Token, createBody(t, tableSpec{name: "fast"}, true))
			if err != nil || a.status != http.StatusCreated {
				t.Errorf("a creation during the guesses: %+v %v", a, err)
				continue
			}
			out = append(out, a.took)
			if _, err := s.request(ctx, http.MethodPost, "/api/v1/tables/"+a.tableID+"/leave", p.Token, nil); err != nil {
				t.Error(err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		slices.Sort(out)
		return out
	}
	before := time.Now()
	quiet := createLatencies(context.Background(), 15)

	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	attack := time.Now()
	type key struct{ player, table string }
	var mu sync.Mutex
	checked := map[key]int{} // guesses answered wrong_password: hashed
	perTable := map[string]int{}
	byCode := map[string]int{}
	var wg sync.WaitGroup
	for gi := range guessers {
		p := s.guest(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds && ctx.Err() == nil; r++ {
				for ti, id := range ids {
					a, err := s.request(ctx, http.MethodPost, "/api/v1/tables/"+id+"/sit", p.Token,
						map[string]any{"seat": 1 + (gi+ti)%3, "password": fmt.Sprint("guess-", gi, "-", r)})
					if err != nil {
						return
					}
					mu.Lock()
					byCode[fmt.Sprint(a.status, " ", a.code)]++
					if a.code == "wrong_password" {
						checked[key{p.Player.ID, id}]++
						perTable[id]++
					}
					if a.status == http.StatusTooManyRequests && a.retryAfter == "" {
						t.Errorf("429 %s without Retry-After", a.code)
					}
					mu.Unlock()
				}
			}
		}()
	}
	time.Sleep(500 * time.Millisecond)
	during := createLatencies(ctx, 20)
	wg.Wait()
	after := time.Now()
	t.Logf("%d guessers × %d tables × %d rounds: %v", guessers, tables, rounds, byCode)
	t.Logf("table creation: quiet p50 %v max %v; during the guesses p50 %v p95 %v max %v",
		quantile(quiet, .5), quantile(quiet, 1), quantile(during, .5), quantile(during, .95), quantile(during, 1))
	for k, n := range checked {
		if n > 5 {
			t.Errorf("%s had %d guesses at %s checked, the limit is 5", k.player, n, k.table)
		}
	}
	byPlayer := map[string]int{}
	for k, n := range checked {
		byPlayer[k.player] += n
	}
	for p, n := range byPlayer {
		if n > 20 {
			t.Errorf("%s had %d guesses checked at all tables, the limit is 20", p, n)
		}
	}
	// The lobby counts the refusals it sent, by limit.
	var lobby *stacktest.Process
	for _, svc := range s.Processes() {
		if svc.Binary == "lobby" {
			lobby = svc
		}
	}
	limited := func(limit string) float64 {
		return opsMetricSumWhere(t, lobby, "pulka_lobby_limited_total", `limit="`+limit+`"`)
	}
	if got, want := limited("guess_player")+limited("guess_table")+limited("guess_guesser"), byCode["429 too_many_password_guesses"]; got != float64(want) {
		t.Errorf("pulka_lobby_limited_total{limit=guess_*} = %v, the guessers got %d refusals", got, want)
	}
	if got, want := limited("password_queue"), byCode["503 unavailable"]; got != float64(want) {
		t.Errorf("pulka_lobby_limited_total{limit=password_queue} = %v, the guessers got %d", got, want)
	}
	total := 0
	for id, n := range perTable {
		total += n
		if n > 20 {
			t.Errorf("table %s had %d guesses checked, the limit is 20", id, n)
		}
	}
	for k, n := range byCode {
		switch k {
		case "403 wrong_password", "429 too_many_password_guesses", "503 unavailable":
		default:
			t.Errorf("%d answers %q", n, k)
		}
	}
	if byCode["429 too_many_password_guesses"] < guessers*tables*rounds/2 || total < tables*10 {
		t.Errorf("the flood did not reach the limits: %d hashed, %v", total, byCode)
	}
	if len(during) < 15 {
		t.Fatalf("%d creations during the guesses", len(during))
	}
	// A creation queued behind the guesses' hashes (~25 ms each, hundreds
	// of them) would take seconds.
	if p95 := quantile(during, .95); p95 > 300*time.Millisecond {
		t.Errorf("table creation slowed down by the guesses: p95 %v", p95)
	}
	g.checkHonest(t, before, attack, after)
	s.noPanics(t)
}
