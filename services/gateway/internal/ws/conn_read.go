package ws

import (
	"context"
	"errors"
	"io"

	"github.com/coder/websocket"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/apierr"
)

var errTooBig = errors.New("ws: frame over the read limit")

// readFrame reads one data frame. A frame over the soft limit is drained
// and reported as errTooBig; over the hard limit the library closes the
// connection with 1009.
func (c *conn) readFrame(ctx context.Context) ([]byte, error) {
	_, r, err := c.ws.Reader(ctx)
	if err != nil {
		return nil, err
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
			return nil, err
		}
	}
	if int64(len(buf)) > c.s.cfg.ReadLimit {
		if _, err := io.Copy(io.Discard, r); err != nil {
			return nil, err
		}
		return nil, errTooBig
	}
	return buf, nil
}

func (c *conn) readLoop() {
	for {
		data, err := c.readFrame(c.steady)
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
		if !c.limit.Allow() {
			c.strike(wire.Errorf(wire.CodeRateLimited, "too many frames: at most %.0f per second", float64(c.s.cfg.Rate)), "")
			continue
		}
		m, err := wire.Parse(data)
		if err != nil {
			c.strike(err, m.Ref)
			continue
		}
		typ, ok := c.s.m.frameType[m.Type]
		if !ok {
			typ = metric.WithAttributes(attribute.String("type", m.Type))
		}
		c.s.m.frames.Add(c.ctx, 1, typ)
		if err := c.handle(m); err != nil {
			c.strike(err, m.Ref)
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

func (c *conn) sendError(code, msg, ref string) { c.Send(wire.ErrorFrame(code, msg, ref)) }

// handle runs one valid frame.
func (c *conn) handle(m wire.ClientMsg) error {
	switch m.Type {
	case wire.TypeHello:
		return wire.Errorf(wire.CodeInvalid, "already authenticated")
	case wire.TypePing:
		c.Send(wire.Pong(m.Ref, c.s.deps.Now()))
		return nil
	case wire.TypeJoin:
		return c.join(m)
	case wire.TypeUnjoin:
		if !c.unjoin(m.Table) {
			return wire.Errorf(wire.CodeNotJoined, "not following table %s", m.Table)
		}
		c.Send(wire.Unjoined(m.Table, m.Ref))
		return nil
	case wire.TypeLobby:
		return c.watchLobby(m)
	}
	return c.command(m)
}
