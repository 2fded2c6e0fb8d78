package wsclient

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/fairdeal"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/table"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/pkg/wire"
)

// gameFrames returns the event frames of the start of a classic game as the
// gateway writes them.
func gameFrames(tb testing.TB) [][]byte {
	tb.Helper()
	seats := make([]table.SeatInfo, 4)
	for i := range seats {
		seats[i] = table.SeatInfo{PlayerID: "p" + string(rune('0'+i)), Name: "Player"}
	}
	t, evs, err := table.New("t1", "g1", tablesettings.ClassicSettings(scoring.Settings{Variant: classic.Standard, Khishti: scoring.Khishti200}),
		seats, time.Unix(1700000000, 0), table.Entropy(fairdeal.LocalKey(7, 0)))
	if err != nil {
		tb.Fatal(err)
	}
	// Nobody sends a client seed: the first hand is dealt at its deadline.
	at, _ := t.NextDeadline()
	tick := table.Tick(at)
	tick.Entropy = table.Entropy(fairdeal.LocalKey(7, 1))
	dealt, err := t.Apply(tick)
	if err != nil {
		tb.Fatal(err)
	}
	evs = append(evs, dealt...)
	var out [][]byte
	for i, ev := range evs {
		f, err := wire.Event("t1", "1700000000000-"+string(rune('0'+i)), ev)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, f)
	}
	return out
}

func sameFrame(a, b Frame) bool {
	return a.Type == b.Type && a.Ref == b.Ref && a.Table == b.Table && a.ID == b.ID && a.Cmd == b.Cmd &&
		proto.Equal(a.Event, b.Event) && (a.Sheet == nil) == (b.Sheet == nil) && proto.Equal(a.Sheet, b.Sheet) && a.Err == nil && b.Err == nil && a.At.Equal(b.At)
}

func TestDecodeEventFrame_TakesTheGatewaysFramesAndDecodesThemAsInFull(t *testing.T) {
	at := time.Unix(1, 0)
	for _, data := range gameFrames(t) {
		fast, ok := decodeEventFrame(data, at)
		if !ok {
			t.Fatalf("the fast path refused a gateway frame: %s", data)
		}
		full, err := decodeFrame(data, at)
		if err != nil || !sameFrame(fast, full) {
			t.Fatalf("fast %+v, full %+v (%v)", fast, full, err)
		}
	}
	// A body only protojson takes (a number with an empty exponent) is
	// refused, as it was before the fast path (asInFull).
	onlyProtojson := []byte(`{"type":"event","table":"t1","id":"1-1","event":{"seq":"1","future":1e}}`)
	if _, ok := decodeEventFrame(onlyProtojson, at); ok {
		t.Errorf("the fast path took %s", onlyProtojson)
	}
	if _, err := DecodeFrame(onlyProtojson, at); err == nil {
		t.Errorf("DecodeFrame took %s", onlyProtojson)
	}
	// Frames laid out otherwise go the long way, and still decode.
	data := gameFrames(t)[0]
	for name, other := range map[string]string{
		"reordered":        strings.Replace(string(data), `{"type":"event","table":"t1",`, `{"table":"t1","type":"event",`, 1),
		"escaped table":    strings.Replace(string(data), `"table":"t1"`, `"table":"t\u0031"`, 1),
		"spaces":           strings.Replace(string(data), `,"id":`, `, "id":`, 1),
		"a field after it": strings.TrimSuffix(string(data), "}") + `,"extra":1}`,
	} {
		if _, ok := decodeEventFrame([]byte(other), at); ok {
			t.Errorf("%s: the fast path took it", name)
		}
		f, err := DecodeFrame([]byte(other), at)
		if err != nil || f.Type != wire.TypeEvent || f.Table != "t1" || f.Event == nil {
			t.Errorf("%s: %+v %v", name, f, err)
		}
	}
}

func TestDecodeAckFrame_TakesTheGatewaysAcks(t *testing.T) {
	at := time.Unix(1, 0)
	for _, data := range [][]byte{wire.Ack("r7", "p1/s12"), wire.Ack("", "p1/s12")} {
		fast, ok := decodeAckFrame(data, at)
		if !ok {
			t.Fatalf("the fast path refused %s", data)
		}
		full, err := decodeFrame(data, at)
		if err != nil || !sameFrame(fast, full) || fast.Cmd != "p1/s12" {
			t.Fatalf("fast %+v, full %+v (%v)", fast, full, err)
		}
	}
	for _, other := range []string{`{"type":"ack","cmd":"c","ref":"r"}`, `{"type":"ack","ref":"r\u0031","cmd":"c"}`, `{"type":"ack","cmd":"c"} `} {
		if _, ok := decodeAckFrame([]byte(other), at); ok {
			t.Errorf("the fast path took %s", other)
		}
		if f, err := DecodeFrame([]byte(other), at); err != nil || f.Type != wire.TypeAck || f.Cmd != "c" {
			t.Errorf("%s: %+v %v", other, f, err)
		}
	}
}

// FuzzDecodeEventFrame: whatever the fast paths (events, sheets, acks)
// accept, the full decoding accepts too and reads the same frame.
func FuzzDecodeEventFrame(f *testing.F) {
	for _, data := range gameFrames(f) {
		f.Add(data)
	}
	f.Add(wire.Ack("r1", "p1/k"))
	f.Add(wire.Ack("", "p1/k"))
	f.Add([]byte(`{"type":"ack","ref":"r1","cmd":"c","x":1}`))
	f.Add([]byte(`{"type":"event","table":"t","id":"1-1","event":{}}`))
	f.Add([]byte(`{"type":"event","table":"t","id":"1-1","event":{"seq":"1"}} `))
	f.Add([]byte(`{"type":"event","table":"t","id":"1-1","event":{"seq":"1"},"x":{}}`))
	f.Add(sheetFrame(baseSheet))
	f.Add(sheetFrame(`{"version":"1","sheet":{"players":[{"display_name":"ნიკა"}]}}`))
	f.Add(sheetFrame(`{"version":"1","trace":{}}`))
	f.Add([]byte(`{"type":"sheet","table":"t","id":"1-1","update":{}} `))
	f.Add([]byte(`{"type":"event","table":"t","id":"1-1","event":{"x":[1e5]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		at := time.Unix(2, 0)
		fast, ok := decodeEventFrame(data, at)
		if !ok {
			fast, ok = decodeSheetFrame(data, at)
		}
		if !ok {
			if fast, ok = decodeAckFrame(data, at); !ok {
				return
			}
		}
		full, err := decodeFrame(data, at)
		if err != nil {
			t.Fatalf("fast path took what the full decoding refuses (%v): %q", err, data)
		}
		if !sameFrame(fast, full) {
			t.Fatalf("fast %+v\nfull %+v\nof %q", fast, full, data)
		}
	})
}

// BenchmarkDecodeFrame: an event frame as the gateway writes it, through
// the fast path and the full decoding.
func BenchmarkDecodeFrame(b *testing.B) {
	frames := gameFrames(b)
	data := frames[len(frames)-1] // trump_turned with the first timer
	at := time.Unix(1, 0)
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			if _, err := DecodeFrame(data, at); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("full", func(b *testing.B) {
		for b.Loop() {
			if _, err := decodeFrame(data, at); err != nil {
				b.Fatal(err)
			}
		}
	})
}
