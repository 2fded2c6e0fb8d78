package ws

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/auth"
)

// dialStatus tries an upgrade and returns the HTTP status of a refusal
// (0 when it was accepted; the connection is then closed at cleanup).
func (g *gateway) dialStatus(t *testing.T, h http.Header) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, g.url(), &websocket.DialOptions{HTTPHeader: h})
	closeBody(resp)
	if err == nil {
		t.Cleanup(func() { _ = c.CloseNow() })
		return 0
	}
	if resp == nil {
		t.Fatalf("dial: %v", err)
	}
	return resp.StatusCode
}

func bearerHeader(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }

func TestLimits_SocketsPerAddressCountUnauthenticatedOnesToo(t *testing.T) {
	g := newEnv(t).gateway(t, Config{MaxPerIP: 3, MaxPerPlayer: 10})
	for i := range 3 {
		if st := g.dialStatus(t, nil); st != 0 {
			t.Fatalf("socket %d: refused with %d", i, st)
		}
	}
	if st := g.dialStatus(t, bearerHeader(g.token(t, "ana"))); st != http.StatusTooManyRequests {
		t.Fatalf("fourth socket from the address: %d, want 429", st)
	}
	waitOpen(t, g.srv, 3)
}

func TestLimits_SocketsPerPlayerBeforeAndAfterTheUpgrade(t *testing.T) {
	g := newEnv(t).gateway(t, Config{MaxPerIP: 100, MaxPerPlayer: 2})
	tok := g.token(t, "ana")
	for i := range 2 {
		if st := g.dialStatus(t, bearerHeader(tok)); st != 0 {
			t.Fatalf("socket %d: refused with %d", i, st)
		}
	}
	if st := g.dialStatus(t, bearerHeader(tok)); st != http.StatusTooManyRequests {
		t.Fatalf("third socket of the player: %d, want 429", st)
	}
	// By hello: the error frame, then 4029.
	c := g.dial(t, nil)
	c.send(map[string]any{"hello": map[string]any{"token": g.token(t, "ana")}})
	if f := c.next(); f["code"] != wire.CodeTooManyConns {
		t.Fatalf("hello over the player's limit: %v", f)
	}
	if code := c.closed(); code != CloseTooManyConns {
		t.Fatalf("closed with %d, want %d", code, CloseTooManyConns)
	}
	// Another player is not affected, and a closed socket gives its place back.
	if st := g.dialStatus(t, bearerHeader(g.token(t, "bob"))); st != 0 {
		t.Fatalf("another player: %d", st)
	}
	waitOpen(t, g.srv, 3)
	if g.srv.perPlay.Count("ana") != 2 || g.srv.perIP.Keys() != 1 {
		t.Fatalf("counts: ana %d, addresses %d", g.srv.perPlay.Count("ana"), g.srv.perIP.Keys())
	}
}

func TestLimits_OverloadedShedsNewUpgradesOnly(t *testing.T) {
	var overloaded bool
	g := newEnv(t).gatewayCfg(t, Config{}, func(d *Deps) { d.Overloaded = func() bool { return overloaded } })
	c := g.login(t, "ana")
	overloaded = true
	if st := g.dialStatus(t, nil); st != http.StatusServiceUnavailable {
		t.Fatalf("upgrade while overloaded: %d, want 503", st)
	}
	c.send(map[string]any{"ping": map[string]any{}})
	if f := c.next(); f["type"] != "pong" {
		t.Fatalf("an open connection while overloaded: %v", f)
	}
	overloaded = false
	if st := g.dialStatus(t, nil); st != 0 {
		t.Fatalf("after the overload: %d", st)
	}
}

// An unauthenticated socket holds a descriptor and a per-address slot: with
// the default settings it is closed (4002) once the hello deadline passes,
// not sooner and not much later. (Changed on purpose: this used to assert
// the default constant, not the behaviour.)
func TestLimits_HelloDeadlineClosesAnUnauthenticatedSocketByDefault(t *testing.T) {
	deadline := (Config{}).withDefaults().AuthTimeout
	if deadline > 5*time.Second {
		t.Fatalf("default hello deadline %v: an unauthenticated socket holds a descriptor for nothing", deadline)
	}
	g := newEnv(t).gateway(t, Config{})
	start := time.Now()
	c := g.dial(t, nil) // no cookie, no hello
	code := c.closed()
	took := time.Since(start)
	if code != CloseAuthTimedOut {
		t.Fatalf("close code = %d, want %d (no hello in time)", code, CloseAuthTimedOut)
	}
	if took < deadline-100*time.Millisecond || took > deadline+2*time.Second {
		t.Fatalf("closed after %v, want the default hello deadline %v", took, deadline)
	}
}

