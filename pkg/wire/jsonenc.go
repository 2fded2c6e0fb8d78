package wire

// This file is the core of the hand-written JSON encoders of the frames the
// gateway sends most: table events (eventjson.go) and score sheets
// (sheetjson.go). protojson finds every field through reflection, and under
// load that was a large share of the gateway's CPU; these messages are
// small and fixed, so writing them field by field is cheap and easy to
// check.
//
// The output is protojson's (UseProtoNames) in meaning: the same keys,
// values and JSON types, with keys in protojson's order (declaration order,
// which in these protos is field-number order), only laid out compactly.
// Strings are escaped exactly as protojson escapes them. Whenever an encoder
// meets something it does not cover or is not sure to write exactly as
// protojson would (an enum number the descriptor does not name, a string
// that is not valid UTF-8, a timestamp or duration out of range, a nil
// element), it gives up and the caller falls back to protojson for the whole
// message, so protojson stays the definition of the format. The tests
// compare the two on every message of many real games and under go test
// -fuzz.

import (
	"encoding/base64"
	"strconv"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// enumNames lists the names of an enum by number, from its generated map
// (which comes from the descriptor, as protojson's names do); "" where a
// number has no name.
func enumNames(byNumber map[int32]string) []string {
	n := 0
	for k := range byNumber {
		if int(k) >= n {
			n = int(k) + 1
		}
	}
	out := make([]string, n)
	for k, name := range byNumber {
		if k >= 0 {
			out[k] = name
		}
	}
	return out
}

// jsonEncoder appends one JSON object tree. Every field writer appends
// `"key":value,` (or nothing, for a value protojson omits) and end replaces
// the object's trailing comma by its closing brace. The first failure sets
// ok to false; later writes are harmless and the result is thrown away.
type jsonEncoder struct {
	b  []byte
	ok bool
}

func (e *jsonEncoder) fail() { e.ok = false }

func (e *jsonEncoder) key(k string) { e.b = appendKey(e.b, k) }

// appendKey appends `"k":`. The field writers build each field in a local
// slice and store it in e.b once: e.b is behind a pointer, so every store
// to it pays the GC's write barrier while a collection runs, and a sheet has
// hundreds of fields.
func appendKey(b []byte, k string) []byte {
	b = append(b, '"')
	b = append(b, k...)
	return append(b, '"', ':')
}

// beginRoot opens the top-level object and endRoot closes it, without the
// comma that follows every nested value.
func (e *jsonEncoder) beginRoot() { e.b = append(e.b, '{') }

func (e *jsonEncoder) endRoot() {
	e.end()
	e.b = e.b[:len(e.b)-1]
}

// begin opens the object of message field k; a nil message is omitted by
// protojson, so the callers only begin the ones that are set.
func (e *jsonEncoder) begin(k string) { e.b = append(appendKey(e.b, k), '{') }

func (e *jsonEncoder) end() {
	b := e.b
	if n := len(b); b[n-1] == ',' {
		b[n-1] = '}'
	} else {
		b = append(b, '}') // an empty message: {}
	}
	b = append(b, ',')
	e.b = b
}

// beginMember begins a oneof member's object when it is set and fails
// otherwise: a member holding a nil message cannot come from the wire, and
// what protojson makes of it is its business.
func (e *jsonEncoder) beginMember(k string, set bool) bool {
	if !set {
		e.fail()
		return false
	}
	e.begin(k)
	return true
}

// beginArray opens the list of repeated field k; the callers write its
// elements, each followed by a comma, and close it with endArray. protojson
// omits an empty list, so the callers only begin non-empty ones. Each list
// is written out by its caller, not by a helper taking a func that writes an
// element: passing the encoder to a func value moves it to the heap.
func (e *jsonEncoder) beginArray(k string) { e.b = append(appendKey(e.b, k), '[') }

func (e *jsonEncoder) endArray() {
	e.b[len(e.b)-1] = ']' // the last element's comma
	e.b = append(e.b, ',')
}

// beginElement opens a message element of a list. A nil element fails: it
// cannot come from the wire, and what protojson makes of it is its business.
func (e *jsonEncoder) beginElement(set bool) bool {
	if !set {
		e.fail()
		return false
	}
	e.b = append(e.b, '{')
	return true
}

// The proto3 scalars: omitted when zero, 64-bit integers as quoted decimals.

func (e *jsonEncoder) uint32(k string, v uint32) {
	if v != 0 {
		b := appendKey(e.b, k)
		b = strconv.AppendUint(b, uint64(v), 10)
		b = append(b, ',')
		e.b = b
	}
}

// optionalUint32 writes a proto3 optional field whenever it is set, even to
// 0, as protojson does.
func (e *jsonEncoder) optionalUint32(k string, v *uint32) {
	if v != nil {
		b := appendKey(e.b, k)
		b = strconv.AppendUint(b, uint64(*v), 10)
		b = append(b, ',')
		e.b = b
	}
}

func (e *jsonEncoder) uint64(k string, v uint64) {
	if v != 0 {
		b := append(appendKey(e.b, k), '"')
		b = strconv.AppendUint(b, v, 10)
		b = append(b, '"', ',')
		e.b = b
	}
}

func (e *jsonEncoder) int64(k string, v int64) {
	if v != 0 {
		b := append(appendKey(e.b, k), '"')
		b = strconv.AppendInt(b, v, 10)
		b = append(b, '"', ',')
		e.b = b
	}
}

func (e *jsonEncoder) bool(k string, v bool) {
	if v {
		e.b = append(appendKey(e.b, k), "true,"...)
	}
}

func (e *jsonEncoder) string(k, s string) {
	if s != "" {
		b, ok := appendProtoString(appendKey(e.b, k), s)
		if !ok {
			e.fail()
			return
		}
		b = append(b, ',')
		e.b = b
	}
}

// hexDigits are the digits protojson writes \u escapes with.
const hexDigits = "0123456789abcdef"

// appendProtoString appends s byte for byte as protojson writes a string:
// valid UTF-8 as is (no escaping of non-ASCII, '<', '>', '&' or U+2028),
// '"' and '\' escaped by a backslash, control characters as \b, \f, \n, \r,
// \t or \u00xx in lower case. ok is false for invalid UTF-8, which
// protojson refuses with an error that the caller then returns. Display
// names are chosen by people and rarely ASCII, which is why this does not
// leave non-ASCII to protojson.
func appendProtoString(b []byte, s string) (_ []byte, ok bool) {
	b = append(b, '"')
	done := 0 // s[:done] is written
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			// A lead byte: DecodeRuneInString reads 1 byte only for
			// invalid UTF-8 (RuneError), which is what protojson checks.
			_, n := utf8.DecodeRuneInString(s[i:])
			if n == 1 {
				return b, false
			}
			i += n
			continue
		}
		if c >= ' ' && c != '"' && c != '\\' {
			i++
			continue
		}
		b = append(b, s[done:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		i++
		done = i
	}
	b = append(b, s[done:]...)
	return append(b, '"'), true
}

// enum writes an enum by name; zero is omitted like any proto3 scalar.
func (e *jsonEncoder) enum(k string, v int32, names []string) {
	if v != 0 {
		name, ok := enumName(v, names)
		if !ok {
			e.fail()
			return
		}
		b := append(appendKey(e.b, k), '"')
		b = append(b, name...)
		b = append(b, '"', ',')
		e.b = b
	}
}

// enumValue writes v's name, as an element of a list.
func (e *jsonEncoder) enumValue(v int32, names []string) {
	name, ok := enumName(v, names)
	if !ok {
		e.fail()
		return
	}
	b := e.b
	b = append(b, '"')
	b = append(b, name...)
	b = append(b, '"')
	e.b = b
}

// enumName is v's name. ok is false for a number the descriptor does not
// name: protojson writes it as a bare number, which is rare enough to leave
// to it.
func enumName(v int32, names []string) (_ string, ok bool) {
	if v < 0 || int(v) >= len(names) || names[v] == "" {
		return "", false
	}
	return names[v], true
}

func (e *jsonEncoder) uint32s(k string, vs []uint32) {
	if len(vs) == 0 {
		return
	}
	e.beginArray(k)
	for _, v := range vs {
		e.b = strconv.AppendUint(e.b, uint64(v), 10)
		e.b = append(e.b, ',')
	}
	e.endArray()
}

// bytes writes a bytes field as protojson does: standard base64 with
// padding, omitted when empty.
func (e *jsonEncoder) bytes(k string, v []byte) {
	if len(v) != 0 {
		b := append(appendKey(e.b, k), '"')
		b = base64.StdEncoding.AppendEncode(b, v)
		b = append(b, '"', ',')
		e.b = b
	}
}

// bytesList writes a repeated bytes field: every element, empty ones as "".
func (e *jsonEncoder) bytesList(k string, vs [][]byte) {
	if len(vs) == 0 {
		return
	}
	e.beginArray(k)
	for _, v := range vs {
		e.b = append(e.b, '"')
		e.b = base64.StdEncoding.AppendEncode(e.b, v)
		e.b = append(e.b, '"', ',')
	}
	e.endArray()
}

// The range protojson accepts for google.protobuf.Timestamp: years 1 to 9999.
const (
	minTimestampSeconds = -62135596800
	maxTimestampSeconds = 253402300799
)

// timestamp writes a google.protobuf.Timestamp as protojson does: RFC 3339 in
// UTC with 0, 3, 6 or 9 fractional digits. A timestamp protojson rejects
// fails, so that the caller gets protojson's error.
func (e *jsonEncoder) timestamp(k string, ts *timestamppb.Timestamp) {
	if ts == nil {
		return
	}
	secs, nanos := ts.GetSeconds(), ts.GetNanos()
	if secs < minTimestampSeconds || secs > maxTimestampSeconds || nanos < 0 || nanos > 999_999_999 {
		e.fail()
		return
	}
	// What protojson writes with Format("2006-01-02T15:04:05.000000000") and
	// then trimming "000" twice and ".000", written digit by digit:
	// AppendFormat parses its layout on every call, and it was half the
	// time of a move's event.
	t := time.Unix(secs, int64(nanos)).UTC()
	year, month, day := t.Date()
	hour, minute, second := t.Clock()
	e.key(k)
	e.b = append(e.b, '"')
	e.b = appendDigits(e.b, year, 4)
	e.b = append(e.b, '-')
	e.b = appendDigits(e.b, int(month), 2)
	e.b = append(e.b, '-')
	e.b = appendDigits(e.b, day, 2)
	e.b = append(e.b, 'T')
	e.b = appendDigits(e.b, hour, 2)
	e.b = append(e.b, ':')
	e.b = appendDigits(e.b, minute, 2)
	e.b = append(e.b, ':')
	e.b = appendDigits(e.b, second, 2)
	e.b = appendFraction(e.b, nanos)
	e.b = append(e.b, `Z",`...)
}

// The range protojson accepts for google.protobuf.Duration: ±10,000 years.
const maxDurationSeconds = 315_576_000_000

// duration writes a google.protobuf.Duration as protojson does: seconds
// with 0, 3, 6 or 9 fractional digits and an "s", signed when negative. A
// duration protojson rejects (out of range, or seconds and nanos of
// different signs) fails, so that the caller gets protojson's error.
func (e *jsonEncoder) duration(k string, d *durationpb.Duration) {
	if d == nil {
		return
	}
	secs, nanos := d.GetSeconds(), d.GetNanos()
	if secs < -maxDurationSeconds || secs > maxDurationSeconds || nanos < -999_999_999 || nanos > 999_999_999 ||
		(secs > 0 && nanos < 0) || (secs < 0 && nanos > 0) {
		e.fail()
		return
	}
	e.key(k)
	e.b = append(e.b, '"')
	if secs < 0 || nanos < 0 {
		e.b = append(e.b, '-')
		secs, nanos = -secs, -nanos
	}
	e.b = strconv.AppendInt(e.b, secs, 10)
	e.b = appendFraction(e.b, nanos)
	e.b = append(e.b, `s",`...)
}

// appendFraction appends nanos (0..999,999,999) as protojson writes the
// fraction of a timestamp or duration: "%09d" after a dot, with "000"
// trimmed twice and then ".000", so no digits, or 3, 6 or 9 of them.
func appendFraction(b []byte, nanos int32) []byte {
	switch {
	case nanos == 0:
		return b
	case nanos%1_000_000 == 0:
		return appendDigits(append(b, '.'), int(nanos/1_000_000), 3)
	case nanos%1_000 == 0:
		return appendDigits(append(b, '.'), int(nanos/1_000), 6)
	default:
		return appendDigits(append(b, '.'), int(nanos), 9)
	}
}

// appendDigits appends v (0 <= v < 10^width, width <= 9) as exactly width
// decimal digits, zeros in front.
func appendDigits(b []byte, v, width int) []byte {
	var d [9]byte
	u := uint(v)
	for i := width - 1; i >= 0; i-- {
		d[i] = byte('0' + u%10)
		u /= 10
	}
	return append(b, d[:width]...)
}
