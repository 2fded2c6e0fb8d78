package service

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/passhash"
	"github.com/pulka/pulka/services/lobby/internal/store"
)

// clock is a test clock that moves only when told.
type clock struct{ ms atomic.Int64 }

func (c *clock) now() time.Time {
	return time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC).Add(time.Duration(c.ms.Load()) * time.Millisecond)
}
func (c *clock) advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

// withLimits runs a lobby on clk with limits l (zero fields: the defaults).
func withLimits(clk *clock, l Limits) func(*Options) {
	return func(o *Options) { o.Now, o.Limits = clk.now, l }
}

func wantReason(t *testing.T, what string, r *lobbyv1.LobbyCommandResult, want lobbyv1.LobbyRejectReason) {
	t.Helper()
	if r.GetAccepted() || r.GetReason() != want || r.GetMessage() == "" {
		t.Fatalf("%s: %v, want refused %v with a message", what, r, want)
	}
}

func TestLimit_WaitingTablesPerPlayer(t *testing.T) {
	e := newEnv(t)
	clk := &clock{}
	e.lobby("a", withLimits(clk, Limits{WaitingPerPlayer: 3}))
	var mine []string
	for range 3 {
		mine = append(mine, e.mustCreate("p", classic(), "", true))
	}
	// A fourth table, hosted or private or watched only, is refused; the
	// refusal is not stored, so the same command succeeds later.
	create := &lobbyv1.LobbyCommand{CommandId: "fourth", Command: &lobbyv1.LobbyCommand_CreateTable{CreateTable: &lobbyv1.CreateTable{Settings: classic(private)}}}
	wantReason(t, "fourth table", e.do("p", create), lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TOO_MANY_WAITING_TABLES)
	// Sitting at somebody else's waiting table counts too.
	other := e.mustCreate("q", classic(), "", true)
	wantReason(t, "sitting at a fourth", e.do("p", sit(other, 1, "")), lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TOO_MANY_WAITING_TABLES)
	// Moving seats at a table one holds already is no new table.
	if r := e.do("p", sit(mine[0], 2, "")); !r.GetAccepted() {
		t.Fatalf("moving seats: %v", r)
	}
	// Leaving one frees its place.
	if r := e.do("p", leave(mine[0])); !r.GetAccepted() {
		t.Fatal(r)
	}
	create.CommandId = "fourth"
	if r := e.do("p", create); !r.GetAccepted() {
		t.Fatalf("after leaving one, the same command: %v", r)
	}
	// A table that starts stops counting.
	for i, seat := range []uint32{1, 2, 3} {
		if r := e.do(fmt.Sprint("s", i), sit(mine[1], seat, "")); !r.GetAccepted() {
			t.Fatal(r)
		}
	}
	if r := e.do("p", sit(other, 1, "")); !r.GetAccepted() {
		t.Fatalf("after a table started: %v", r)
	}
	held, err := e.rdb.SMembers(context.Background(), store.HeldKey("p")).Result()
	if err != nil || len(held) != 3 || !slices.Contains(held, other) || !slices.Contains(held, mine[2]) {
		t.Fatalf("p holds %v (%v)", held, err)
	}
}

func TestLimit_CreationsPerMinute(t *testing.T) {
	e := newEnv(t)
	clk := &clock{}
	e.lobby("a", withLimits(clk, Limits{CreatesPerMinute: 10, WaitingPerPlayer: 100}))
	for range 10 {
		e.mustCreate("p", classic(), "", true)
		clk.advance(time.Second)
	}
	r := e.create("p", classic(), "", true)
	wantReason(t, "the eleventh in a minute", r, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_RATE_LIMITED)
	if ra := r.GetRetryAfter().AsDuration(); ra != 50*time.Second {
		t.Fatalf("retry after %v, want 50s (the first creation leaves the window then)", ra)
	}
	// Another player is not affected.
	e.mustCreate("q", classic(), "", true)
	clk.advance(50 * time.Second)
	e.mustCreate("p", classic(), "", true)
	wantReason(t, "the window slid by one", e.create("p", classic(), "", true), lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_RATE_LIMITED)
	if n := e.rdb.ZCard(context.Background(), store.CreateRateKey("p")).Val(); n != 10 {
		t.Fatalf("the creation window holds %d entries, want 10 (bounded by the limit)", n)
	}
}

