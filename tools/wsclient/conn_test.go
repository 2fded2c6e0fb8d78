package wsclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"

	"github.com/coder/websocket"

	"github.com/pulka/pulka/pkg/cards"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/wire"
)

// fakeGateway speaks the gateway's side of the protocol with pkg/wire's
// frames, over a real WebSocket: enough to test the client's framing,
// commands and resume logic without Redis. The real gateway is exercised by
// the pulkactl play and load tests.
type fakeGateway struct {
	t      *testing.T
	events []string // stream ids "1-0", "2-0", ... of table t1
	// dropAfter, when > 0, drops the first connection (no close frame)
	// after sending that many events.
	dropAfter int
	// closeWith, when set, closes the first connection with this code right
	// after the welcome.
	closeWith websocket.StatusCode
	// gone tables are answered table_gone; after goneDrop joins the first
	// connection dies (no close frame).
	gone     map[string]bool
	goneDrop int
	// legalEvery, when > 0, puts legal moves on every legalEvery-th event
	// frame, as the gateway does for the seat to move.
	legalEvery int

	mu       sync.Mutex
	conns    int
	joins    []clientMsg
	commands []clientMsg
}

func newFakeGateway(t *testing.T, events int) (*fakeGateway, *httptest.Server) {
	g := &fakeGateway{t: t}
	for i := 1; i <= events; i++ {
		g.events = append(g.events, fmt.Sprintf("%d-0", i))
	}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return g, srv
}

func (g *fakeGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer func() { _ = ws.CloseNow() }()
	ctx := r.Context()
	if r.Header.Get("Authorization") != "Bearer good" {
		_ = put(ctx, ws, wire.ErrorFrame(wire.CodeUnauthorized, "bad token", ""))
		_ = ws.Close(4001, "unauthorized")
		return
	}
	g.mu.Lock()
	g.conns++
	first := g.conns == 1
	g.mu.Unlock()
	_ = put(ctx, ws, wire.Welcome(wire.Player{ID: "p1", Name: "Nino"}, time.Now()))
	if first && g.closeWith != 0 {
		_ = ws.Close(g.closeWith, "going away")
		return
	}
	sent := 0
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			return
		}
		m, err := readMsg(data)
		if err != nil {
			_ = put(ctx, ws, wire.ErrorFrame(wire.CodeOf(err), err.Error(), m.Ref))
			continue
		}
		switch {
		case m.Type == wire.TypeJoin:
			g.mu.Lock()
			g.joins = append(g.joins, m)
			drop := first && g.goneDrop > 0 && len(g.joins) == g.goneDrop
			g.mu.Unlock()
			if g.gone[m.Table] {
				_ = put(ctx, ws, wire.TableError(m.Table, wire.CodeTableGone, "the table no longer exists"))
				if drop {
					return
				}
				continue
			}
			replayed := 0
			for i, id := range g.events {
				if m.LastEventID != "" && i < indexOf(g.events, m.LastEventID)+1 {
					continue
				}
				if first && g.dropAfter > 0 && sent == g.dropAfter {
					return // the connection dies: no close frame
				}
				ev := &tablev1.Event{Seq: uint64(i + 1), TableId: m.Table,
					Event: &tablev1.Event_BidMade{BidMade: &tablev1.BidMade{Seat: uint32(i % 4), Tricks: 1}}}
				frame := wire.Event(m.Table, id, ev)
				if g.legalEvery > 0 && (i+1)%g.legalEvery == 0 {
					frame = wire.EventWithLegal(m.Table, id, ev, &tablev1.Event{Event: &tablev1.Event_LegalMoves{LegalMoves: &tablev1.LegalMoves{
						Seat: uint32(i % 4), Phase: tablev1.Phase_PHASE_BID, Bids: []uint32{uint32(i)}}}})
				}
				if err := put(ctx, ws, frame); err != nil {
					return
				}
				sent++
				replayed++
			}
			seat := uint32(0)
			_ = put(ctx, ws, wire.Joined(m.Table, m.Ref, &seat, replayed, false))
		case m.IsTableCommand():
			g.mu.Lock()
			g.commands = append(g.commands, m)
			g.mu.Unlock()
			_ = put(ctx, ws, wire.Ack(m.Ref, wire.CommandID("p1", m.Cmd)))
		case m.Type == wire.TypePing:
			_ = put(ctx, ws, wire.Pong(m.Ref, time.Now()))
		}
	}
}

