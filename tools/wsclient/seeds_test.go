package wsclient

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/cards/cardpb"
	"github.com/pulka/pulka/pkg/fairdeal"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
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
	onSeed func(clientMsg) []*tablev1.Event
	// watcher: the joined frame has no seat.
	watcher bool
	// onMove, when set, gives the events the table answers a move with.
	onMove func(clientMsg) []*tablev1.Event
	moves  chan clientMsg

	mu    sync.Mutex
	seeds []clientMsg
	got   chan clientMsg
}

func newSeedGateway(t *testing.T, replayed, live []*tablev1.Event) (*seedGateway, *httptest.Server) {
	g := &seedGateway{t: t, replayed: replayed, live: live, got: make(chan clientMsg, 16), moves: make(chan clientMsg, 16)}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return g, srv
}

// serveP1 accepts a WebSocket as the gateway does for player p1 (welcome
// first) and hands handle every frame the client sends, with a sender of
// event frames numbered from 1 on this connection. A frame the gateway
// would refuse fails the test.
func serveP1(t *testing.T, w http.ResponseWriter, r *http.Request, handle func(ws *websocket.Conn, send func([]*tablev1.Event), m clientMsg)) {
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer func() { _ = ws.CloseNow() }()
	ctx := r.Context()
	_ = put(ctx, ws, wire.Welcome(wire.Player{ID: "p1", Name: "Nino"}, time.Now()))
	seq := 0
	send := func(evs []*tablev1.Event) {
		for _, ev := range evs {
			seq++
			// Encoding clears the runner's fields: the test keeps its own.
			if err := put(ctx, ws, wire.Event("t1", strconv.Itoa(seq)+"-0", proto.CloneOf(ev))); err != nil {
				t.Error(err)
				return
			}
		}
	}
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			return
		}
		m, err := readMsg(data)
		if err != nil {
			t.Errorf("the client sent a frame the gateway refuses: %s: %v", data, err)
			continue
		}
		handle(ws, send, m)
	}
}

func (g *seedGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	serveP1(g.t, w, r, func(ws *websocket.Conn, send func([]*tablev1.Event), m clientMsg) {
		switch m.Type {
		case wire.TypeJoin:
			send(g.replayed)
			seat := proto.Uint32(1)
			if g.watcher {
				seat = nil
			}
			_ = put(ctx, ws, wire.Joined(m.Table, m.Ref, seat, len(g.replayed), false))
			send(g.live)
		case wire.TypeSeed:
			g.mu.Lock()
			g.seeds = append(g.seeds, m)
			g.mu.Unlock()
			g.got <- m
			_ = put(ctx, ws, wire.Ack(m.Ref, wire.CommandID("p1", m.Cmd)))
			if g.onSeed != nil {
				send(g.onSeed(m))
			}
		case wire.TypeBid, wire.TypeTrump, wire.TypePlay:
			g.moves <- m
			_ = put(ctx, ws, wire.Ack(m.Ref, wire.CommandID("p1", m.Cmd)))
			if g.onMove != nil {
				send(g.onMove(m))
			}
		}
	})
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
	case *tablev1.MoveRejected:
		out.Event = &tablev1.Event_MoveRejected{MoveRejected: x}
		out.Visibility = &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_PLAYER, PlayerId: "p1"}
	case *tablev1.Dealt:
		out.Event = &tablev1.Event_Dealt{Dealt: x}
		out.Visibility = &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_SEAT, Seat: x.GetSeat()}
	case *tablev1.TrumpTurned:
		out.Event = &tablev1.Event_TrumpTurned{TrumpTurned: x}
	case *tablev1.ColumnCardRevealed:
		out.Event = &tablev1.Event_ColumnCardRevealed{ColumnCardRevealed: x}
		out.Visibility = &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_SEAT, Seat: x.GetSeat()}
	}
	return out
}

func causedBy(e *tablev1.Event, cmd string) *tablev1.Event {
	e.CausedBy = cmd
	return e
}

