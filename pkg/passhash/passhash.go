package passhash

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// ErrMalformedHash means a stored hash is not an argon2id PHC string this
// package can read.
var ErrMalformedHash = errors.New("passhash: malformed argon2id hash")

// Params are the argon2id cost parameters.
type Params struct {
	// Time is the number of passes over the memory.
	Time uint32
	// MemoryKiB is the memory used, in KiB.
	MemoryKiB uint32
	// Threads is the degree of parallelism.
	Threads uint8
}

// DefaultParams returns OWASP's minimum argon2id recommendation (19 MiB, 2
// passes, 1 thread): ~20 ms on one core, cheap enough for a lobby that hashes
// once per table creation and once per password-protected sit-down. A
// function, not a variable, so nothing can change the defaults for everyone.
func DefaultParams() Params { return Params{Time: 2, MemoryKiB: 19 * 1024, Threads: 1} }

const (
	saltLen = 16
	keyLen  = 32
)

var b64 = base64.RawStdEncoding

// Hasher hashes with fixed parameters.
type Hasher struct{ p Params }

// NewHasher returns a hasher using p (zero fields take DefaultParams' values).
func NewHasher(p Params) Hasher {
	if p.Time == 0 {
		p.Time = DefaultParams().Time
	}
	if p.MemoryKiB == 0 {
		p.MemoryKiB = DefaultParams().MemoryKiB
	}
	if p.Threads == 0 {
		p.Threads = DefaultParams().Threads
	}
	return Hasher{p: p}
}

// Hash returns the PHC-encoded argon2id hash of pw with a fresh random salt.
func (h Hasher) Hash(pw string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("passhash: salt: %w", err)
	}
	p := h.p
	if p.Time == 0 { // zero Hasher: behave like NewHasher(Params{})
		p = NewHasher(p).p
	}
	key := argon2.IDKey([]byte(pw), salt, p.Time, p.MemoryKiB, p.Threads, keyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, p.MemoryKiB, p.Time, p.Threads, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// Verify reports whether pw matches the encoded hash. The comparison takes
// the same time whatever the mismatch. A malformed hash never matches.
func Verify(encoded, pw string) (bool, error) {
	p, salt, key, err := decode(encoded)
	if err != nil {
		return false, err
	}
	got := argon2.IDKey([]byte(pw), salt, p.Time, p.MemoryKiB, p.Threads, uint32(len(key)))
	return subtle.ConstantTimeCompare(got, key) == 1, nil
}

// Check reports whether encoded is a PHC argon2id string Verify can use,
// without computing anything: a caller that bounds its hashing can refuse a
// malformed one before it takes a slot.
func Check(encoded string) error {
	_, _, _, err := decode(encoded)
	return err
}

// maxMemoryKiB bounds what a stored hash may ask for, so a corrupted or
// hostile record cannot make Verify allocate gigabytes.
const maxMemoryKiB = 256 * 1024

func decode(encoded string) (Params, []byte, []byte, error) {
	parts := strings.Split(encoded, "$")
	// "", "argon2id", "v=19", "m=..,t=..,p=..", salt, key
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" {
		return Params{}, nil, nil, ErrMalformedHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return Params{}, nil, nil, fmt.Errorf("%w: version %q", ErrMalformedHash, parts[2])
	}
	var p Params
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.MemoryKiB, &p.Time, &p.Threads); err != nil {
		return Params{}, nil, nil, fmt.Errorf("%w: parameters %q", ErrMalformedHash, parts[3])
	}
	if p.Time == 0 || p.Threads == 0 || p.MemoryKiB < 8*uint32(p.Threads) || p.MemoryKiB > maxMemoryKiB {
		return Params{}, nil, nil, fmt.Errorf("%w: parameters %q out of range", ErrMalformedHash, parts[3])
	}
	salt, err := b64.DecodeString(parts[4])
	if err != nil || len(salt) == 0 {
		return Params{}, nil, nil, fmt.Errorf("%w: salt", ErrMalformedHash)
	}
	key, err := b64.DecodeString(parts[5])
	if err != nil || len(key) < 16 {
		return Params{}, nil, nil, fmt.Errorf("%w: key", ErrMalformedHash)
	}
	return p, salt, key, nil
}
