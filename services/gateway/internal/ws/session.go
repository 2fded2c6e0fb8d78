package ws

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/pulka/pulka/pkg/periodic"
	"github.com/pulka/pulka/pkg/wire"
)

// rememberToken lists an authenticated connection under its token id, for
// revocation, and arms the close at the token's expiry. Under s.mu.
func (s *Server) rememberToken(c *conn) {
	id := c.claims.ID
	set := s.byToken[id]
	if set == nil {
		set = map[*conn]struct{}{}
		s.byToken[id] = set
	}
	set[c] = struct{}{}
	left := time.Unix(c.claims.ExpiresAt, 0).Sub(s.deps.Now())
	c.expiry = time.AfterFunc(max(left, 0), func() {
		c.endSession(wire.CodeSessionExpired, "the session has expired: log in again")
	})
}

// forgetToken undoes rememberToken. Under s.mu.
func (s *Server) forgetToken(c *conn) {
	id := c.claims.ID
	if set := s.byToken[id]; set != nil {
		delete(set, c)
		if len(set) == 0 {
			delete(s.byToken, id)
		}
	}
}

func (c *conn) stopExpiry() {
	if c.expiry != nil {
		c.expiry.Stop()
	}
}

// endSession tells the client why and closes the connection with 4003.
func (c *conn) endSession(code, msg string) {
	c.s.m.sessionsEnded.Add(context.WithoutCancel(c.ctx), 1, metric.WithAttributes(attribute.String("reason", code)))
	c.sendError(code, msg, "")
	c.fail(CloseSessionEnded, code, true)
}

// RevokeLocal closes this instance's connections of the token id.
func (s *Server) RevokeLocal(tokenID string) int {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.byToken[tokenID]))
	for c := range s.byToken[tokenID] {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.endSession(wire.CodeSessionRevoked, "the session was ended (logged out): log in again")
	}
	return len(conns)
}

// WatchSessions closes the sockets of revoked sessions until ctx ends: at
// once when a revocation is announced (Redis Pub/Sub), and every
// SessionSweep by asking Redis about every open session, for announcements
// missed while the subscription was down. Without Revocations it only
// waits for ctx.
func (s *Server) WatchSessions(ctx context.Context) {
	if s.deps.Revocations == nil {
		<-ctx.Done()
		return
	}
	go s.deps.Revocations.Watch(ctx, func(id string) { s.RevokeLocal(id) }) //nolint:contextcheck // each connection ends under its own context
	periodic.Every(ctx, s.cfg.SessionSweep, s.sweepSessions)
}

func (s *Server) sweepSessions(ctx context.Context) {
	s.mu.Lock()
	ids := make([]string, 0, len(s.byToken))
	for id := range s.byToken {
		ids = append(ids, id)
	}
	s.mu.Unlock()
	const batch = 512
	for len(ids) > 0 {
		n := min(batch, len(ids))
		revoked, err := s.deps.Revocations.RevokedAmong(ctx, ids[:n])
		if err != nil {
			s.deps.Logger.Warn("ws: session sweep failed", "err", err)
			return
		}
		for i, r := range revoked {
			if r {
				s.RevokeLocal(ids[i]) //nolint:contextcheck // each connection ends under its own context
			}
		}
		ids = ids[n:]
	}
}
