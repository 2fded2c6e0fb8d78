package presence

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/redistest"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestTracker_FirstAndLastConnectionAcrossInstances(t *testing.T) {
	srv := redistest.Start(t)
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	a := New(srv.Client(t), time.Minute, c.now) // two gateway instances
	b := New(srv.Client(t), time.Minute, c.now)
	ctx := context.Background()
	if first, err := a.Connect(ctx, "t1", "ana", "a-1"); err != nil || !first {
		t.Fatalf("first connection: %v %v", first, err)
	}
	if first, _ := b.Connect(ctx, "t1", "ana", "b-1"); first {
		t.Fatal("second connection (other instance) counted as first")
	}
	if first, _ := a.Connect(ctx, "t1", "bob", "a-2"); !first {
		t.Fatal("another player's connection is not their first")
	}
	if last, _ := a.Disconnect(ctx, "t1", "ana", "a-1"); last {
		t.Fatal("ana is still connected on b")
	}
	if last, _ := a.Disconnect(ctx, "t1", "ana", "a-1"); last {
		t.Fatal("a repeated disconnect counted as last")
	}
	if last, _ := b.Disconnect(ctx, "t1", "ana", "b-1"); !last {
		t.Fatal("the last connection was not last")
	}
}

func TestTracker_DeadInstanceExpires(t *testing.T) {
	srv := redistest.Start(t)
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	tr := New(srv.Client(t), time.Minute, c.now)
	ctx := context.Background()
	_, _ = tr.Connect(ctx, "t1", "ana", "dead")   // its gateway dies: never disconnects
	_, _ = tr.Connect(ctx, "t1", "ana", "living") // refreshed
	c.add(50 * time.Second)
	if err := tr.Refresh(ctx, "t1", "ana", "living"); err != nil {
		t.Fatal(err)
	}
	c.add(20 * time.Second)
	if last, _ := tr.Disconnect(ctx, "t1", "ana", "living"); !last {
		t.Fatal("an expired connection still counts")
	}
	if first, _ := tr.Connect(ctx, "t1", "ana", "new"); !first {
		t.Fatal("reconnect after everything expired is not first")
	}
}

// awayLog collects a sweep's away reports.
type awayLog struct {
	got  []Gone
	fail func(Gone) error // optional: an error (or a side effect) per report
}

func (l *awayLog) away(g Gone) error {
	if l.fail != nil {
		if err := l.fail(g); err != nil {
			return err
		}
	}
	l.got = append(l.got, g)
	return nil
}

func (l *awayLog) has(want ...Gone) bool {
	if len(l.got) != len(want) {
		return false
	}
	seen := map[Gone]int{}
	for _, g := range l.got {
		seen[g]++
	}
	for _, w := range want {
		if seen[w] != 1 {
			return false
		}
	}
	return true
}

const deadAfter = 15 * time.Second

// gateways starts a Redis and one tracker per name (gateway instance), all
// on one fake clock.
func gateways(t *testing.T, names ...string) (*redis.Client, *clock, []*Tracker) {
	t.Helper()
	rdb := redistest.Start(t).Client(t)
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	out := make([]*Tracker, len(names))
	for i, n := range names {
		out[i] = New(rdb, time.Minute, c.now, WithInstance(n))
	}
	return rdb, c, out
}

