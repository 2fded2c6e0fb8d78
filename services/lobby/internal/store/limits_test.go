package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/services/lobby/internal/domain"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func TestTake_SlidingWindow(t *testing.T) {
	srv := redistest.Start(t)
	s := New(srv.Client(t), Config{})
	ctx := context.Background()
	r := Rate{Key: "rate:a", Limit: 3, Window: time.Minute}
	for _, tc := range []struct {
		rule   string
		at     time.Duration // after t0
		member string
		full   int
		retry  time.Duration
	}{
		{"the first request is counted", 0, "c1", -1, 0},
		{"up to the limit", 10 * time.Second, "c2", -1, 0},
		{"the limit itself", 20 * time.Second, "c3", -1, 0},
		{"one over is refused until the oldest leaves the window", 30 * time.Second, "c4", 0, 30 * time.Second},
		{"a refused request was not counted", 59 * time.Second, "c5", 0, time.Second},
		{"a retried command is not counted twice", 59 * time.Second, "c3", -1, 0},
		{"the window slides: the oldest is gone", 60 * time.Second, "c6", -1, 0},
		{"still full with c2, c3, c6", 61 * time.Second, "c7", 0, 9 * time.Second},
	} {
		full, retry, err := s.Take(ctx, t0.Add(tc.at), tc.member, r)
		if err != nil {
			t.Fatal(err)
		}
		if full != tc.full || retry != tc.retry {
			t.Fatalf("%s: full %d retry %v, want %d %v", tc.rule, full, retry, tc.full, tc.retry)
		}
	}
	if ttl := srv.Client(t).PTTL(ctx, "rate:a").Val(); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("a rate key must expire with its window: ttl %v", ttl)
	}
}

func TestTake_AllRatesOrNone(t *testing.T) {
	srv := redistest.Start(t)
	s := New(srv.Client(t), Config{})
	ctx := context.Background()
	perPlayer := func(p string) Rate { return Rate{Key: "guess:t:" + p, Limit: 2, Window: time.Minute} }
	perTable := Rate{Key: "guess:t", Limit: 3, Window: time.Minute}
	for i, p := range []string{"a", "a", "b"} {
		if full, _, err := s.Take(ctx, t0, fmt.Sprint("c", i), perPlayer(p), perTable); err != nil || full != -1 {
			t.Fatalf("guess %d by %s: full %d, %v", i, p, full, err)
		}
	}
	// a is at its own limit: refused by the first rate, and the table's
	// count does not move.
	if full, _, _ := s.Take(ctx, t0, "c3", perPlayer("a"), perTable); full != 0 {
		t.Fatalf("a's third guess: full %d, want 0", full)
	}
	if n := srv.Client(t).ZCard(ctx, "guess:t").Val(); n != 3 {
		t.Fatalf("the table counted %d guesses, want 3", n)
	}
	// c is fresh but the table is full.
	if full, retry, _ := s.Take(ctx, t0.Add(time.Second), "c4", perPlayer("c"), perTable); full != 1 || retry != 59*time.Second {
		t.Fatalf("c's guess: full %d retry %v, want 1 and 59s", full, retry)
	}
	if n := srv.Client(t).ZCard(ctx, "guess:t:c").Val(); n != 0 {
		t.Fatalf("a refused guess was counted for c: %d", n)
	}
}

