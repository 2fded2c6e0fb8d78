package wire

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// TestEventFrameOf_FieldNumbers holds the numbers EventFrameOf cuts and
// writes to the contracts' descriptors.
func TestEventFrameOf_FieldNumbers(t *testing.T) {
	for _, c := range []struct {
		m     proto.Message
		field protoreflect.Name
		want  protowire.Number
	}{
		{&tablev1.Event{}, "epoch", eventEpoch},
		{&tablev1.Event{}, "visibility", eventVisibility},
		{&tablev1.Event{}, "trace", eventTrace},
		{&tablev1.Event{}, "command_entry_id", eventCommandEntryID},
		{&gatewayv1.EventFrame{}, "table", eventFrameTable},
		{&gatewayv1.EventFrame{}, "id", eventFrameID},
		{&gatewayv1.EventFrame{}, "event", eventFrameEvent},
	} {
		fd := c.m.ProtoReflect().Descriptor().Fields().ByName(c.field)
		if fd == nil || fd.Number() != c.want {
			t.Errorf("%s.%s: %v, want number %d (change pkg/wire/eventframe.go with it)", c.m.ProtoReflect().Descriptor().FullName(), c.field, fd, c.want)
		}
	}
}

// TestEventFrameOf_RefusesWhatIsNotAnEvent: bytes that are not protobuf at
// the top level, or whose visibility does not decode, are refused; the
// parts left as bytes are the runner's and pass as they are.
func TestEventFrameOf_RefusesWhatIsNotAnEvent(t *testing.T) {
	good := mustBytes(proto.Marshal(benchEvent()))
	for name, data := range map[string][]byte{
		"truncated":                            good[:len(good)-1],
		"a tag alone":                          protowire.AppendTag(nil, 25, protowire.BytesType),
		"field number 0":                       {0x00, 0x01},
		"visibility as a varint":               protowire.AppendVarint(protowire.AppendTag(nil, eventVisibility, protowire.VarintType), 1),
		"visibility not a message":             protowire.AppendBytes(protowire.AppendTag(nil, eventVisibility, protowire.BytesType), []byte{0xff}),
		"a seating event that does not decode": protowire.AppendBytes(protowire.AppendTag(nil, 11, protowire.BytesType), []byte{0xff}),
	} {
		if f, head, err := EventFrameOf("t1", "1-0", data, seating); err == nil {
			t.Errorf("%s: accepted: %v %v", name, f, head)
		}
		if _, err := EventHead(data, seating); err == nil {
			t.Errorf("%s: EventHead accepted it", name)
		}
	}
}

// TestEventFrameOf_MergesARepeatedVisibility: a message field given twice
// is merged, as protobuf decodes it, so the head says who the client sees
// the event as.
func TestEventFrameOf_MergesARepeatedVisibility(t *testing.T) {
	ev := benchEvent()
	data := mustBytes(proto.Marshal(ev))
	data = protowire.AppendTag(data, eventVisibility, protowire.BytesType)
	data = protowire.AppendBytes(data, mustBytes(proto.Marshal(&tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_SEAT, Seat: 3})))
	whole := &tablev1.Event{}
	if err := proto.Unmarshal(data, whole); err != nil {
		t.Fatal(err)
	}
	_, head, err := EventFrameOf("t1", "1-0", data, seating)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(head.GetVisibility(), whole.GetVisibility()) || head.GetVisibility().GetSeat() != 3 {
		t.Fatalf("head visibility %v, protobuf's %v", head.GetVisibility(), whole.GetVisibility())
	}
}

// FuzzEventFrameOf: whatever the bytes, an event EventFrameOf frames
// decodes from the frame as protobuf decodes it from the bytes, less what
// stays between services, and its head's visibility is the event's.
func FuzzEventFrameOf(f *testing.F) {
	f.Add(mustBytes(proto.Marshal(benchEvent())))
	f.Add(mustBytes(proto.Marshal(&tablev1.Event{Seq: 1, Event: &tablev1.Event_PlayerSeated{PlayerSeated: &tablev1.PlayerSeated{Seat: &tablev1.SeatPlayer{Seat: 2, PlayerId: "p"}}},
		Trace: &commonv1.TraceContext{Traceparent: "00-x"}, Epoch: 9, CommandEntryId: "1-1"})))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		frame, head, err := EventFrameOf("t1", "1-0", data, seating)
		whole := &tablev1.Event{}
		if proto.Unmarshal(data, whole) != nil {
			return // a runner never writes it; what EventFrameOf did with it does not matter
		}
		if err != nil {
			// The one refusal of what protobuf decodes: a visibility of the
			// wrong wire type (protobuf keeps it as an unknown field).
			if !visibilityOfWrongType(data) {
				t.Fatalf("refused an event protobuf decodes: %v", err)
			}
			return
		}
		if !proto.Equal(head.GetVisibility(), whole.GetVisibility()) {
			t.Fatalf("head visibility %v, protobuf's %v", head.GetVisibility(), whole.GetVisibility())
		}
		got := &gatewayv1.ServerFrame{}
		if err := proto.Unmarshal(mustBytes(frame.Bytes(Binary)), got); err != nil {
			t.Fatalf("the frame does not decode: %v", err)
		}
		whole.Trace, whole.Epoch, whole.CommandEntryId = nil, 0, ""
		// Those numbers go whatever their wire type: protobuf would keep a
		// field of the wrong type as unknown, the frame does not carry it.
		m := whole.ProtoReflect()
		m.SetUnknown(withoutServiceFields(m.GetUnknown()))
		if e := got.GetEvent(); e.GetTable() != "t1" || e.GetId() != "1-0" || !proto.Equal(e.GetEvent(), whole) {
			t.Fatalf("the frame decodes to %v, want %v", e, whole)
		}
	})
}

func visibilityOfWrongType(data []byte) bool {
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeField(data)
		if n < 0 {
			return false
		}
		if num == eventVisibility && typ != protowire.BytesType {
			return true
		}
		data = data[n:]
	}
	return false
}

func mustBytes(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

func withoutServiceFields(b []byte) []byte {
	var out []byte
	for len(b) > 0 {
		num, _, n := protowire.ConsumeField(b)
		if num != eventEpoch && num != eventTrace && num != eventCommandEntryID {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return out
}