func TestLimit_PasswordGuessesPerPlayerAndPerTable(t *testing.T) {
	e := newEnv(t)
	clk := &clock{}
	e.lobby("a", withLimits(clk, Limits{GuessesPerPlayer: 5, GuessesPerTable: 20, GuessWindow: time.Minute}))
	id := e.mustCreate("host", classic(), "sesame", true)
	for i := range 5 {
		wantReason(t, fmt.Sprint("guess ", i), e.do("g0", sit(id, 1, fmt.Sprint("guess", i))), lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_WRONG_PASSWORD)
	}
	r := e.do("g0", sit(id, 1, "sesame"))
	wantReason(t, "the sixth guess, right or not", r, lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TOO_MANY_PASSWORD_GUESSES)
	if ra := r.GetRetryAfter().AsDuration(); ra <= 0 || ra > time.Minute {
		t.Fatalf("retry after %v", ra)
	}
	// Three more players: 5 + 5 + 5 + 5 = 20 guesses at the table, then the
	// table's limit refuses even a fresh player.
	for p := 1; p <= 3; p++ {
		for i := range 5 {
			e.do(fmt.Sprint("g", p), sit(id, 1, fmt.Sprint("x", i)))
		}
	}
	wantReason(t, "a fresh player at a table guessed 20 times", e.do("fresh", sit(id, 1, "sesame")), lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TOO_MANY_PASSWORD_GUESSES)
	// Another table is not affected, nor is a player sitting down without a
	// password, nor a seated player moving seats.
	id2 := e.mustCreate("host2", classic(), "other", true)
	if r := e.do("g0", sit(id2, 1, "other")); !r.GetAccepted() {
		t.Fatalf("another table: %v", r)
	}
	if r := e.do("g0", sit(id2, 2, "")); !r.GetAccepted() {
		t.Fatalf("moving seats needs no guess: %v", r)
	}
	// After the window, guesses are checked again.
	clk.advance(time.Minute)
	if r := e.do("fresh", sit(id, 1, "sesame")); !r.GetAccepted() {
		t.Fatalf("after the window, the right password: %v", r)
	}
	if n := e.rdb.ZCard(context.Background(), store.GuessRateKey(id, "")).Val(); n > 20 {
		t.Fatalf("the table's guess window holds %d entries, more than its limit", n)
	}
}

func TestExpire_IdleWaitingTablesAreClosedAndFreed(t *testing.T) {
	e := newEnv(t)
	clk := &clock{}
	svc, _ := e.lobby("a", withLimits(clk, Limits{WaitingPerPlayer: 1, WaitingTTL: 15 * time.Minute, SweepInterval: time.Hour}))
	idle := e.mustCreate("p", classic(), "", true)
	clk.advance(10 * time.Minute)
	busy := e.mustCreate("q", classic(), "", true)
	playing := e.mustCreate("r", japanese(21), "", true)
	if r := e.do("s", sit(playing, 1, "")); !r.GetAccepted() {
		t.Fatal(r)
	}
	e.converge(e.view)
	versionBefore := e.lobbyState().GetVersion()
	clk.advance(5*time.Minute + time.Millisecond)
	n, err := svc.SweepIdle(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("swept %d, %v; want exactly the idle table", n, err)
	}
	if s := e.fetch(idle); s.GetStatus() != lobbyv1.TableStatus_TABLE_STATUS_FINISHED {
		t.Fatalf("idle table: %v", s.GetStatus())
	}
	e.converge(e.view)
	if _, ok := e.view.Get(idle); ok {
		t.Fatal("the expired table is still listed")
	}
	changes, _, complete := e.view.Since(versionBefore)
	if !complete || len(changes) != 1 || changes[0].Removed != idle {
		t.Fatalf("watchers got %+v (complete %v), want one removal", changes, complete)
	}
	// p is free to create again.
	e.mustCreate("p", classic(), "", true)
	// busy is touched (someone sits, stands): its clock starts again.
	if r := e.do("t", sit(busy, 1, "")); !r.GetAccepted() {
		t.Fatal(r)
	}
	clk.advance(14 * time.Minute)
	if n, _ := svc.SweepIdle(context.Background()); n != 0 {
		t.Fatalf("swept %d tables changed 14 minutes ago", n)
	}
	clk.advance(2 * time.Minute)
	if n, _ := svc.SweepIdle(context.Background()); n != 2 { // busy, and p's second table
		t.Fatalf("swept %d, want 2", n)
	}
	if s := e.fetch(playing); s.GetStatus() != lobbyv1.TableStatus_TABLE_STATUS_PLAYING {
		t.Fatalf("a running game was touched: %v", s.GetStatus())
	}
	if n := e.rdb.ZCard(context.Background(), store.IdleKey).Val(); n != 0 {
		t.Fatalf("%d tables left in the idle set", n)
	}
	for _, p := range []string{"p", "q", "t"} {
		if n := e.rdb.SCard(context.Background(), store.HeldKey(p)).Val(); n != 0 {
			t.Fatalf("%s still holds %d waiting tables", p, n)
		}
	}
}