// Many parallel requests: exactly the limit gets through.
func TestTake_ParallelRequestsCannotSlipPast(t *testing.T) {
	srv := redistest.Start(t)
	s := New(srv.Client(t), Config{})
	r := Rate{Key: "rate:p", Limit: 5, Window: time.Minute}
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken := 0
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			full, _, err := s.Take(context.Background(), t0, fmt.Sprint("c", i), r)
			if err != nil {
				t.Error(err)
			}
			if full < 0 {
				mu.Lock()
				taken++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if taken != 5 {
		t.Fatalf("%d of 100 parallel requests taken, limit 5", taken)
	}
}

func waitingTable(t *testing.T, id, host string) *domain.Table {
	t.Helper()
	tb := table(t, id)
	tb.Host = host
	return tb
}

func commitWaiting(s *Store, tb *domain.Table, rev int64, limit int, cmd string) error {
	_, err := s.Commit(context.Background(), Change{
		CommandID: cmd, Result: accepted(cmd, tb.ID), Table: tb, ExpectRevision: rev,
		Members: tb.Members(), WaitingLimit: limit, IdleDeadline: deadlineOf(tb),
	})
	return err
}

func deadlineOf(tb *domain.Table) time.Time {
	if tb.Status == domain.Waiting {
		return t0.Add(15 * time.Minute)
	}
	return time.Time{}
}

func TestCommit_WaitingTablesPerPlayer(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	s := New(rdb, Config{})
	ctx := context.Background()
	for i := range 3 {
		if err := commitWaiting(s, waitingTable(t, fmt.Sprint("t", i), "p"), 0, 3, fmt.Sprint("c", i)); err != nil {
			t.Fatalf("table %d: %v", i, err)
		}
	}
	err := commitWaiting(s, waitingTable(t, "t3", "p"), 0, 3, "c3")
	if !errors.Is(err, domain.ErrTooManyWaiting) {
		t.Fatalf("fourth table: %v", err)
	}
	if rdb.Exists(ctx, TableKey("t3"), ResultKey("c3")).Val() != 0 {
		t.Fatal("a refused table was written")
	}
	if held, _ := s.Held(ctx, "p"); !slices.Equal(held, []string{"t0", "t1", "t2"}) {
		t.Fatalf("held %v", held)
	}
	// Another player sitting at p's table holds it too; p still holds 3.
	tb, rev, err := s.Load(ctx, "t0")
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.SitDown(domain.Player{ID: "q"}, 1, "", nil); err != nil {
		t.Fatal(err)
	}
	if err := commitWaiting(s, tb, rev, 3, "c4"); err != nil {
		t.Fatal(err)
	}
	if held, _ := s.Held(ctx, "q"); !slices.Equal(held, []string{"t0"}) {
		t.Fatalf("q holds %v", held)
	}
	// The table starts (no longer waiting): both are free of it, and it
	// leaves the idle set.
	tb, rev, _ = s.Load(ctx, "t0")
	if err := tb.SitDown(domain.Player{ID: "p"}, 0, "", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Start(t0, "g", nil); err != nil {
		t.Fatal(err)
	}
	if err := commitWaiting(s, tb, rev, 3, "c5"); err != nil {
		t.Fatal(err)
	}
	if held, _ := s.Held(ctx, "p"); !slices.Equal(held, []string{"t1", "t2"}) {
		t.Fatalf("after the start p holds %v", held)
	}
	if held, _ := s.Held(ctx, "q"); len(held) != 0 {
		t.Fatalf("after the start q holds %v", held)
	}
	if _, ok, _ := s.IdleDeadline(ctx, "t0"); ok {
		t.Fatal("a started table is still in the idle set")
	}
	if err := commitWaiting(s, waitingTable(t, "t3", "p"), 0, 3, "c6"); err != nil {
		t.Fatalf("p is under the limit again: %v", err)
	}
	// A table that vanished some other way (a key deleted by hand) does not
	// hold its players forever.
	rdb.ZRem(ctx, IdleKey, "t1")
	if err := commitWaiting(s, waitingTable(t, "t4", "p"), 0, 3, "c7"); err != nil {
		t.Fatalf("a lost table still counted: %v", err)
	}
	if held, _ := s.Held(ctx, "p"); !slices.Equal(held, []string{"t2", "t3", "t4"}) {
		t.Fatalf("p holds %v", held)
	}
}

func TestDueIdle_SoonestFirstAndOnlyDue(t *testing.T) {
	srv := redistest.Start(t)
	s := New(srv.Client(t), Config{})
	ctx := context.Background()
	for i, id := range []string{"late", "early", "mid"} {
		tb := waitingTable(t, id, "p"+id)
		_, err := s.Commit(ctx, Change{CommandID: id, Result: accepted(id, id), Table: tb, Members: tb.Members(),
			IdleDeadline: t0.Add(time.Duration([]int{3, 1, 2}[i]) * time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
	}
	due, err := s.DueIdle(ctx, t0.Add(2*time.Minute), 10)
	if err != nil || !slices.Equal(due, []string{"early", "mid"}) {
		t.Fatalf("due %v, %v", due, err)
	}
	if d, ok, _ := s.IdleDeadline(ctx, "late"); !ok || !d.Equal(t0.Add(3*time.Minute)) {
		t.Fatalf("deadline of late: %v %v", d, ok)
	}
}
