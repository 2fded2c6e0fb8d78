package auth

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// RevokedChannel is the Pub/Sub channel on which a revocation is announced
// (the message is the token id), so that every gateway closes the sockets
// of a revoked session at once instead of polling.
const RevokedChannel = "pulka:session:revoked"

// RevokedKey is the record of a revoked token. It lives until the token
// would have expired anyway: after that, the expiry refuses the token.
func RevokedKey(tokenID string) string { return "pulka:session:revoked:" + tokenID }

// Revocations records revoked session tokens in Redis, where every gateway
// instance reads them: a logout anywhere ends the session everywhere.
type Revocations struct {
	rdb redis.UniversalClient
	now func() time.Time
}

// NewRevocations makes the revocation store.
func NewRevocations(rdb redis.UniversalClient, now func() time.Time) *Revocations {
	return &Revocations{rdb: rdb, now: now}
}

// Revoke ends the session of c (a verified token's claims) on every
// gateway: the record makes Check refuse it, the announcement makes the
// gateways close its open sockets.
func (r *Revocations) Revoke(ctx context.Context, c Claims) error {
	ttl := time.Unix(c.ExpiresAt, 0).Sub(r.now()) + time.Minute // a minute of clock skew between gateways
	if ttl <= time.Minute {
		ttl = time.Minute
	}
	pipe := r.rdb.TxPipeline()
	pipe.Set(ctx, RevokedKey(c.ID), "1", ttl)
	pipe.Publish(ctx, RevokedChannel, c.ID)
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("auth: revoke session: %w", err)
	}
	return nil
}

// VerifySession checks a session token: its signature and expiry, then,
// when revocations is set, that it was not revoked (one Redis read: a
// logout must hold at once, on every gateway). A failed check is
// ErrSessionUnchecked, never a refusal of the client.
func VerifySession(ctx context.Context, signer *Signer, revocations *Revocations, tok string) (Claims, error) {
	c, err := signer.Verify(tok)
	if err != nil {
		return Claims{}, err
	}
	if revocations != nil {
		if err := revocations.Check(ctx, c); err != nil {
			if !errors.Is(err, ErrRevokedToken) {
				err = fmt.Errorf("%w: %w", ErrSessionUnchecked, err)
			}
			return Claims{}, err
		}
	}
	return c, nil
}

// Check returns ErrRevokedToken when c's token was revoked.
func (r *Revocations) Check(ctx context.Context, c Claims) error {
	n, err := r.rdb.Exists(ctx, RevokedKey(c.ID)).Result()
	if err != nil {
		return fmt.Errorf("auth: check session: %w", err)
	}
	if n > 0 {
		return ErrRevokedToken
	}
	return nil
}

// RevokedAmong reports which of ids are revoked, in one round trip: a
// gateway's periodic sweep of its open sockets, for announcements it missed
// while its subscription was down.
func (r *Revocations) RevokedAmong(ctx context.Context, ids []string) ([]bool, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	pipe := r.rdb.Pipeline()
	cmds := make([]*redis.IntCmd, len(ids))
	for i, id := range ids {
		cmds[i] = pipe.Exists(ctx, RevokedKey(id))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("auth: check sessions: %w", err)
	}
	out := make([]bool, len(ids))
	for i, c := range cmds {
		out[i] = c.Val() > 0
	}
	return out, nil
}

// Watch calls revoked with the id of every token revoked from now on, until
// ctx ends. The subscription reconnects by itself after a lost connection;
// what was announced meanwhile is missed, which is why a gateway also
// sweeps with RevokedAmong.
func (r *Revocations) Watch(ctx context.Context, revoked func(tokenID string)) {
	sub := r.rdb.Subscribe(ctx, RevokedChannel)
	defer sub.Close()
	// Wait for the subscription's confirmation, so that a revocation after
	// Watch started is seen. A failure here (Redis down) is not fatal: the
	// channel below keeps reconnecting.
	_, _ = sub.Receive(ctx)
	ch := sub.Channel()
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			revoked(m.Payload)
		}
	}
}
