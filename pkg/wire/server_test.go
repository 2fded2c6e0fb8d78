package wire

import (
	"encoding/json"
	"reflect"
	"testing"

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

func BenchmarkEvent(b *testing.B) {
	ev := &tablev1.Event{TableId: "t1", Seq: 9, CausedBy: "player-1/s1", Epoch: 4, CommandEntryId: "1-0",
		Visibility: &tablev1.Visibility{Audience: tablev1.Audience_AUDIENCE_PUBLIC},
		Event:      &tablev1.Event_BidMade{BidMade: &tablev1.BidMade{Seat: 2, Tricks: 1}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Event("0123456789abcdef", "1700000000000-0", ev); err != nil {
			b.Fatal(err)
		}
	}
}
