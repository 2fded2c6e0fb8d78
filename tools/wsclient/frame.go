package wsclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/wire"
)

// TypeReconnected is the type of a frame the client makes itself (the
// gateway never sends it): the connection dropped and was dialled again,
// and every joined table was joined again from its last event id. Err says
// why it dropped.
const TypeReconnected = "reconnected"

// Frame is one decoded server frame. Type is a wire.Type… constant (or
// TypeReconnected); which other fields are set depends on it.
type Frame struct {
	Type string
	// Ref echoes the client's ref (ack, joined, unjoined, pong, error).
	Ref string
	// Table is the table of a joined, unjoined, event or sheet frame.
	Table string
	// ID is the stream id of an event or sheet frame: what a later join
	// passes as its last event id.
	ID string
	// Cmd is the full command id of an ack (<player id>/<key>).
	Cmd string

	Event       *tablev1.Event         // event
	Sheet       *scoringv1.SheetUpdate // sheet
	LobbyView   *lobbyv1.LobbyView     // lobby_view
	LobbyUpdate *lobbyv1.LobbyUpdate   // lobby_update
	Player      *wire.Player           // welcome

	// Seat is the player's seat at a joined table (nil: watching).
	Seat *uint32
	// Replayed counts the past events a join sent; HistoryTrimmed says that
	// the events after the given id were no longer there.
	Replayed       int
	HistoryTrimmed bool

	// Err is an error frame's code and message, or why a reconnected
	// connection dropped.
	Err error
	// ServerTime is the gateway's clock (welcome, pong).
	ServerTime time.Time
	// At is when this client read the frame (for latency measurements).
	At time.Time
}

// frameJSON is every field a server frame can have.
type frameJSON struct {
	Type       string          `json:"type"`
	Ref        string          `json:"ref"`
	Table      string          `json:"table"`
	ID         string          `json:"id"`
	Cmd        string          `json:"cmd"`
	Event      json.RawMessage `json:"event"`
	Update     json.RawMessage `json:"update"`
	View       json.RawMessage `json:"view"`
	Player     *wire.Player    `json:"player"`
	Seat       *uint32         `json:"seat"`
	Replayed   int             `json:"replayed"`
	Trimmed    bool            `json:"history_trimmed"`
	Code       string          `json:"code"`
	Message    string          `json:"message"`
	ServerTime string          `json:"server_time"`
}

// Decoding ignores fields a newer gateway may add.
var protoIn = protojson.UnmarshalOptions{DiscardUnknown: true}

// DecodeFrame decodes one server frame read at the time at.
func DecodeFrame(data []byte, at time.Time) (Frame, error) {
	if f, ok := decodeEventFrame(data, at); ok {
		return f, nil
	}
	if f, ok := decodeSheetFrame(data, at); ok {
		return f, nil
	}
	if f, ok := decodeAckFrame(data, at); ok {
		return f, nil
	}
	return decodeFrame(data, at)
}

// decodeFrame is DecodeFrame for any frame: a generic JSON pass over the
// envelope, then protojson for its message.
func decodeFrame(data []byte, at time.Time) (Frame, error) {
	var j frameJSON
	if err := json.Unmarshal(data, &j); err != nil {
		return Frame{}, fmt.Errorf("wsclient: frame: %w", err)
	}
	f := Frame{Type: j.Type, Ref: j.Ref, Table: j.Table, ID: j.ID, Cmd: j.Cmd, Player: j.Player,
		Seat: j.Seat, Replayed: j.Replayed, HistoryTrimmed: j.Trimmed, At: at}
	if j.ServerTime != "" {
		if t, err := time.Parse(time.RFC3339Nano, j.ServerTime); err == nil {
			f.ServerTime = t
		}
	}
	var err error
	switch j.Type {
	case wire.TypeEvent:
		f.Event = &tablev1.Event{}
		err = protoIn.Unmarshal(j.Event, f.Event)
	case wire.TypeSheet:
		f.Sheet = &scoringv1.SheetUpdate{}
		err = protoIn.Unmarshal(j.Update, f.Sheet)
	case wire.TypeLobbyView:
		f.LobbyView = &lobbyv1.LobbyView{}
		err = protoIn.Unmarshal(j.View, f.LobbyView)
	case wire.TypeLobbyUpdate:
		f.LobbyUpdate = &lobbyv1.LobbyUpdate{}
		err = protoIn.Unmarshal(j.Update, f.LobbyUpdate)
	case wire.TypeError:
		f.Err = &wire.Error{Code: j.Code, Message: j.Message}
	case "":
		return Frame{}, fmt.Errorf("wsclient: frame without a type")
	}
	if err != nil {
		return Frame{}, fmt.Errorf("wsclient: %s frame: %w", j.Type, err)
	}
	return f, nil
}

var (
	eventFrameHead = []byte(`{"type":"` + wire.TypeEvent + `","table":"`)
	eventFrameBody = []byte(`,"event":`)
	sheetFrameHead = []byte(`{"type":"` + wire.TypeSheet + `","table":"`)
	sheetFrameBody = []byte(`,"update":`)
	frameID        = []byte(`,"id":"`)
)