func TestSweep_ADeadGatewaysPlayersWithNoOtherConnectionAreReportedAwayOnce(t *testing.T) {
	rdb, c, gw := gateways(t, "gw-a", "gw-b")
	a, b := gw[0], gw[1]
	ctx := context.Background()
	for _, tr := range []*Tracker{a, b} {
		if err := tr.Beat(ctx, deadAfter); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = a.Connect(ctx, "t1", "ana", "a-1")
	_, _ = a.Connect(ctx, "t1", "bob", "a-2")
	_, _ = a.Connect(ctx, "t2", "cy", "a-3")
	_, _ = b.Connect(ctx, "t1", "bob", "b-1") // bob is on both gateways
	// a is killed: it never beats or disconnects again; b lives on.
	c.add(deadAfter - time.Second)
	_ = b.Beat(ctx, deadAfter)
	var early awayLog
	if n, err := b.Sweep(ctx, deadAfter, early.away); err != nil || n != 0 || len(early.got) != 0 {
		t.Fatalf("swept a gateway before its beat lapsed: %d %v %v", n, early.got, err)
	}
	c.add(2 * time.Second)
	_ = b.Beat(ctx, deadAfter)
	var log awayLog
	n, err := b.Sweep(ctx, deadAfter, log.away)
	if err != nil || n != 3 {
		t.Fatalf("sweep: %d connections, %v; want 3", n, err)
	}
	if !log.has(Gone{"t1", "ana"}, Gone{"t2", "cy"}) {
		t.Fatalf("away reports %v, want ana at t1 and cy at t2 (bob is still on b)", log.got)
	}
	var again awayLog
	if n, err := b.Sweep(ctx, deadAfter, again.away); err != nil || n != 0 || len(again.got) != 0 {
		t.Fatalf("a second sweep: %d %v %v", n, again.got, err)
	}
	if rdb.ZScore(ctx, gatewaysKey(), a.Instance()).Err() == nil || rdb.Exists(ctx, connsKey(a.Instance())).Val() != 0 {
		t.Error("the swept gateway is still listed")
	}
	if last, _ := b.Disconnect(ctx, "t1", "bob", "b-1"); !last {
		t.Error("bob's connection on b is not his last after the sweep")
	}
	if first, _ := b.Connect(ctx, "t1", "ana", "b-2"); !first {
		t.Error("ana's return after the sweep is not her first connection")
	}
}

func TestSweep_AGatewayNeverSweepsItself(t *testing.T) {
	_, c, gw := gateways(t, "gw-a")
	a := gw[0]
	ctx := context.Background()
	_ = a.Beat(ctx, deadAfter)
	_, _ = a.Connect(ctx, "t1", "ana", "a-1")
	c.add(2 * deadAfter) // stalled, not dead
	var log awayLog
	if n, err := a.Sweep(ctx, deadAfter, log.away); err != nil || n != 0 || len(log.got) != 0 {
		t.Fatalf("a gateway swept itself: %d %v %v", n, log.got, err)
	}
}

func TestSweep_WhatAFailedSweepLeftIsSweptAfterItsClaim(t *testing.T) {
	_, c, gw := gateways(t, "gw-a", "gw-b", "gw-d")
	a, b, d := gw[0], gw[1], gw[2]
	ctx := context.Background()
	_ = a.Beat(ctx, deadAfter)
	_, _ = a.Connect(ctx, "t1", "ana", "a-1")
	_, _ = a.Connect(ctx, "t1", "bob", "a-2")
	c.add(deadAfter + time.Second)
	// b claims a, then cannot publish its first report (Redis went away,
	// say) and gives up.
	// The claim is Redis's own expiry, in real time.
	const claim = 300 * time.Millisecond
	failing := awayLog{fail: func(Gone) error { return errors.New("publish failed") }}
	claimed := time.Now()
	if _, err := b.Sweep(ctx, claim, failing.away); err == nil {
		t.Fatal("a sweep whose report failed returned no error")
	}
	var during awayLog
	if n, _ := d.Sweep(ctx, claim, during.away); n != 0 && time.Since(claimed) < claim {
		t.Fatalf("another gateway swept during b's claim: %d %v", n, during.got)
	}
	var log awayLog
	for deadline := time.Now().Add(5 * time.Second); len(log.got) == 0; { // until b's claim lapses
		if time.Now().After(deadline) {
			t.Fatal("what b left was never swept")
		}
		if _, err := d.Sweep(ctx, claim, log.away); err != nil {
			t.Fatal(err)
		}
		if len(log.got) == 0 {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if time.Since(claimed) < claim {
		t.Errorf("swept again %v after the claim, before it lapsed", time.Since(claimed))
	}
	// Both reports come, the failed one again: a table ignores an away
	// about a player already away.
	if !log.has(Gone{"t1", "ana"}, Gone{"t1", "bob"}) {
		t.Fatalf("after the claim lapsed: %v, want both players", log.got)
	}
}

func TestSweep_AGatewayThatBeatsAgainDuringTheSweepKeepsItsNewConnections(t *testing.T) {
	rdb, c, gw := gateways(t, "gw-a", "gw-b")
	a, b := gw[0], gw[1]
	ctx := context.Background()
	_ = a.Beat(ctx, deadAfter)
	_, _ = a.Connect(ctx, "t1", "ana", "a-1")
	c.add(deadAfter + time.Second)
	// a stalled, and comes back while b sweeps it.
	log := awayLog{fail: func(Gone) error {
		_ = a.Beat(ctx, deadAfter)
		_, err := a.Connect(ctx, "t2", "bob", "a-2")
		return err
	}}
	if _, err := b.Sweep(ctx, deadAfter, log.away); err != nil {
		t.Fatal(err)
	}
	if !log.has(Gone{"t1", "ana"}) {
		t.Fatalf("away reports %v, want ana", log.got)
	}
	if rdb.ZScore(ctx, gatewaysKey(), a.Instance()).Err() != nil {
		t.Error("a gateway that beat again was forgotten")
	}
	if !rdb.SIsMember(ctx, connsKey(a.Instance()), member("t2", "bob", "a-2")).Val() {
		t.Error("the connection it made after coming back is no longer listed")
	}
	// Its swept connection learns it on its next refresh and arrives again.
	if err := a.Refresh(ctx, "t1", "ana", "a-1"); !errors.Is(err, ErrNotPresent) {
		t.Fatalf("refresh of a swept connection: %v, want ErrNotPresent", err)
	}
	if err := a.Refresh(ctx, "t2", "bob", "a-2"); err != nil {
		t.Fatalf("refresh of a live connection: %v", err)
	}
	if first, _ := a.Connect(ctx, "t1", "ana", "a-1"); !first {
		t.Error("the swept connection's return is not the player's first")
	}
}

func TestLeave_AGatewayThatLeftIsNotSwept(t *testing.T) {
	rdb, c, gw := gateways(t, "gw-a", "gw-b")
	a, b := gw[0], gw[1]
	ctx := context.Background()
	_ = a.Beat(ctx, deadAfter)
	_, _ = a.Connect(ctx, "t1", "ana", "a-1")
	if last, _ := a.Disconnect(ctx, "t1", "ana", "a-1"); !last {
		t.Fatal("not last")
	}
	if rdb.SCard(ctx, connsKey(a.Instance())).Val() != 0 {
		t.Fatal("a disconnected connection is still listed")
	}
	if left, err := a.Leave(ctx); err != nil || !left {
		t.Fatalf("leave: %v %v", left, err)
	}
	c.add(2 * deadAfter)
	var log awayLog
	if n, err := b.Sweep(ctx, deadAfter, log.away); err != nil || n != 0 || len(log.got) != 0 {
		t.Fatalf("swept a gateway that left: %d %v %v", n, log.got, err)
	}
	if rdb.Exists(ctx, gatewaysKey()).Val() != 0 {
		t.Error("the gateway that left is still listed")
	}
}

func TestLeave_AGatewayWithConnectionsStillListedStaysToBeSwept(t *testing.T) {
	_, c, gw := gateways(t, "gw-a", "gw-b")
	a, b := gw[0], gw[1]
	ctx := context.Background()
	_ = a.Beat(ctx, deadAfter)
	_, _ = a.Connect(ctx, "t1", "ana", "a-1") // its goodbye failed
	if left, err := a.Leave(ctx); err != nil || left {
		t.Fatalf("leave with a connection listed: %v %v, want false", left, err)
	}
	c.add(2 * deadAfter)
	var log awayLog
	if n, err := b.Sweep(ctx, deadAfter, log.away); err != nil || n != 1 || !log.has(Gone{"t1", "ana"}) {
		t.Fatalf("sweep of a gateway that could not leave: %d %v %v", n, log.got, err)
	}
}

// With Redis's clock (as the gateways run), a gateway is dead once its beat
// lapses by Redis's time, whatever the gateways' clocks say.
func TestSweep_WithRedisClockTheBeatsLapseByRedisTime(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	skewed := func() time.Time { return time.Now().Add(-time.Hour) } // a gateway an hour behind
	a := New(rdb, time.Minute, skewed, WithInstance("gw-a"), WithRedisClock())
	b := New(rdb, time.Minute, time.Now, WithInstance("gw-b"), WithRedisClock())
	ctx := context.Background()
	const short = 300 * time.Millisecond
	if err := a.Beat(ctx, short); err != nil {
		t.Fatal(err)
	}
	_, _ = a.Connect(ctx, "t1", "ana", "a-1")
	var early awayLog
	if n, err := b.Sweep(ctx, short, early.away); err != nil || n != 0 {
		t.Fatalf("swept a gateway that just beat: %d %v %v", n, early.got, err)
	}
	var log awayLog
	deadline := time.Now().Add(5 * time.Second)
	for len(log.got) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the gateway whose beat lapsed was never swept")
		}
		time.Sleep(50 * time.Millisecond)
		if _, err := b.Sweep(ctx, short, log.away); err != nil {
			t.Fatal(err)
		}
	}
	if !log.has(Gone{"t1", "ana"}) {
		t.Fatalf("away reports %v", log.got)
	}
}

func TestSweep_ABigListIsSweptInBatches(t *testing.T) {
	rdb, c, gw := gateways(t, "gw-a", "gw-b")
	a, b := gw[0], gw[1]
	ctx := context.Background()
	_ = a.Beat(ctx, deadAfter)
	const n = 3*sweepBatch + 7
	for i := range n {
		if _, err := a.Connect(ctx, "t"+strconv.Itoa(i%50), "p"+strconv.Itoa(i), "a-"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	c.add(2 * deadAfter)
	var log awayLog
	if got, err := b.Sweep(ctx, deadAfter, log.away); err != nil || got != n || len(log.got) != n {
		t.Fatalf("swept %d connections with %d reports, %v; want %d", got, len(log.got), err, n)
	}
	if rdb.Exists(ctx, connsKey(a.Instance()), claimKey(a.Instance())).Val() != 0 {
		t.Error("the swept gateway's list or the claim is left")
	}
}
