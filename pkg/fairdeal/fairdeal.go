// Package fairdeal is Pulka's commit–reveal deal: how a hand's server seed,
// the players' client seeds and the hand's identity become a shuffled deck,
// byte for byte as docs/fair-play.md specifies, so that anyone can check a
// deal with SHA-256 and HMAC-SHA256 alone (the web client does, with Web
// Crypto).
//
// The flow of one hand: the table draws a ServerSeed from crypto/rand and
// publishes its Commitment; each seated human sends a ClientSeed; the
// ShuffleKey combines them; Shuffle deals from the key; when the hand ends the
// server seed is revealed and anyone recomputes the commitment and the deck.
// The server cannot choose a deal (it committed before the client seeds were
// known) and no player can (the server seed is secret until the hand ends).
//
// Everything here is pure and deterministic: no clock, no global RNG.
package fairdeal

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/pulka/pulka/pkg/cards"
)

// SeedSize is the size of every seed and key, in bytes.
const SeedSize = 32

// MaxIDLen bounds table and game ids in the byte layout (a 16-bit length
// prefix).
const MaxIDLen = 1<<16 - 1

// ServerSeed is a hand's secret: drawn from crypto/rand when the hand starts,
// revealed when it ends.
type ServerSeed [SeedSize]byte

// ClientSeed is one seat's contribution. A seat that sent none (a bot, or a
// player whose client stayed silent until the seed deadline) contributes
// NoClientSeed.
type ClientSeed [SeedSize]byte

// NoClientSeed is the documented constant of a seat without a client seed:
// 32 zero bytes.
var NoClientSeed ClientSeed

// Commitment is SHA-256 over the hand's identity and its server seed.
type Commitment [SeedSize]byte

// Key is the shuffle key of one hand.
type Key [SeedSize]byte

// Hand names one hand: the table, the game and the hand's index from 0 (the
// hand_index of its events).
type Hand struct {
	TableID string
	GameID  string
	Index   uint32
}

// Domain separation tags (see docs/fair-play.md). Fixed forever: changing one
// would make every recorded deal unverifiable.
const (
	tagCommit = "pulka/commit/v1"
	tagDeal   = "pulka/deal/v1"
	tagStream = "pulka/stream/v1"
	tagLocal  = "pulka/local/v1"
)

// ErrBadHand is returned for a hand whose ids do not fit the layout.
var ErrBadHand = errors.New("fairdeal: bad hand identity")

// ErrBadSeed is returned for a seed that is not 32 bytes (64 hex digits).
var ErrBadSeed = errors.New("fairdeal: a seed is 32 bytes, 64 hex digits")

func (h Hand) validate() error {
	if h.TableID == "" || h.GameID == "" || len(h.TableID) > MaxIDLen || len(h.GameID) > MaxIDLen {
		return fmt.Errorf("%w: table %q, game %q", ErrBadHand, h.TableID, h.GameID)
	}
	return nil
}

// appendIdentity appends lp(table) || lp(game) || u32(index), lp(s) being
// s's length as a big-endian uint16 followed by its bytes.
func (h Hand) appendIdentity(b []byte) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(h.TableID)))
	b = append(b, h.TableID...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(h.GameID)))
	b = append(b, h.GameID...)
	return binary.BigEndian.AppendUint32(b, h.Index)
}

// Commit returns SHA-256("pulka/commit/v1" || lp(table) || lp(game) ||
// u32(hand) || server seed).
func Commit(h Hand, s ServerSeed) (Commitment, error) {
	if err := h.validate(); err != nil {
		return Commitment{}, err
	}
	b := h.appendIdentity([]byte(tagCommit))
	b = append(b, s[:]...)
	return sha256.Sum256(b), nil
}

// ShuffleKey returns HMAC-SHA256 keyed by the server seed over
// "pulka/deal/v1" || lp(table) || lp(game) || u32(hand) || u8(seats) ||
// the client seeds in seat order (NoClientSeed for a seat without one).
func ShuffleKey(h Hand, s ServerSeed, clients []ClientSeed) (Key, error) {
	if err := h.validate(); err != nil {
		return Key{}, err
	}
	if len(clients) == 0 || len(clients) > 255 {
		return Key{}, fmt.Errorf("%w: %d seats", ErrBadHand, len(clients))
	}
	m := hmac.New(sha256.New, s[:])
	b := h.appendIdentity([]byte(tagDeal))
	b = append(b, byte(len(clients)))
	for _, c := range clients {
		b = append(b, c[:]...)
	}
	m.Write(b)
	var k Key
	m.Sum(k[:0])
	return k, nil
}

// Verify reports whether server seed s is the one committed to for hand h.
func Verify(h Hand, s ServerSeed, c Commitment) bool {
	got, err := Commit(h, s)
	return err == nil && hmac.Equal(got[:], c[:])
}