func TestJoin_AnUnknownTableIsRefusedAndTouchesNothing(t *testing.T) {
	e := newEnv(t)
	asked := 0
	g := e.gatewayCfg(t, Config{}, func(d *Deps) {
		d.TableExists = func(_ context.Context, id string) (bool, error) { asked++; return id == "t1", nil }
	})
	c := g.login(t, "ana")
	ctx := context.Background()
	before := e.rdb.DBSize(ctx).Val()
	for i, last := range []string{"", "1-0", "99999999999999-0"} {
		c.send(map[string]any{"ref": "j", "join": map[string]any{"table": "made-up", "last_event_id": last}})
		if f := c.nextOf("error"); f["code"] != wire.CodeTableNotFound || f["ref"] != "j" {
			t.Fatalf("join %d of an unknown table: %v", i, f)
		}
	}
	if after := e.rdb.DBSize(ctx).Val(); after != before {
		keys := e.rdb.Keys(ctx, "*").Val()
		t.Fatalf("Redis keys %d → %d after junk joins: %v", before, after, keys)
	}
	c.send(map[string]any{"join": map[string]any{"table": "t1"}})
	c.nextOf("joined")
	c.send(map[string]any{"join": map[string]any{"table": "t1"}}) // a rejoin is not asked again
	c.nextOf("joined")
	c2 := g.login(t, "bob") // another connection: the yes is cached

	c2.send(map[string]any{"join": map[string]any{"table": "t1"}})
	c2.nextOf("joined")
	if asked != 4 {
		t.Fatalf("the lobby was asked %d times, want 4 (three junk, one t1, then the cache)", asked)
	}
}

func TestCommand_FromAWatcherIsRefusedAndNeverAppended(t *testing.T) {
	e := newEnv(t)
	g := e.gateway(t, Config{Rate: 1000, Burst: 1000, MaxStrikes: 1000})
	e.publish(t, "t1", seated(0, "ana"))
	w := g.login(t, "eve")
	w.send(map[string]any{"join": map[string]any{"table": "t1"}})
	w.nextOf("joined")
	ctx := context.Background()
	before := e.rdb.XLen(ctx, streams.TableCommands("t1")).Val()
	for i, c := range []map[string]any{
		{"bid": map[string]any{"tricks": 1}},
		{"trump": map[string]any{"trump": "SUIT_HEARTS"}},
		{"play": map[string]any{"card": "CARD_ACE_OF_SPADES"}},
		{"resign": map[string]any{}},
		{"leave": map[string]any{}},
		{"sit": map[string]any{"seat": 0}},
	} {
		c["table"] = "t1"
		w.send(map[string]any{"ref": "r", "command": c})
		if got := w.nextOf("error"); got["code"] != wire.CodeNotSeated || got["ref"] != "r" {
			t.Fatalf("%d %v from a watcher: %v", i, c, got)
		}
	}
	if after := e.rdb.XLen(ctx, streams.TableCommands("t1")).Val(); after != before {
		t.Fatalf("command stream %d → %d entries after a watcher's commands", before, after)
	}
}