// Two replicas sweeping the same tables close each once: one removal per
// table in the view.
func TestExpire_TwoReplicasCloseATableOnce(t *testing.T) {
	e := newEnv(t)
	clk := &clock{}
	a, _ := e.lobby("a", withLimits(clk, Limits{WaitingPerPlayer: 100, CreatesPerMinute: 100, SweepInterval: time.Hour}))
	b, _ := e.lobby("b", withLimits(clk, Limits{WaitingPerPlayer: 100, CreatesPerMinute: 100, SweepInterval: time.Hour}))
	for range 20 {
		e.mustCreate("p", classic(), "", true)
	}
	e.converge(e.view)
	before := e.lobbyState().GetVersion()
	clk.advance(time.Hour)
	var wg sync.WaitGroup
	var total atomic.Int64
	for _, s := range []*Service{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := s.SweepIdle(context.Background())
			if err != nil {
				t.Error(err)
			}
			total.Add(int64(n))
		}()
	}
	wg.Wait()
	if total.Load() != 20 {
		t.Fatalf("closed %d, want 20", total.Load())
	}
	if after := e.lobbyState(); after.GetVersion() != before+20 || len(after.GetTables()) != 0 {
		t.Fatalf("version %d → %d, %d listed", before, after.GetVersion(), len(after.GetTables()))
	}
}

// A flood of password guesses (hashed with the real argon2id cost, limits
// out of the way so that each is hashed) does not hold up table creation:
// the guesses wait for the password workers, the creations do not.
func TestFlood_PasswordGuessesDoNotDelayTableCreation(t *testing.T) {
	if testing.Short() {
		t.Skip("hashes for seconds")
	}
	e := newEnv(t)
	e.lobby("a", func(o *Options) {
		o.Password = passhash.Params{} // the real cost: ~25 ms per guess
		o.Limits.PasswordWorkers, o.Limits.PasswordQueue = 1, 64
	})
	id := e.mustCreate("host", classic(), "the real one", true)

	measure := func(n int) []time.Duration {
		var out []time.Duration
		for i := range n {
			start := time.Now()
			e.mustCreate(fmt.Sprint("creator-", i%50), classic(), "", false)
			out = append(out, time.Since(start))
			time.Sleep(20 * time.Millisecond)
		}
		slices.Sort(out)
		return out
	}
	quiet := measure(20)

	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	var guesses, wrong, busy atomic.Int64
	var wg sync.WaitGroup
	for g := range 96 { // more guessers than the queue holds
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil && i < 200; i++ {
				cmd := sit(id, 1, fmt.Sprint("guess-", g, "-", i))
				cmd.PlayerId, cmd.CommandId = fmt.Sprint("guesser-", g), fmt.Sprint("guess-", g, "-", i)
				r, err := e.client.Do(ctx, cmd)
				if err != nil {
					return
				}
				guesses.Add(1)
				switch r.GetReason() {
				case lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_WRONG_PASSWORD:
					wrong.Add(1)
				case lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_UNAVAILABLE:
					busy.Add(1)
				}
			}
		}()
	}
	time.Sleep(300 * time.Millisecond) // the queue fills
	// Creations are timed while the flood lasts: at least 40 of them, and
	// until the worker has hashed 5 guesses, however long a hash takes on
	// this machine (under -race argon2id takes far longer than 25 ms).
	var flood []time.Duration
	floodStart := time.Now()
	for len(flood) < 40 || (wrong.Load() < 5 && ctx.Err() == nil) {
		flood = append(flood, measure(10)...)
	}
	slices.Sort(flood)
	// The worker hashed all the while (the queue stayed full): the time of
	// one hash here, whatever this machine and -race make of the 25 ms.
	hash := time.Since(floodStart) / time.Duration(max(1, wrong.Load()))
	stop()
	wg.Wait()
	p := func(d []time.Duration, q float64) time.Duration { return d[int(q*float64(len(d)-1))] }
	t.Logf("create latency quiet p50 %v max %v; during %d guesses (%d hashed and wrong, %d refused busy, a hash %v) p50 %v p95 %v max %v",
		p(quiet, .5), p(quiet, 1), guesses.Load(), wrong.Load(), busy.Load(), hash, p(flood, .5), p(flood, .95), p(flood, 1))
	// The queue was full (busy refusals) and the worker hashed all along.
	if wrong.Load() < 5 || busy.Load() == 0 {
		t.Fatalf("%d guesses hashed, %d refused busy: the flood did not load the workers", wrong.Load(), busy.Load())
	}
	// One hash is ~25 ms and 64 wait in the queue: a creation queued behind
	// them would take more than a second, one queued behind a single guess
	// at least a hash. So 95 % of the creations take less than a hash, and
	// none more than four (and no more than 150 / 500 ms where hashes are
	// quick). On a slow two-core machine under -race a hash took 350–850 ms,
	// and the creations, sharing the cores with the hashing and 96 guessers,
	// p50 57–82 ms, p95 200–233 ms.
	if p95, most := p(flood, .95), max(150*time.Millisecond, hash); p95 > most {
		t.Fatalf("table creation slowed by the guesses: p95 %v, over %v (a hash: %v)", p95, most, hash)
	}
	if worst, most := p(flood, 1), max(500*time.Millisecond, 4*hash); worst > most {
		t.Fatalf("table creation slowed by the guesses: max %v, over %v (a hash: %v)", worst, most, hash)
	}
}

