package wire

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	walletv1 "github.com/pulka/pulka/pkg/gen/pulka/wallet/v1"
	"github.com/pulka/pulka/pkg/payout"
)

// Encoding is how a connection's frames are written: binary protobuf, or
// protobuf's JSON mapping (docs/protocol.md, "Encodings").
type Encoding uint8

const (
	// Binary is one ServerFrame or ClientFrame per binary WebSocket
	// message, in protobuf's binary encoding: what the shipped clients use.
	Binary Encoding = iota
	// JSON is one frame per text message in protobuf's JSON mapping with
	// the .proto field names: for people, curl-like tools and debugging.
	JSON
)

// The WebSocket subprotocols that choose a connection's encoding. A client
// that offers none gets JSON.
const (
	SubprotocolProto = "pulka.v1.proto"
	SubprotocolJSON  = "pulka.v1.json"
)

// Subprotocols are the subprotocols the gateway accepts, the one it prefers
// first.
func Subprotocols() []string { return []string{SubprotocolProto, SubprotocolJSON} }

// EncodingOf is the encoding of a connection that agreed on subprotocol
// ("" when the client offered none).
func EncodingOf(subprotocol string) Encoding {
	if subprotocol == SubprotocolProto {
		return Binary
	}
	return JSON
}

func (e Encoding) String() string {
	if e == JSON {
		return "json"
	}
	return "proto"
}

// Server frame types: the name of the member a ServerFrame carries, as Go
// clients and logs name frames.
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
	TypeBalance     = "balance"
)

// ServerFrameType names the member of a server frame (Type…), "" when none
// this package knows is set.
func ServerFrameType(f *gatewayv1.ServerFrame) string {
	switch f.GetFrame().(type) {
	case *gatewayv1.ServerFrame_Welcome:
		return TypeWelcome
	case *gatewayv1.ServerFrame_Joined:
		return TypeJoined
	case *gatewayv1.ServerFrame_Unjoined:
		return TypeUnjoined
	case *gatewayv1.ServerFrame_Event:
		return TypeEvent
	case *gatewayv1.ServerFrame_Sheet:
		return TypeSheet
	case *gatewayv1.ServerFrame_LobbyView:
		return TypeLobbyView
	case *gatewayv1.ServerFrame_LobbyUpdate:
		return TypeLobbyUpdate
	case *gatewayv1.ServerFrame_Ack:
		return TypeAck
	case *gatewayv1.ServerFrame_Pong:
		return TypePong
	case *gatewayv1.ServerFrame_Error:
		return TypeError
	case *gatewayv1.ServerFrame_Balance:
		return TypeBalance
	}
	return ""
}

// Proto messages are written in JSON with their .proto field names
// (snake_case) and enums by name, as the HTTP API writes them too.
var protoJSON = protojson.MarshalOptions{UseProtoNames: true}

// Encode writes one server frame in enc.
func Encode(f *gatewayv1.ServerFrame, enc Encoding) ([]byte, error) {
	var (
		b   []byte
		err error
	)
	if enc == JSON {
		b, err = protoJSON.Marshal(f)
	} else {
		b, err = proto.Marshal(f)
	}
	if err != nil {
		return nil, fmt.Errorf("wire: encode %s frame: %w", ServerFrameType(f), err)
	}
	return b, nil
}

// Frame is a server frame for any number of connections, each in its own
// encoding: every encoding is made once, when first asked for, and shared
// (the hub sends one event to every client allowed to see it). Safe for
// concurrent use; the message must not change once the frame is made.
type Frame struct {
	msg *gatewayv1.ServerFrame
	// mk makes msg when the frame was made from its binary encoding
	// (WithLegal, EventFrameOf): only its JSON encoding needs it.
	mk   func() (*gatewayv1.ServerFrame, error)
	encs [2]struct {
		once sync.Once
		b    []byte
		err  error
	}
}

// NewFrame wraps m.
func NewFrame(m *gatewayv1.ServerFrame) *Frame { return &Frame{msg: m} }

// Message is the frame's message (read-only); nil for a frame made from
// its binary encoding (WithLegal, EventFrameOf).
func (f *Frame) Message() *gatewayv1.ServerFrame { return f.msg }

// message is the frame's message, made from its binary encoding's source
// when the frame has none.
func (f *Frame) message() (*gatewayv1.ServerFrame, error) {
	if f.msg != nil {
		return f.msg, nil
	}
	return f.mk()
}

// Bytes is the frame in enc.
func (f *Frame) Bytes(enc Encoding) ([]byte, error) {
	e := &f.encs[enc&1]
	e.once.Do(func() {
		var m *gatewayv1.ServerFrame
		if m, e.err = f.message(); e.err != nil {
			return
		}
		e.b, e.err = Encode(m, enc)
	})
	return e.b, e.err
}

// Player is who a connection is authenticated as, in the HTTP API's
// session answers ({"player":{"id","name","guest"}}).
type Player struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Guest bool   `json:"guest"`
}

// Welcome is the first frame after authentication.
func Welcome(p Player, now time.Time) *gatewayv1.ServerFrame {
	return &gatewayv1.ServerFrame{Frame: &gatewayv1.ServerFrame_Welcome{Welcome: &gatewayv1.Welcome{
		Player:      &gatewayv1.Player{Id: p.ID, Name: p.Name, Guest: p.Guest},
		ServerTime:  timestamppb.New(now),
		StakeLadder: payout.Stakes()}}}
}

