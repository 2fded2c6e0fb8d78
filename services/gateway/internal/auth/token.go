package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// MinSecretLen is the shortest signing secret accepted (256 bits).
const MinSecretLen = 32

// tokenVersion prefixes every token so the format can change later.
const tokenVersion = "v1"

// Claims is what a session token says about its holder.
type Claims struct {
	// PlayerID is the account or guest id ("u-…" or "g-…").
	PlayerID string `json:"sub"`
	// Name is the display name.
	Name string `json:"name"`
	// Guest is true for guest sessions.
	Guest bool `json:"guest,omitempty"`
	// ID names this token (random, issued with it), so that it alone can
	// be revoked. Tokens issued before IDs existed have none; Verify gives
	// them one derived from their signature, which is just as unique.
	ID string `json:"jti,omitempty"`
	// IssuedAt and ExpiresAt are Unix seconds.
	IssuedAt  int64 `json:"iat"`
	ExpiresAt int64 `json:"exp"`
}

// Signer issues and verifies session tokens: "v1.<payload>.<mac>" with the
// payload base64url JSON Claims and the mac HMAC-SHA256 over "v1.<payload>".
// Tokens are stateless so any gateway instance verifies any session; old
// secrets may still verify (not sign) so a secret can be rotated without
// logging everybody out.
type Signer struct {
	keys [][]byte // keys[0] signs; all verify
	ttl  time.Duration
	now  func() time.Time
}

// NewSigner makes a signer. now is the clock (time.Now in production).
func NewSigner(secret []byte, previous [][]byte, ttl time.Duration, now func() time.Time) (*Signer, error) {
	if len(secret) < MinSecretLen {
		return nil, fmt.Errorf("auth: session secret must be at least %d bytes", MinSecretLen)
	}
	if ttl <= 0 {
		return nil, errors.New("auth: session lifetime must be positive")
	}
	keys := [][]byte{secret}
	for _, p := range previous {
		if len(p) < MinSecretLen {
			return nil, fmt.Errorf("auth: previous session secret must be at least %d bytes", MinSecretLen)
		}
		keys = append(keys, p)
	}
	return &Signer{keys: keys, ttl: ttl, now: now}, nil
}

// TTL is how long issued tokens live.
func (s *Signer) TTL() time.Duration { return s.ttl }

// Issue signs a token for the player; IssuedAt and ExpiresAt are set here.
func (s *Signer) Issue(c Claims) (string, Claims, error) {
	now := s.now()
	if c.ID == "" {
		c.ID = randomHex(16)
	}
	c.IssuedAt = now.Unix()
	c.ExpiresAt = now.Add(s.ttl).Unix()
	payload, err := json.Marshal(c)
	if err != nil {
		return "", Claims{}, fmt.Errorf("auth: encode claims: %w", err)
	}
	signed := tokenVersion + "." + base64.RawURLEncoding.EncodeToString(payload)
	return signed + "." + base64.RawURLEncoding.EncodeToString(mac(s.keys[0], signed)), c, nil
}

// Verify checks a token's signature and expiry and returns its claims.
func (s *Signer) Verify(token string) (Claims, error) {
	if len(token) > 4096 {
		return Claims{}, ErrInvalidToken
	}
	i := strings.LastIndexByte(token, '.')
	if i < 0 || !strings.HasPrefix(token, tokenVersion+".") {
		return Claims{}, ErrInvalidToken
	}
	signed, sig := token[:i], token[i+1:]
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return Claims{}, ErrInvalidToken
	}
	ok := false
	for _, k := range s.keys {
		if hmac.Equal(got, mac(k, signed)) {
			ok = true
			break
		}
	}
	if !ok {
		return Claims{}, ErrInvalidToken
	}
	payload, err := base64.RawURLEncoding.DecodeString(signed[len(tokenVersion)+1:])
	if err != nil {
		return Claims{}, ErrInvalidToken
	}
	var c Claims
	if err := json.Unmarshal(payload, &c); err != nil || c.PlayerID == "" {
		return Claims{}, ErrInvalidToken
	}
	if s.now().Unix() >= c.ExpiresAt {
		return Claims{}, ErrExpiredToken
	}
	if c.ID == "" || len(c.ID) > 64 {
		// A token of before IDs: named by its (verified) signature.
		sum := sha256.Sum256(got)
		c.ID = "s-" + hex.EncodeToString(sum[:16])
	}
	return c, nil
}

func mac(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}
