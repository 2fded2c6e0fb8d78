package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/envnames"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/tools/stack/stacktest"
)

// The gateway's abuse suite (issue 17): each attack runs in a loop bounded
// in count and in time, stops by itself, and the test asserts the limit
// held. Run one with -run, e.g. go test -run TestAbuseGateway_SocketFlood.

// gwLoginPerAcctIP is the abuse stack's gateway's limit of logins per
// account and address, lowered so that an attack meets it quickly.
const gwLoginPerAcctIP = 5

// gwAbuseUsers: the gateway abuse tests run one at a time: they measure one process.
var gwAbuseUsers sync.Mutex

// gwAbuseStack is one stack for the gateway abuse tests, started by the first of them
// (stacktest.Main stops it). Its gateway's own limits are lowered where an
// attack should meet them quickly, raised where another limit is the one
// under test (every client here is 127.0.0.1, one guest).
func gwAbuseStack(t *testing.T) *stack {
	t.Helper()
	gwAbuse := &stack{stacktest.Shared(t, "gwabuse", options("gwabuse", 1,
		envnames.WSPerPlayer+"=100000", // the socket flood uses one guest's token
		envnames.LoginPerAccountIP+"="+strconv.Itoa(gwLoginPerAcctIP),
	))}
	gwAbuseUsers.Lock()
	t.Cleanup(gwAbuseUsers.Unlock)
	procs := gwAbuse.processes()
	t.Cleanup(func() { gwAbuse.noPanics(t, procs) })
	return gwAbuse
}

// gwMinWindow is the shortest window the honest player is measured in: an
// attack that ends sooner is followed by the rest of it, where a stall it
// caused (a queue it filled, a consumer or hash slot it held) still shows.
const gwMinWindow = 3 * time.Second

// gwHonestDuring plays an honest game at another table (abuse_test.go),
// runs attack once the game has a baseline, and checks that the honest
// player kept moving at normal latency meanwhile.
func gwHonestDuring(t *testing.T, s *stack, attack func(honestTable string)) {
	t.Helper()
	g := s.startHonestGame(t)
	g.c.awaitEvent(0, 20*time.Second, g.table, "the honest game's first move", isMove)
	before := time.Now()
	time.Sleep(2 * time.Second) // the baseline
	start := time.Now()
	attack(g.table)
	if rest := time.Until(start.Add(gwMinWindow)); rest > 0 {
		time.Sleep(rest)
	}
	g.checkHonest(t, before, start, time.Now())
}

func (s *stack) gateway() *stacktest.Process {
	for _, svc := range s.Processes() {
		if svc.Binary == "gateway" {
			return svc
		}
	}
	return nil
}

// gwMetric sums the samples of a gwMetric of svc's /metrics (any labels).
func gwMetric(t *testing.T, svc *stacktest.Process, name string) float64 {
	t.Helper()
	resp, err := httpClient.Get("http://" + svc.Admin + "/metrics")
	if err != nil {
		t.Fatalf("metrics of %s: %v", svc.Name, err)
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) || (len(line) > len(name) && line[len(name)] != '{' && line[len(name)] != ' ') {
			continue
		}
		fields := strings.Fields(line)
		v, err := strconv.ParseFloat(fields[len(fields)-1], 64)
		if err == nil {
			sum += v
		}
	}
	return sum
}

// gwPingRTT is the time a ping frame takes to come back as a pong.
func gwPingRTT(t *testing.T, c *client, ref string) time.Duration {
	t.Helper()
	from := c.len()
	start := time.Now()
	c.send(map[string]any{"type": "ping", "ref": ref})
	c.await(from, 10*time.Second, "pong "+ref, func(f *frame) bool { return f.Type == "pong" && f.Ref == ref })
	return time.Since(start)
}

