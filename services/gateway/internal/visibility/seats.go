package visibility

import (
	"google.golang.org/protobuf/encoding/protowire"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// MaxSeats bounds the seat indexes Seats tracks (classic has four).
const MaxSeats = 4

// Seats is which player holds each seat of a table, as the table's events
// say: an empty string is a free seat or one a bot plays. It is a value;
// copying it is a snapshot.
type Seats [MaxSeats]string

// SeatOf is the seat playerID holds, or NoSeat.
func (s *Seats) SeatOf(playerID string) int {
	if playerID == "" {
		return NoSeat
	}
	for i, p := range s {
		if p == playerID {
			return i
		}
	}
	return NoSeat
}

// Apply folds one event into the seating and reports whether it changed.
// Only seating events matter: GameStarted and ViewSynced (the whole seating),
// PlayerSeated, PlayerLeft and SeatTakenByBot.
func (s *Seats) Apply(ev *tablev1.Event) bool {
	before := *s
	switch e := ev.GetEvent().(type) {
	case *tablev1.Event_GameStarted:
		*s = Seats{}
		for _, sp := range e.GameStarted.GetSeats() {
			s.put(sp.GetSeat(), sp)
		}
	case *tablev1.Event_ViewSynced:
		// A view is the runner's whole truth about the table at that point.
		if view := e.ViewSynced.GetView(); view != nil && len(view.GetSeats()) > 0 {
			*s = Seats{}
			// The list is in seat order (TableView.seats), which is
			// trusted over SeatPlayer.seat, a field a writer may leave 0.
			for i, sv := range view.GetSeats() {
				if sp := sv.GetPlayer(); sp != nil && i < MaxSeats {
					s.put(uint32(i), sp)
				}
			}
		}
	case *tablev1.Event_PlayerSeated:
		sp := e.PlayerSeated.GetSeat()
		if p := sp.GetPlayerId(); p != "" && !sp.GetBot() {
			// One seat per player: a player who moves leaves the old seat.
			for i := range s {
				if s[i] == p {
					s[i] = ""
				}
			}
		}
		s.put(sp.GetSeat(), sp)
	case *tablev1.Event_PlayerLeft:
		if i := e.PlayerLeft.GetSeat(); i < MaxSeats {
			s[i] = ""
		}
		if i := s.SeatOf(e.PlayerLeft.GetPlayerId()); i != NoSeat {
			s[i] = ""
		}
	case *tablev1.Event_SeatTakenByBot:
		if i := e.SeatTakenByBot.GetSeat(); i < MaxSeats {
			s[i] = ""
		}
	}
	return *s != before
}

// Folds reports whether Apply reads events of kind num (the field number
// of the Event.event oneof): only these need decoding whole to keep a
// table's seating (wire.EventHead). The TestFolds_ tests hold it to Apply.
func Folds(num protowire.Number) bool {
	switch num {
	case 10, // game_started
		11, // player_seated
		12, // player_left
		13, // seat_taken_by_bot
		31: // view_synced
		return true
	}
	return false
}

func (s *Seats) put(seat uint32, sp *tablev1.SeatPlayer) {
	if seat >= MaxSeats {
		return
	}
	if sp.GetBot() {
		s[seat] = ""
		return
	}
	s[seat] = sp.GetPlayerId()
}
