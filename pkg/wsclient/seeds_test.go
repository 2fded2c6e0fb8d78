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

	"github.com/pulka/pulka/pkg/fairdeal"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/wire"
)

// seedGateway is a gateway that answers a join with the replayed events,
// the joined frame (player p1 at seat 1), then the live events, and records
// every seed frame it is sent.
type seedGateway struct {
	t              *testing.T
	replayed, live []*tablev1.Event
	// onSeed, when set, gives the events the table answers a seed with.
	onSeed func(wire.ClientMsg) []*tablev1.Event
	// watcher: the joined frame has no seat.
	watcher bool

	mu    sync.Mutex
	seeds []wire.ClientMsg
	got   chan wire.ClientMsg
}

func newSeedGateway(t *testing.T, replayed, live []*tablev1.Event) (*seedGateway, *httptest.Server) {
	g := &seedGateway{t: t, replayed: replayed, live: live, got: make(chan wire.ClientMsg, 16)}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return g, srv
}

func (g *seedGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer func() { _ = ws.CloseNow() }()
	ctx := r.Context()
	_ = ws.Write(ctx, websocket.MessageText, wire.Welcome(wire.Player{ID: "p1", Name: "Nino"}, time.Now()))
	seq := 0
	send := func(evs []*tablev1.Event) {
		for _, ev := range evs {
			seq++
			b, err := wire.Event("t1", strconv.Itoa(seq)+"-0", ev)
			if err != nil {
				g.t.Error(err)
				return
			}
			_ = ws.Write(ctx, websocket.MessageText, b)
		}
	}
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			return
		}
		m, err := wire.Parse(data)
		if err != nil {
			g.t.Errorf("the client sent a frame the gateway refuses: %s: %v", data, err)
			continue
		}
		switch m.Type {
		case wire.TypeJoin:
			send(g.replayed)
			seat := proto.Uint32(1)
			if g.watcher {
				seat = nil
			}
			_ = ws.Write(ctx, websocket.MessageText, wire.Joined(m.Table, m.Ref, seat, len(g.replayed), false))
			send(g.live)
		case wire.TypeSeed:
			g.mu.Lock()
			g.seeds = append(g.seeds, m)
			g.mu.Unlock()
			g.got <- m
			_ = ws.Write(ctx, websocket.MessageText, wire.Ack(m.Ref, wire.CommandID("p1", m.Cmd)))
			if g.onSeed != nil {
				send(g.onSeed(m))
			}
		}
	}
}

// hand is one hand of game g1 at table t1 as a table deals it: its
// server seed, commitment and events.
type hand struct {
	index  uint32
	server fairdeal.ServerSeed
	commit fairdeal.Commitment
}

func newHand(t *testing.T, index uint32) hand {
	h := hand{index: index}
	for i := range h.server {
		h.server[i] = byte(index) + byte(i)
	}
	c, err := fairdeal.Commit(fairdeal.Hand{TableID: "t1", GameID: "g1", Index: index}, h.server)
	if err != nil {
		t.Fatal(err)
	}
	h.commit = c
	return h
}

func ev(e any) *tablev1.Event {
	out := &tablev1.Event{TableId: "t1", GameId: "g1", Visibility: &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_PUBLIC}}
	switch x := e.(type) {
	case *tablev1.HandCommitted:
		out.Event = &tablev1.Event_HandCommitted{HandCommitted: x}
	case *tablev1.ClientSeedAccepted:
		out.Event = &tablev1.Event_ClientSeedAccepted{ClientSeedAccepted: x}
	case *tablev1.HandStarted:
		out.Event = &tablev1.Event_HandStarted{HandStarted: x}
	case *tablev1.HandRevealed:
		out.Event = &tablev1.Event_HandRevealed{HandRevealed: x}
	case *tablev1.GameStarted:
		out.Event = &tablev1.Event_GameStarted{GameStarted: x}
	}
	return out
}

func (h hand) committed(awaited ...uint32) *tablev1.Event {
	return ev(&tablev1.HandCommitted{HandIndex: h.index, Commitment: h.commit[:], AwaitedSeats: awaited})
}

func (h hand) started() *tablev1.Event { return ev(&tablev1.HandStarted{HandIndex: h.index}) }

func (h hand) revealed(seeds ...fairdeal.ClientSeed) *tablev1.Event {
	r := &tablev1.HandRevealed{HandIndex: h.index, ServerSeed: h.server[:], Commitment: h.commit[:]}
	for _, s := range seeds {
		r.ClientSeeds = append(r.ClientSeeds, s[:])
	}
	return ev(r)
}

func seated() *tablev1.Event {
	return ev(&tablev1.GameStarted{Seats: []*tablev1.SeatPlayer{{Seat: 0, Bot: true}, {Seat: 1, PlayerId: "p1"}, {Seat: 2, PlayerId: "p2"}, {Seat: 3, Bot: true}}})
}

func nextSeed(t *testing.T, g *seedGateway) wire.ClientMsg {
	t.Helper()
	select {
	case m := <-g.got:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no seed frame")
		return wire.ClientMsg{}
	}
}

// waitFor waits for a frame: the connection folds each frame before its
// consumer sees it.
func waitFor(t *testing.T, c *Conn, match func(Frame) bool) {
	t.Helper()
	if _, err := c.WaitFor(testCtx(t), match); err != nil {
		t.Fatal(err)
	}
}

