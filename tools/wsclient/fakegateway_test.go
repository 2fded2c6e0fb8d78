package wsclient

import (
	"context"
	"encoding/hex"

	"github.com/coder/websocket"

	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	"github.com/pulka/pulka/pkg/wire"
)

// clientMsg is a client frame as the fake gateways of these tests look at
// it: the generated frame, checked by the gateway's own wire.Parse, with
// the fields they match on taken out.
type clientMsg struct {
	Type, Ref, Table, Cmd, LastEventID string
	// Hand and Seed (hex) are a seed frame's, or a move's attached seed.
	Hand  *uint32
	Seed  string
	frame *gatewayv1.ClientFrame
}

// readMsg parses a binary client frame as the gateway does.
func readMsg(data []byte) (clientMsg, error) {
	f, err := wire.Parse(data, wire.Binary)
	m := clientMsg{Type: wire.FrameType(f), Ref: f.GetRef(), frame: f}
	switch {
	case f.GetJoin() != nil:
		m.Table, m.LastEventID = f.GetJoin().GetTable(), f.GetJoin().GetLastEventId()
	case f.GetUnjoin() != nil:
		m.Table = f.GetUnjoin().GetTable()
	case f.GetCommand() != nil:
		c := f.GetCommand()
		m.Table, m.Cmd = c.GetTable(), c.GetCmd()
		s := c.GetSeed()
		if s == nil {
			s = c.GetAttachedSeed()
		}
		if s != nil {
			h := s.GetHandIndex()
			m.Hand, m.Seed = &h, hex.EncodeToString(s.GetSeed())
		}
	}
	return m, err
}

// IsTableCommand reports whether m is a table command.
func (m clientMsg) IsTableCommand() bool { return m.frame.GetCommand() != nil }

// put writes a server frame as the gateway writes it to this client.
func put(ctx context.Context, ws *websocket.Conn, f *gatewayv1.ServerFrame) error {
	b, err := wire.Encode(f, wire.Binary)
	if err != nil {
		return err
	}
	return ws.Write(ctx, websocket.MessageBinary, b)
}