// Joined answers a join once the replay is sent and live events follow.
// Seat is the player's seat at the table, or nil when they only watch.
func Joined(table, ref string, seat *uint32, replayed int, trimmed bool) *gatewayv1.ServerFrame {
	return &gatewayv1.ServerFrame{Ref: ref, Frame: &gatewayv1.ServerFrame_Joined{Joined: &gatewayv1.Joined{
		Table: table, Seat: seat, Replayed: uint32(max(replayed, 0)), HistoryTrimmed: trimmed}}} //nolint:gosec // a count of events, far below 2^32
}

// Unjoined answers an unjoin.
func Unjoined(table, ref string) *gatewayv1.ServerFrame {
	return &gatewayv1.ServerFrame{Ref: ref, Frame: &gatewayv1.ServerFrame_Unjoined{Unjoined: &gatewayv1.Unjoined{Table: table}}}
}

// Ack says a table command was written to the table's command stream (not
// that the table accepted it: the events, or a move_rejected, say that).
func Ack(ref, cmd string) *gatewayv1.ServerFrame {
	return &gatewayv1.ServerFrame{Ref: ref, Frame: &gatewayv1.ServerFrame_Ack{Ack: &gatewayv1.Ack{Cmd: cmd}}}
}

// Pong answers a ping.
func Pong(ref string, now time.Time) *gatewayv1.ServerFrame {
	return &gatewayv1.ServerFrame{Ref: ref, Frame: &gatewayv1.ServerFrame_Pong{Pong: &gatewayv1.Pong{ServerTime: timestamppb.New(now)}}}
}

// ErrorFrame refuses the frame ref (or, without a ref, says what went
// wrong).
func ErrorFrame(code, message, ref string) *gatewayv1.ServerFrame {
	return &gatewayv1.ServerFrame{Ref: ref, Frame: &gatewayv1.ServerFrame_Error{Error: &gatewayv1.Error{Code: code, Message: message}}}
}

// CodeTableGone says the table no longer exists (Redis lost it, or its finished
// game expired). Sent as a TableError naming the table, followed by an
// unjoined; also the code of a join of such a table.
const CodeTableGone = "table_gone"

// TableError is an error about one table rather than about a frame the
// client sent.
func TableError(table, code, message string) *gatewayv1.ServerFrame {
	return &gatewayv1.ServerFrame{Frame: &gatewayv1.ServerFrame_Error{Error: &gatewayv1.Error{Code: code, Message: message, Table: table}}}
}

// Event is the frame of one table event for every client allowed to see it.
// The fields that only matter between services (trace context, lease epoch,
// command entry id) are cleared from ev, which the caller decoded for this
// purpose and must not need them afterwards.
func Event(table, id string, ev *tablev1.Event) *gatewayv1.ServerFrame {
	ev.Trace, ev.Epoch, ev.CommandEntryId = nil, 0, ""
	return &gatewayv1.ServerFrame{Frame: &gatewayv1.ServerFrame_Event{Event: &gatewayv1.EventFrame{Table: table, Id: id, Event: ev}}}
}

// TimerOf returns the move timer a table event started: its timer field, or
// the event itself when it is a timer_started event (the table sends one
// only when no public event of the step can carry the timer); nil when it
// started none. Every reader of a table's events (clients, tests) asks it.
func TimerOf(ev *tablev1.Event) *tablev1.TimerStarted {
	if t := ev.GetTimer(); t != nil {
		return t
	}
	return ev.GetTimerStarted()
}

// Sheet is the frame of a score-sheet update of a table's game, for every
// client of the table. The trace context, which stays between services, is
// cleared from u.
func Sheet(table, id string, u *scoringv1.SheetUpdate) *gatewayv1.ServerFrame {
	u.Trace = nil
	return &gatewayv1.ServerFrame{Frame: &gatewayv1.ServerFrame_Sheet{Sheet: &gatewayv1.SheetFrame{Table: table, Id: id, Update: u}}}
}

// LobbyView is a client's lobby window, whole.
func LobbyView(v *lobbyv1.LobbyView) *gatewayv1.ServerFrame {
	return &gatewayv1.ServerFrame{Frame: &gatewayv1.ServerFrame_LobbyView{LobbyView: v}}
}

// LobbyUpdate is one change of a client's lobby window.
func LobbyUpdate(u *lobbyv1.LobbyUpdate) *gatewayv1.ServerFrame {
	return &gatewayv1.ServerFrame{Frame: &gatewayv1.ServerFrame_LobbyUpdate{LobbyUpdate: u}}
}

// ProtoJSON writes a proto message the way JSON frames do (for the HTTP API).
func ProtoJSON(m proto.Message) (json.RawMessage, error) { return protoJSON.Marshal(m) }

// Balance is an account's Domino Coin balance, and the ledger entry that
// made it (nil: none).
func Balance(b *walletv1.Balance, e *walletv1.LedgerEntry) *gatewayv1.ServerFrame {
	return &gatewayv1.ServerFrame{Frame: &gatewayv1.ServerFrame_Balance{Balance: &gatewayv1.BalanceFrame{Balance: b, Entry: e}}}
}