func (h hand) committed(awaited ...uint32) *tablev1.Event {
	return ev(&tablev1.HandCommitted{HandIndex: h.index, Commitment: h.commit[:], AwaitedSeats: awaited,
		SeedDeadline: timestamppb.New(time.Unix(1700000000, 0))})
}

// committedAhead is hand h committed a hand ahead: no seed deadline.
func (h hand) committedAhead(awaited ...uint32) *tablev1.Event {
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

func nextSeed(t *testing.T, g *seedGateway) clientMsg {
	t.Helper()
	select {
	case m := <-g.got:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no seed frame")
		return clientMsg{}
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
	g.onSeed = func(m clientMsg) []*tablev1.Event {
		sent, err := fairdeal.ParseSeed(m.Seed)
		if err != nil {
			t.Error(err)
		}
		return []*tablev1.Event{causedBy(ev(&tablev1.ClientSeedAccepted{HandIndex: 0, Seat: 1}), "p1/"+m.Cmd), h0.started(),
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
	if !ok || hs.Seat != 1 || hs.Own != OwnSeedAccepted || hs.Seed != fairdeal.ClientSeed(sent) || !hs.Committed || !hs.Revealed || hs.Game != "g1" {
		t.Fatalf("hand %+v", hs)
	}
	v, err := hs.Verify()
	if err != nil {
		t.Fatal(err)
	}
	if !v.OwnSeed {
		t.Error("the accepted seed was not checked")
	}
	deck := v.Deck
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

// seedOf is the seed a seed frame carries.
func seedOf(t *testing.T, m clientMsg) fairdeal.ClientSeed {
	t.Helper()
	s, err := fairdeal.ParseSeed(m.Seed)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func otherSeed(b byte) fairdeal.ClientSeed {
	var s fairdeal.ClientSeed
	for i := range s {
		s[i] = b
	}
	return s
}

// A fresh connection (a restarted client, a second device) replays hands
// whose seat's seed an earlier connection sent: this one never had a seed
// for them, so it has none to check, sends none, and the hands verify.
func TestSeeds_AReplayedHandSeededByAnEarlierConnectionVerifiesWithoutItsSeed(t *testing.T) {
	h0, h1 := newHand(t, 0), newHand(t, 1)
	earlier := otherSeed(7)
	g, srv := newSeedGateway(t, []*tablev1.Event{seated(),
		// Hand 0: the earlier connection's seed was taken.
		h0.committed(1, 2), causedBy(ev(&tablev1.ClientSeedAccepted{HandIndex: 0, Seat: 1}), "p1/earlier"), h0.started(),
		h0.revealed(fairdeal.NoClientSeed, earlier, fairdeal.NoClientSeed, fairdeal.NoClientSeed),
		// Hand 1: no seed came in time; dealt without one.
		h1.committed(1), h1.started(), h1.revealed(fairdeal.NoClientSeed, fairdeal.NoClientSeed, fairdeal.NoClientSeed, fairdeal.NoClientSeed),
	}, nil)
	c := dialTest(t, srv.URL, Options{})
	if _, err := c.Join(testCtx(t), "t1", ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, c, func(f Frame) bool { return f.Type == wire.TypeJoined })
	for i, want := range []OwnSeed{OwnSeedElsewhere, OwnSeedNone} {
		hs, ok := c.Hand("t1", uint32(i))
		if !ok || hs.Own != want {
			t.Fatalf("hand %d: own seed %v, want %v (%+v)", i, hs.Own, want, hs)
		}
		v, err := hs.Verify()
		if err != nil {
			t.Errorf("hand %d: %v", i, err)
		}
		if v.OwnSeed {
			t.Errorf("hand %d: a seed this connection never sent was checked", i)
		}
	}
	time.Sleep(100 * time.Millisecond)
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.seeds) != 0 {
		t.Fatalf("seeds sent for hands long seeded: %+v", g.seeds)
	}
}

// Two connections of one player (two tabs, two devices) both answer a
// commitment; the table takes the other's and refuses this one's. The
// own seed is then unknown here, and the hand still verifies.
func TestSeeds_ASeedTheTableTookFromAnotherConnectionIsNotChecked(t *testing.T) {
	for _, tc := range []struct {
		name string
		// answer is what the table sends after this client's seed.
		answer func(h hand, m clientMsg) []*tablev1.Event
		want   OwnSeed
	}{
		{"the other's acceptance, then the refusal", func(h hand, m clientMsg) []*tablev1.Event {
			return []*tablev1.Event{causedBy(ev(&tablev1.ClientSeedAccepted{HandIndex: 0, Seat: 1}), "p1/other-tab"),
				causedBy(ev(&tablev1.MoveRejected{Reason: tablev1.RejectReason_REJECT_REASON_NOT_ALLOWED}), "p1/"+m.Cmd)}
		}, OwnSeedElsewhere},
		{"only the refusal", func(h hand, m clientMsg) []*tablev1.Event {
			return []*tablev1.Event{causedBy(ev(&tablev1.MoveRejected{Reason: tablev1.RejectReason_REJECT_REASON_NOT_ALLOWED}), "p1/"+m.Cmd)}
		}, OwnSeedElsewhere},
		{"refused as late", func(h hand, m clientMsg) []*tablev1.Event {
			return []*tablev1.Event{causedBy(ev(&tablev1.MoveRejected{Reason: tablev1.RejectReason_REJECT_REASON_WRONG_PHASE}), "p1/"+m.Cmd)}
		}, OwnSeedLate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h0 := newHand(t, 0)
			g, srv := newSeedGateway(t, []*tablev1.Event{seated()}, []*tablev1.Event{h0.committed(1, 2)})
			g.onSeed = func(m clientMsg) []*tablev1.Event {
				return append(tc.answer(h0, m), h0.started(),
					h0.revealed(fairdeal.NoClientSeed, otherSeed(9), otherSeed(3), fairdeal.NoClientSeed))
			}
			c := dialTest(t, srv.URL, Options{})
			if _, err := c.Join(testCtx(t), "t1", ""); err != nil {
				t.Fatal(err)
			}
			m := nextSeed(t, g)
			if seedOf(t, m) == otherSeed(9) {
				t.Fatal("the test's other seed was drawn")
			}
			waitFor(t, c, func(f Frame) bool { return f.Event.GetHandRevealed() != nil })
			hs, _ := c.Hand("t1", 0)
			if hs.Own != tc.want {
				t.Fatalf("own seed %v, want %v", hs.Own, tc.want)
			}
			v, err := hs.Verify()
			if err != nil || v.OwnSeed {
				t.Fatalf("Verify: %+v, %v; want it to pass without the own seed", v, err)
			}
			if !c.SeedCommand("t1", "p1/"+m.Cmd) || c.SeedCommand("t1", "p1/other-tab") || c.SeedCommand("t1", "") {
				t.Error("SeedCommand does not tell this connection's seed command from others")
			}
		})
	}
}

// deckOf is the deck hand h deals from with these client seeds.
func deckOf(t *testing.T, h hand, seeds ...fairdeal.ClientSeed) cards.Deck {
	t.Helper()
	k, err := fairdeal.ShuffleKey(fairdeal.Hand{TableID: "t1", GameID: "g1", Index: h.index}, h.server, seeds)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := fairdeal.Shuffle(k)
	return d
}

func protoCards(cs ...cards.Card) []commonv1.Card {
	out := make([]commonv1.Card, len(cs))
	for i, c := range cs {
		out[i] = cardpb.Card(c)
	}
	return out
}

// The client compares every card it was dealt with the revealed deck: a
// table that dealt from another deck than the one its reveal gives (here:
// it lies about another seat's seed) is caught, in classic and Japanese.
func TestSeeds_TheCardsDealtAreCheckedAgainstTheRevealedDeck(t *testing.T) {
	japanese := ev(&tablev1.GameStarted{Settings: &lobbyv1.TableSettings{Game: lobbyv1.Game_GAME_JAPANESE},
		Seats: []*tablev1.SeatPlayer{{Seat: 0, PlayerId: "p2"}, {Seat: 1, PlayerId: "p1"}}})
	for _, tc := range []struct {
		name     string
		start    *tablev1.Event
		seats    int
		started  *tablev1.HandStarted
		deal     func(d cards.Deck) []*tablev1.Event
		compared int
	}{
		{"classic, one card each, dealer 1: seat 1 is served last, then the turned card", seated(), 4,
			&tablev1.HandStarted{CardsPerSeat: 1, DealerSeat: 1},
			func(d cards.Deck) []*tablev1.Event {
				return []*tablev1.Event{ev(&tablev1.Dealt{Seat: 1, Cards: protoCards(d[3])}),
					ev(&tablev1.TrumpTurned{Card: protoCards(d[4])[0]})}
			}, 2},
		{"classic nine cards, dealer 3: seat 1 is the second served, three then six", seated(), 4,
			&tablev1.HandStarted{CardsPerSeat: 9, DealerSeat: 3},
			func(d cards.Deck) []*tablev1.Event {
				return []*tablev1.Event{ev(&tablev1.Dealt{Seat: 1, Cards: protoCards(d[3], d[4], d[5])}),
					ev(&tablev1.Dealt{Seat: 1, Cards: protoCards(d[18], d[19], d[20], d[21], d[22], d[23])})}
			}, 9},
		{"Japanese, declarer 0: seat 1 gets 3..5 and 11..15, its face-down columns from 26", japanese, 2,
			&tablev1.HandStarted{CardsPerSeat: 18, DealerSeat: 0},
			func(d cards.Deck) []*tablev1.Event {
				return []*tablev1.Event{ev(&tablev1.Dealt{Seat: 1, Cards: protoCards(d[3], d[4], d[5])}),
					ev(&tablev1.Dealt{Seat: 1, Cards: protoCards(d[11], d[12], d[13], d[14], d[15])}),
					ev(&tablev1.ColumnCardRevealed{Seat: 1, Column: 2, Card: protoCards(d[28])[0]})}
			}, 9},
	} {
		for _, tampered := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, tampered %v", tc.name, tampered), func(t *testing.T) {
				h0 := newHand(t, 0)
				g, srv := newSeedGateway(t, []*tablev1.Event{tc.start}, []*tablev1.Event{h0.committed(1)})
				g.onSeed = func(m clientMsg) []*tablev1.Event {
					seeds := make([]fairdeal.ClientSeed, tc.seats)
					seeds[1] = seedOf(t, m)
					dealt := deckOf(t, h0, seeds...)
					if tampered {
						// The reveal names a seed seat 0 never sent.
						seeds[0] = otherSeed(5)
					}
					started := proto.Clone(tc.started).(*tablev1.HandStarted)
					out := []*tablev1.Event{causedBy(ev(&tablev1.ClientSeedAccepted{HandIndex: 0, Seat: 1}), "p1/"+m.Cmd), ev(started)}
					out = append(out, tc.deal(dealt)...)
					return append(out, h0.revealed(seeds...))
				}
				c := dialTest(t, srv.URL, Options{})
				if _, err := c.Join(testCtx(t), "t1", ""); err != nil {
					t.Fatal(err)
				}
				nextSeed(t, g)
				waitFor(t, c, func(f Frame) bool { return f.Event.GetHandRevealed() != nil })
				hs, _ := c.Hand("t1", 0)
				v, err := hs.Verify()
				switch {
				case tampered && !errors.Is(err, ErrDealMismatch):
					t.Fatalf("a deal from another deck: %v, want ErrDealMismatch", err)
				case !tampered && err != nil:
					t.Fatal(err)
				case !tampered && (v.Cards != tc.compared || !v.OwnSeed):
					t.Fatalf("compared %d cards (own seed %v), want %d", v.Cards, v.OwnSeed, tc.compared)
				}
			})
		}
	}
}

// viewSynced is the resync a client gets when the history it asked for was
// trimmed: the view of seat 1, with hand h being seeded.
func viewSynced(h hand, awaited, seeded []uint32, deadline bool) *tablev1.Event {
	hc := &tablev1.HandCommitted{HandIndex: h.index, Commitment: h.commit[:], AwaitedSeats: awaited}
	if deadline {
		hc.SeedDeadline = timestamppb.Now()
	}
	out := ev(nil)
	out.Event = &tablev1.Event_ViewSynced{ViewSynced: &tablev1.ViewSynced{View: &tablev1.TableView{
		YourSeat: proto.Uint32(1), Committed: hc, SeededSeats: seeded}}}
	out.Visibility = &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_PLAYER, PlayerId: "p1"}
	return out
}

