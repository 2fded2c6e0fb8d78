package wsclient

import (
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
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

// Frame is one decoded server frame, as the Go programs on a Conn read it:
// Type is a wire.Type… constant naming the ServerFrame's member (or
// TypeReconnected); which other fields are set depends on it. The messages
// (Event, Sheet, LobbyView, LobbyUpdate) are the generated ones the frame
// carried.
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

	Event *tablev1.Event // event
	// Legal is the receiver's legal moves riding on an event frame
	// (EventFrame.legal): Conn delivers them as a LegalMoves event of
	// their own right after it (LegalFrame).
	Legal       *tablev1.LegalMoves
	Sheet       *scoringv1.SheetUpdate // sheet
	LobbyView   *lobbyv1.LobbyView     // lobby_view
	LobbyUpdate *lobbyv1.LobbyUpdate   // lobby_update
	Player      *wire.Player           // welcome
	// Balance is an account's Domino Coin balance and the ledger entry
	// that made it (balance).
	Balance *gatewayv1.BalanceFrame

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

// Decoding ignores fields a newer gateway may add.
var frameIn = proto.UnmarshalOptions{DiscardUnknown: true}

// DecodeFrame decodes one server frame (a binary pulka.gateway.v1
// ServerFrame, as the gateway writes them for this client's subprotocol)
// read at the time at.
func DecodeFrame(data []byte, at time.Time) (Frame, error) {
	m := &gatewayv1.ServerFrame{}
	if err := frameIn.Unmarshal(data, m); err != nil {
		return Frame{}, fmt.Errorf("wsclient: frame: %w", err)
	}
	f := Frame{Type: wire.ServerFrameType(m), Ref: m.GetRef(), At: at}
	switch x := m.GetFrame().(type) {
	case *gatewayv1.ServerFrame_Welcome:
		p := x.Welcome.GetPlayer()
		f.Player = &wire.Player{ID: p.GetId(), Name: p.GetName(), Guest: p.GetGuest()}
		f.ServerTime = serverTime(x.Welcome.GetServerTime())
	case *gatewayv1.ServerFrame_Joined:
		j := x.Joined
		f.Table, f.Seat, f.Replayed, f.HistoryTrimmed = j.GetTable(), j.Seat, int(j.GetReplayed()), j.GetHistoryTrimmed()
	case *gatewayv1.ServerFrame_Unjoined:
		f.Table = x.Unjoined.GetTable()
	case *gatewayv1.ServerFrame_Event:
		f.Table, f.ID, f.Event, f.Legal = x.Event.GetTable(), x.Event.GetId(), x.Event.GetEvent(), x.Event.GetLegal()
		if f.Event == nil {
			f.Event = &tablev1.Event{}
		}
	case *gatewayv1.ServerFrame_Sheet:
		f.Table, f.ID, f.Sheet = x.Sheet.GetTable(), x.Sheet.GetId(), x.Sheet.GetUpdate()
		if f.Sheet == nil {
			f.Sheet = &scoringv1.SheetUpdate{}
		}
	case *gatewayv1.ServerFrame_LobbyView:
		f.LobbyView = x.LobbyView
	case *gatewayv1.ServerFrame_LobbyUpdate:
		f.LobbyUpdate = x.LobbyUpdate
	case *gatewayv1.ServerFrame_Ack:
		f.Cmd = x.Ack.GetCmd()
	case *gatewayv1.ServerFrame_Pong:
		f.ServerTime = serverTime(x.Pong.GetServerTime())
	case *gatewayv1.ServerFrame_Error:
		f.Table = x.Error.GetTable()
		f.Err = &wire.Error{Code: x.Error.GetCode(), Message: x.Error.GetMessage()}
	case *gatewayv1.ServerFrame_Balance:
		f.Balance = x.Balance
	default:
		return Frame{}, fmt.Errorf("wsclient: a frame of no type this client knows")
	}
	return f, nil
}

// serverTime is a frame's gateway clock; the zero time when unset.
func serverTime(ts *timestamppb.Timestamp) time.Time {
	if ts == nil {
		return time.Time{}
	}
	return ts.AsTime()
}

// LegalFrame is the LegalMoves event that the legal moves on event frame f
// stand for (wire.LegalEvent: the table's history has it right after f's
// event, for the seat it names), as a frame of its own. It has no id (the
// event frame's id covers both).
func (f Frame) LegalFrame() Frame {
	return Frame{Type: wire.TypeEvent, Table: f.Table, At: f.At, Event: wire.LegalEvent(f.Event, f.Legal)}
}
