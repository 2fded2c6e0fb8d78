package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// TestServerFrames_JSONIsTheDocumentedLayout pins the JSON of every server
// frame as docs/protocol.md shows it: the member's .proto name, snake_case
// fields, enums by name, 64-bit numbers as strings, zero values left out.
// JSON is compared decoded (protojson may space its output).
func TestServerFrames_JSONIsTheDocumentedLayout(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 500_000_000, time.UTC)
	seat := uint32(2)
	ev := &tablev1.Event{TableId: "t1", Seq: 9, CausedBy: "p/s1", Epoch: 3, CommandEntryId: "1-0",
		Trace: &commonv1.TraceContext{Traceparent: "00-x"},
		Event: &tablev1.Event_BidMade{BidMade: &tablev1.BidMade{Seat: 2, Tricks: 1}}}
	for _, tt := range []struct {
		frame *gatewayv1.ServerFrame
		want  string
	}{
		{Welcome(Player{ID: "g-1", Name: "Nino", Guest: true}, now),
			`{"welcome":{"player":{"id":"g-1","name":"Nino","guest":true},"server_time":"2025-03-01T12:00:00.500Z","stake_ladder":["10","50","100","500","1000"]}}`},
		{Joined("t1", "r1", &seat, 12, false), `{"ref":"r1","joined":{"table":"t1","seat":2,"replayed":12}}`},
		{Joined("t1", "", nil, 0, true), `{"joined":{"table":"t1","history_trimmed":true}}`},
		{Unjoined("t1", "r2"), `{"ref":"r2","unjoined":{"table":"t1"}}`},
		{Ack("r3", "p1/k1"), `{"ref":"r3","ack":{"cmd":"p1/k1"}}`},
		{Pong("r4", now), `{"ref":"r4","pong":{"server_time":"2025-03-01T12:00:00.500Z"}}`},
		{ErrorFrame(CodeNotJoined, "not following t1", "r5"), `{"ref":"r5","error":{"code":"not_joined","message":"not following t1"}}`},
		{TableError("t1", CodeTableGone, "gone"), `{"error":{"code":"table_gone","message":"gone","table":"t1"}}`},
		{Event("t1", "1700000000000-0", ev),
			`{"event":{"table":"t1","id":"1700000000000-0","event":{"seq":"9","table_id":"t1","caused_by":"p/s1","bid_made":{"seat":2,"tricks":1}}}}`},
		{Sheet("t1", "5-0", &scoringv1.SheetUpdate{Version: 3, Sheet: &scoringv1.Sheet{TableId: "t1", CurrentHand: 2},
			Trace: &commonv1.TraceContext{Traceparent: "00-x"}}),
			`{"sheet":{"table":"t1","id":"5-0","update":{"version":"3","sheet":{"table_id":"t1","current_hand":2}}}}`},
		{LobbyView(&lobbyv1.LobbyView{Version: 4, More: true}), `{"lobby_view":{"version":"4","more":true}}`},
		{LobbyUpdate(&lobbyv1.LobbyUpdate{Version: 5, Change: &lobbyv1.LobbyUpdate_TableRemoved{TableRemoved: "t9"}}),
			`{"lobby_update":{"version":"5","table_removed":"t9"}}`},
	} {
		got, err := Encode(tt.frame, JSON)
		if err != nil {
			t.Fatal(err)
		}
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("not JSON: %v: %s", err, got)
		}
		if err := json.Unmarshal([]byte(tt.want), &w); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s frame:\n got %s\nwant %s", ServerFrameType(tt.frame), got, tt.want)
		}
		if ServerFrameType(tt.frame) == "" {
			t.Errorf("%s has no type", got)
		}
	}
}

// Event leaves out what only services need: the runner's lease epoch, the
// command's entry id and the trace context.
func TestEvent_LeavesOutTheRunnersFields(t *testing.T) {
	ev := &tablev1.Event{TableId: "t1", Seq: 9, Epoch: 3, CommandEntryId: "1-0", Trace: &commonv1.TraceContext{Traceparent: "00-x"}}
	b, err := NewFrame(Event("t1", "2-0", ev)).Bytes(Binary)
	if err != nil {
		t.Fatal(err)
	}
	var got gatewayv1.ServerFrame
	if err := proto.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if e := got.GetEvent().GetEvent(); e.GetEpoch() != 0 || e.GetCommandEntryId() != "" || e.GetTrace() != nil || e.GetSeq() != 9 {
		t.Fatalf("sent %v", e)
	}
}

// A Frame encodes once per encoding, however many connections (goroutines)
// ask, and each encoding decodes to the frame.
func TestFrame_EncodesEachEncodingOnceForEveryone(t *testing.T) {
	f := NewFrame(Ack("r1", "p/k"))
	var wg sync.WaitGroup
	got := make([][]byte, 16)
	for i := range got {
		wg.Go(func() {
			b, err := f.Bytes(Encoding(i % 2))
			if err != nil {
				t.Error(err)
			}
			got[i] = b
		})
	}
	wg.Wait()
	for i := 2; i < len(got); i++ {
		if &got[i][0] != &got[i%2][0] {
			t.Fatal("an encoding was made twice")
		}
	}
	if bytes.Equal(got[0], got[1]) {
		t.Fatal("both encodings are the same bytes")
	}
	for enc, b := range got[:2] {
		m := &gatewayv1.ServerFrame{}
		var err error
		if Encoding(enc) == JSON {
			err = jsonIn.Unmarshal(b, m)
		} else {
			err = proto.Unmarshal(b, m)
		}
		if err != nil || !proto.Equal(m, f.Message()) {
			t.Fatalf("%s: %v, %v", Encoding(enc), m, err)
		}
	}
}

func TestEncodingOf_TheSubprotocolChoosesBinaryOnlyWhenAskedFor(t *testing.T) {
	if EncodingOf(SubprotocolProto) != Binary || EncodingOf(SubprotocolJSON) != JSON || EncodingOf("") != JSON {
		t.Fatal("wrong encodings")
	}
	if Subprotocols()[0] != SubprotocolProto {
		t.Fatal("the gateway prefers binary")
	}
}

// BenchmarkParse is a client frame's cost before it reaches the table: a
// card played (a joker with its declaration), decoded, checked and mapped
// to the table's command, in each encoding.
func BenchmarkParse(b *testing.B) {
	m := &gatewayv1.ClientFrame{Ref: "r17", Frame: &gatewayv1.ClientFrame_Command{Command: &gatewayv1.TableCommand{
		Table: "0123456789abcdef", Cmd: "k-118",
		Command: &gatewayv1.TableCommand_Play{Play: &tablev1.PlayCardCommand{Card: commonv1.Card_CARD_JOKER_2,
			Declaration: &tablev1.JokerDeclaration{Action: tablev1.JokerAction_JOKER_ACTION_TAKE}}}}}}
	for _, enc := range []Encoding{Binary, JSON} {
		data, err := Encode(&gatewayv1.ServerFrame{}, enc) // warm the encoder
		if err != nil {
			b.Fatal(err)
		}
		if enc == JSON {
			data, err = protoJSON.Marshal(m)
		} else {
			data, err = proto.Marshal(m)
		}
		if err != nil {
			b.Fatal(err)
		}
		b.Run(enc.String(), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f, err := Parse(data, enc)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Command(f.GetCommand(), "p", "p/k-118"); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(data)), "B/frame")
		})
	}
}
