package wire

import (
	"encoding/json"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// Server message types (the "type" field of a server frame).
const (
	TypeWelcome     = "welcome"
	TypeJoined      = "joined"
	TypeUnjoined    = "unjoined"
	TypeEvent       = "event"
	TypeSheet       = "sheet"
	TypeLobbyView   = "lobby_view"
	TypeLobbyUpdate = "lobby_update"
	TypeAck         = "ack"
	TypePong        = "pong"
	TypeError       = "error"
)

// Proto messages are written with their .proto field names (snake_case, like
// the rest of the protocol) and enums by name.
var protoJSON = protojson.MarshalOptions{UseProtoNames: true}

// Player is who a connection is authenticated as.
type Player struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Guest bool   `json:"guest"`
}

// Welcome is the first frame after authentication.
func Welcome(p Player, now time.Time) []byte {
	return mustJSON(struct {
		Type       string `json:"type"`
		Player     Player `json:"player"`
		ServerTime string `json:"server_time"`
	}{TypeWelcome, p, now.UTC().Format(time.RFC3339Nano)})
}

// Joined answers a join once the replay is sent and live events follow.
// Seat is the player's seat at the table, or nil when they only watch.
func Joined(table, ref string, seat *uint32, replayed int, trimmed bool) []byte {
	return mustJSON(struct {
		Type     string  `json:"type"`
		Ref      string  `json:"ref,omitempty"`
		Table    string  `json:"table"`
		Seat     *uint32 `json:"seat"`
		Replayed int     `json:"replayed"`
		Trimmed  bool    `json:"history_trimmed,omitempty"`
	}{TypeJoined, ref, table, seat, replayed, trimmed})
}

// Unjoined answers an unjoin.
func Unjoined(table, ref string) []byte {
	return mustJSON(struct {
		Type  string `json:"type"`
		Ref   string `json:"ref,omitempty"`
		Table string `json:"table"`
	}{TypeUnjoined, ref, table})
}

// Ack says a table command was written to the table's command stream (not
// that the table accepted it: the events, or a move_rejected, say that).
func Ack(ref, cmd string) []byte {
	return mustJSON(struct {
		Type string `json:"type"`
		Ref  string `json:"ref,omitempty"`
		Cmd  string `json:"cmd"`
	}{TypeAck, ref, cmd})
}

// Pong answers a ping.
func Pong(ref string, now time.Time) []byte {
	return mustJSON(struct {
		Type       string `json:"type"`
		Ref        string `json:"ref,omitempty"`
		ServerTime string `json:"server_time"`
	}{TypePong, ref, now.UTC().Format(time.RFC3339Nano)})
}

// ErrorFrame is {"type":"error","code":…,"message":…,"ref":…}.
func ErrorFrame(code, message, ref string) []byte {
	return mustJSON(struct {
		Type    string `json:"type"`
		Code    string `json:"code"`
		Message string `json:"message"`
		Ref     string `json:"ref,omitempty"`
	}{TypeError, code, message, ref})
}

// CodeTableGone says the table no longer exists (Redis lost it, or its finished
// game expired). Sent as a TableError naming the table, followed by an
// unjoined; also the code of a join of such a table.
const CodeTableGone = "table_gone"

// TableError is an error about one table rather than about a frame the
// client sent: {"type":"error","code":…,"message":…,"table":…}.
func TableError(table, code, message string) []byte {
	return mustJSON(struct {
		Type    string `json:"type"`
		Code    string `json:"code"`
		Message string `json:"message"`
		Table   string `json:"table"`
	}{TypeError, code, message, table})
}

