package streams

import (
	"strings"

	"github.com/redis/go-redis/v9"
)

// Field names stored in every entry besides the Header fields.
const (
	FieldData        = "data"
	FieldTraceParent = "traceparent"
	FieldTraceState  = "tracestate"
	FieldBaggage     = "baggage"
)

// Entry is one record to append to a stream.
type Entry struct {
	Stream string
	// Data is the payload (usually a serialised protobuf message).
	Data []byte
	// Header holds extra string fields, e.g. a message type or an
	// idempotency key. The names above are reserved.
	Header map[string]string
}

// Message is one entry read from a stream.
type Message struct {
	Stream string
	ID     string
	Data   []byte
	Header map[string]string
	// Deliveries counts how many times a consumer group handed this entry
	// out (1 on the first delivery). It is 0 for fan-out reads.
	Deliveries int64

	trace *traceFields // nil: none
}

// Key is "<stream>/<id>", a natural dedupe key for effects of this entry.
func (m Message) Key() string { return m.Stream + "/" + m.ID }

// appendFields appends an entry's field/value pairs to args (an XADD's, or
// an appending script's ARGV): its data, its header, then the trace fields
// carrier holds (nil: none).
func appendFields(args []any, e Entry, carrier *injectCarrier) []any {
	args = append(args, FieldData, e.Data)
	for k, v := range e.Header {
		args = append(args, k, v)
	}
	if carrier != nil {
		for i := 0; i+1 < len(carrier.pairs); i += 2 {
			args = append(args, carrier.pairs[i], carrier.pairs[i+1])
		}
	}
	return args
}

// fieldCount is how many strings appendFields appends for e.
func fieldCount(e Entry, carrier *injectCarrier) int {
	n := 2 + 2*len(e.Header)
	if carrier != nil {
		n += len(carrier.pairs) &^ 1
	}
	return n
}

// toMessage converts a go-redis entry, separating the trace fields.
func toMessage(stream string, xm redis.XMessage, deliveries int64) Message {
	m := Message{Stream: stream, ID: xm.ID, Deliveries: deliveries}
	for k, v := range xm.Values {
		s, _ := v.(string)
		m.setField(k, s)
	}
	return m
}

// setField stores one field of the entry: its payload, a trace field or a
// header.
func (m *Message) setField(k, v string) {
	switch k {
	case FieldData:
		m.Data = []byte(v)
	case FieldTraceParent, FieldTraceState, FieldBaggage:
		if m.trace == nil {
			m.trace = &traceFields{}
		}
		m.trace.Set(k, v)
	default:
		if m.Header == nil {
			m.Header = make(map[string]string, 2)
		}
		m.Header[k] = v
	}
}

// injectCarrier collects the fields a propagator injects.
type injectCarrier struct{ pairs []string }

func (c *injectCarrier) Get(key string) string {
	for i := 0; i+1 < len(c.pairs); i += 2 {
		if strings.EqualFold(c.pairs[i], key) {
			return c.pairs[i+1]
		}
	}
	return ""
}

func (c *injectCarrier) Set(key, value string) { c.pairs = append(c.pairs, key, value) }

func (c *injectCarrier) Keys() []string {
	keys := make([]string, 0, len(c.pairs)/2)
	for i := 0; i < len(c.pairs); i += 2 {
		keys = append(keys, c.pairs[i])
	}
	return keys
}

// traceFields are the trace-context fields of a message (FieldTraceParent,
// FieldTraceState, FieldBaggage), read by a propagator through its
// TextMapCarrier methods. Three strings rather than a map: a map was the
// largest allocation of every message a gateway received. A message holds
// a pointer, so handing it to a propagator does not move the message to
// the heap.
type traceFields struct{ parent, state, baggage string }

// field is where the value of the trace field named k is kept; nil for a
// name that is not one.
func (t *traceFields) field(k string) *string {
	switch k {
	case FieldTraceParent:
		return &t.parent
	case FieldTraceState:
		return &t.state
	case FieldBaggage:
		return &t.baggage
	}
	return nil
}

// empty says whether t holds no field (nil: a message without any).
func (t *traceFields) empty() bool { return t == nil || *t == traceFields{} }

func (t *traceFields) Get(key string) string {
	if t == nil {
		return ""
	}
	if f := t.field(key); f != nil {
		return *f
	}
	return ""
}

func (t *traceFields) Set(key, value string) {
	if f := t.field(key); f != nil {
		*f = value
	}
}

// Keys are the names of the fields the message has.
func (t *traceFields) Keys() []string {
	if t == nil {
		return nil
	}
	keys := make([]string, 0, 3)
	for _, k := range [...]string{FieldTraceParent, FieldTraceState, FieldBaggage} {
		if *t.field(k) != "" {
			keys = append(keys, k)
		}
	}
	return keys
}
