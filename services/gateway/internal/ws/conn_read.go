package ws

import (
	"context"
	"errors"
	"io"

	"github.com/coder/websocket"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/apierr"
)

var errTooBig = errors.New("ws: frame over the read limit")

// readFrame reads one data frame. A frame over the soft limit is drained
// and reported as errTooBig; over the hard limit the library closes the
// connection with 1009.
func (c *conn) readFrame(ctx context.Context) ([]byte, wire.Encoding, error) {
	typ, r, err := c.ws.Reader(ctx)
	if err != nil {
		return nil, 0, err
	}
	// A client may send either encoding whatever it reads: the message
	// type says which this one is.
	enc := wire.Binary
	if typ == websocket.MessageText {
		enc = wire.JSON
	}
	buf := make([]byte, 0, 256)
	lr := io.LimitReader(r, c.s.cfg.ReadLimit+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, err
		}
	}
	if int64(len(buf)) > c.s.cfg.ReadLimit {
		if _, err := io.Copy(io.Discard, r); err != nil {
			return nil, 0, err
		}
		return nil, 0, errTooBig
	}
	return buf, enc, nil
}

func (c *conn) readLoop() {
	for {
		data, enc, err := c.readFrame(c.steady)
		if errors.Is(err, errTooBig) {
			c.strike(wire.Errorf(wire.CodeTooBig, "frame larger than %d bytes", c.s.cfg.ReadLimit), "")
			continue
		}
		if err != nil {
			if code := websocket.CloseStatus(err); code != -1 {
				c.setCode(code)
			} else if errors.Is(err, websocket.ErrMessageTooBig) {
				c.setCode(CloseTooBig)
			}
			return
		}
		c.heard.Store(true)
		if !c.limit.Allow() {
			c.strike(wire.Errorf(wire.CodeRateLimited, "too many frames: at most %.0f per second", float64(c.s.cfg.Rate)), "")
			continue
		}
		m, err := wire.Parse(data, enc)
		if err != nil {
			c.strike(err, m.GetRef())
			continue
		}
		name := wire.FrameType(m)
		typ, ok := c.s.m.frameType[name]
		if !ok {
			typ = metric.WithAttributes(attribute.String("type", name))
		}
		c.s.m.frames.Add(c.ctx, 1, typ)
		if err := c.handle(name, m); err != nil {
			c.strike(err, m.GetRef())
			continue
		}
		c.strikes = 0
	}
}

// strike answers a refused frame with an error frame; too many in a row
// close the connection.
func (c *conn) strike(err error, ref string) {
	c.refused(err, ref)
	c.strikes++
	if c.strikes >= c.s.cfg.MaxStrikes {
		c.fail(ClosePolicy, "too many refused frames", true)
	}
}

func (c *conn) refused(err error, ref string) {
	code, msg := wire.CodeOf(err), ""
	if code != "" {
		var we *wire.Error
		errors.As(err, &we)
		msg = we.Message
	} else {
		p := apierr.From(err)
		code, msg = p.Code, p.Message
		if p.Status >= 500 {
			c.s.deps.Logger.Error("ws: frame failed", "conn", c.id, "err", err)
		}
	}
	c.s.m.refused.Add(c.ctx, 1, metric.WithAttributes(attribute.String("code", code)))
	c.sendError(code, msg, ref)
}

func (c *conn) sendError(code, msg, ref string) { c.send(wire.ErrorFrame(code, msg, ref)) }

// handle runs one valid frame of type typ (wire.FrameType).
func (c *conn) handle(typ string, m *gatewayv1.ClientFrame) error {
	switch f := m.GetFrame().(type) {
	case *gatewayv1.ClientFrame_Hello:
		return wire.Errorf(wire.CodeInvalid, "already authenticated")
	case *gatewayv1.ClientFrame_Ping:
		c.send(wire.Pong(m.GetRef(), c.s.deps.Now()))
		return nil
	case *gatewayv1.ClientFrame_Join:
		return c.join(m.GetRef(), f.Join)
	case *gatewayv1.ClientFrame_Unjoin:
		table := f.Unjoin.GetTable()
		if !c.unjoin(table) {
			return wire.Errorf(wire.CodeNotJoined, "not following table %s", table)
		}
		c.send(wire.Unjoined(table, m.GetRef()))
		return nil
	case *gatewayv1.ClientFrame_Lobby:
		return c.watchLobby(f.Lobby)
	case *gatewayv1.ClientFrame_Command:
		return c.command(m.GetRef(), typ, f.Command)
	}
	return wire.Errorf(wire.CodeUnknownType, "unknown frame") // wire.Parse refuses these
}
