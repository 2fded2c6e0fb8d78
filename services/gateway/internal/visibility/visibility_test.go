package visibility

import (
	"fmt"
	"math/rand/v2"
	"testing"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

func vis(a tablev1.Audience, seat uint32, player string) *tablev1.Visibility {
	return &tablev1.Visibility{Audience: a, Seat: seat, PlayerId: player}
}

func TestAllows_EveryAudienceAndViewer(t *testing.T) {
	const (
		pub  = tablev1.Audience_AUDIENCE_PUBLIC
		seat = tablev1.Audience_AUDIENCE_SEAT
		plr  = tablev1.Audience_AUDIENCE_PLAYER
		none = tablev1.Audience_AUDIENCE_UNSPECIFIED
	)
	alice0 := Viewer{PlayerID: "alice", Seat: 0}
	bob1 := Viewer{PlayerID: "bob", Seat: 1}
	watcher := Viewer{PlayerID: "wendy", Seat: NoSeat}
	anon := Viewer{PlayerID: "", Seat: 0}
	tests := []struct {
		name string
		vis  *tablev1.Visibility
		v    Viewer
		want bool
	}{
		{"public to seated", vis(pub, 0, ""), bob1, true},
		{"public to watcher", vis(pub, 0, ""), watcher, true},
		{"public to nobody authenticated", vis(pub, 0, ""), anon, false},
		{"seat to its holder", vis(seat, 0, ""), alice0, true},
		{"seat to another seat", vis(seat, 0, ""), bob1, false},
		{"seat to a watcher", vis(seat, 0, ""), watcher, false},
		{"seat 0 to a watcher whose NoSeat wraps", vis(seat, ^uint32(0), ""), watcher, false},
		{"seat ignores a matching player id", vis(seat, 0, "bob"), bob1, false},
		{"seat to an unauthenticated holder", vis(seat, 0, ""), anon, false},
		{"player to that player", vis(plr, 0, "bob"), bob1, true},
		{"player to that player as watcher", vis(plr, 0, "wendy"), watcher, true},
		{"player to the seat it names", vis(plr, 0, "bob"), alice0, false},
		{"player with empty id", vis(plr, 0, ""), anon, false},
		{"player with empty id to a real player", vis(plr, 0, ""), alice0, false},
		{"unspecified to everybody", vis(none, 0, ""), alice0, false},
		{"unspecified to a watcher", vis(none, 0, "wendy"), watcher, false},
		{"unknown audience", vis(tablev1.Audience(42), 0, "alice"), alice0, false},
		{"no visibility", nil, alice0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Allows(tt.vis, tt.v); got != tt.want {
				t.Fatalf("Allows(%v, %+v) = %v, want %v", tt.vis, tt.v, got, tt.want)
			}
		})
	}
}

// TestAllows_NeverLeaksPrivateEvents draws random visibilities and viewers
// (unknown audiences and out-of-range seats included) and checks the rule from
// the contract both ways: a viewer gets a private event only when it is the
// addressed seat holder or player, and always gets public ones.
func TestAllows_NeverLeaksPrivateEvents(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	players := []string{"", "p0", "p1", "p2", "p3", "watcher"}
	for i := 0; i < 200_000; i++ {
		v := vis(tablev1.Audience(rng.IntN(6)-1), uint32(rng.IntN(6)), players[rng.IntN(len(players))])
		if rng.IntN(50) == 0 {
			v = nil
		}
		w := Viewer{PlayerID: players[rng.IntN(len(players))], Seat: rng.IntN(6) - 1}
		got := Allows(v, w)
		var want bool
		if v != nil && w.PlayerID != "" {
			switch v.Audience {
			case tablev1.Audience_AUDIENCE_PUBLIC:
				want = true
			case tablev1.Audience_AUDIENCE_SEAT:
				want = w.Seat >= 0 && w.Seat == int(v.Seat)
			case tablev1.Audience_AUDIENCE_PLAYER:
				want = v.PlayerId != "" && v.PlayerId == w.PlayerID
			}
		}
		if got != want {
			t.Fatalf("draw %d: Allows(%v, %+v) = %v, want %v", i, v, w, got, want)
		}
	}
}

// TestSeats_DealtReachesOnlyTheCurrentHolder plays random seating histories
// (players sitting, moving, leaving, bots taking over, games starting) with a
// Dealt event for a random seat after every step, and checks with a separate,
// naive model of who sits where that the fold plus Allows never hands a
// seat's cards to anyone but the player sitting there at that moment.
func TestSeats_DealtReachesOnlyTheCurrentHolder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	players := []string{"p0", "p1", "p2", "p3", "p4"}
	for game := 0; game < 2000; game++ {
		var seats Seats
		model := map[string]int{} // player → seat, the naive reference
		for step := 0; step < 60; step++ {
			ev := randomSeating(rng, players, model)
			seats.Apply(ev)
			dealtSeat := uint32(rng.IntN(MaxSeats))
			dealt := &tablev1.Event{Visibility: vis(tablev1.Audience_AUDIENCE_SEAT, dealtSeat, ""),
				Event: &tablev1.Event_Dealt{Dealt: &tablev1.Dealt{Seat: dealtSeat}}}
			seats.Apply(dealt)
			for _, p := range append(players, "watcher") {
				got := Allows(dealt.Visibility, Viewer{PlayerID: p, Seat: seats.SeatOf(p)})
				s, seated := model[p]
				want := seated && s == int(dealtSeat)
				if got != want {
					t.Fatalf("game %d step %d: %s got Dealt(seat %d) = %v, model says seat %d seated=%v (seats %v, last %v)",
						game, step, p, dealtSeat, got, s, seated, seats, ev)
				}
			}
		}
	}
}

