package wire_test

import (
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/wire"
)

var t0 = time.Date(2026, 12, 6, 11, 0, 0, 0, time.UTC)

func vis(a tablev1.Audience, seat uint32) *tablev1.Visibility {
	return &tablev1.Visibility{Audience: a, Seat: seat}
}

var (
	publicBid = &tablev1.Event{Seq: 7, TableId: "t1", GameId: "g1", Epoch: 3, OccurredAt: timestamppb.New(t0),
		CausedBy: "p1/k", CommandEntryId: "5-0", Visibility: vis(tablev1.Audience_AUDIENCE_PUBLIC, 0),
		Event: &tablev1.Event_BidMade{BidMade: &tablev1.BidMade{Seat: 1, Tricks: 2}}}
	moves     = &tablev1.LegalMoves{Seat: 2, Phase: tablev1.Phase_PHASE_BID, Bids: []uint32{0, 2}}
	seatLegal = wire.LegalEvent(publicBid, moves)
)

// with is a copy of ev changed by f.
func with(ev *tablev1.Event, f func(*tablev1.Event)) *tablev1.Event {
	c := proto.Clone(ev).(*tablev1.Event)
	f(c)
	return c
}

func TestPacks_OnlyASeatsLegalMovesRightAfterAPublicEventOfItsStep(t *testing.T) {
	for _, c := range []struct {
		name       string
		host, next *tablev1.Event
		want       bool
	}{
		{"a seat's legal moves after a public event", publicBid, seatLegal, true},
		{"a seat's deal is never packed", publicBid, with(seatLegal, func(e *tablev1.Event) {
			e.Event = &tablev1.Event_Dealt{Dealt: &tablev1.Dealt{Seat: 2}}
		}), false},
		{"legal moves addressed to everyone are not a seat's", publicBid, with(seatLegal, func(e *tablev1.Event) {
			e.Visibility = vis(tablev1.Audience_AUDIENCE_PUBLIC, 0)
		}), false},
		{"legal moves addressed to a seat they are not for", publicBid, with(seatLegal, func(e *tablev1.Event) { e.Visibility.Seat = 3 }), false},
		{"after a private event, nothing is packed", with(publicBid, func(e *tablev1.Event) {
			e.Visibility = vis(tablev1.Audience_AUDIENCE_SEAT, 2)
		}), seatLegal, false},
		{"not right after", publicBid, with(seatLegal, func(e *tablev1.Event) { e.Seq++ }), false},
		{"another step's moment", publicBid, with(seatLegal, func(e *tablev1.Event) { e.OccurredAt = timestamppb.New(t0.Add(1)) }), false},
	} {
		if got := wire.Packs(c.host, c.next); got != c.want {
			t.Errorf("%s: Packs = %t, want %t", c.name, got, c.want)
		}
	}
}

// TestPacks_EveryFieldOfTheEventCounts changes each field of a packable
// event in turn: every change must make it unpackable, or a frame carrying
// only the moves would lose it. A field added to pulka.table.v1.Event fails
// here until Packs and LegalEvent account for it.
func TestPacks_EveryFieldOfTheEventCounts(t *testing.T) {
	fields := seatLegal.ProtoReflect().Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.ContainingOneof() != nil && fd.Name() != "legal_moves" {
			continue // the body: another kind of event (covered above)
		}
		next := proto.Clone(seatLegal).(*tablev1.Event)
		m := next.ProtoReflect()
		switch fd.Kind() {
		case protoreflect.StringKind:
			m.Set(fd, protoreflect.ValueOfString(m.Get(fd).String()+"x"))
		case protoreflect.Uint64Kind:
			m.Set(fd, protoreflect.ValueOfUint64(m.Get(fd).Uint()+7))
		case protoreflect.MessageKind:
			if fd.Name() == "legal_moves" {
				continue // the moves themselves: any
			}
			m.Set(fd, protoreflect.ValueOfMessage(m.NewField(fd).Message()))
		default:
			t.Fatalf("field %s of kind %s: teach this test (and Packs) about it", fd.Name(), fd.Kind())
		}
		if wire.Packs(publicBid, next) {
			t.Errorf("field %s changed, and the event still packs: a frame would lose it", fd.Name())
		}
	}
}

func TestDecodeEventEntry(t *testing.T) {
	data := must(proto.Marshal(publicBid))
	ev, packed, err := wire.DecodeEventEntry(data, nil)
	if err != nil || packed != nil || !proto.Equal(ev, publicBid) {
		t.Fatalf("a plain entry: %v %v %v", ev, packed, err)
	}
	lm := string(must(proto.Marshal(moves)))
	ev, packed, err = wire.DecodeEventEntry(data, map[string]string{wire.FieldLegal: lm, "input": "x"})
	if err != nil || !proto.Equal(ev, publicBid) || !proto.Equal(packed, seatLegal) {
		t.Fatalf("a packed entry: %v %v %v, want the packed %v", ev, packed, err, seatLegal)
	}
	private := must(proto.Marshal(with(publicBid, func(e *tablev1.Event) { e.Visibility = vis(tablev1.Audience_AUDIENCE_SEAT, 2) })))
	if _, _, err := wire.DecodeEventEntry(private, map[string]string{wire.FieldLegal: lm}); err == nil {
		t.Error("legal moves packed into a private event decoded")
	}
	if _, _, err := wire.DecodeEventEntry(data, map[string]string{wire.FieldLegal: "\xff\xff"}); err == nil {
		t.Error("undecodable packed moves decoded")
	}
	if _, _, err := wire.DecodeEventEntry([]byte{0xff, 0xff}, nil); err == nil {
		t.Error("an undecodable event decoded")
	}
}