// A player whose seat a bot plays still owns it: sit (to take it back) and
// leave go through; a move does not (the bot plays it).
func TestCommand_APlayerWhoseSeatABotPlaysMayTakeItBack(t *testing.T) {
	e := newEnv(t)
	g := e.gateway(t, Config{})
	e.publish(t, "t1", seated(2, "ana"))
	e.publish(t, "t1", pub(&tablev1.Event{Event: &tablev1.Event_SeatTakenByBot{SeatTakenByBot: &tablev1.SeatTakenByBot{Seat: 2}}}))
	c := g.login(t, "ana")
	c.send(map[string]any{"join": map[string]any{"table": "t1"}})
	c.nextOf("joined")
	c.send(map[string]any{"ref": "b", "command": map[string]any{"table": "t1", "bid": map[string]any{"tricks": 1}}})
	if f := c.nextOf("error"); f["code"] != wire.CodeNotSeated {
		t.Fatalf("bid while a bot plays the seat: %v", f)
	}
	for typ, cmd := range map[string]map[string]any{"sit": {"seat": 2}, "leave": {}} {
		c.send(map[string]any{"ref": typ, "command": map[string]any{"table": "t1", typ: cmd}})
		if f := c.nextOf("ack"); f["ref"] != typ {
			t.Fatalf("%s: %v", typ, f)
		}
	}
}

func TestSession_RevokedClosesOpenSocketsWith4003AndRefusesNewOnes(t *testing.T) {
	e := newEnv(t)
	rev := auth.NewRevocations(e.rdb, time.Now)
	g := e.gatewayCfg(t, Config{SessionSweep: time.Hour}, func(d *Deps) { d.Revocations = rev })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go g.srv.WatchSessions(ctx)
	tok := g.token(t, "ana")
	claims, _ := g.signer.Verify(tok)
	c := g.dial(t, bearerHeader(tok))
	c.nextOf("welcome")
	other := g.login(t, "ana") // another session of the same player stays
	// The subscription is confirmed asynchronously: announce the
	// revocation until the socket is gone (a sweep would take an hour).
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			if err := rev.Revoke(ctx, claims); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
			g.srv.mu.Lock()
			n := len(g.srv.byToken[claims.ID])
			g.srv.mu.Unlock()
			if n == 0 {
				return
			}
		}
	}()
	if f := c.nextOf("error"); f["code"] != wire.CodeSessionRevoked {
		t.Fatalf("revoked: %v", f)
	}
	if code := c.closed(); code != CloseSessionEnded {
		t.Fatalf("closed with %d, want %d", code, CloseSessionEnded)
	}
	<-done
	other.send(map[string]any{"ping": map[string]any{}})
	if f := other.next(); f["type"] != "pong" {
		t.Fatalf("the player's other session: %v", f)
	}
	// The revoked token opens nothing any more: by hello, 4003.
	h := g.dial(t, nil)
	h.send(map[string]any{"hello": map[string]any{"token": tok}})
	if f := h.next(); f["code"] != wire.CodeSessionRevoked {
		t.Fatalf("hello with a revoked token: %v", f)
	}
	if code := h.closed(); code != CloseSessionEnded {
		t.Fatalf("closed with %d, want %d", code, CloseSessionEnded)
	}
}

func TestSession_SweepFindsRevocationsTheSubscriptionMissed(t *testing.T) {
	e := newEnv(t)
	rev := auth.NewRevocations(e.rdb, time.Now)
	g := e.gatewayCfg(t, Config{}, func(d *Deps) { d.Revocations = rev })
	tok := g.token(t, "ana")
	claims, _ := g.signer.Verify(tok)
	c := g.dial(t, bearerHeader(tok))
	c.nextOf("welcome")
	// Revoked while nobody listened (no WatchSessions running).
	if err := rev.Revoke(context.Background(), claims); err != nil {
		t.Fatal(err)
	}
	g.srv.sweepSessions(context.Background())
	if code := c.closed(); code != CloseSessionEnded {
		t.Fatalf("closed with %d, want %d", code, CloseSessionEnded)
	}
}

func TestSession_ExpiryClosesTheSocketWith4003(t *testing.T) {
	e := newEnv(t)
	g := e.gateway(t, Config{})
	short, err := auth.NewSigner(secret, nil, 1200*time.Millisecond, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	tok, _, _ := short.Issue(auth.Claims{PlayerID: "ana", Name: "ana"})
	c := g.dial(t, bearerHeader(tok))
	c.nextOf("welcome")
	if f := c.nextOf("error"); f["code"] != wire.CodeSessionExpired {
		t.Fatalf("at expiry: %v", f)
	}
	if code := c.closed(); code != CloseSessionEnded {
		t.Fatalf("closed with %d, want %d", code, CloseSessionEnded)
	}
}