func gwMedian(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// gwHonestGame seats a player with three bots at a standard classic table and
// lets the player play on by itself.
func gwHonestGame(t *testing.T, s *stack, name string) (*client, string) {
	t.Helper()
	host := s.guest(t)
	table := s.createTable(t, host, tableSpec{standard: true, moveTime: time.Minute, name: name})
	c := s.newClient(t, name, host)
	c.connect()
	c.join(table, "")
	c.autoPlay(table, true)
	s.fillWithBots(t, host, table)
	c.awaitEvent(0, 20*time.Second, table, "the game's start", func(ev *tablev1.Event) bool { return ev.GetGameStarted() != nil })
	return c, table
}

// Joins of made-up tables are refused and create nothing in Redis.
func TestAbuseGateway_JunkJoins(t *testing.T) {
	s := gwAbuseStack(t)
	ctx := context.Background()
	junk := s.newClient(t, "abuse-junk", s.guest(t))
	junk.connect()
	gwHonestDuring(t, s, func(honest string) {
		time.Sleep(300 * time.Millisecond) // the session's own keys (presence, limits) settle
		// The only game on the stack is the honest one: every other key is
		// still.
		before := map[string]bool{}
		for _, k := range s.Redis().Keys(ctx, "*").Val() {
			before[k] = true
		}
		gwJunkJoins(t, s, junk, before, honest)
	})
}

// gwJunkJoins sends the junk joins and checks that they added no key
// (besides the honest game's, which plays on meanwhile).
func gwJunkJoins(t *testing.T, s *stack, junk *client, before map[string]bool, honest string) {
	ctx := context.Background()
	refused := 0
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; i < 200 && time.Now().Before(deadline); i++ {
		if i%10 == 9 { // 20 refusals in a row would close the socket (1008)
			gwPingRTT(t, junk, "p"+strconv.Itoa(i))
		}
		from := junk.len()
		ref := "j" + strconv.Itoa(i)
		junk.send(map[string]any{"type": "join", "table": fmt.Sprintf("junk-%d", i), "last_event_id": "1-0", "ref": ref})
		f := junk.await(from, 5*time.Second, "the refusal "+ref, func(f *frame) bool { return f.Type == "error" && f.Ref == ref })
		if f.Code != "table_not_found" {
			t.Fatalf("join of junk-%d: %s", i, f)
		}
		refused++
	}
	t.Logf("junk joins: %d refused with table_not_found", refused)
	if refused < 100 {
		t.Fatalf("only %d junk joins in the time allowed", refused)
	}
	var added []string
	for _, k := range s.Redis().Keys(ctx, "*").Val() {
		if !before[k] && !strings.Contains(k, "{t:"+honest+"}") {
			added = append(added, k)
		}
	}
	if len(added) > 0 {
		t.Fatalf("%d junk joins added Redis keys: %v", refused, added)
	}
}

// A flood of sockets up to a lowered file limit: the gateway sheds new
// upgrades (503 overloaded) and keeps answering its probes and its players,
// at normal latency.
func TestAbuseGateway_SocketFlood(t *testing.T) {
	s := gwAbuseStack(t)
	gw := s.gateway()
	honest, table := gwHonestGame(t, s, "abuse-honest-flood")
	var before []time.Duration
	for i := range 5 {
		before = append(before, gwPingRTT(t, honest, "b"+strconv.Itoa(i)))
	}

	// The gateway's descriptors: a few dozen in use; a limit of 256 sheds
	// from 230 (90%).
	const limit = 256
	lim := unix.Rlimit{Cur: limit, Max: limit}
	var old unix.Rlimit
	if err := unix.Prlimit(gw.Pid(), unix.RLIMIT_NOFILE, &lim, &old); err != nil {
		t.Fatalf("prlimit: %v", err)
	}
	t.Cleanup(func() {
		_ = unix.Prlimit(gw.Pid(), unix.RLIMIT_NOFILE, &old, nil)
		// The next test must find the gateway taking sockets again.
		eventually(t, 10*time.Second, "the gateway taking sockets after the flood", func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL(), "http")+"/ws", nil)
			if resp != nil && resp.Body != nil {
				_ = resp.Body.Close()
			}
			if err != nil {
				return false
			}
			_ = c.CloseNow()
			return true
		})
	})
	time.Sleep(500 * time.Millisecond) // the gauge reads the limit every 250 ms

	gwHonestDuring(t, s, func(string) {
		flooder := s.guest(t)
		var socks []*websocket.Conn
		defer func() {
			for _, c := range socks {
				_ = c.CloseNow()
			}
		}()
		shed, other := 0, map[int]int{}
		deadline := time.Now().Add(30 * time.Second)
		for i := 0; i < 2*limit && time.Now().Before(deadline) && shed < 20; i++ {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL(), "http")+"/ws", &websocket.DialOptions{
				HTTPHeader: http.Header{"Authorization": {"Bearer " + flooder.Token}},
			})
			cancel()
			if resp != nil && resp.Body != nil {
				_ = resp.Body.Close()
			}
			switch {
			case err == nil:
				socks = append(socks, c)
			case resp != nil && resp.StatusCode == http.StatusServiceUnavailable:
				shed++
			case resp != nil:
				other[resp.StatusCode]++
			default:
				other[-1]++
			}
		}
		t.Logf("socket flood: %d sockets open, %d upgrades shed (503), others %v", len(socks), shed, other)
		if shed == 0 {
			t.Fatalf("no upgrade was shed with %d sockets open under a file limit of %d", len(socks), limit)
		}
		if len(socks) >= limit {
			t.Fatalf("%d sockets accepted under a file limit of %d", len(socks), limit)
		}
		for _, url := range []string{"http://" + gw.Admin + "/readyz", s.URL() + "/readyz", s.URL() + "/healthz"} {
			resp, err := httpClient.Get(url)
			if err != nil {
				t.Fatalf("%s during the flood: %v", url, err)
			}
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("%s during the flood: %d", url, resp.StatusCode)
			}
		}
		s.mustCall(t, http.StatusOK, http.MethodGet, "/api/v1/me", flooder.Token, nil, nil)
		var during []time.Duration
		for i := range 5 {
			during = append(during, gwPingRTT(t, honest, "d"+strconv.Itoa(i)))
		}
		if m, b := gwMedian(during), gwMedian(before); m > b+100*time.Millisecond {
			t.Fatalf("the honest player's ping took %v during the flood, %v before", m, b)
		}
		// Then bare TCP connections that never send a request: past the hard
		// line (95 %) they are closed at accept, so the process never runs out
		// and its admin port still answers.
		var raw []net.Conn
		defer func() {
			for _, c := range raw {
				_ = c.Close()
			}
		}()
		addr := strings.TrimPrefix(s.URL(), "http://")
		for i := 0; i < limit && time.Now().Before(deadline); i++ {
			c, err := net.DialTimeout("tcp", addr, 2*time.Second)
			if err != nil {
				break
			}
			raw = append(raw, c)
		}
		time.Sleep(300 * time.Millisecond)
		if resp, err := httpClient.Get("http://" + gw.Admin + "/readyz"); err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("the admin /readyz after %d bare connections: %v %v", len(raw), resp, err)
		} else {
			_ = resp.Body.Close()
		}
		if m := gwPingRTT(t, honest, "raw"); m > gwMedian(before)+100*time.Millisecond {
			t.Fatalf("the honest player's ping took %v after the bare connections, %v before", m, gwMedian(before))
		}
		if gwMetric(t, gw, "pulka_gateway_conn_refused_total") == 0 {
			t.Errorf("no connection was closed at accept after %d bare connections under a file limit of %d", len(raw), limit)
		}
		// The honest game goes on.
		from := honest.len()
		honest.awaitEvent(from, 20*time.Second, table, "a move during the flood", isMove)
		if gwMetric(t, gw, "pulka_gateway_ws_shed_total") < float64(shed) {
			t.Errorf("pulka_gateway_ws_shed_total counts fewer than the %d shed upgrades", shed)
		}
	})
}