// Guesses spread over many tables by many players can neither hash more
// than each player's all-tables budget nor take the capacity that hashes
// new tables' passwords: meanwhile, a host creates password tables (each
// accepted at once) and friends sit down with the right password.
func TestFlood_GuessesOverManyTablesDoNotStarvePasswordCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("hashes for seconds")
	}
	e := newEnv(t)
	clk := &clock{} // stands still: no window slides during the test
	const guessers, perGuesser, tables = 20, 2, 30
	svc, _ := e.lobby("a", withLimits(clk, Limits{
		WaitingPerPlayer: 1000, CreatesPerMinute: 1000,
		GuessesPerPlayer: 5, GuessesPerTable: 20, GuessesPerGuesser: perGuesser, GuessWindow: time.Minute,
		PasswordWorkers: 1, PasswordQueue: 8, CreateQueue: 4,
	}), func(o *Options) { o.Password = passhash.Params{} }) // the real cost: ~25 ms per hash
	var targets []string
	for i := range tables {
		targets = append(targets, e.mustCreate(fmt.Sprint("owner-", i), classic(), "not guessable", true))
	}

	ctx, stop := context.WithTimeout(context.Background(), 60*time.Second)
	defer stop()
	var hashed, refusedLimit, busy atomic.Int64
	var wg sync.WaitGroup
	for g := range guessers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil && i < 5000; i++ {
				cmd := sit(targets[(g+i)%tables], 1, fmt.Sprint("guess-", g, "-", i))
				cmd.PlayerId, cmd.CommandId = fmt.Sprint("guesser-", g), fmt.Sprint("guess-", g, "-", i)
				r, err := e.client.Do(ctx, cmd)
				if err != nil {
					return
				}
				switch r.GetReason() {
				case lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_WRONG_PASSWORD:
					hashed.Add(1)
				case lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_TOO_MANY_PASSWORD_GUESSES:
					refusedLimit.Add(1)
					time.Sleep(5 * time.Millisecond)
				case lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_UNAVAILABLE:
					busy.Add(1)
				}
			}
		}()
	}
	// The host creates while the guesses are being hashed: every creation
	// has room in its own queue, served first.
	var mine []string
	for i := range 5 {
		r := e.create("host", classic(), fmt.Sprint("right-", i), true)
		if !r.GetAccepted() {
			t.Fatalf("creation %d during the flood: %v", i, r)
		}
		mine = append(mine, r.GetTableId())
	}
	// Friends sit down with the right password; the flood goes on. A busy
	// queue is answered UNAVAILABLE, which a client resends: it must clear
	// once the guessers have spent their budget.
	for i, id := range mine {
		deadline := time.Now().Add(20 * time.Second)
		for {
			r := e.do(fmt.Sprint("friend-", i), sit(id, 1, fmt.Sprint("right-", i)))
			if r.GetAccepted() {
				break
			}
			if r.GetReason() != lobbyv1.LobbyRejectReason_LOBBY_REJECT_REASON_UNAVAILABLE || time.Now().After(deadline) {
				t.Fatalf("friend %d sitting down with the right password during the flood: %v", i, r)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	stop()
	wg.Wait()
	t.Logf("guesses: %d hashed, %d refused by a guess limit, %d refused busy; queues now %d and %d",
		hashed.Load(), refusedLimit.Load(), busy.Load(), len(svc.hashJobs), len(svc.createJobs))
	if hashed.Load() > guessers*perGuesser {
		t.Fatalf("%d guesses hashed, more than %d players × %d at all tables", hashed.Load(), guessers, perGuesser)
	}
	if refusedLimit.Load() == 0 {
		t.Fatal("no guess was refused by a limit: the flood did not reach it")
	}
}
