package cards

import "math/rand/v2"

// Deck is the 36 cards in some order; index 0 is dealt first.
type Deck [DeckSize]Card

// Ordered returns the deck in card order.
func Ordered() Deck {
	var d Deck
	for i := range d {
		d[i] = Card(i)
	}
	return d
}

// RNG is a deterministic generator for the choices of bots and tests (a
// random bot's move, a test's random play). It is PCG-DXSM from
// math/rand/v2, whose algorithm is specified and fixed, so a seed gives the
// same numbers on every machine and Go release. Deals never come from it:
// every deck is fairdeal.Shuffle of a hand's key (docs/fair-play.md).
type RNG struct{ pcg rand.PCG }

// NewRNG returns the generator for (seed, stream).
func NewRNG(seed, stream uint64) RNG {
	return RNG{pcg: *rand.NewPCG(seed, stream)}
}

// Uint64 returns the next 64 random bits.
func (r *RNG) Uint64() uint64 { return r.pcg.Uint64() }

// IntN returns a uniform number in [0, n) for n > 0. It uses Lemire's
// multiply-and-reject method written out here, not rand.Rand's, so the
// sequence cannot change with a Go release.
func (r *RNG) IntN(n int) int {
	if n <= 0 {
		return 0
	}
	bound := uint64(n)
	for {
		x := r.pcg.Uint64()
		hi, lo := mul64(x, bound)
		if lo < bound {
			thresh := -bound % bound
			if lo < thresh {
				continue
			}
		}
		return int(hi)
	}
}

func mul64(a, b uint64) (hi, lo uint64) {
	const mask32 = 1<<32 - 1
	a0, a1 := a&mask32, a>>32
	b0, b1 := b&mask32, b>>32
	w0 := a0 * b0
	t := a1*b0 + w0>>32
	w1, w2 := t&mask32, t>>32
	w1 += a0 * b1
	hi = a1*b1 + w2 + w1>>32
	lo = a * b
	return hi, lo
}