// A client resynchronised by a view sends the seed the table still waits
// for (it never got the HandCommitted), and only that one.
func TestSeeds_AViewOfAHandBeingSeededSendsTheSeedStillAwaited(t *testing.T) {
	h2, h3 := newHand(t, 2), newHand(t, 3)
	g, srv := newSeedGateway(t, nil, []*tablev1.Event{
		viewSynced(h2, []uint32{1, 2}, []uint32{2}, true),
		viewSynced(h3, []uint32{1, 2}, []uint32{1}, true),
	})
	c := dialTest(t, srv.URL, Options{})
	if _, err := c.Join(testCtx(t), "t1", ""); err != nil {
		t.Fatal(err)
	}
	if m := nextSeed(t, g); *m.Hand != 2 {
		t.Fatalf("seeded hand %d, want 2", *m.Hand)
	}
	waitFor(t, c, func(f Frame) bool { return f.Event.GetViewSynced().GetView().GetCommitted().GetHandIndex() == 3 })
	time.Sleep(100 * time.Millisecond)
	g.mu.Lock()
	n := len(g.seeds)
	g.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d seed frames, want 1: hand 3 had this seat's seed already", n)
	}
	if hs, ok := c.Hand("t1", 2); !ok || !hs.Committed || hs.Commitment != h2.commit {
		t.Fatalf("hand 2 %+v: the view's commitment is kept to check the reveal", hs)
	}
	if hs, _ := c.Hand("t1", 3); hs.Own != OwnSeedElsewhere {
		t.Fatalf("hand 3 own seed %v, want elsewhere (the table has this seat's seed from before)", hs.Own)
	}
}