func indexOf(ids []string, id string) int {
	for i, v := range ids {
		if v == id {
			return i
		}
	}
	return -1
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dialTest(t *testing.T, url string, opts Options) *Conn {
	t.Helper()
	if opts.Token == "" {
		opts.Token = "good"
	}
	c, err := Dial(testCtx(t), url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestDial_WelcomeNamesThePlayer(t *testing.T) {
	_, srv := newFakeGateway(t, 0)
	c := dialTest(t, srv.URL, Options{})
	if c.Player().ID != "p1" || c.Player().Name != "Nino" {
		t.Fatalf("player = %+v", c.Player())
	}
}

func TestDial_RefusedTokenIsTheGatewaysError(t *testing.T) {
	_, srv := newFakeGateway(t, 0)
	_, err := Dial(testCtx(t), srv.URL, Options{Token: "forged"})
	if !IsCode(err, wire.CodeUnauthorized) {
		t.Fatalf("err = %v, want code %s", err, wire.CodeUnauthorized)
	}
}

// TestConn_LegalMovesOnAnEventFrameFollowItAsTheirOwnEvent: the legal
// moves riding on an event frame reach the client's programs as the
// LegalMoves event the table's history has right after that event, with
// no id of their own.
func TestConn_LegalMovesOnAnEventFrameFollowItAsTheirOwnEvent(t *testing.T) {
	g, srv := newFakeGateway(t, 6)
	g.legalEvery = 3
	c := dialTest(t, srv.URL, Options{})
	ctx := testCtx(t)
	if _, err := c.Join(ctx, "t1", ""); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		f, err := c.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if f.Type == wire.TypeJoined {
			break
		}
		if f.Type != wire.TypeEvent {
			continue
		}
		switch {
		case f.Event.GetBidMade() != nil:
			got = append(got, "bid "+f.ID)
		case f.Event.GetLegalMoves() != nil:
			lm := f.Event.GetLegalMoves()
			if f.ID != "" || f.Event.GetVisibility().GetSeat() != lm.GetSeat() || f.Event.GetVisibility().GetAudience() != tablev1.Audience_AUDIENCE_SEAT ||
				f.Event.GetSeq() != uint64(lm.GetBids()[0])+2 || f.Event.GetTableId() != "t1" {
				t.Fatalf("legal moves frame %+v", f)
			}
			got = append(got, fmt.Sprintf("legal %d", lm.GetBids()[0]))
		}
	}
	want := []string{"bid 1-0", "bid 2-0", "bid 3-0", "legal 2", "bid 4-0", "bid 5-0", "bid 6-0", "legal 5"}
	if !slices.Equal(got, want) {
		t.Fatalf("frames %v, want %v", got, want)
	}
	if last := c.LastEventID("t1"); last != "6-0" {
		t.Fatalf("last event id %q, want 6-0", last)
	}
}

func TestConn_ResumesFromTheLastEventAfterADropWithoutGapOrDuplicate(t *testing.T) {
	g, srv := newFakeGateway(t, 12)
	g.dropAfter = 5
	c := dialTest(t, srv.URL, Options{Reconnect: true, MinBackoff: 10 * time.Millisecond})
	ctx := testCtx(t)
	if _, err := c.Join(ctx, "t1", ""); err != nil {
		t.Fatal(err)
	}
	var ids []string
	reconnected := 0
	for len(ids) < len(g.events) {
		f, err := c.Next(ctx)
		if err != nil {
			t.Fatalf("after %v: %v", ids, err)
		}
		switch f.Type {
		case wire.TypeEvent:
			if f.Event.GetBidMade() == nil || f.Event.GetSeq() != uint64(len(ids)+1) {
				t.Fatalf("event %s decoded as %v", f.ID, f.Event)
			}
			ids = append(ids, f.ID)
		case TypeReconnected:
			reconnected++
			if len(ids) != g.dropAfter || f.Err == nil {
				t.Fatalf("reconnected after %d events (err %v), want after %d with the cause", len(ids), f.Err, g.dropAfter)
			}
		}
	}
	if reconnected != 1 {
		t.Fatalf("reconnected %d times, want 1", reconnected)
	}
	if !equal(ids, g.events) {
		t.Fatalf("events %v, want %v", ids, g.events)
	}
	g.mu.Lock()
	joins := g.joins
	g.mu.Unlock()
	if len(joins) != 2 || joins[0].LastEventID != "" || joins[1].LastEventID != "5-0" || joins[1].Table != "t1" {
		t.Fatalf("joins = %+v, want a first join and a resume after 5-0", joins)
	}
	if got := c.LastEventID("t1"); got != "12-0" {
		t.Fatalf("LastEventID = %q", got)
	}
}

func TestConn_JoinFromAnIDGetsOnlyTheLaterEvents(t *testing.T) {
	_, srv := newFakeGateway(t, 6)
	c := dialTest(t, srv.URL, Options{})
	ctx := testCtx(t)
	ref, err := c.Join(ctx, "t1", "4-0")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	f, err := c.WaitFor(ctx, func(f Frame) bool {
		if f.Type == wire.TypeEvent {
			ids = append(ids, f.ID)
		}
		return f.Type == wire.TypeJoined
	})
	if err != nil {
		t.Fatal(err)
	}
	if f.Ref != ref || f.Replayed != 2 || f.Seat == nil || *f.Seat != 0 || !equal(ids, []string{"5-0", "6-0"}) {
		t.Fatalf("joined %+v after %v", f, ids)
	}
}

func TestConn_WithoutReconnectEndsWithTheCloseCode(t *testing.T) {
	g, srv := newFakeGateway(t, 0)
	g.closeWith = websocket.StatusGoingAway
	c := dialTest(t, srv.URL, Options{})
	_, err := c.Next(testCtx(t))
	if websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Fatalf("Next after a 1001: %v", err)
	}
	if _, err := c.Ping(testCtx(t)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Ping on an ended connection: %v", err)
	}
}

func TestConn_ReconnectsAfterAGatewayShutdown(t *testing.T) {
	g, srv := newFakeGateway(t, 2)
	g.closeWith = websocket.StatusGoingAway
	c := dialTest(t, srv.URL, Options{Reconnect: true, MinBackoff: 10 * time.Millisecond})
	ctx := testCtx(t)
	if _, err := c.WaitFor(ctx, func(f Frame) bool { return f.Type == TypeReconnected }); err != nil {
		t.Fatal(err)
	}
	// A join sent now goes over the new connection.
	if _, err := c.Join(ctx, "t1", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitFor(ctx, func(f Frame) bool { return f.Type == wire.TypeJoined && f.Replayed == 2 }); err != nil {
		t.Fatal(err)
	}
}

// A table the gateway says is gone is not joined again after a reconnect:
// it would only be refused again, on every reconnect for ever.
func TestConn_ATableThatIsGoneIsNotRejoined(t *testing.T) {
	g, srv := newFakeGateway(t, 1)
	g.gone, g.goneDrop = map[string]bool{"lost": true}, 2
	c := dialTest(t, srv.URL, Options{Reconnect: true, MinBackoff: 10 * time.Millisecond})
	ctx := testCtx(t)
	if _, err := c.Join(ctx, "t1", ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitFor(ctx, func(f Frame) bool { return f.Type == wire.TypeJoined }); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Join(ctx, "lost", ""); err != nil {
		t.Fatal(err)
	}
	f, err := c.WaitFor(ctx, func(f Frame) bool { return f.Type == wire.TypeError })
	if err != nil || f.Table != "lost" || !tableMissing(f.Err) {
		t.Fatalf("error frame %+v, %v", f, err)
	}
	if _, err := c.WaitFor(ctx, func(f Frame) bool { return f.Type == TypeReconnected }); err != nil {
		t.Fatal(err)
	}
	if _, err := c.WaitFor(ctx, func(f Frame) bool { return f.Type == wire.TypeJoined }); err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var tables []string
	for _, j := range g.joins {
		tables = append(tables, j.Table)
	}
	if strings.Join(tables, ",") != "t1,lost,t1" {
		t.Fatalf("joins %v: the lost table must not be joined again", tables)
	}
}

func TestConn_CommandsCarryTheKeyAndReturnThePlayersCommandID(t *testing.T) {
	g, srv := newFakeGateway(t, 0)
	c := dialTest(t, srv.URL, Options{})
	ctx := testCtx(t)
	cmd := func(key string, m any) *gatewayv1.TableCommand {
		out := &gatewayv1.TableCommand{Table: "t1", Cmd: key}
		switch x := m.(type) {
		case *tablev1.BidCommand:
			out.Command = &gatewayv1.TableCommand_Bid{Bid: x}
		case *tablev1.ChooseTrumpCommand:
			out.Command = &gatewayv1.TableCommand_Trump{Trump: x}
		case *tablev1.PlayCardCommand:
			out.Command = &gatewayv1.TableCommand_Play{Play: x}
		case *tablev1.ResignCommand:
			out.Command = &gatewayv1.TableCommand_Resign{Resign: x}
		case *tablev1.LeaveCommand:
			out.Command = &gatewayv1.TableCommand_Leave{Leave: x}
		case *tablev1.SitCommand:
			out.Command = &gatewayv1.TableCommand_Sit{Sit: x}
		}
		return out
	}
	tests := []struct {
		name string
		send func() (string, error)
		want *gatewayv1.TableCommand
	}{
		{"bid", func() (string, error) { return c.Bid(ctx, "t1", 2, "k1") }, cmd("k1", &tablev1.BidCommand{Tricks: 2})},
		{"trump none", func() (string, error) { return c.Trump(ctx, "t1", cards.NoSuit, "k2") },
			cmd("k2", &tablev1.ChooseTrumpCommand{Trump: commonv1.Suit_SUIT_NONE})},
		{"trump hearts", func() (string, error) { return c.Trump(ctx, "t1", cards.Hearts, "k3") },
			cmd("k3", &tablev1.ChooseTrumpCommand{Trump: commonv1.Suit_SUIT_HEARTS})},
		{"play", func() (string, error) { return c.Play(ctx, "t1", cards.New(cards.Spades, cards.Ace), nil, "k4") },
			cmd("k4", &tablev1.PlayCardCommand{Card: commonv1.Card_CARD_ACE_OF_SPADES})},
		{"joker", func() (string, error) {
			return c.Move(ctx, "t1", Move{Kind: MovePlay, Card: cards.Joker1, Joker: &wire.JokerDecl{Action: "highest", Suit: "D"}}, "k5")
		}, cmd("k5", &tablev1.PlayCardCommand{Card: commonv1.Card_CARD_JOKER_1,
			Declaration: &tablev1.JokerDeclaration{Action: tablev1.JokerAction_JOKER_ACTION_HIGHEST, Suit: commonv1.Suit_SUIT_DIAMONDS}})},
		{"resign", func() (string, error) { return c.Resign(ctx, "t1", "k6") }, cmd("k6", &tablev1.ResignCommand{})},
		{"leave", func() (string, error) { return c.Leave(ctx, "t1", "k7") }, cmd("k7", &tablev1.LeaveCommand{})},
		{"sit", func() (string, error) { return c.Sit(ctx, "t1", 3, "k8") }, cmd("k8", &tablev1.SitCommand{Seat: 3})},
	}
	for i, tt := range tests {
		id, err := tt.send()
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if id != "p1/"+tt.want.GetCmd() {
			t.Fatalf("%s: id %q", tt.name, id)
		}
		ack, err := c.WaitFor(ctx, func(f Frame) bool { return f.Type == wire.TypeAck })
		if err != nil || ack.Cmd != id {
			t.Fatalf("%s: ack %+v, %v", tt.name, ack, err)
		}
		g.mu.Lock()
		got := g.commands[i]
		g.mu.Unlock()
		if !proto.Equal(got.frame.GetCommand(), tt.want) {
			t.Fatalf("%s: gateway got %v, want %v", tt.name, got.frame, tt.want)
		}
	}
}

func TestConn_WithoutAKeyEachCommandGetsANewOne(t *testing.T) {
	_, srv := newFakeGateway(t, 0)
	c := dialTest(t, srv.URL, Options{})
	a, err1 := c.Resign(testCtx(t), "t1", "")
	b, err2 := c.Resign(testCtx(t), "t1", "")
	if err1 != nil || err2 != nil || a == b || !strings.HasPrefix(a, "p1/") {
		t.Fatalf("ids %q %q (%v %v)", a, b, err1, err2)
	}
}

func TestWebSocketURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:8080":  "ws://localhost:8080/ws",
		"https://pulka.example/": "wss://pulka.example/ws",
		"localhost:8080":         "ws://localhost:8080/ws",
		"ws://h:1/ws":            "ws://h:1/ws",
	} {
		if got := WebSocketURL(in); got != want {
			t.Errorf("WebSocketURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
