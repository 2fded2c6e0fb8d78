package table

import (
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// View is the table as seat may see it (seat -1, or any number that is not
// a seat, is a watcher): the public state, the seats with presence and bids,
// the timer, and that seat's own cards — never another seat's cards nor a
// face-down card.
func (t *Table) View(seat int) *tablev1.TableView {
	if seat < 0 || seat >= len(t.seats) {
		seat = -1
	}
	v := &tablev1.TableView{Settings: t.set.Proto(), Seats: make([]*tablev1.SeatView, len(t.seats))}
	for s := range t.seats {
		v.Seats[s] = &tablev1.SeatView{Player: t.seatPlayer(s), Away: t.seats[s].away}
	}
	if seat >= 0 {
		ys := uint32(seat)
		v.YourSeat = &ys
	}
	t.eng.view(seat, v)
	if t.legal && seat >= 0 && seat == t.eng.toMove() && t.seats[seat].mode == seatHuman {
		v.Legal = t.eng.legal(seat)
	}
	if t.actAt != 0 {
		v.Deadline = timestamppb.New(time.Unix(0, t.actAt))
	}
	t.viewSeeding(v)
	return v
}

// viewSeeding adds the commitments and seedings of the current hand and of
// the hand committed ahead to v: a client that resynchronises from the view
// has not seen their HandCommitted or ClientSeedAccepted events, and needs
// them to seed and to verify the hands. Nothing here is secret (the
// commitments are public; each seat learns only that seeds were taken).
func (t *Table) viewSeeding(v *tablev1.TableView) {
	if t.sd.active {
		var seeded []uint32
		v.Committed, seeded = t.sd.view(len(t.seats))
		if t.sd.waiting() {
			v.SeededSeats = seeded
		}
	}
	if t.nx.active {
		v.NextCommitted, v.NextSeededSeats = t.nx.view(len(t.seats))
	}
}

// view is the seeding's HandCommitted and the awaited seats whose seed was
// taken.
func (sd *seeding) view(seats int) (*tablev1.HandCommitted, []uint32) {
	hc := &tablev1.HandCommitted{HandIndex: sd.index, Commitment: append([]byte(nil), sd.commit[:]...)}
	var seeded []uint32
	for s := range seats {
		if sd.awaited&(1<<s) != 0 {
			hc.AwaitedSeats = append(hc.AwaitedSeats, uint32(s))
			if sd.got&(1<<s) != 0 {
				seeded = append(seeded, uint32(s))
			}
		}
	}
	if sd.waiting() {
		hc.SeedDeadline = timestamppb.New(time.Unix(0, sd.deadline))
	}
	return hc, seeded
}

// ViewFor is the view of player: their seat's view if they hold a seat (or
// own one a bot plays until they come back), else a watcher's.
func (t *Table) ViewFor(player string) *tablev1.TableView { return t.View(t.viewerSeat(player)) }

// viewerSeat is the seat whose cards player may see: theirs while they
// play it or a bot keeps it for them (their grace ran out), -1 otherwise. A
// player who left or resigned is still the seat's player (seatOf), but the
// seat a bot now plays for good belongs to nobody: its cards are not theirs
// to see (docs/protocol.md), nor to hand to a friend still at the table.
func (t *Table) viewerSeat(player string) int {
	s := t.seatOf(player)
	if s < 0 || (t.seats[s].mode != seatHuman && t.seats[s].mode != seatBotGrace) {
		return -1
	}
	return s
}