// A watcher's command spam is refused at the gateway: nothing reaches the
// table's command stream, nothing is added to its event log.
func TestAbuseGateway_WatcherCommandSpam(t *testing.T) {
	s := gwAbuseStack(t)
	ctx := context.Background()
	host := s.guest(t)
	waiting := s.createTable(t, host, tableSpec{name: "abuse-waiting"})
	_, playing := gwHonestGame(t, s, "abuse-honest-spam")
	w := s.newClient(t, "abuse-watcher", s.guest(t))
	w.connect()
	w.join(waiting, "")
	w.join(playing, "")
	events := s.Redis().XLen(ctx, streams.TableEvents(waiting)).Val()
	commands := s.Redis().XLen(ctx, streams.TableCommands(waiting)).Val()
	frames := []map[string]any{
		{"type": "bid", "tricks": 1}, {"type": "trump", "suit": "H"}, {"type": "play", "card": "AS"},
		{"type": "resign"}, {"type": "leave"}, {"type": "sit", "seat": 1},
	}
	sent := 0
	watcher := w.ses.Player.ID
	// The playing table's command stream is trimmed as the table handles
	// it: read what reaches it while the spam goes on, from the entry
	// before the spam, a few frames at a time, so nothing is trimmed unread.
	playCmds, cursor := streams.TableCommands(playing), "0-0"
	checkPlayCmds := func() {
		msgs, err := streams.ReadAfter(ctx, s.Redis(), playCmds, cursor, 10_000)
		if errors.Is(err, streams.ErrTrimmed) {
			// The table trimmed what it handled since the last read:
			// read what is left; the runner's NOT_SEATED refusals
			// (checked below) cover the trimmed entries.
			var xs []redis.XMessage
			if xs, err = s.Redis().XRange(ctx, playCmds, "-", "+").Result(); err == nil {
				msgs = msgs[:0]
				for _, x := range xs {
					if d, ok := x.Values[streams.FieldData].(string); ok {
						msgs = append(msgs, streams.Message{ID: x.ID, Data: []byte(d)})
					}
				}
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			var cmd tablev1.Command
			if proto.Unmarshal(m.Data, &cmd) == nil && cmd.GetPlayerId() == watcher {
				t.Fatalf("a watcher's command reached the table: %v", &cmd)
			}
			cursor = m.ID
		}
	}
	notSeated := func() (n float64) {
		for _, svc := range s.Processes() {
			if svc.Binary == "table-runner" {
				n += opsMetricSumWhere(t, svc, "pulka_runner_rejections_total", `reason="REJECT_REASON_NOT_SEATED"`)
			}
		}
		return n
	}
	notSeatedBefore := notSeated()
	gwHonestDuring(t, s, func(string) {
		// The stream may be empty (handled entries are trimmed): start at
		// the last id it ever gave.
		if info, err := s.Redis().XInfoStream(ctx, playCmds).Result(); err == nil {
			cursor = info.LastGeneratedID
		}
		deadline := time.Now().Add(20 * time.Second)
		for i := 0; i < 300 && time.Now().Before(deadline); i++ {
			if i%10 == 9 { // 20 refusals in a row would close the socket (1008)
				gwPingRTT(t, w, "p"+strconv.Itoa(i))
				checkPlayCmds()
			}
			m := map[string]any{"ref": "s" + strconv.Itoa(i), "cmd": "spam-" + strconv.Itoa(i)}
			for k, v := range frames[i%len(frames)] {
				m[k] = v
			}
			m["table"] = []string{waiting, playing}[i%2]
			from := w.len()
			w.send(m)
			f := w.await(from, 5*time.Second, "the answer to "+m["ref"].(string), func(f *frame) bool { return (f.Type == "error" || f.Type == "ack") && f.Ref == m["ref"] })
			if f.Type != "error" || f.Code != "not_seated" {
				t.Fatalf("%v from a watcher: %s", m, f)
			}
			sent++
		}
		checkPlayCmds() // the last frames' (before the stream is trimmed)
	})
	if n := notSeated() - notSeatedBefore; n != 0 {
		t.Fatalf("the runners refused %v commands of players without a seat: the watcher's reached a table", n)
	}
	t.Logf("watcher spam: %d commands refused with not_seated", sent)
	if sent < 100 {
		t.Fatalf("only %d of the watcher's commands in the time allowed", sent)
	}
	if e, c := s.Redis().XLen(ctx, streams.TableEvents(waiting)).Val(), s.Redis().XLen(ctx, streams.TableCommands(waiting)).Val(); e != events || c != commands {
		t.Fatalf("the waiting table's streams: events %d → %d, commands %d → %d", events, e, commands, c)
	}
	// The table in play moved on, but not because of the watcher (its
	// commands were read during the spam, checkPlayCmds).
	log := mustReadLog(t, s.Redis(), playing)
	for _, e := range log {
		if b, _ := proto.Marshal(e.Ev); strings.Contains(string(b), watcher) {
			t.Fatalf("the event log mentions the watcher: %s", describe(e.ID, e.Ev))
		}
	}
}

// 100 parallel wrong logins check no more password hashes than the limit.
func TestAbuseGateway_ParallelWrongLogins(t *testing.T) {
	s := gwAbuseStack(t)
	gw := s.gateway()
	victim := s.register(t)
	before := gwMetric(t, gw, "pulka_gateway_password_checks_total")
	var mu sync.Mutex
	statuses := map[int]int{}
	gwHonestDuring(t, s, func(string) {
		var wg sync.WaitGroup
		for i := range 100 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, _ := s.call(t, http.MethodPost, "/api/v1/login", "",
					map[string]string{"username": victim.Player.Name, "password": "guess-" + strconv.Itoa(i)})
				mu.Lock()
				statuses[st]++
				mu.Unlock()
			}()
		}
		wg.Wait()
	})
	checked := gwMetric(t, gw, "pulka_gateway_password_checks_total") - before
	t.Logf("100 parallel wrong logins: statuses %v, %v hashes checked", statuses, checked)
	if checked > gwLoginPerAcctIP {
		t.Fatalf("%v password hashes checked, the limit is %d", checked, gwLoginPerAcctIP)
	}
	if statuses[http.StatusUnauthorized] > gwLoginPerAcctIP || statuses[http.StatusTooManyRequests] < 100-gwLoginPerAcctIP {
		t.Fatalf("statuses %v: want at most %d 401 and the rest 429", statuses, gwLoginPerAcctIP)
	}
	if gwMetric(t, gw, "pulka_gateway_login_refused_total") < float64(100-gwLoginPerAcctIP) {
		t.Errorf("pulka_gateway_login_refused_total counts fewer refusals than the 429s")
	}
}

