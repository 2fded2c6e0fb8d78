package wsclient

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/fairdeal"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/table"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/pkg/wire"
)

// tableGateway is a gateway in front of a real pkg/table table: seat 1 is
// the player "p1" on the WebSocket, the other seats are bots that move at
// once. Every frame the player sends is applied to the table as the
// gateway would (wire.Command), and the player gets exactly the events it
// may see, each step's in one go.
type tableGateway struct {
	t *testing.T

	mu       sync.Mutex
	tb       *table.Table
	log      []*tablev1.Event // every event visible to seat 1, in order
	now      time.Time
	inputs   int
	refused  int
	accepted int // seeds accepted for seat 1
}

func (g *tableGateway) apply(in table.Input) []*tablev1.Event {
	g.inputs++
	in.Entropy = table.Entropy(fairdeal.LocalKey(77, uint32(g.inputs)))
	evs, err := g.tb.Apply(in)
	if err != nil {
		if re := (*table.RejectError)(nil); errors.As(err, &re) {
			g.refused++
			return []*tablev1.Event{re.Event}
		}
		g.t.Errorf("apply: %v", err)
	}
	// The bots move at once (BotDelay 0): a tick now plays them.
	if next, ok := g.tb.NextDeadline(); ok && !next.After(g.now) {
		more, err := g.tb.Apply(table.Tick(g.now))
		if err != nil {
			g.t.Errorf("tick: %v", err)
		}
		evs = append(evs, more...)
	}
	var out []*tablev1.Event
	for _, e := range evs {
		if visibleTo(e, 1, "p1") {
			if e.GetClientSeedAccepted() != nil || e.GetSeedAccepted().GetSeat() == 1 && e.GetSeedAccepted() != nil {
				g.accepted++
			}
			out = append(out, e)
		}
	}
	return out
}

func (g *tableGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	serveP1(g.t, w, r, func(ws *websocket.Conn, send func([]*tablev1.Event), m clientMsg) {
		g.mu.Lock()
		defer g.mu.Unlock()
		switch {
		case m.Type == wire.TypeJoin:
			// The history this seat may see, then joined.
			send(g.log)
			_ = put(ctx, ws, wire.Joined(m.Table, m.Ref, proto.Uint32(1), len(g.log), false))
		case m.IsTableCommand():
			id := wire.CommandID("p1", m.Cmd)
			cmd, err := wire.Command(m.frame.GetCommand(), "p1", id)
			if err != nil {
				g.t.Errorf("command %+v: %v", m, err)
				return
			}
			_ = put(ctx, ws, wire.Ack(m.Ref, id))
			g.now = g.now.Add(time.Millisecond)
			evs := g.apply(table.CommandInput(cmd, strconv.Itoa(g.inputs+1)+"-0", g.now))
			g.log = append(g.log, evs...)
			send(evs)
		}
	})
}

// TestPlayer_PlaysAWholeGameWithSeedsOnItsMovesAndNoMoveTwice: a Player
// plays a whole classic game against three bots at a real table. Its seeds
// ride on its moves, and each seed's acceptance reaches it before the echo
// of the move it rode on: the player must not take that acceptance (nor a
// reveal or a commitment) for a new turn and send a second move, which the
// table would refuse.
func TestPlayer_PlaysAWholeGameWithSeedsOnItsMovesAndNoMoveTwice(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	seats := []table.SeatInfo{{Bot: true, Name: "b0"}, {PlayerID: "p1", Name: "Nino"}, {Bot: true, Name: "b2"}, {Bot: true, Name: "b3"}}
	set := tablesettings.ClassicSettings(scoring.Settings{Variant: classic.Nines, Khishti: scoring.Khishti200})
	set.BotDelay = 0
	tb, start, err := table.New("t1", "g1", set, seats, now, table.Entropy(fairdeal.LocalKey(77, 0)))
	if err != nil {
		t.Fatal(err)
	}
	g := &tableGateway{t: t, tb: tb, now: now}
	for _, e := range start {
		if visibleTo(e, 1, "p1") {
			g.log = append(g.log, e)
		}
	}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	c := dialTest(t, srv.URL, Options{})
	p := &Player{Conn: c, Table: "t1"}
	if err := p.Run(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !tb.Over() {
		t.Fatal("the game did not end")
	}
	if g.refused != 0 {
		t.Fatalf("the table refused %d of the player's frames", g.refused)
	}
	// Hand 0's seed in a seed frame; the 15 hands committed ahead from
	// seeds on moves.
	if g.accepted != 16 {
		t.Fatalf("%d of the player's seeds accepted, want 16 (one per hand)", g.accepted)
	}
}