// randomSeating makes one seating event and applies it to the model.
func randomSeating(rng *rand.Rand, players []string, model map[string]int) *tablev1.Event {
	holder := func(seat int) string {
		for p, s := range model {
			if s == seat {
				return p
			}
		}
		return ""
	}
	seat := rng.IntN(MaxSeats)
	p := players[rng.IntN(len(players))]
	switch rng.IntN(5) {
	case 0: // a player sits (moving from another seat, or replacing whoever sat there)
		if h := holder(seat); h != "" {
			delete(model, h)
		}
		delete(model, p)
		model[p] = seat
		return &tablev1.Event{Event: &tablev1.Event_PlayerSeated{PlayerSeated: &tablev1.PlayerSeated{
			Seat: &tablev1.SeatPlayer{Seat: uint32(seat), PlayerId: p}}}}
	case 1: // whoever sits there leaves
		h := holder(seat)
		delete(model, h)
		return &tablev1.Event{Event: &tablev1.Event_PlayerLeft{PlayerLeft: &tablev1.PlayerLeft{Seat: uint32(seat), PlayerId: h}}}
	case 2: // a bot takes the seat
		if h := holder(seat); h != "" {
			delete(model, h)
		}
		return &tablev1.Event{Event: &tablev1.Event_SeatTakenByBot{SeatTakenByBot: &tablev1.SeatTakenByBot{Seat: uint32(seat)}}}
	case 3: // a game starts with a fresh random seating, some seats bots
		clear(model)
		perm := rng.Perm(len(players))
		gs := &tablev1.GameStarted{}
		for s := 0; s < MaxSeats; s++ {
			sp := &tablev1.SeatPlayer{Seat: uint32(s)}
			if rng.IntN(4) == 0 {
				sp.Bot = true
			} else {
				sp.PlayerId = players[perm[s]]
				model[sp.PlayerId] = s
			}
			gs.Seats = append(gs.Seats, sp)
		}
		return &tablev1.Event{Event: &tablev1.Event_GameStarted{GameStarted: gs}}
	default: // an event that does not touch the seating
		return &tablev1.Event{Event: &tablev1.Event_BidMade{BidMade: &tablev1.BidMade{Seat: uint32(seat)}}}
	}
}

func TestSeats_ViewSyncedReplacesTheSeating(t *testing.T) {
	var s Seats
	s.Apply(&tablev1.Event{Event: &tablev1.Event_PlayerSeated{PlayerSeated: &tablev1.PlayerSeated{
		Seat: &tablev1.SeatPlayer{Seat: 0, PlayerId: "old"}}}})
	view := &tablev1.TableView{Seats: []*tablev1.SeatView{
		{Player: &tablev1.SeatPlayer{Bot: true}},
		{Player: &tablev1.SeatPlayer{PlayerId: "x"}}, // seat field left 0: the order wins
		{},
		{Player: &tablev1.SeatPlayer{Seat: 3, PlayerId: "y"}},
	}}
	if !s.Apply(&tablev1.Event{Event: &tablev1.Event_ViewSynced{ViewSynced: &tablev1.ViewSynced{View: view}}}) {
		t.Fatal("ViewSynced changed nothing")
	}
	if want := (Seats{"", "x", "", "y"}); s != want {
		t.Fatalf("seats = %q, want %q", s, want)
	}
}

func TestSeats_IgnoresOutOfRangeSeats(t *testing.T) {
	var s Seats
	for _, ev := range []*tablev1.Event{
		{Event: &tablev1.Event_PlayerSeated{PlayerSeated: &tablev1.PlayerSeated{Seat: &tablev1.SeatPlayer{Seat: 9, PlayerId: "p"}}}},
		{Event: &tablev1.Event_PlayerLeft{PlayerLeft: &tablev1.PlayerLeft{Seat: 9}}},
		{Event: &tablev1.Event_SeatTakenByBot{SeatTakenByBot: &tablev1.SeatTakenByBot{Seat: 99}}},
	} {
		s.Apply(ev)
	}
	if s != (Seats{}) {
		t.Fatalf("seats = %q", s)
	}
	if s.SeatOf("") != NoSeat {
		t.Fatal("the empty player holds a free seat")
	}
}

func BenchmarkAllows(b *testing.B) {
	vs := []*tablev1.Visibility{vis(tablev1.Audience_AUDIENCE_PUBLIC, 0, ""), vis(tablev1.Audience_AUDIENCE_SEAT, 2, ""), vis(tablev1.Audience_AUDIENCE_PLAYER, 0, "p1")}
	w := Viewer{PlayerID: "p1", Seat: 2}
	n := 0
	for i := 0; b.Loop(); i++ {
		if Allows(vs[i%3], w) {
			n++
		}
	}
	_ = fmt.Sprint(n)
}
