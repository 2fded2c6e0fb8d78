package ws

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/pulka/pulka/services/gateway/internal/presence"
)

// keepPresence runs g's KeepPresence until the test ends, or until the
// returned stop is called (which waits for it to return).
func keepPresence(t *testing.T, g *gateway) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = g.srv.KeepPresence(ctx); close(done) }()
	stop = func() { cancel(); <-done }
	t.Cleanup(stop)
	return stop
}

// readAll keeps reading c's frames (so that it answers pings) until it closes.
func readAll(c *client) {
	go func() {
		for {
			if _, _, err := c.c.Read(context.Background()); err != nil {
				return
			}
		}
	}()
}

func waitReports(t *testing.T, e *env, table, want string) {
	t.Helper()
	pollReports(t, e, table, want, func(got []string) bool { return strings.Join(got, ",") == want })
}

// pollReports waits until the table's presence reports satisfy ok; want
// describes them for the failure message.
func pollReports(t *testing.T, e *env, table, want string, ok func([]string) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := e.presenceReports(t, table)
		if ok(got) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("presence reports = %q, want %s", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A gateway that stalls past its beats is swept by another, which reports
// its player away; once it runs again, its connection's next refresh finds
// the entry gone, records it again and reports the player back.
func TestKeepPresence_AStalledGatewaySweptByAnotherReportsItsPlayersBack(t *testing.T) {
	e := newEnv(t)
	stalled := e.gateway(t, Config{PingInterval: 50 * time.Millisecond, PresenceBeat: time.Hour})
	other := e.gateway(t, Config{PresenceBeat: 20 * time.Millisecond})
	seen := e.publish(t, "t1", seated(2, "cem"))
	a := stalled.login(t, "cem")
	a.send(map[string]any{"join": map[string]any{"table": "t1", "last_event_id": seen}})
	a.nextOf("joined")
	readAll(a)
	waitReports(t, e, "t1", "cem:back")
	// The stalled gateway beat once, long enough ago to count as dead.
	if err := stalled.srv.deps.Presence.Beat(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	keepPresence(t, other)
	// The sweeper's away and the stalled gateway's new back come in either
	// order (the runner checks an away against presence when it reads it).
	waitReportCount(t, e, "t1", map[string]int{"cem:back": 2, "cem:away": 1})
	if stalled.srv.Open() != 1 {
		t.Errorf("%d connections open on the stalled gateway, want 1", stalled.srv.Open())
	}
	n, err := e.rdb.ZCard(context.Background(), presence.Key("t1", "cem")).Result()
	if err != nil || n != 1 {
		t.Errorf("cem's presence holds %d connections (%v), want the stalled gateway's again", n, err)
	}
}

func waitReportCount(t *testing.T, e *env, table string, want map[string]int) {
	t.Helper()
	pollReports(t, e, table, fmt.Sprint(want), func(reports []string) bool {
		got := map[string]int{}
		for _, r := range reports {
			got[r]++
		}
		return maps.Equal(got, want)
	})
}

// A gateway that stops with no connection open leaves the beating set, so
// nobody sweeps it; one stopped with connections still open stays listed,
// so that another reports their players away.
func TestKeepPresence_AGatewayLeavesOnlyWhenItsConnectionsAreClosed(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	g := e.gateway(t, Config{PresenceBeat: 20 * time.Millisecond})
	listed := func() bool {
		t.Helper()
		ok, err := g.srv.deps.Presence.Listed(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	stop := keepPresence(t, g)
	deadline := time.Now().Add(5 * time.Second)
	for !listed() {
		if time.Now().After(deadline) {
			t.Fatal("the gateway never beat")
		}
		time.Sleep(5 * time.Millisecond)
	}
	c := g.login(t, "cem")
	stop()
	if !listed() {
		t.Fatal("a gateway that stopped with a connection open left the beating set")
	}
	_ = c.c.CloseNow()
	waitOpen(t, g.srv, 0)
	stop = keepPresence(t, g)
	stop()
	if listed() {
		t.Error("a gateway that stopped with no connection open is still listed")
	}
}

// A gateway sweeps others only after beating without a miss for as long as
// they had to beat: after a Redis outage every beat has lapsed, and the
// first gateway back must not take the others, still alive, for dead.
func TestKeepPresence_NoSweepBeforeBeatingForAWholeDeadWindow(t *testing.T) {
	e := newEnv(t)
	dead := e.gateway(t, Config{})
	sweeper := e.gateway(t, Config{PresenceBeat: 100 * time.Millisecond})
	seen := e.publish(t, "t1", seated(2, "cem"))
	a := dead.login(t, "cem")
	a.send(map[string]any{"join": map[string]any{"table": "t1", "last_event_id": seen}})
	a.nextOf("joined")
	waitReports(t, e, "t1", "cem:back")
	if err := dead.srv.deps.Presence.Beat(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	keepPresence(t, sweeper)
	waitReports(t, e, "t1", "cem:back,cem:away")
	if d, window := time.Since(started), deadAfterBeats*100*time.Millisecond; d < window {
		t.Fatalf("swept %v after starting, before beating for a whole %v", d, window)
	}
}