func TestSeeds_AnAwaitedSeatSendsARandomSeedAndTheHandVerifies(t *testing.T) {
	h0 := newHand(t, 0)
	g, srv := newSeedGateway(t, []*tablev1.Event{seated()}, []*tablev1.Event{h0.committed(1, 2)})
	g.onSeed = func(m wire.ClientMsg) []*tablev1.Event {
		sent, err := fairdeal.ParseSeed(m.Seed)
		if err != nil {
			t.Error(err)
		}
		return []*tablev1.Event{ev(&tablev1.ClientSeedAccepted{HandIndex: 0, Seat: 1}), h0.started(),
			h0.revealed(fairdeal.NoClientSeed, fairdeal.ClientSeed(sent), fairdeal.NoClientSeed, fairdeal.NoClientSeed)}
	}
	c := dialTest(t, srv.URL, Options{})
	if _, err := c.Join(testCtx(t), "t1", ""); err != nil {
		t.Fatal(err)
	}
	m := nextSeed(t, g)
	if m.Table != "t1" || m.Hand == nil || *m.Hand != 0 || len(m.Seed) != 64 || m.Cmd == "" {
		t.Fatalf("seed frame %+v", m)
	}
	sent, err := fairdeal.ParseSeed(m.Seed)
	if err != nil {
		t.Fatal(err)
	}
	if sent == ([32]byte{}) {
		t.Fatal("the seed is all zeros: the constant of a seat without one")
	}
	waitFor(t, c, func(f Frame) bool { return f.Event.GetHandRevealed() != nil })
	hs, ok := c.Hand("t1", 0)
	if !ok || hs.Seat != 1 || hs.Seed != fairdeal.ClientSeed(sent) || !hs.Committed || !hs.Revealed || hs.Game != "g1" {
		t.Fatalf("hand %+v", hs)
	}
	deck, err := hs.Verify()
	if err != nil {
		t.Fatal(err)
	}
	k, err := fairdeal.ShuffleKey(fairdeal.Hand{TableID: "t1", GameID: "g1"}, h0.server,
		[]fairdeal.ClientSeed{fairdeal.NoClientSeed, fairdeal.ClientSeed(sent), fairdeal.NoClientSeed, fairdeal.NoClientSeed})
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := fairdeal.Shuffle(k); deck != want {
		t.Fatalf("Verify's deck %v, want %v", deck, want)
	}

	// What a lying table would reveal fails.
	other := hs
	other.ServerSeed[0] ^= 1
	if _, err := other.Verify(); !errors.Is(err, ErrCommitmentMismatch) {
		t.Errorf("another server seed: %v", err)
	}
	other = hs
	other.ClientSeeds = append([]fairdeal.ClientSeed(nil), hs.ClientSeeds...)
	other.ClientSeeds[1] = fairdeal.NoClientSeed
	if _, err := other.Verify(); !errors.Is(err, ErrSeedNotUsed) {
		t.Errorf("this client's seed left out: %v", err)
	}
	other = hs
	other.RevealedCommitment[0] ^= 1
	if _, err := other.Verify(); !errors.Is(err, ErrCommitmentMismatch) {
		t.Errorf("another commitment in the reveal: %v", err)
	}
	if _, ok := c.Hand("t1", 1); ok {
		t.Error("a hand nobody committed is known")
	}
}

func TestSeeds_OnlyTheAwaitedSeatSeedsAndOnlyHandsNotYetDealt(t *testing.T) {
	h0, h1, h2, h3 := newHand(t, 0), newHand(t, 1), newHand(t, 2), newHand(t, 3)
	g, srv := newSeedGateway(t,
		// History: hand 0 was dealt long ago, hand 1 was seeded by an
		// earlier connection, hand 2 still waits for this seat's seed.
		[]*tablev1.Event{seated(), h0.committed(1), h0.started(), h1.committed(1, 2),
			ev(&tablev1.ClientSeedAccepted{HandIndex: 1, Seat: 1}), h2.committed(1)},
		// Live: hand 3 does not await seat 1 (a bot plays it).
		[]*tablev1.Event{h3.committed(2)})
	c := dialTest(t, srv.URL, Options{})
	if _, err := c.Join(testCtx(t), "t1", ""); err != nil {
		t.Fatal(err)
	}
	if m := nextSeed(t, g); *m.Hand != 2 {
		t.Fatalf("seeded hand %d, want 2 (the only one still due)", *m.Hand)
	}
	waitFor(t, c, func(f Frame) bool { return f.Event.GetHandCommitted().GetHandIndex() == 3 })
	// Give a wrong seed frame the time to arrive.
	time.Sleep(100 * time.Millisecond)
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.seeds) != 1 {
		t.Fatalf("%d seed frames, want 1: %+v", len(g.seeds), g.seeds)
	}
	if hs, _ := c.Hand("t1", 3); hs.Seat != -1 || !hs.Committed {
		t.Fatalf("hand 3 %+v: seat 1 is not awaited", hs)
	}
}

func TestSeeds_AWatcherSendsNone(t *testing.T) {
	h0 := newHand(t, 0)
	watching := ev(&tablev1.GameStarted{Seats: []*tablev1.SeatPlayer{{Seat: 0, PlayerId: "p0"}, {Seat: 1, PlayerId: "p2"}}})
	g, srv := newSeedGateway(t, []*tablev1.Event{watching}, []*tablev1.Event{h0.committed(0, 1)})
	g.watcher = true
	c := dialTest(t, srv.URL, Options{})
	if _, err := c.Join(testCtx(t), "t1", ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, func(f Frame) bool { return f.Event.GetHandCommitted() != nil })
	time.Sleep(100 * time.Millisecond)
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.seeds) != 0 {
		t.Fatalf("a watcher sent %+v", g.seeds)
	}
	if hs, ok := c.Hand("t1", 0); !ok || hs.Seat != -1 || !hs.Committed {
		t.Fatalf("hand %+v", hs)
	}
}
