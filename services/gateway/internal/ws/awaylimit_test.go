package ws

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// count tallies one kind of presence report.
func count(reports []string, what string) int {
	n := 0
	for _, r := range reports {
		if r == what {
			n++
		}
	}
	return n
}

// flap joins and unjoins table n times in a row.
func flap(c *client, table string, n int) {
	c.t.Helper()
	for i := range n {
		c.send(map[string]any{"ref": fmt.Sprint("j", i), "join": map[string]any{"table": table}})
		c.nextOf("joined")
		c.send(map[string]any{"ref": fmt.Sprint("u", i), "unjoin": map[string]any{"table": table}})
		c.nextOf("unjoined")
	}
}

// A seated player who joins and unjoins in a loop would have every cycle
// written to the table's log as PlayerAway and PlayerBack, without bound:
// past the bucket their aways are held, and each return cancels the held
// one, so the table hears of AwayBurst absences however long they flap.
func TestPresence_AFlappingPlayersAwaysAreBounded(t *testing.T) {
	e := newEnv(t)
	g := e.gateway(t, Config{Rate: 1000, Burst: 1000, AwayBurst: 3, AwayEvery: time.Hour})
	e.publish(t, "t1", seated(0, "ana"))
	c := g.login(t, "ana")
	flap(c, "t1", 50)
	got := e.presenceReports(t, "t1")
	if n := count(got, "ana:away"); n != 3 {
		t.Fatalf("50 cycles reported ana away %d times, want the bucket's 3: %v", n, got)
	}
	if g.srv.away.heldCount() != 1 {
		t.Fatalf("%d aways held, want the last one", g.srv.away.heldCount())
	}
	// Another player at the table has a bucket of their own.
	e.publish(t, "t1", seated(1, "bo"))
	b := g.login(t, "bo")
	flap(b, "t1", 1)
	if n := count(e.presenceReports(t, "t1"), "bo:away"); n != 1 {
		t.Fatalf("bo reported away %d times, want 1", n)
	}
}

// A held away is sent when its token comes, if the player is still gone:
// the table then starts their grace as for any other absence.
func TestPresence_AHeldAwayIsSentWhenItsTokenComes(t *testing.T) {
	e := newEnv(t)
	g := e.gateway(t, Config{Rate: 1000, Burst: 1000, AwayBurst: 1, AwayEvery: 300 * time.Millisecond})
	e.publish(t, "t1", seated(0, "ana"))
	c := g.login(t, "ana")
	flap(c, "t1", 2)
	if n := count(e.presenceReports(t, "t1"), "ana:away"); n != 1 {
		t.Fatalf("ana reported away %d times before the token, want 1", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for count(e.presenceReports(t, "t1"), "ana:away") != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the held away was never sent: %v", e.presenceReports(t, "t1"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if g.srv.away.heldCount() != 0 {
		t.Fatal("an away still held after it was sent")
	}
}

// A return before the held away's token cancels it: nothing is sent for an
// absence the table never needed to know, and the token is given back.
func TestPresence_AReturnCancelsAHeldAway(t *testing.T) {
	e := newEnv(t)
	g := e.gateway(t, Config{Rate: 1000, Burst: 1000, AwayBurst: 1, AwayEvery: 400 * time.Millisecond})
	e.publish(t, "t1", seated(0, "ana"))
	c := g.login(t, "ana")
	flap(c, "t1", 2)
	c.send(map[string]any{"ref": "back", "join": map[string]any{"table": "t1"}})
	c.nextOf("joined")
	time.Sleep(800 * time.Millisecond) // two tokens' time
	got := e.presenceReports(t, "t1")
	if n := count(got, "ana:away"); n != 1 {
		t.Fatalf("ana reported away %d times, want 1 (the held one cancelled): %v", n, got)
	}
	if got[len(got)-1] != "ana:back" {
		t.Fatalf("the last report is %q, want ana:back: %v", got[len(got)-1], got)
	}
}

// A gateway shutting down sends the aways it holds: nobody else would
// report these players (their connections said goodbye).
func TestPresence_ShutdownSendsTheHeldAways(t *testing.T) {
	e := newEnv(t)
	g := e.gateway(t, Config{Rate: 1000, Burst: 1000, AwayBurst: 1, AwayEvery: time.Hour})
	e.publish(t, "t1", seated(0, "ana"))
	c := g.login(t, "ana")
	flap(c, "t1", 2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := g.srv.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.presenceReports(t, "t1"); count(got, "ana:away") != 2 {
		t.Fatalf("after the shutdown: %v, want two aways", got)
	}
}

// The limiter alone: many players and tables at once, held aways sent or
// cancelled exactly once, the keys of players whose bucket refilled
// forgotten.
func TestAwayLimit_EachHeldAwayIsSentOrCancelledOnce(t *testing.T) {
	var mu sync.Mutex
	sent := map[string]int{}
	a := newAwayLimit(50*time.Millisecond, 1, func(_ context.Context, table, player string) {
		mu.Lock()
		sent[table+"/"+player]++
		mu.Unlock()
	})
	var wg sync.WaitGroup
	for p := range 20 {
		wg.Go(func() {
			player := fmt.Sprint("p", p)
			for range 10 {
				a.away(context.Background(), "t", player)
				if p%2 == 0 {
					a.back("t", player)
				}
			}
		})
	}
	wg.Wait()
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	for p := range 20 {
		k := fmt.Sprint("t/p", p)
		// Odd players: the first away at once, the rest coalesced into one
		// held, sent when due. Even players returned each time: the first
		// away went out, every held one was cancelled.
		want := 2
		if p%2 == 0 {
			want = 1
		}
		if sent[k] != want {
			t.Errorf("%s: %d aways sent, want %d", k, sent[k], want)
		}
	}
	a.mu.Lock()
	a.sweepLocked(time.Now().Add(time.Second))
	left := len(a.keys)
	a.mu.Unlock()
	if left != 0 {
		t.Errorf("%d keys kept after every bucket refilled", left)
	}
}

// Once flushed (a gateway shutting down, whose connections may still be
// closing) nothing is held: a later away goes out at once.
func TestAwayLimit_AfterTheFlushNothingIsHeld(t *testing.T) {
	var sent atomic.Int32
	a := newAwayLimit(time.Hour, 1, func(context.Context, string, string) { sent.Add(1) })
	a.away(context.Background(), "t", "p")
	if out := a.away(context.Background(), "t", "p"); out != awayHeld {
		t.Fatalf("the second away was %s, want held", out)
	}
	a.flush(context.Background())
	if sent.Load() != 2 {
		t.Fatalf("%d aways sent by the flush, want 2", sent.Load())
	}
	a.back("t", "p")
	if out := a.away(context.Background(), "t", "p"); out != awaySent || sent.Load() != 3 {
		t.Fatalf("an away after the flush was %s (%d sent), want sent at once", out, sent.Load())
	}
}