func TestLegalSeat(t *testing.T) {
	for _, seat := range []uint32{0, 1, 3} {
		b := must(proto.Marshal(&tablev1.LegalMoves{Phase: tablev1.Phase_PHASE_PLAY, Seat: seat, Bids: []uint32{1, 2},
			Plays: []*tablev1.LegalPlay{{Card: 5}}}))
		if got, err := wire.LegalSeat(b); err != nil || got != seat {
			t.Errorf("seat %d read as %d, %v", seat, got, err)
		}
	}
	for name, b := range map[string][]byte{"a truncated tag": {0xff}, "a truncated seat": {0x08, 0xff}, "a seat beyond 32 bits": {0x08, 0xff, 0xff, 0xff, 0xff, 0x1f}} {
		if _, err := wire.LegalSeat(b); err == nil {
			t.Errorf("%s: read", name)
		}
	}
}

// TestWithLegal: the spliced seat's frame is, in binary and in JSON, what
// encoding EventWithLegal's message gives; a frame that is no event frame
// takes no moves.
func TestWithLegal(t *testing.T) {
	ev := proto.Clone(publicBid).(*tablev1.Event)
	pub := wire.NewFrame(wire.Event("t1", "1-1", ev))
	lm := must(proto.Marshal(moves))
	seat, err := pub.WithLegal(lm)
	if err != nil {
		t.Fatal(err)
	}
	want := wire.EventWithLegal("t1", "1-1", proto.Clone(publicBid).(*tablev1.Event), seatLegal)
	b, err := seat.Bytes(wire.Binary)
	if err != nil {
		t.Fatal(err)
	}
	got := &gatewayv1.ServerFrame{}
	if err := proto.Unmarshal(b, got); err != nil || !proto.Equal(got, want) {
		t.Fatalf("binary: %v (%v), want %v", got, err, want)
	}
	j, err := seat.Bytes(wire.JSON)
	wantJSON, _ := wire.Encode(want, wire.JSON)
	if err != nil || string(j) != string(wantJSON) {
		t.Fatalf("JSON: %s (%v), want %s", j, err, wantJSON)
	}
	if _, err := wire.NewFrame(wire.Ack("r", "p/k")).WithLegal(lm); err == nil {
		t.Error("legal moves spliced into an ack")
	}
}

// TestFieldNumbers holds the numbers WithLegal and LegalSeat use to the
// contracts' descriptors.
func TestFieldNumbers(t *testing.T) {
	for _, c := range []struct {
		m     proto.Message
		field protoreflect.Name
		want  protowire.Number
	}{
		{&gatewayv1.ServerFrame{}, "event", 13},
		{&gatewayv1.EventFrame{}, "legal", 4},
		{&tablev1.LegalMoves{}, "seat", 1},
	} {
		fd := c.m.ProtoReflect().Descriptor().Fields().ByName(c.field)
		if fd == nil || fd.Number() != c.want {
			t.Errorf("%s.%s: %v, want number %d (change pkg/wire/evententry.go with it)", c.m.ProtoReflect().Descriptor().FullName(), c.field, fd, c.want)
		}
	}
}

// TestEventWithLegal: the seat's copy carries the moves, and the event a
// client makes of them is the log's, as the frame's event is; the other
// copy, made from the same event, carries none.
func TestEventWithLegal(t *testing.T) {
	ev := proto.Clone(publicBid).(*tablev1.Event)
	mine := wire.EventWithLegal("t1", "1-1", ev, seatLegal)
	theirs := wire.Event("t1", "1-1", ev)
	if !proto.Equal(mine.GetEvent().GetLegal(), moves) || mine.GetEvent().GetId() != "1-1" {
		t.Fatalf("the seat's frame: %v", mine)
	}
	if theirs.GetEvent().GetLegal() != nil || !proto.Equal(theirs.GetEvent().GetEvent(), mine.GetEvent().GetEvent()) {
		t.Fatalf("the others' frame: %v", theirs)
	}
	wantLog := with(seatLegal, func(e *tablev1.Event) { e.Epoch, e.CommandEntryId = 0, "" }) // as a frame strips them
	if got := wire.LegalEvent(mine.GetEvent().GetEvent(), mine.GetEvent().GetLegal()); !proto.Equal(got, wantLog) {
		t.Fatalf("the client's legal moves event %v, want the log's %v", got, wantLog)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
