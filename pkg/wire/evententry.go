package wire

import (
	"errors"
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// FieldLegal is the field of a table's event stream entry that holds, beside
// the event in the entry's data field, the moves of the event that follows it
// in the table's history when that is a LegalMoves event for the seat to
// move right after a public event (Packs): a pulka.table.v1.LegalMoves in
// binary, and the event it stands for is LegalEvent of the entry's event and
// those moves. The runner packs the two so, which spares every move an entry
// to append, read and decode, and the seat's client a frame: the table's
// history is the same events in the same order, only stored differently.
// The moves are as private as their seat: a gateway puts them only into that
// seat's copy of the host event's frame (EventFrame.legal, WithLegal); a
// reader that does not forward events to players may ignore them.
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
// it (nil otherwise), as LegalEvent makes it. Only a public event may carry
// a seat's moves: any other is refused (fail closed).
func DecodeEventEntry(data []byte, header map[string]string) (ev, packed *tablev1.Event, err error) {
	ev = &tablev1.Event{}
	if err := proto.Unmarshal(data, ev); err != nil {
		return nil, nil, fmt.Errorf("wire: table event: %w", err)
	}
	raw, ok := header[FieldLegal]
	if !ok {
		return ev, nil, nil
	}
	if _, err := PackedSeat(ev, []byte(raw)); err != nil {
		return nil, nil, err
	}
	lm := &tablev1.LegalMoves{}
	if err := proto.Unmarshal([]byte(raw), lm); err != nil {
		return nil, nil, fmt.Errorf("wire: packed legal moves: %w", err)
	}
	return ev, LegalEvent(ev, lm), nil
}

// PackedSeat is the seat of the legal moves lm (binary, as FieldLegal holds
// them) packed into host's entry, read without decoding the moves (a
// gateway needs only the seat to route them: WithLegal takes their bytes as
// they are). Only a public event may carry a seat's moves: moves packed into
// any other are refused (fail closed).
func PackedSeat(host *tablev1.Event, lm []byte) (uint32, error) {
	if host.GetVisibility().GetAudience() != tablev1.Audience_AUDIENCE_PUBLIC {
		return 0, errors.New("wire: legal moves packed into an event that is not public")
	}
	return LegalSeat(lm)
}

// LegalSeat is the seat of the legal moves lm (a pulka.table.v1.LegalMoves in
// binary, as FieldLegal holds them), read without decoding the moves: the
// gateway needs only the seat to route them (WithLegal takes the bytes as
// they are).
func LegalSeat(lm []byte) (uint32, error) {
	var seat uint64
	for len(lm) > 0 {
		num, typ, n := protowire.ConsumeTag(lm)
		if n < 0 {
			return 0, fmt.Errorf("wire: legal moves: %w", protowire.ParseError(n))
		}
		lm = lm[n:]
		if num == legalMovesSeat && typ == protowire.VarintType {
			v, m := protowire.ConsumeVarint(lm)
			if m < 0 {
				return 0, fmt.Errorf("wire: legal moves: %w", protowire.ParseError(m))
			}
			seat, lm = v, lm[m:] // the last one counts, as in protobuf
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, lm)
		if m < 0 {
			return 0, fmt.Errorf("wire: legal moves: %w", protowire.ParseError(m))
		}
		lm = lm[m:]
	}
	if seat > math.MaxUint32 {
		return 0, errors.New("wire: legal moves of no seat")
	}
	return uint32(seat), nil
}

// The field numbers WithLegal and LegalSeat write and read
// (frames.proto, event.proto; TestFieldNumbers holds them to the
// descriptors).
const (
	serverFrameEvent = 13 // ServerFrame.event
	eventFrameLegal  = 4  // EventFrame.legal
	legalMovesSeat   = 1  // LegalMoves.seat
)

// WithLegal is event frame f for the seat whose legal moves lm (binary, as
// FieldLegal holds them) ride on it: f's binary encoding with
// EventFrame.legal appended — protobuf's encoding lets a field come last —
// so the event is not encoded again and the moves not decoded, which was
// most of a gateway's cost of legal moves. Its JSON, for the rare debugging
// client, is made from the decoded moves when first asked for.
func (f *Frame) WithLegal(lm []byte) (*Frame, error) {
	pub, err := f.Bytes(Binary)
	if err != nil {
		return nil, err
	}
	num, typ, n := protowire.ConsumeTag(pub)
	if n < 0 || num != serverFrameEvent || typ != protowire.BytesType {
		return nil, errors.New("wire: legal moves ride only on an event frame")
	}
	inner, m := protowire.ConsumeBytes(pub[n:])
	if m < 0 || n+m != len(pub) {
		return nil, errors.New("wire: an event frame with more than its event")
	}
	size := len(inner) + protowire.SizeTag(eventFrameLegal) + protowire.SizeBytes(len(lm))
	b := make([]byte, 0, protowire.SizeTag(serverFrameEvent)+protowire.SizeBytes(size))
	b = protowire.AppendTag(b, serverFrameEvent, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(size))
	b = append(b, inner...)
	b = protowire.AppendTag(b, eventFrameLegal, protowire.BytesType)
	b = protowire.AppendBytes(b, lm)
	g := &Frame{mk: func() (*gatewayv1.ServerFrame, error) {
		legal := &tablev1.LegalMoves{}
		if err := proto.Unmarshal(lm, legal); err != nil {
			return nil, fmt.Errorf("wire: legal moves: %w", err)
		}
		host, err := f.message()
		if err != nil {
			return nil, err
		}
		m := proto.Clone(host).(*gatewayv1.ServerFrame)
		m.GetEvent().Legal = legal
		return m, nil
	}}
	g.encs[Binary].once.Do(func() { g.encs[Binary].b = b })
	return g, nil
}

// EventWithLegal is the frame of event ev for the player of the seat the
// packed LegalMoves event legal is for: Event's frame with the legal moves.
// ev may be shared with the other receivers' frame (both only read it).
func EventWithLegal(table, id string, ev, legal *tablev1.Event) *gatewayv1.ServerFrame {
	f := Event(table, id, ev)
	f.GetEvent().Legal = legal.GetLegalMoves()
	return f
}
