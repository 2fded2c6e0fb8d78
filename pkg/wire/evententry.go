package wire

import (
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// FieldLegal is the field of a table's event stream entry that holds, beside
// the event in the entry's data field, the event that follows it in the
// table's history when that is a LegalMoves event for the seat to move
// (AUDIENCE_SEAT) after a public event: the runner packs the two into one
// entry (see Packs), which spares every move an entry to append, read and
// decode and the seat's client a frame. Both events keep their seqs, and the
// table's history is the same events in the same order: only where they are
// stored differs. The packed event is as private as its visibility says:
// a gateway puts it only into that seat's copy of the host event's frame
// (EventFrame.legal); a reader that does not forward events to players may
// ignore it.
const FieldLegal = "legal"

// Packs reports whether event next, which follows host in a table's history,
// is stored in host's entry (FieldLegal): a LegalMoves event for one seat
// right after a public event of the same step — which is how a table
// follows the event that carries a player's move timer — that LegalEvent
// rebuilds exactly from host and its moves. So a frame need carry only the
// moves (EventFrame.legal), and a client has the log's event.
func Packs(host, next *tablev1.Event) bool {
	lm := next.GetLegalMoves()
	nv := next.GetVisibility()
	return lm != nil &&
		host.GetVisibility().GetAudience() == tablev1.Audience_AUDIENCE_PUBLIC &&
		nv.GetAudience() == tablev1.Audience_AUDIENCE_SEAT && nv.GetSeat() == lm.GetSeat() && nv.GetPlayerId() == "" &&
		next.GetSeq() == host.GetSeq()+1 &&
		next.GetTableId() == host.GetTableId() && next.GetGameId() == host.GetGameId() &&
		next.GetEpoch() == host.GetEpoch() && next.GetCausedBy() == host.GetCausedBy() &&
		next.GetCommandEntryId() == host.GetCommandEntryId() &&
		sameTime(next.GetOccurredAt(), host.GetOccurredAt()) &&
		next.GetTrace() == nil && next.GetTimer() == nil && next.GetSeedAccepted() == nil
}

func sameTime(a, b *timestamppb.Timestamp) bool {
	return (a == nil) == (b == nil) && a.GetSeconds() == b.GetSeconds() && a.GetNanos() == b.GetNanos()
}

// LegalEvent is the LegalMoves event lm that a table's history has right
// after host when the two share an entry (Packs): what a client makes of
// the moves riding on host's frame. host's fields that only services see
// (epoch, command_entry_id) are copied as they are — a frame's host has
// none.
func LegalEvent(host *tablev1.Event, lm *tablev1.LegalMoves) *tablev1.Event {
	return &tablev1.Event{
		Seq: host.GetSeq() + 1, TableId: host.GetTableId(), GameId: host.GetGameId(), Epoch: host.GetEpoch(),
		OccurredAt: host.GetOccurredAt(), CausedBy: host.GetCausedBy(), CommandEntryId: host.GetCommandEntryId(),
		Visibility: &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_SEAT, Seat: lm.GetSeat()},
		Event:      &tablev1.Event_LegalMoves{LegalMoves: lm},
	}
}

// DecodeEventEntry decodes one entry of a table's event stream: the event in
// its data field and, when the entry packs one (FieldLegal), the event after
// it (nil otherwise). An entry whose packed event is not one Packs allows is
// refused: reading it as two events would route a private event on its
// host's terms.
func DecodeEventEntry(data []byte, header map[string]string) (ev, packed *tablev1.Event, err error) {
	ev = &tablev1.Event{}
	if err := proto.Unmarshal(data, ev); err != nil {
		return nil, nil, fmt.Errorf("wire: table event: %w", err)
	}
	raw, ok := header[FieldLegal]
	if !ok {
		return ev, nil, nil
	}
	packed = &tablev1.Event{}
	if err := proto.Unmarshal([]byte(raw), packed); err != nil {
		return nil, nil, fmt.Errorf("wire: packed table event: %w", err)
	}
	if !Packs(ev, packed) {
		return nil, nil, fmt.Errorf("wire: a packed table event must be the legal moves of a seat that LegalEvent makes of its host")
	}
	return ev, packed, nil
}

// EventWithLegal is the frame of event ev for the player of the seat the
// packed LegalMoves event legal is for: Event's frame with the legal moves.
// ev may be shared with the other receivers' frame (both only read it).
func EventWithLegal(table, id string, ev, legal *tablev1.Event) *gatewayv1.ServerFrame {
	f := Event(table, id, ev)
	f.GetEvent().Legal = legal.GetLegalMoves()
	return f
}
