package wire

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// The Event fields EventHead and EventFrameOf read or drop without decoding
// the event (event.proto), and EventFrame's (frames.proto);
// TestEventFrameOf_FieldNumbers holds them to the descriptors.
const (
	eventEpoch          = 4 // Event.epoch: between services only
	eventVisibility     = 6 // Event.visibility
	eventTrace          = 8 // Event.trace: between services only
	eventCommandEntryID = 9 // Event.command_entry_id: between services only
	eventFrameTable     = 1 // EventFrame.table
	eventFrameID        = 2 // EventFrame.id
	eventFrameEvent     = 3 // EventFrame.event
)

// betweenServices reports whether Event field num stays between services:
// a frame carries neither the trace context, the lease epoch nor the
// command entry id (Event clears the same fields of a decoded event).
func betweenServices(num protowire.Number) bool {
	return num == eventEpoch || num == eventTrace || num == eventCommandEntryID
}

// EventHead is what a router reads of the table event whose binary encoding
// is data, without decoding all of it: an Event holding only its visibility
// — unless whole reports true for the number of one of its fields (whole
// names kinds: fields of the Event.event oneof), in which case the whole
// event is decoded. The gateway decodes whole only the events that move a
// seat (visibility.Folds); a card played, a bid, a timer stay bytes.
//
// data must be well-formed protobuf at the top level and its visibility
// must decode; the parts left as bytes are not checked (they come from
// the table's runner, which encoded them).
func EventHead(data []byte, whole func(protowire.Number) bool) (*tablev1.Event, error) {
	head, _, err := scanEvent(data, whole)
	return head, err
}

// scanEvent is EventHead, and the size of data without the fields that stay
// between services.
func scanEvent(data []byte, whole func(protowire.Number) bool) (*tablev1.Event, int, error) {
	head := &tablev1.Event{}
	kept := 0
	var vis [][]byte
	decodeAll := false
	for b := data; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, 0, fmt.Errorf("wire: table event: %w", protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil, 0, fmt.Errorf("wire: table event: %w", protowire.ParseError(m))
		}
		switch {
		case betweenServices(num):
		case num == eventVisibility:
			if typ != protowire.BytesType {
				return nil, 0, errors.New("wire: table event: visibility of the wrong wire type")
			}
			v, _ := protowire.ConsumeBytes(b[n:])
			vis = append(vis, v)
			kept += n + m
		default:
			if whole(num) {
				decodeAll = true
			}
			kept += n + m
		}
		b = b[n+m:]
	}
	if decodeAll {
		if err := proto.Unmarshal(data, head); err != nil {
			return nil, 0, fmt.Errorf("wire: table event: %w", err)
		}
		return head, kept, nil
	}
	// As protobuf does, a message field that occurs more than once is merged.
	merge := proto.UnmarshalOptions{Merge: true}
	for _, v := range vis {
		if head.Visibility == nil {
			head.Visibility = &tablev1.Visibility{}
		}
		if err := merge.Unmarshal(v, head.Visibility); err != nil {
			return nil, 0, fmt.Errorf("wire: table event visibility: %w", err)
		}
	}
	return head, kept, nil
}

// EventFrameOf is the frame of the table event whose binary encoding is
// data (entry id of table's event stream), made from data as it is, and
// the event's head (EventHead): the fields that stay between services
// (trace context, lease epoch, command entry id) are cut out of the bytes,
// the rest is neither decoded nor encoded again. Decoding every event and
// encoding it back was a gateway's largest cost of a move after its system
// calls; the frame's bytes are the same as Event's encoding of the decoded
// event (protobuf writes fields in number order, and so does the runner).
// Its JSON, for the rare debugging client, is made from data decoded
// whole when first asked for. data must not change afterwards.
func EventFrameOf(table, id string, data []byte, whole func(protowire.Number) bool) (*Frame, *tablev1.Event, error) {
	head, kept, err := scanEvent(data, whole)
	if err != nil {
		return nil, nil, err
	}
	inner := protowire.SizeTag(eventFrameEvent) + protowire.SizeBytes(kept)
	if table != "" {
		inner += protowire.SizeTag(eventFrameTable) + protowire.SizeBytes(len(table))
	}
	if id != "" {
		inner += protowire.SizeTag(eventFrameID) + protowire.SizeBytes(len(id))
	}
	b := make([]byte, 0, protowire.SizeTag(serverFrameEvent)+protowire.SizeBytes(inner))
	b = protowire.AppendTag(b, serverFrameEvent, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(inner))
	if table != "" {
		b = protowire.AppendTag(b, eventFrameTable, protowire.BytesType)
		b = protowire.AppendString(b, table)
	}
	if id != "" {
		b = protowire.AppendTag(b, eventFrameID, protowire.BytesType)
		b = protowire.AppendString(b, id)
	}
	b = protowire.AppendTag(b, eventFrameEvent, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(kept))
	for rest := data; len(rest) > 0; {
		num, typ, n := protowire.ConsumeTag(rest)
		m := protowire.ConsumeFieldValue(num, typ, rest[n:]) // scanEvent checked both
		if !betweenServices(num) {
			b = append(b, rest[:n+m]...)
		}
		rest = rest[n+m:]
	}
	f := &Frame{mk: func() (*gatewayv1.ServerFrame, error) {
		ev := &tablev1.Event{}
		if err := proto.Unmarshal(data, ev); err != nil {
			return nil, fmt.Errorf("wire: table event: %w", err)
		}
		return Event(table, id, ev), nil
	}}
	f.encs[Binary].once.Do(func() { f.encs[Binary].b = b })
	return f, head, nil
}