// decodeEventFrame decodes an event frame laid out exactly as wire.Event
// writes it — type, table, id, event, in that order, plain ASCII ids —
// without the generic JSON pass, which scans the whole event once more
// before the body's own decoding (an eighth of a load generator's CPU).
// The body goes to unmarshalEvent: by hand in the gateway's layout, else
// protojson (JSON only: asInFull). ok is false for any other frame, or
// anything unexpected, which decodeFrame then decodes as usual; what this
// accepts decodes the same either way (FuzzDecodeEventFrame).
func decodeEventFrame(data []byte, at time.Time) (f Frame, ok bool) {
	table, id, body, ok := cutFrame(data, eventFrameHead, eventFrameBody)
	if !ok {
		return Frame{}, false
	}
	ev, byHand, err := unmarshalEvent(body)
	if err != nil || !asInFull(body, byHand) {
		return Frame{}, false
	}
	return Frame{Type: wire.TypeEvent, Table: table, ID: id, Event: ev, At: at}, true
}

// decodeSheetFrame decodes a sheet frame laid out as wire.Sheet writes it —
// type, table, id, update, in that order, plain ASCII ids — as
// decodeEventFrame does event frames: the generic pass would scan the whole
// sheet once more. The update goes to unmarshalSheet (by hand in the
// gateway's layout, else protojson, JSON only: asInFull); anything else is
// decodeFrame's.
func decodeSheetFrame(data []byte, at time.Time) (f Frame, ok bool) {
	table, id, body, ok := cutFrame(data, sheetFrameHead, sheetFrameBody)
	if !ok {
		return Frame{}, false
	}
	u, byHand, err := unmarshalSheet(body)
	if err != nil || !asInFull(body, byHand) {
		return Frame{}, false
	}
	return Frame{Type: wire.TypeSheet, Table: table, ID: id, Sheet: u, At: at}, true
}

// cutFrame cuts a frame laid out as wire's envelopes are — head (the type
// and the table key), the table, the id, bodyKey, the body, the closing
// brace — into its table, id and body.
func cutFrame(data, head, bodyKey []byte) (table, id string, body []byte, ok bool) {
	table, rest, ok := cutKeyString(data, head)
	if !ok {
		return "", "", nil, false
	}
	if id, rest, ok = cutKeyString(rest, frameID); !ok {
		return "", "", nil, false
	}
	if rest, ok = bytes.CutPrefix(rest, bodyKey); !ok {
		return "", "", nil, false
	}
	body, ok = bytes.CutSuffix(rest, []byte("}"))
	return table, id, body, ok
}

// asInFull reports whether a fast path may take a frame whose body it
// decoded: always when a hand decoder read it (they read only JSON), and
// when protojson did, only if encoding/json reads the body as JSON too.
// protojson takes a little more than JSON (a number with an empty
// exponent, 1e, in an unknown field), which decodeFrame's generic pass
// refuses, and a fast path must not take a frame that DecodeFrame refused
// without it (FuzzDecodeEventFrame). Only the rare bodies that fall back
// pay for the check.
func asInFull(body []byte, byHand bool) bool {
	return byHand || json.Valid(body)
}

var (
	ackFrameHead = []byte(`{"type":"` + wire.TypeAck + `",`)
	ackFrameRef  = []byte(`"ref":"`)
	ackFrameCmd  = []byte(`"cmd":"`)
)

// decodeAckFrame decodes an ack laid out as wire.Ack writes it (type, the
// ref if any, cmd), as decodeEventFrame does event frames: one ack a move.
func decodeAckFrame(data []byte, at time.Time) (f Frame, ok bool) {
	rest, ok := bytes.CutPrefix(data, ackFrameHead)
	if !ok {
		return Frame{}, false
	}
	ref, r, hasRef := cutKeyString(rest, ackFrameRef)
	if hasRef {
		if rest, ok = bytes.CutPrefix(r, []byte(",")); !ok {
			return Frame{}, false
		}
	}
	cmd, rest, ok := cutKeyString(rest, ackFrameCmd)
	if !ok || string(rest) != "}" {
		return Frame{}, false
	}
	return Frame{Type: wire.TypeAck, Ref: ref, Cmd: cmd, At: at}, true
}

// cutKeyString cuts head (up to a string value's opening quote) from b,
// then the plain string after it (cutPlainString).
func cutKeyString(b, head []byte) (s string, rest []byte, ok bool) {
	if rest, ok = bytes.CutPrefix(b, head); !ok {
		return "", nil, false
	}
	return cutPlainString(rest)
}

// cutPlainString returns the JSON string at the start of b (its opening
// quote already consumed) when it is printable ASCII without escapes, and
// what follows its closing quote.
func cutPlainString(b []byte) (s string, rest []byte, ok bool) {
	for i, c := range b {
		switch {
		case c == '"':
			return string(b[:i]), b[i+1:], true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return "", nil, false
		}
	}
	return "", nil, false
}
