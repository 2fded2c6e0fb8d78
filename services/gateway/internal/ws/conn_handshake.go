package ws

import (
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/gateway/internal/apierr"
	"github.com/pulka/pulka/services/gateway/internal/auth"
	"github.com/pulka/pulka/services/gateway/internal/connlimit"
)

// authenticate waits for the hello of a connection that had no session.
func (c *conn) authenticate() bool {
	// Not a context deadline on the read: coder/websocket closes the
	// connection itself when a read's context expires, and the client
	// should see our close code.
	timer := time.AfterFunc(c.s.cfg.AuthTimeout, func() { c.fail(CloseAuthTimedOut, "no hello in time", true) })
	data, enc, err := c.readFrame(c.ctx)
	if !timer.Stop() {
		return false // timed out just now
	}
	switch {
	case errors.Is(err, errTooBig):
		c.sendError(wire.CodeTooBig, "frame too big", "")
		c.fail(CloseUnauthorized, "hello expected", true)
		return false
	case err != nil:
		return false
	}
	m, err := wire.Parse(data, enc)
	if err == nil && m.GetHello() == nil {
		err = wire.Errorf(wire.CodeAuthRequired, "send hello with a session token first")
	}
	if err != nil {
		c.refused(err, m.GetRef())
		c.fail(CloseUnauthorized, "hello expected", true)
		return false
	}
	claims, err := auth.VerifySession(c.ctx, c.s.deps.Signer, c.s.deps.Revocations, m.GetHello().GetToken())
	if err != nil {
		p := apierr.From(err)
		c.sendError(p.Code, p.Message, m.GetRef())
		code := CloseUnauthorized
		if errors.Is(err, auth.ErrRevokedToken) || errors.Is(err, auth.ErrExpiredToken) {
			code = CloseSessionEnded
		}
		c.fail(code, "invalid session", true)
		return false
	}
	if !c.s.perPlay.Acquire(claims.PlayerID) {
		p := apierr.From(&connlimit.TooManyError{Scope: connlimit.ScopePlayer, Limit: c.s.cfg.MaxPerPlayer})
		c.s.m.shed.Add(c.ctx, 1, metric.WithAttributes(attribute.String("reason", p.Code), attribute.String("scope", connlimit.ScopePlayer)))
		c.sendError(p.Code, p.Message, m.GetRef())
		c.fail(CloseTooManyConns, "too many connections", true)
		return false
	}
	c.s.mu.Lock()
	c.claims, c.playerCounted = &claims, true
	c.s.rememberToken(c)
	c.s.mu.Unlock()
	return true
}