// A revoked token is refused on HTTP and its open socket is closed (4003).
func TestAbuseGateway_RevokedToken(t *testing.T) {
	s := gwAbuseStack(t)
	ses := s.guest(t)
	c := s.newClient(t, "abuse-revoked", ses)
	c.connect()
	gwHonestDuring(t, s, func(string) {
		from := c.len()
		s.mustCall(t, http.StatusNoContent, http.MethodPost, "/api/v1/logout", ses.Token, nil, nil)
		s.wantError(t, http.StatusUnauthorized, "session_revoked", http.MethodGet, "/api/v1/me", ses.Token, nil)
		if f := c.await(from, 5*time.Second, "the revocation's error frame", func(f *frame) bool { return f.Type == "error" }); f.Code != "session_revoked" {
			t.Fatalf("error frame %s, want session_revoked", f)
		}
		eventually(t, 5*time.Second, "the socket closed with 4003", func() bool {
			closed, err := c.isClosed()
			return closed && closeStatus(err) == 4003
		})
	})
	// Reconnecting with it is refused.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL(), "http")+"/ws", nil)
	if resp != nil && resp.Body != nil {
		_ = resp.Body.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ws.CloseNow() }()
	hello := fmt.Sprintf(`{"hello":{"token":%q}}`, ses.Token) // no subprotocol: JSON
	if err := ws.Write(ctx, websocket.MessageText, []byte(hello)); err != nil {
		t.Fatal(err)
	}
	_, b, _ := ws.Read(ctx)
	if !strings.Contains(string(b), "session_revoked") {
		t.Fatalf("hello with a revoked token: %s", b)
	}
	if _, _, err := ws.Read(ctx); websocket.CloseStatus(err) != 4003 {
		t.Fatalf("closed with %v, want 4003", err)
	}
}

// One player's sockets are capped (the shared stack's default, 8).
func TestAbuseGateway_SocketsPerPlayer(t *testing.T) {
	t.Parallel()
	s := shared
	procs := s.processes()
	ses := s.guest(t)
	accepted := 0
	var refused *http.Response
	gwHonestDuring(t, s, func(string) {
		for i := 0; i < 20 && refused == nil; i++ {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL(), "http")+"/ws", &websocket.DialOptions{
				HTTPHeader: http.Header{"Authorization": {"Bearer " + ses.Token}},
			})
			cancel()
			if err != nil {
				refused = resp
				break
			}
			accepted++
			defer func() { _ = c.CloseNow() }()
			if resp != nil && resp.Body != nil {
				_ = resp.Body.Close()
			}
		}
	})
	if refused == nil || refused.StatusCode != http.StatusTooManyRequests || accepted != 8 {
		t.Fatalf("%d sockets accepted, then %v; want 8, then 429", accepted, refused)
	}
	_ = refused.Body.Close()
	s.noPanics(t, procs)
}