func nextMove(t *testing.T, g *seedGateway) clientMsg {
	t.Helper()
	select {
	case m := <-g.moves:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("no move frame")
		return clientMsg{}
	}
}

// TestSeeds_ASeedForAHandCommittedAheadRidesOnTheNextMove: a hand committed
// ahead (no seed deadline) gets no seed frame; the seat's next move carries
// its seed under the move's command id; a refused move took no seed, so
// the move after it carries a new one; once accepted, moves carry none. A
// hand committed ahead whose seed had no move to ride on gets a seed frame
// when the hand before it is revealed.
func TestSeeds_ASeedForAHandCommittedAheadRidesOnTheNextMove(t *testing.T) {
	h0, h1, h2 := newHand(t, 0), newHand(t, 1), newHand(t, 2)
	g, srv := newSeedGateway(t, []*tablev1.Event{seated(), h0.committed(1, 2)}, nil)
	g.onSeed = func(m clientMsg) []*tablev1.Event {
		if *m.Hand == 0 {
			return []*tablev1.Event{causedBy(ev(&tablev1.ClientSeedAccepted{HandIndex: 0, Seat: 1}), "p1/"+m.Cmd),
				h0.started(), h1.committedAhead(1, 2)}
		}
		return nil
	}
	moves := 0
	g.onMove = func(m clientMsg) []*tablev1.Event {
		moves++
		switch moves {
		case 1:
			return []*tablev1.Event{causedBy(ev(&tablev1.MoveRejected{Reason: tablev1.RejectReason_REJECT_REASON_NOT_YOUR_TURN}), "p1/"+m.Cmd)}
		case 2:
			return []*tablev1.Event{causedBy(ev(&tablev1.ClientSeedAccepted{HandIndex: 1, Seat: 1}), "p1/"+m.Cmd)}
		}
		return nil
	}
	c := dialTest(t, srv.URL, Options{})
	if _, err := c.Join(testCtx(t), "t1", ""); err != nil {
		t.Fatal(err)
	}
	if m := nextSeed(t, g); *m.Hand != 0 {
		t.Fatalf("seed frame for hand %d, want 0", *m.Hand)
	}
	waitFor(t, c, func(f Frame) bool { return f.Event.GetHandCommitted().GetHandIndex() == 1 })
	if hs, _ := c.Hand("t1", 1); hs.Own != OwnSeedDue || hs.Seat != 1 {
		t.Fatalf("hand 1 committed ahead: %+v, want its seed due", hs)
	}

	// Refused: the seed went with the move.
	id, err := c.Bid(testCtx(t), "t1", 1, "")
	if err != nil {
		t.Fatal(err)
	}
	m := nextMove(t, g)
	if m.Hand == nil || *m.Hand != 1 || len(m.Seed) != 64 || wire.CommandID("p1", m.Cmd) != id {
		t.Fatalf("the first move %+v, want it to carry hand 1's seed", m)
	}
	if c.SeedCommand("t1", id) {
		t.Fatal("the move's refusal is taken for a seed's")
	}
	waitFor(t, c, func(f Frame) bool { return f.Event.GetMoveRejected() != nil })
	if hs, _ := c.Hand("t1", 1); hs.Own != OwnSeedDue {
		t.Fatalf("after the refused move: %v, want due again", hs.Own)
	}

	// Taken: the next move carries a seed, accepted as this client's.
	id, err = c.Bid(testCtx(t), "t1", 1, "")
	if err != nil {
		t.Fatal(err)
	}
	m = nextMove(t, g)
	if m.Hand == nil || *m.Hand != 1 || wire.CommandID("p1", m.Cmd) != id {
		t.Fatalf("the second move %+v, want it to carry hand 1's seed", m)
	}
	sent := seedOf(t, m)
	waitFor(t, c, func(f Frame) bool { return f.Event.GetClientSeedAccepted().GetHandIndex() == 1 })
	if hs, _ := c.Hand("t1", 1); hs.Own != OwnSeedAccepted || hs.Seed != sent {
		t.Fatalf("after the acceptance: %+v", hs)
	}
	if _, err := c.Bid(testCtx(t), "t1", 1, ""); err != nil {
		t.Fatal(err)
	}
	if m := nextMove(t, g); m.Hand != nil || m.Seed != "" {
		t.Fatalf("a move after the acceptance carries a seed: %+v", m)
	}

	// Hand 2 committed ahead and no move before hand 1 is revealed: a
	// seed frame then.
	g.live = []*tablev1.Event{h2.committedAhead(1), h1.revealed()}
	c2 := dialTest(t, srv.URL, Options{})
	if _, err := c2.Join(testCtx(t), "t1", ""); err != nil {
		t.Fatal(err)
	}
	// Hand 0 (replayed, due for this connection) and hand 2, in either
	// order: the join's seeds and the live events' are sent apart.
	a, b := *nextSeed(t, g).Hand, *nextSeed(t, g).Hand
	if min(a, b) != 0 || max(a, b) != 2 {
		t.Fatalf("seed frames for hands %d and %d, want 0 and 2 (hand 2 once hand 1 is revealed)", a, b)
	}
}
