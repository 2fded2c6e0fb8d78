package wire

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// TestEvent_FrameIsTheEnvelopeAroundProtoJSON checks the hand-written
// envelope against encoding/json's, ids with characters JSON must escape
// included.
func TestEvent_FrameIsTheEnvelopeAroundProtoJSON(t *testing.T) {
	ev := &tablev1.Event{TableId: "t1", Seq: 9, CausedBy: "p/s1", Epoch: 3, CommandEntryId: "1-0",
		Trace: &commonv1.TraceContext{Traceparent: "00-x"},
		Event: &tablev1.Event_BidMade{BidMade: &tablev1.BidMade{Seat: 2, Tricks: 1}}}
	for _, tc := range []struct{ table, id string }{
		{"t1", "1700000000000-0"},
		{`odd "table" \ <&> é`, "1-0"},
		{"t\n2", "2-0"},
	} {
		got, err := Event(tc.table, tc.id, ev)
		if err != nil {
			t.Fatal(err)
		}
		body, err := protoJSON.Marshal(&tablev1.Event{TableId: "t1", Seq: 9, CausedBy: "p/s1",
			Event: &tablev1.Event_BidMade{BidMade: &tablev1.BidMade{Seat: 2, Tricks: 1}}})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(struct {
			Type  string          `json:"type"`
			Table string          `json:"table"`
			ID    string          `json:"id"`
			Event json.RawMessage `json:"event"`
		}{TypeEvent, tc.table, tc.id, body})
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%q: not JSON: %v: %s", tc.table, err, got)
		}
		_ = json.Unmarshal(want, &w)
		if ev.GetEpoch() != 3 || ev.GetTrace() == nil || ev.GetCommandEntryId() != "1-0" {
			t.Fatal("Event changed the event it encoded")
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%q: got %s, want %s", tc.table, got, want)
		}
	}
}

// BenchmarkEvent compares Event (the fast encoder, protojson for the rest)
// with the protojson-only encoding it replaced, on the events of a move: a
// bid, and a card played that carries the next seat's timer, each with the
// runner's epoch, command entry id and trace (which protojson has to clone
// away).
func BenchmarkEvent(b *testing.B) {
	at := time.Date(2025, 3, 1, 12, 0, 0, 123_000_000, time.UTC)
	trace := &commonv1.TraceContext{Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}
	for _, bc := range []struct {
		name string
		ev   *tablev1.Event
	}{
		{"bid_made", &tablev1.Event{TableId: "t1", Seq: 9, CausedBy: "player-1/s1", Epoch: 4, CommandEntryId: "1-0",
			Visibility: &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_PUBLIC},
			Event:      &tablev1.Event_BidMade{BidMade: &tablev1.BidMade{Seat: 2, Tricks: 1}}}},
		{"card_played+timer", &tablev1.Event{Seq: 412, TableId: "0123456789abcdef", GameId: "0123456789abcdef.9e3779b97f4a7c15",
			Epoch: 3, OccurredAt: timestamppb.New(at), CausedBy: "player-1/k-118", Trace: trace, CommandEntryId: "1740830400123-0",
			Visibility: &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_PUBLIC},
			Event: &tablev1.Event_CardPlayed{CardPlayed: &tablev1.CardPlayed{Seat: 1, Card: commonv1.Card_CARD_JOKER_2,
				Declaration: &tablev1.JokerDeclaration{Action: tablev1.JokerAction_JOKER_ACTION_TAKE}}},
			Timer: &tablev1.TimerStarted{Seat: 2, Phase: tablev1.Phase_PHASE_PLAY, Deadline: timestamppb.New(at.Add(20 * time.Second))}}},
	} {
		b.Run(bc.name+"/fast", func(b *testing.B) {
			if _, ok := appendEventJSON(nil, bc.ev); !ok {
				b.Fatal("the fast path does not take the event")
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Event("0123456789abcdef", "1740830400125-0", bc.ev); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/protojson", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				// Event before the fast encoder.
				buf := appendEventEnvelope(make([]byte, 0, 64+16+15), "0123456789abcdef", "1740830400125-0")
				buf, err := appendEventProtoJSON(buf, bc.ev)
				if err != nil {
					b.Fatal(err)
				}
				_ = append(buf, '}')
			}
		})
	}
}
