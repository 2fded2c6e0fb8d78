package assign

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/lobbyclient"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/streams"
)

func newRedis(t *testing.T) *redis.Client {
	t.Helper()
	return redistest.Start(t).Client(t)
}

func member(ms []Member, id string) (Member, bool) {
	i := slices.IndexFunc(ms, func(m Member) bool { return m.ID == id })
	if i < 0 {
		return Member{}, false
	}
	return ms[i], true
}

func TestHeartbeats_MemberIsReadyUntilItsTTLRunsOut(t *testing.T) {
	ctx := context.Background()
	rdb := newRedis(t)
	h := NewHeartbeats(rdb, 300*time.Millisecond)
	if err := h.Beat(ctx, Member{ID: "a", Capacity: 7}); err != nil {
		t.Fatal(err)
	}
	if err := h.Beat(ctx, Member{ID: "b", Draining: true}); err != nil {
		t.Fatal(err)
	}
	ms, err := h.Members(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := member(ms, "a")
	b, _ := member(ms, "b")
	if !a.Ready || a.Capacity != 7 || a.Draining || !b.Ready || !b.Draining {
		t.Fatalf("members = %+v, want a ready with capacity 7 and b ready draining", ms)
	}
	// LiveFor is what is left of the TTL, by Redis's clock.
	if a.LiveFor <= 0 || a.LiveFor > 300*time.Millisecond || b.LiveFor <= 0 || b.LiveFor > 300*time.Millisecond {
		t.Fatalf("members = %+v, want each live for at most the 300ms TTL", ms)
	}
	time.Sleep(400 * time.Millisecond)
	if err := h.Beat(ctx, Member{ID: "b"}); err != nil {
		t.Fatal(err)
	}
	ms, _ = h.Members(ctx)
	a, okA := member(ms, "a")
	b, _ = member(ms, "b")
	if !okA || a.Ready || !b.Ready || b.Draining {
		t.Fatalf("members = %+v, want a known but not ready (no beat for longer than the TTL), b ready", ms)
	}
	if a.LiveFor != 0 {
		t.Fatalf("a is not live but LiveFor = %v", a.LiveFor)
	}
	if err := h.Leave(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	ms, _ = h.Members(ctx)
	if _, ok := member(ms, "b"); ok {
		t.Fatalf("members = %+v: b left and must be gone", ms)
	}
}

func TestHeartbeats_RefusesIDsThatBreakTheEncoding(t *testing.T) {
	h := NewHeartbeats(newRedis(t), time.Second)
	for _, id := range []string{"", "a,b", "a{b}", "a b"} {
		if err := h.Beat(context.Background(), Member{ID: id}); !errors.Is(err, ErrBadID) {
			t.Errorf("Beat(%q) = %v, want ErrBadID", id, err)
		}
	}
}

func TestStore_MoveIsACompareAndSetOnTheOwner(t *testing.T) {
	ctx := context.Background()
	s := NewStore(newRedis(t))
	var none streams.Lease
	if ok, err := s.Add(ctx, none, "t1", "a"); !ok || err != nil {
		t.Fatalf("Add = %v, %v", ok, err)
	}
	if ok, _ := s.Add(ctx, none, "t1", "b"); ok {
		t.Fatal("a second Add of the same table must not change its owner")
	}
	if ok, _ := s.Move(ctx, none, "t1", "b", "c"); ok {
		t.Fatal("Move from a runner that does not own the table must fail")
	}
	if ok, err := s.Move(ctx, none, "t1", "a", "b"); !ok || err != nil {
		t.Fatalf("Move a→b = %v, %v", ok, err)
	}
	if ok, _ := s.Move(ctx, none, "nope", "", "b"); ok {
		t.Fatal("Move of an unknown table must fail")
	}
	ta, _ := s.TablesOf(ctx, "a")
	tb, _ := s.TablesOf(ctx, "b")
	if len(ta) != 0 || !slices.Equal(tb, []string{"t1"}) {
		t.Fatalf("tables of a %v, of b %v; want t1 only on b", ta, tb)
	}
	if ok, _ := s.Remove(ctx, "t1", "a"); ok {
		t.Fatal("only the owner removes a table")
	}
	if ok, _ := s.Remove(ctx, "t1", "b"); !ok {
		t.Fatal("the owner must be able to remove its table")
	}
	owners, _ := s.Owners(ctx)
	tb, _ = s.TablesOf(ctx, "b")
	if len(owners) != 0 || len(tb) != 0 {
		t.Fatalf("after Remove: owners %v, tables of b %v", owners, tb)
	}
}

func TestStore_UnplacedTableIsRecordedAndPlacedLater(t *testing.T) {
	ctx := context.Background()
	s := NewStore(newRedis(t))
	if ok, err := s.Add(ctx, streams.Lease{}, "t1", ""); !ok || err != nil {
		t.Fatalf("Add unplaced = %v, %v", ok, err)
	}
	if r, ok, _ := s.Owner(ctx, "t1"); !ok || r != "" {
		t.Fatalf("Owner = %q, %v; want recorded without owner", r, ok)
	}
	if ok, _ := s.Move(ctx, streams.Lease{}, "t1", "", "a"); !ok {
		t.Fatal("an unplaced table must be movable from \"\"")
	}
	if ta, _ := s.TablesOf(ctx, "a"); !slices.Equal(ta, []string{"t1"}) {
		t.Fatalf("tables of a = %v", ta)
	}
}

func TestStore_StaleLeaderCannotWrite(t *testing.T) {
	ctx := context.Background()
	rdb := newRedis(t)
	s := NewStore(rdb)
	leases := streams.NewLeases(rdb, time.Minute)
	old, err := leases.Acquire(ctx, LeaderKey, "x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leases.Takeover(ctx, LeaderKey, "y"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, old, "t1", "a"); !errors.Is(err, streams.ErrStaleEpoch) {
		t.Fatalf("Add by a former leader = %v, want ErrStaleEpoch", err)
	}
	if owners, _ := s.Owners(ctx); len(owners) != 0 {
		t.Fatalf("a stale leader wrote %v", owners)
	}
}

// fixedMembers is a Membership for tests.
type fixedMembers []Member

func (f fixedMembers) Members(context.Context) ([]Member, error) { return f, nil }

func TestAssigner_PlacesNewTablesOnTheLeastLoadedRunner(t *testing.T) {
	ctx := context.Background()
	rdb := newRedis(t)
	s := NewStore(rdb)
	a, err := NewAssigner(rdb, fixedMembers(live("a", "b")), s, AssignerOptions{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"t1", "t2", "t3"} {
		if err := a.Place(ctx, &lobbyv1.TableStarted{TableId: id, GameId: "g-" + id}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// A redelivered start keeps the first placement.
	if err := a.Place(ctx, &lobbyv1.TableStarted{TableId: "t1"}, nil); err != nil {
		t.Fatal(err)
	}
	owners, _ := s.Owners(ctx)
	want := map[string]string{"t1": "a", "t2": "b", "t3": "a"}
	if len(owners) != 3 || owners["t1"] != want["t1"] || owners["t2"] != want["t2"] || owners["t3"] != want["t3"] {
		t.Fatalf("owners = %v, want %v", owners, want)
	}
	data, err := rdb.Get(ctx, StartKey("t1")).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	var ts lobbyv1.TableStarted
	if err := proto.Unmarshal(data, &ts); err != nil || ts.GetGameId() != "g-t1" {
		t.Fatalf("stored start = %v (%v); want the first one, game g-t1", &ts, err)
	}
}

func TestAssigner_ReconcileMovesADeadRunnersTablesAndFencesIt(t *testing.T) {
	ctx := context.Background()
	rdb := newRedis(t)
	s := NewStore(rdb)
	leases := streams.NewLeases(rdb, time.Minute)
	for _, id := range []string{"t1", "t2"} {
		if _, err := s.Add(ctx, streams.Lease{}, id, "dead"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Add(ctx, streams.Lease{}, "t3", "a"); err != nil {
		t.Fatal(err)
	}
	old, err := leases.Acquire(ctx, streams.TableLease("t1"), "dead")
	if err != nil {
		t.Fatal(err)
	}
	members := fixedMembers{{ID: "a", Ready: true}, {ID: "b", Ready: true}, {ID: "dead"}}
	a, err := NewAssigner(rdb, members, s, AssignerOptions{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	n, err := a.Reconcile(ctx)
	if err != nil || n != 2 {
		t.Fatalf("Reconcile = %d, %v; want 2 moves", n, err)
	}
	owners, _ := s.Owners(ctx)
	if owners["t1"] != "b" || owners["t2"] != "a" && owners["t2"] != "b" || owners["t3"] != "a" {
		t.Fatalf("owners = %v", owners)
	}
	cur, ok, err := leases.Current(ctx, streams.TableLease("t1"))
	if err != nil || !ok || cur.Owner != "b" || cur.Epoch <= old.Epoch {
		t.Fatalf("lease of t1 = %+v (%v), want taken over by b with an epoch above %d", cur, err, old.Epoch)
	}
	pub := streams.NewPublisher(rdb)
	_, err = pub.AppendFenced(ctx, old, streams.Entry{Stream: streams.TableEvents("t1"), Data: []byte("x")})
	if !errors.Is(err, streams.ErrStaleEpoch) {
		t.Fatalf("the dead owner's append = %v, want ErrStaleEpoch", err)
	}
	if n, _ := a.Reconcile(ctx); n != 0 {
		t.Fatalf("a second pass moved %d tables; healthy owners keep theirs", n)
	}
}

func TestAssigner_OneLeaderConsumesStartsAndTakesOverWhenItStops(t *testing.T) {
	ctx := context.Background()
	rdb := newRedis(t)
	s := NewStore(rdb)
	h := NewHeartbeats(rdb, time.Minute)
	if err := h.Beat(ctx, Member{ID: "r1"}); err != nil {
		t.Fatal(err)
	}
	opt := AssignerOptions{LeaderTTL: 300 * time.Millisecond, Interval: 50 * time.Millisecond}
	opt.ID = "x"
	ax, _ := NewAssigner(rdb, h, s, opt)
	opt.ID = "y"
	ay, _ := NewAssigner(rdb, h, s, opt)
	cx, stopX := context.WithCancel(ctx)
	cy, stopY := context.WithCancel(ctx)
	defer stopX()
	defer stopY()
	doneX, doneY := make(chan struct{}), make(chan struct{})
	go func() { defer close(doneX); _ = ax.Run(cx) }()
	go func() { defer close(doneY); _ = ay.Run(cy) }()

	publish := func(id string) {
		data, _ := proto.Marshal(&lobbyv1.TableStarted{TableId: id})
		if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: lobbyclient.TableStartStream, Values: []any{streams.FieldData, data}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	waitOwner := func(id string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if r, ok, _ := s.Owner(ctx, id); ok && r == "r1" {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("table %s was not placed", id)
	}
	publish("t1")
	waitOwner("t1")
	if ax.IsLeader() == ay.IsLeader() {
		t.Fatalf("leaders: x=%v y=%v, want exactly one", ax.IsLeader(), ay.IsLeader())
	}
	leader, other, stop, done := ax, ay, stopX, doneX
	if ay.IsLeader() {
		leader, other, stop, done = ay, ax, stopY, doneY
	}
	stop()
	<-done
	publish("t2")
	waitOwner("t2")
	if leader.IsLeader() || !other.IsLeader() {
		t.Fatalf("after stopping the leader: stopped=%v other=%v", leader.IsLeader(), other.IsLeader())
	}
}

// switchable is a Membership whose members a test can change.
type switchable struct{ ms []Member }

func (s *switchable) Members(context.Context) ([]Member, error) { return s.ms, nil }

func TestAssigner_TableWithoutARunnerIsPlacedWhenOneAppears(t *testing.T) {
	ctx := context.Background()
	rdb := newRedis(t)
	s := NewStore(rdb)
	members := &switchable{}
	a, err := NewAssigner(rdb, members, s, AssignerOptions{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Place(ctx, &lobbyv1.TableStarted{TableId: "t1"}, nil); err != nil {
		t.Fatal(err)
	}
	if r, ok, _ := s.Owner(ctx, "t1"); !ok || r != "" {
		t.Fatalf("owner = %q, %v; want recorded, waiting for a runner", r, ok)
	}
	members.ms = live("a")
	if n, err := a.Reconcile(ctx); n != 1 || err != nil {
		t.Fatalf("Reconcile = %d, %v; want the waiting table placed", n, err)
	}
	if ts, _ := s.TablesOf(ctx, "a"); !slices.Equal(ts, []string{"t1"}) {
		t.Fatalf("tables of a = %v", ts)
	}
}

// A placement or a move rings the bell of each runner it concerns, after
// its writes, so a runner woken by it reads its new set; a change that did
// not happen (a compare-and-set that failed) rings nobody.
func TestStore_MoveRingsTheBellsOfBothRunners(t *testing.T) {
	ctx := context.Background()
	rdb := newRedis(t)
	s := NewStore(rdb)
	type ring struct {
		runner string
		tables []string
	}
	rings := make(chan ring, 16)
	wctx, stop := context.WithCancel(ctx)
	var done sync.WaitGroup
	for _, r := range []string{"a", "b"} {
		done.Add(1)
		go func() {
			defer done.Done()
			_ = s.Watch(wctx, r, func() {
				ts, _ := s.TablesOf(ctx, r)
				slices.Sort(ts)
				rings <- ring{r, ts}
			})
		}()
	}
	defer func() { stop(); done.Wait() }()
	next := func(what string) ring {
		t.Helper()
		select {
		case g := <-rings:
			return g
		case <-time.After(2 * time.Second):
			t.Fatalf("no bell: %s", what)
		}
		return ring{}
	}
	// The subscriptions' own wake-ups (a bell may have rung unheard before).
	subscribed := map[string]bool{}
	for len(subscribed) < 2 {
		subscribed[next("subscribed").runner] = true
	}

	if ok, err := s.Add(ctx, streams.Lease{}, "t1", "a"); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if g := next("placed on a"); g.runner != "a" || !slices.Equal(g.tables, []string{"t1"}) {
		t.Fatalf("bell %+v, want a's, with t1 in its set already", g)
	}
	if ok, err := s.Move(ctx, streams.Lease{}, "t1", "a", "b"); err != nil || !ok {
		t.Fatal(ok, err)
	}
	got := map[string][]string{}
	for range 2 {
		g := next("moved from a to b")
		got[g.runner] = g.tables
	}
	if len(got["a"]) != 0 || !slices.Equal(got["b"], []string{"t1"}) || len(got) != 2 {
		t.Fatalf("bells %v, want a's (without t1) and b's (with t1)", got)
	}
	if ok, err := s.Move(ctx, streams.Lease{}, "t1", "a", "b"); err != nil || ok {
		t.Fatalf("a stale move = %v, %v; want refused", ok, err)
	}
	select {
	case g := <-rings:
		t.Fatalf("a refused move rang %+v", g)
	case <-time.After(200 * time.Millisecond):
	}
}

// The leader does not wait for its interval to act on a heartbeat that
// ran out: its pass comes when the first live runner's deadline passes
// (Member.LiveFor), so a runner cut off from Redis loses its table within
// milliseconds of its heartbeat's expiry. The interval here is 10 s: an
// assigner that only ran every interval would not move the table for 10 s.
func TestAssigner_PassRunsWhenAHeartbeatExpiresNotAtTheNextInterval(t *testing.T) {
	ctx := context.Background()
	rdb := newRedis(t)
	const ttl = 300 * time.Millisecond
	h := NewHeartbeats(rdb, ttl)
	s := NewStore(rdb)
	if ok, err := s.Add(ctx, streams.Lease{}, "t1", "a"); err != nil || !ok {
		t.Fatal(ok, err)
	}
	rctx, stop := context.WithCancel(ctx)
	var done sync.WaitGroup
	defer func() { stop(); done.Wait() }()
	done.Add(1)
	go func() { // b stays live
		defer done.Done()
		for rctx.Err() == nil {
			_ = h.Beat(rctx, Member{ID: "b"})
			sleep(rctx, ttl/3)
		}
	}()
	for _, id := range []string{"a", "b"} {
		if err := h.Beat(ctx, Member{ID: id}); err != nil {
			t.Fatal(err)
		}
	}
	a, err := NewAssigner(rdb, h, s, AssignerOptions{ID: "x", Interval: 10 * time.Second, LeaderTTL: 600 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done.Add(1)
	go func() { defer done.Done(); _ = a.Run(rctx) }()
	deadline := time.Now().Add(2 * time.Second)
	for !a.IsLeader() {
		if time.Now().After(deadline) {
			t.Fatal("no leader")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// a beats a while longer, then is cut off: its heartbeat runs out at
	// its deadline, which Redis's clock tells.
	for range 4 {
		if err := h.Beat(ctx, Member{ID: "a"}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(ttl / 3)
	}
	pipe := rdb.Pipeline()
	score := pipe.ZScore(ctx, RunnersKey, "a")
	now := pipe.Time(ctx)
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	expires := time.Now().Add(time.UnixMilli(int64(score.Val())).Sub(now.Val()))
	var moved time.Time
	for limit := expires.Add(3 * time.Second); moved.IsZero(); {
		if o, _, err := s.Owner(ctx, "t1"); err != nil {
			t.Fatal(err)
		} else if o != "a" {
			if o != "b" {
				t.Fatalf("t1 moved to %q, want b", o)
			}
			moved = time.Now()
		}
		if time.Now().After(limit) {
			t.Fatalf("t1 still on a %v after its heartbeat expired (interval 10 s)", time.Since(expires))
		}
		time.Sleep(2 * time.Millisecond)
	}
	late := moved.Sub(expires)
	t.Logf("heartbeat expired → table moved: %v", late.Round(time.Millisecond))
	if late < -5*time.Millisecond {
		t.Fatalf("moved %v before the heartbeat expired", -late)
	}
	if late > 150*time.Millisecond {
		t.Fatalf("moved %v after the heartbeat expired, want within 150ms", late)
	}
}

// switchMembers is a Membership whose answer the test changes.
type switchMembers struct {
	mu sync.Mutex
	ms []Member
}

func (s *switchMembers) Members(context.Context) ([]Member, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ms), nil
}

func (s *switchMembers) set(ms ...Member) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ms = ms
}

// Wake makes the leader pass at once (the operator calls it on its pods'
// events): a runner the membership now says is dead loses its table
// without waiting for the interval, 10 s here.
func TestAssigner_WakeRunsAPassAtOnce(t *testing.T) {
	ctx := context.Background()
	rdb := newRedis(t)
	s := NewStore(rdb)
	if ok, err := s.Add(ctx, streams.Lease{}, "t1", "a"); err != nil || !ok {
		t.Fatal(ok, err)
	}
	mem := &switchMembers{}
	mem.set(live("a", "b")...)
	a, err := NewAssigner(rdb, mem, s, AssignerOptions{ID: "x", Interval: 10 * time.Second, LeaderTTL: 600 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	defer func() { stop(); <-done }()
	go func() { defer close(done); _ = a.Run(rctx) }()
	for limit := time.Now().Add(2 * time.Second); !a.IsLeader(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(limit) {
			t.Fatal("no leader")
		}
	}
	time.Sleep(100 * time.Millisecond) // the first pass, which moves nothing
	mem.set(Member{ID: "a"}, Member{ID: "b", Ready: true})
	woken := time.Now()
	a.Wake()
	for {
		if o, _, _ := s.Owner(ctx, "t1"); o == "b" {
			break
		}
		if time.Since(woken) > 2*time.Second {
			t.Fatal("t1 still on a 2 s after Wake (interval 10 s)")
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Logf("Wake → table moved: %v", time.Since(woken).Round(time.Millisecond))
}
