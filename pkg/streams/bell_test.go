package streams

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/redistest"
)

// encodeBell builds a bell's payload as appendLua does, for the fuzz
// targets' round trips.
func encodeBell(prev, id string, fields ...string) string {
	fs := make([]any, len(fields))
	for i, f := range fields {
		fs[i] = f
	}
	return bellVersion + prev + " " + id + " " + string(bellBody(fs))
}

// fieldsOf lists a message's fields as the pairs an XADD stored.
func fieldsOf(m Message) []string {
	var fs []string
	if m.Data != nil {
		fs = append(fs, FieldData, string(m.Data))
	}
	for k, v := range m.Header {
		fs = append(fs, k, v)
	}
	for _, k := range m.trace.Keys() {
		fs = append(fs, k, m.trace.Get(k))
	}
	return fs
}

// traceOf is m's trace fields, none for a message without.
func traceOf(m Message) traceFields {
	if m.trace == nil {
		return traceFields{}
	}
	return *m.trace
}

func sameMessage(a, b Message) bool {
	return a.Stream == b.Stream && a.ID == b.ID && string(a.Data) == string(b.Data) &&
		maps.Equal(a.Header, b.Header) && traceOf(a) == traceOf(b)
}

// The payload the append scripts publish is what parseBell reads: the
// entry's ID, the stream's previous last ID and every field, as XRANGE
// returns them, for the first entry of a stream, the next one, and each
// entry of a batch to one stream.
func TestBell_TheScriptsPayloadParsesToTheEntry(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := TableEvents("bell")
	sub := rdb.Subscribe(ctx, Bell(s))
	defer sub.Close()
	if _, err := sub.ReceiveTimeout(ctx, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	pub := NewPublisher(rdb, WithEntryBells())
	leases := NewLeases(rdb, time.Minute)
	lease, err := leases.Acquire(ctx, TableLease("bell"), "me")
	if err != nil {
		t.Fatal(err)
	}
	first, err := pub.Publish(ctx, Entry{Stream: s, Data: []byte("one\x00\xff"), Header: map[string]string{"type": "a b", "n": "12:3"}})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := pub.AppendFenced(ctx, lease, Entry{Stream: s, Data: []byte("two")}, Entry{Stream: s, Data: []byte{}})
	if err != nil {
		t.Fatal(err)
	}
	prevs := []string{"0-0", first, ids[0]}
	stored, err := rdb.XRange(ctx, s, "-", "+").Result()
	if err != nil || len(stored) != 3 {
		t.Fatalf("XRANGE: %v, %d entries", err, len(stored))
	}
	for i, xm := range stored {
		m, err := sub.ReceiveTimeout(ctx, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		msg, ok := m.(*redis.Message)
		if !ok {
			t.Fatalf("got %T, want a message", m)
		}
		b, ok := parseBell(msg.Channel, msg.Payload)
		if !ok {
			t.Fatalf("bell %d %q did not parse", i, msg.Payload)
		}
		want := toMessage(s, xm, 0)
		if b.prev != prevs[i] || !sameMessage(b.msg, want) {
			t.Fatalf("bell %d is %s after %s: %+v; want %s after %s: %+v", i, b.msg.ID, b.prev, b.msg, want.ID, prevs[i], want)
		}
	}
}

func TestParseBell_RejectsWhatItDoesNotUnderstand(t *testing.T) {
	for name, payload := range map[string]string{
		"a bare hint":           "",
		"another version":       "2 0-0 1-1 4:data1:x",
		"no ID":                 "1 0-0 ",
		"an ID without seq":     "1 0-0 17 4:data1:x",
		"a negative length":     "1 0-0 1-1 -4:data1:x",
		"a signed length":       "1 0-0 1-1 +4:data1:x",
		"a length past the end": "1 0-0 1-1 4:data9:x",
		"a field without value": "1 0-0 1-1 4:data",
		"no colon":              "1 0-0 1-1 4data",
	} {
		if b, ok := parseBell("s", payload); ok {
			t.Errorf("%s: %q parsed as %+v", name, payload, b)
		}
	}
	if b, ok := parseBell("s", "1 0-0 1-1 "); !ok || b.msg.ID != "1-1" || b.msg.Data != nil {
		t.Errorf("an entry without fields: %+v %v", b, ok)
	}
}

// Whatever a payload holds, parsing it never panics, and what parses
// encodes back to a payload that parses to the same entry.
func FuzzParseBell(f *testing.F) {
	f.Add(encodeBell("0-0", "1-1", FieldData, "x"))
	f.Add(encodeBell("1-1", "1700000000000-3", FieldData, "\x00\xff", "type", "Played", FieldTraceParent, "00-abc-def-01"))
	f.Add("1 0-0 1-1 4:data9:x")
	f.Add("1 1-1 2-2 ")
	f.Fuzz(func(t *testing.T, payload string) {
		b, ok := parseBell("s", payload)
		if !ok {
			return
		}
		if !validID(b.prev) || !validID(b.msg.ID) {
			t.Fatalf("parsed IDs %q %q", b.prev, b.msg.ID)
		}
		again, ok := parseBell("s", encodeBell(b.prev, b.msg.ID, fieldsOf(b.msg)...))
		if !ok || again.prev != b.prev || !sameMessage(again.msg, b.msg) {
			t.Fatalf("%q parsed to %+v, which encodes to %+v", payload, b, again)
		}
	})
}

// Any fields round-trip through a payload.
func FuzzBellRoundTrip(f *testing.F) {
	f.Add([]byte("data"), "type", "a:b 1")
	f.Add([]byte{}, "", "")
	f.Fuzz(func(t *testing.T, data []byte, k, v string) {
		if k == FieldData {
			k = "not-" + k
		}
		want := Message{Stream: "s", ID: "5-6"}
		fields := []string{FieldData, string(data), k, v}
		for i := 0; i < len(fields); i += 2 {
			want.setField(fields[i], fields[i+1])
		}
		b, ok := parseBell("s", encodeBell("1-2", "5-6", fields...))
		if !ok || b.prev != "1-2" || !sameMessage(b.msg, want) {
			t.Fatalf("fields %q came back as %+v (ok %v)", fields, b.msg, ok)
		}
	})
}

// BenchmarkParseBell is a gateway's decoding of one rich bell of a table's
// event stream: a 600-byte event, its packed legal moves and the trace
// context (traceparent and baggage, as a sampled move carries them).
func BenchmarkParseBell(b *testing.B) {
	payload := encodeBell("1796645863000-3", "1796645863001-0",
		FieldData, strings.Repeat("e", 600),
		"legal", strings.Repeat("l", 40),
		FieldTraceParent, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		FieldBaggage, "table=t1")
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := parseBell("pulka:{t:x}:ev", payload); !ok {
			b.Fatal("the bell does not parse")
		}
	}
}