// Event encodes one table event as the frame every permitted client gets:
// {"type":"event","table":…,"id":<stream id>,"event":{…}}. Fields that only
// matter between services (trace context, lease epoch, command entry id) are
// left out; ev itself is not changed.
//
// The event is protojson's encoding of ev. The events of every move and hand
// are written by a hand-written encoder that gives the same JSON without
// protojson's reflection (eventjson.go); every other event, and any event
// that encoder is not sure of, goes through protojson itself.
func Event(table, id string, ev *tablev1.Event) ([]byte, error) {
	b := appendEventEnvelope(make([]byte, 0, eventFrameSize(table, id, ev)), table, id)
	if fast, ok := appendEventJSON(b, ev); ok {
		return append(fast, '}'), nil
	}
	b, err := appendEventProtoJSON(b, ev)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// eventFrameSize is a capacity that fits the frame of a move's event (with
// its timer), so that the frame is one allocation and is not copied as it
// grows; only the larger, rarer events outgrow it.
func eventFrameSize(table, id string, ev *tablev1.Event) int {
	return 384 + len(table) + len(id) + len(ev.GetTableId()) + len(ev.GetGameId()) + len(ev.GetCausedBy())
}

// appendEventEnvelope appends an event frame up to the event's body.
func appendEventEnvelope(b []byte, table, id string) []byte {
	return appendEnvelope(b, TypeEvent, table, id, "event")
}

// appendEnvelope appends a table's frame up to its body:
// {"type":<typ>,"table":<table>,"id":<id>,"<body>":. The envelope is written
// by hand: every event and sheet frame passes here, and json.Marshal would
// re-scan and compact the body it already has. typ and body are constants
// that need no escaping.
func appendEnvelope(b []byte, typ, table, id, body string) []byte {
	b = append(b, `{"type":"`...)
	b = append(b, typ...)
	b = append(b, `","table":`...)
	b = appendJSONString(b, table)
	b = append(b, `,"id":`...)
	b = appendJSONString(b, id)
	b = append(b, `,"`...)
	b = append(b, body...)
	return append(b, `":`...)
}

// appendEventProtoJSON appends ev's body with protojson, without the fields
// Event leaves out.
func appendEventProtoJSON(b []byte, ev *tablev1.Event) ([]byte, error) {
	out := ev
	if ev.GetTrace() != nil || ev.GetEpoch() != 0 || ev.GetCommandEntryId() != "" {
		out = proto.CloneOf(ev)
		out.Trace, out.Epoch, out.CommandEntryId = nil, 0, ""
	}
	b, err := protoJSON.MarshalAppend(b, out)
	if err != nil {
		return nil, fmt.Errorf("wire: encode event: %w", err)
	}
	return b, nil
}

// appendJSONString appends s as a JSON string, as encoding/json writes it.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // rare: ids are plain ASCII
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// Sheet encodes a score-sheet update of a table's game as the frame every
// client of the table gets: {"type":"sheet","table":…,"id":<stream id>,
// "update":{…}}. The trace context stays between services; u itself is not
// changed.
//
// The update is protojson's encoding of u. It is written by a hand-written
// encoder that gives the same JSON without protojson's reflection
// (sheetjson.go): the whole sheet goes to every client after every hand. An
// update that encoder is not sure of goes through protojson itself.
func Sheet(table, id string, u *scoringv1.SheetUpdate) ([]byte, error) {
	b := appendEnvelope(make([]byte, 0, sheetFrameSize(table, id, u)), TypeSheet, table, id, "update")
	if fast, ok := appendSheetJSON(b, u); ok {
		return append(fast, '}'), nil
	}
	b, err := appendSheetProtoJSON(b, u)
	if err != nil {
		return nil, err
	}
	return append(b, '}'), nil
}

// sheetFrameSize is a capacity that fits the frame of a real sheet (a
// little more than its longest rows and names need), so that the frame is
// one allocation and is not copied as it grows. It only reads lengths.
func sheetFrameSize(table, id string, u *scoringv1.SheetUpdate) int {
	s := u.GetSheet()
	n := 384 + len(table) + len(id) + len(s.GetTableId()) + len(s.GetGameId()) + 64*len(s.GetTotals())
	for _, p := range s.GetPlayers() {
		n += 48 + len(p.GetPlayerId()) + len(p.GetDisplayName())
	}
	for _, p := range s.GetPulkas() {
		n += 32 + 72*len(p.GetTotals())
		for _, h := range p.GetHands() {
			n += 32 + 80*len(h.GetCells())
		}
	}
	return n
}

// appendSheetProtoJSON appends u's body with protojson, without the trace.
func appendSheetProtoJSON(b []byte, u *scoringv1.SheetUpdate) ([]byte, error) {
	out := u
	if u.GetTrace() != nil {
		out = proto.CloneOf(u)
		out.Trace = nil
	}
	b, err := protoJSON.MarshalAppend(b, out)
	if err != nil {
		return nil, fmt.Errorf("wire: encode sheet: %w", err)
	}
	return b, nil
}

// LobbyView encodes the whole lobby list (sent when a client starts watching).
func LobbyView(v *lobbyv1.LobbyView) ([]byte, error) {
	body, err := protoJSON.Marshal(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		Type string          `json:"type"`
		View json.RawMessage `json:"view"`
	}{TypeLobbyView, body})
}

// LobbyUpdate encodes one change of the lobby list.
func LobbyUpdate(u *lobbyv1.LobbyUpdate) ([]byte, error) {
	body, err := protoJSON.Marshal(u)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		Type   string          `json:"type"`
		Update json.RawMessage `json:"update"`
	}{TypeLobbyUpdate, body})
}

// ProtoJSON writes a proto message the way every frame does (for the HTTP API).
func ProtoJSON(m proto.Message) (json.RawMessage, error) { return protoJSON.Marshal(m) }

// mustJSON marshals structs of plain strings, numbers and pointers, which
// cannot fail; a failure would be a programming error caught by the tests,
// so it degrades to an internal-error frame instead of a panic.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(`{"type":"error","code":"internal","message":"encoding failed"}`)
	}
	return b
}
