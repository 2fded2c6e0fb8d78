package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/cards/cardpb"
	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"

	"github.com/coder/websocket"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pulka/pulka/pkg/fairdeal"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/tools/wsclient"
)

// oneHandGateway is a gateway whose table deals one classic hand of one
// card each (dealer seat 1) to player p1 at seat 1: it answers p1's seed,
// deals from the deck the seeds give and reveals; tamper makes the reveal
// name a seed seat 0 never sent (the cards dealt then are not the revealed
// deck's).
func oneHandGateway(t *testing.T, tamper bool) *httptest.Server {
	server := fairdeal.ServerSeed{1, 2, 3}
	hand := fairdeal.Hand{TableID: "t1", GameID: "g1"}
	commit, err := fairdeal.Commit(hand, server)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer func() { _ = ws.CloseNow() }()
		ctx := r.Context()
		put := func(f *gatewayv1.ServerFrame) {
			b, err := wire.Encode(f, wire.Binary)
			if err != nil {
				t.Error(err)
				return
			}
			_ = ws.Write(ctx, websocket.MessageBinary, b)
		}
		put(wire.Welcome(wire.Player{ID: "p1", Name: "Nino"}, time.Now()))
		seq := 0
		send := func(evs ...*tablev1.Event) {
			for _, ev := range evs {
				seq++
				ev.TableId, ev.GameId = "t1", "g1"
				put(wire.Event("t1", strconv.Itoa(seq)+"-0", ev))
			}
		}
		for {
			_, data, err := ws.Read(ctx)
			if err != nil {
				return
			}
			m, err := wire.Parse(data, wire.Binary)
			if err != nil {
				t.Errorf("%x: %v", data, err)
				continue
			}
			switch wire.FrameType(m) {
			case wire.TypeJoin:
				send(&tablev1.Event{Event: &tablev1.Event_GameStarted{GameStarted: &tablev1.GameStarted{Seats: []*tablev1.SeatPlayer{
					{Seat: 0, Bot: true}, {Seat: 1, PlayerId: "p1"}, {Seat: 2, Bot: true}, {Seat: 3, Bot: true}}}}})
				put(wire.Joined(m.GetJoin().GetTable(), m.GetRef(), proto.Uint32(1), 1, false))
				send(&tablev1.Event{Event: &tablev1.Event_HandCommitted{HandCommitted: &tablev1.HandCommitted{Commitment: commit[:], AwaitedSeats: []uint32{1},
					SeedDeadline: timestamppb.New(time.Now().Add(time.Minute))}}})
			case wire.TypeSeed:
				var mine fairdeal.ClientSeed
				copy(mine[:], m.GetCommand().GetSeed().GetSeed())
				seeds := []fairdeal.ClientSeed{{}, mine, {}, {}}
				k, err := fairdeal.ShuffleKey(hand, server, seeds)
				if err != nil {
					t.Error(err)
				}
				d, _ := fairdeal.Shuffle(k)
				if tamper {
					seeds[0] = fairdeal.ClientSeed{9}
				}
				revealed := &tablev1.HandRevealed{ServerSeed: server[:], Commitment: commit[:]}
				for _, s := range seeds {
					revealed.ClientSeeds = append(revealed.ClientSeeds, s[:])
				}
				// Served from seat 2 (after the dealer): seat 1 is last, d[3]; d[4] is turned.
				send(&tablev1.Event{CausedBy: wire.CommandID("p1", m.GetCommand().GetCmd()), Event: &tablev1.Event_ClientSeedAccepted{ClientSeedAccepted: &tablev1.ClientSeedAccepted{Seat: 1}}},
					&tablev1.Event{Event: &tablev1.Event_HandStarted{HandStarted: &tablev1.HandStarted{CardsPerSeat: 1, DealerSeat: 1}}},
					&tablev1.Event{Event: &tablev1.Event_Dealt{Dealt: &tablev1.Dealt{Seat: 1, Cards: []commonv1.Card{cardpb.Card(d[3])}}}},
					&tablev1.Event{Event: &tablev1.Event_TrumpTurned{TrumpTurned: &tablev1.TrumpTurned{Card: cardpb.Card(d[4])}}},
					&tablev1.Event{Event: &tablev1.Event_HandRevealed{HandRevealed: revealed}})
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestPlay_SaysVerifiedOnlyWhenTheCardsDealtAreTheRevealedDecks(t *testing.T) {
	for _, tc := range []struct {
		tamper bool
		want   string
	}{
		{false, "hand 1: deal verified (commitment, your seed, your 2 cards)"},
		{true, "hand 1: DEAL NOT VERIFIED: "},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := wsclient.Dial(ctx, oneHandGateway(t, tc.tamper).URL, wsclient.Options{Token: "good"})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = conn.Close() }()
		if _, err := conn.Join(ctx, "t1", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.WaitFor(ctx, func(f wsclient.Frame) bool { return f.Event.GetHandRevealed() != nil }); err != nil {
			t.Fatal(err)
		}
		if got := verified(conn, "t1", 0); !strings.HasPrefix(got, tc.want) || (tc.tamper && strings.Contains(got, "deal verified")) {
			t.Errorf("tampered %v: %q, want %q…", tc.tamper, got, tc.want)
		}
	}
}