// Stream is the deterministic sequence of 32-bit words a key gives: the
// concatenation of HMAC-SHA256(key, "pulka/stream/v1" || u32(i)) for
// i = 0, 1, 2, …, read as big-endian uint32s.
//
// The HMAC is written out over sha256.Sum256 (RFC 2104 with a 32-byte key)
// so that a stream on the stack allocates nothing: the engines deal inside
// Apply, which must not allocate.
type Stream struct {
	ipad, opad [sha256.BlockSize]byte // the key XOR 0x36…, XOR 0x5c…
	block      uint32
	buf        [sha256.Size]byte
	off        int
}

// NewStream returns the stream of key k.
func NewStream(k Key) *Stream {
	s := newStream(k)
	return &s
}

func newStream(k Key) Stream {
	s := Stream{off: sha256.Size}
	for i := range s.ipad {
		var b byte
		if i < len(k) {
			b = k[i]
		}
		s.ipad[i], s.opad[i] = b^0x36, b^0x5c
	}
	return s
}

func (s *Stream) word() uint32 {
	if s.off == sha256.Size {
		var in [sha256.BlockSize + len(tagStream) + 4]byte
		copy(in[:], s.ipad[:])
		copy(in[sha256.BlockSize:], tagStream)
		binary.BigEndian.PutUint32(in[sha256.BlockSize+len(tagStream):], s.block)
		inner := sha256.Sum256(in[:])
		var out [sha256.BlockSize + sha256.Size]byte
		copy(out[:], s.opad[:])
		copy(out[sha256.BlockSize:], inner[:])
		s.buf = sha256.Sum256(out[:])
		s.block++
		s.off = 0
	}
	w := binary.BigEndian.Uint32(s.buf[s.off:])
	s.off += 4
	return w
}

// IntN returns a uniform number in [0, n) for 0 < n < 2^32 by rejection:
// words at or above 2^32 − (2^32 mod n) are skipped, then the word mod n.
func (s *Stream) IntN(n uint32) int {
	if n <= 1 {
		return 0
	}
	limit := uint64(1)<<32 - (uint64(1)<<32)%uint64(n)
	for {
		if w := s.word(); uint64(w) < limit {
			return int(w % n)
		}
	}
}

// Shuffle deals key k's deck: the ordered deck (card i is the proto Card enum
// value i+1) shuffled by Fisher–Yates from the last position down, position i
// swapping with Stream.IntN(i+1). It returns the stream after the shuffle, for
// the draws a game makes after it (the first dealer of a classic game, the
// first declarer of a Japanese match: the next IntN).
func Shuffle(k Key) (cards.Deck, *Stream) {
	st := newStream(k)
	d := shuffle(&st)
	return d, &st
}

// ShuffleDraw is Shuffle and the stream's next IntN(n) after it, without
// allocating.
func ShuffleDraw(k Key, n uint32) (cards.Deck, int) {
	st := newStream(k)
	d := shuffle(&st)
	return d, st.IntN(n)
}

func shuffle(st *Stream) cards.Deck {
	d := cards.Ordered()
	for i := cards.DeckSize - 1; i > 0; i-- {
		j := st.IntN(uint32(i + 1))
		d[i], d[j] = d[j], d[i]
	}
	return d
}

// LocalKey is the key of hand index for games played without a table — self
// play, benchmarks, tests, the terminal demo — from one 64-bit seed. Live
// tables never use it: their keys come from ShuffleKey.
func LocalKey(seed uint64, index uint32) Key {
	// HMAC-SHA256 keyed by the seed's 8 big-endian bytes over
	// "pulka/local/v1" || u32(index), written out like Stream's so that a
	// local game deals without allocating.
	var ipad, opad [sha256.BlockSize]byte
	binary.BigEndian.PutUint64(ipad[:], seed)
	copy(opad[:], ipad[:])
	for i := range ipad {
		ipad[i] ^= 0x36
		opad[i] ^= 0x5c
	}
	var in [sha256.BlockSize + len(tagLocal) + 4]byte
	copy(in[:], ipad[:])
	copy(in[sha256.BlockSize:], tagLocal)
	binary.BigEndian.PutUint32(in[sha256.BlockSize+len(tagLocal):], index)
	inner := sha256.Sum256(in[:])
	var out [sha256.BlockSize + sha256.Size]byte
	copy(out[:], opad[:])
	copy(out[sha256.BlockSize:], inner[:])
	return sha256.Sum256(out[:])
}

// ParseSeed reads 64 hex digits (either case) into a seed.
func ParseSeed(s string) ([SeedSize]byte, error) {
	var out [SeedSize]byte
	if len(s) != 2*SeedSize {
		return out, ErrBadSeed
	}
	if _, err := hex.Decode(out[:], []byte(s)); err != nil {
		return out, fmt.Errorf("%w: %w", ErrBadSeed, err)
	}
	return out, nil
}

// Hex returns b as 64 lower-case hex digits, the form events and records use.
func Hex(b [SeedSize]byte) string { return hex.EncodeToString(b[:]) }
