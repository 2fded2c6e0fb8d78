package wire_test

import (
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

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
	ev, packed, err = wire.DecodeEventEntry(data, map[string]string{wire.FieldLegal: string(must(proto.Marshal(seatLegal))), "input": "x"})
	if err != nil || !proto.Equal(ev, publicBid) || !proto.Equal(packed, seatLegal) {
		t.Fatalf("a packed entry: %v %v %v", ev, packed, err)
	}
	for name, h := range map[string]map[string]string{
		"a packed deal": {wire.FieldLegal: string(must(proto.Marshal(with(seatLegal, func(e *tablev1.Event) {
			e.Event = &tablev1.Event_Dealt{Dealt: &tablev1.Dealt{Seat: 2}}
		}))))},
		"packed moves of a later step": {wire.FieldLegal: string(must(proto.Marshal(with(seatLegal, func(e *tablev1.Event) { e.CausedBy = "other" }))))},
		"an undecodable packing":       {wire.FieldLegal: "\xff\xff"},
	} {
		if _, _, err := wire.DecodeEventEntry(data, h); err == nil {
			t.Errorf("%s: decoded, want an error", name)
		}
	}
	if _, _, err := wire.DecodeEventEntry([]byte{0xff, 0xff}, nil); err == nil {
		t.Error("an undecodable event decoded")
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
