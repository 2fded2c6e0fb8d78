package classic

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/fairdeal"
)

// binaryVersion is the first byte of MarshalBinary's output. Bump it when the
// layout changes.
//
// Version 2 holds the current hand's shuffle key and the local seed where
// version 1 held the game's seed. Version 1 is not read: its deals came from
// a seed that the game id made public, and a state of it cannot continue
// with keys (its next hands have no commitment).
const binaryVersion = 2

// binarySize is the length of a version-2 encoding: the fixed fields, four
// hands, the played set and 24 hand records.
const binarySize = 69 + 8*Seats + 8 + maxHands*2*Seats

// MarshalBinary encodes the whole state (hidden cards included: it is a
// server-side snapshot, never for a client) in a fixed-size layout behind a
// version byte.
func (g *Game) MarshalBinary() ([]byte, error) {
	return g.AppendBinary(make([]byte, 0, binarySize))
}

// AppendBinary appends MarshalBinary's encoding to b.
func (g *Game) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, binaryVersion)
	b = append(b, g.key[:]...)
	b = append(b, boolByte(g.local))
	b = binary.LittleEndian.AppendUint64(b, g.localSeed)
	b = append(b, byte(g.variant), byte(g.hand), byte(g.firstDealer), byte(g.phase),
		byte(g.turn), byte(g.trump), byte(g.turned))
	for s := range Seats {
		b = append(b, byte(g.bids[s]))
	}
	for s := range Seats {
		b = append(b, byte(g.tricks[s]))
	}
	b = append(b, byte(g.trickNo), byte(g.leader), byte(g.nPlayed), byte(g.ledSuit))
	for i := range Seats {
		b = append(b, byte(g.trickCards[i]))
	}
	for i := range Seats {
		b = append(b, byte(g.trickJoker[i]))
	}
	for s := range Seats {
		b = binary.LittleEndian.AppendUint64(b, uint64(g.hands[s]))
	}
	b = binary.LittleEndian.AppendUint64(b, uint64(g.played))
	for h := range maxHands {
		for s := range Seats {
			b = append(b, byte(g.results[h].bids[s]))
		}
		for s := range Seats {
			b = append(b, byte(g.results[h].tricks[s]))
		}
	}
	return b, nil
}

// UnmarshalBinary restores a state written by MarshalBinary. It checks the
// state against the rules and the deal its key implies, and rejects
// anything else with an error wrapping ErrBadState (g is then unchanged).
func (g *Game) UnmarshalBinary(data []byte) error {
	if len(data) == 0 || data[0] != binaryVersion {
		return fmt.Errorf("%w: unknown version", ErrBadState)
	}
	if len(data) != binarySize {
		return fmt.Errorf("%w: %d bytes, want %d", ErrBadState, len(data), binarySize)
	}
	var n Game
	p := data[1:]
	copy(n.key[:], p)
	if p[32] > 1 {
		return fmt.Errorf("%w: local flag %d", ErrBadState, p[32])
	}
	n.local = p[32] == 1
	n.localSeed = binary.LittleEndian.Uint64(p[33:])
	p = p[41:]
	n.variant, n.hand, n.firstDealer, n.phase = Variant(p[0]), int8(p[1]), int8(p[2]), Phase(p[3])
	n.turn, n.trump, n.turned = int8(p[4]), cards.Suit(p[5]), cards.Card(p[6])
	p = p[7:]
	for s := range Seats {
		n.bids[s], n.tricks[s] = int8(p[s]), int8(p[Seats+s])
	}
	p = p[2*Seats:]
	n.trickNo, n.leader, n.nPlayed, n.ledSuit = int8(p[0]), int8(p[1]), int8(p[2]), cards.Suit(p[3])
	p = p[4:]
	for i := range Seats {
		n.trickCards[i], n.trickJoker[i] = cards.Card(p[i]), JokerMode(p[Seats+i])
	}
	p = p[2*Seats:]
	for s := range Seats {
		n.hands[s] = cards.Set(binary.LittleEndian.Uint64(p[8*s:]))
	}
	p = p[8*Seats:]
	n.played = cards.Set(binary.LittleEndian.Uint64(p))
	p = p[8:]
	for h := range maxHands {
		for s := range Seats {
			n.results[h].bids[s] = int8(p[s])
			n.results[h].tricks[s] = int8(p[Seats+s])
		}
		p = p[2*Seats:]
	}
	if err := n.validate(); err != nil {
		return err
	}
	*g = n
	return nil
}

// MarshalJSON writes the binary encoding as a base64 JSON string: a snapshot
// for storage, as secret as MarshalBinary.
func (g *Game) MarshalJSON() ([]byte, error) {
	b, err := g.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return json.Marshal(base64.StdEncoding.EncodeToString(b))
}

// UnmarshalJSON reads what MarshalJSON writes.
func (g *Game) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("%w: %w", ErrBadState, err)
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadState, err)
	}
	return g.UnmarshalBinary(b)
}

// validate checks that g is a state the rules can reach from its key: the
// cards held and played match the key's deal, counts match the trick
// number, and the phase's bookkeeping is consistent. Fields that do not
// matter in the current phase must hold their reset values, so an encoding
// reads back to the same bytes.
func (g *Game) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrBadState}, args...)...)
	}
	if !g.variant.Valid() {
		return bad("variant %d", g.variant)
	}
	total := g.variant.Hands()
	if g.hand < 0 || int(g.hand) > total {
		return bad("hand %d", g.hand)
	}
	if !g.local && g.localSeed != 0 {
		return bad("a live game with a seed")
	}
	undealt := g.hand == 0 && g.phase == PhaseDeal
	if g.firstDealer < -1 || g.firstDealer >= Seats || (g.firstDealer == -1) != undealt {
		return bad("first dealer %d", g.firstDealer)
	}
	for h := range maxHands {
		r := g.results[h]
		if h >= int(g.hand) {
			if r != (handRecord{}) {
				return bad("result of unplayed hand %d", h+1)
			}
			continue
		}
		n, sumB, sumT := int8(g.variant.CardsInHand(h)), 0, 0
		for s := range Seats {
			if r.bids[s] < 0 || r.bids[s] > n || r.tricks[s] < 0 || r.tricks[s] > n {
				return bad("hand %d: bid or tricks out of range", h+1)
			}
			sumB += int(r.bids[s])
			sumT += int(r.tricks[s])
		}
		if sumB == int(n) || sumT != int(n) {
			return bad("hand %d: bids total %d, tricks total %d", h+1, sumB, sumT)
		}
	}

	// Everything that belongs to the current hand, rebuilt from the key and
	// the few free choices, must equal what was stored.
	want := Game{local: g.local, localSeed: g.localSeed, variant: g.variant, hand: g.hand,
		firstDealer: g.firstDealer, results: g.results}
	want.resetHand()
	want.turn = -1
	if int(g.hand) == total {
		want.phase = PhaseOver
		if *g != want {
			return bad("finished game with hand state")
		}
		return nil
	}
	if g.phase == PhaseDeal {
		want.phase = PhaseDeal
		if g.local || *g != want {
			return bad("a hand waiting for its deal with hand state")
		}
		return nil
	}
	if g.local && g.key != fairdeal.LocalKey(g.localSeed, uint32(g.hand)) {
		return bad("a local game's key is not its seed's")
	}
	want.key = g.key
	d, firstDealer := fairdeal.ShuffleDraw(g.key, Seats)
	if g.hand == 0 && int(g.firstDealer) != firstDealer {
		return bad("first dealer %d is not the key's", g.firstDealer)
	}
	n := g.variant.CardsInHand(int(g.hand))
	dealer := g.dealerOf(int(g.hand))
	first := int8((dealer + 1) % Seats)
	dealt, _, turned := dealDeck(&d, n, dealer)
	want.hands, want.leader, want.turn, want.phase = dealt, first, first, g.phase
	switch g.phase {
	case PhaseTrump:
		if n != MaxCards {
			return bad("trump chosen in a %d-card hand", n)
		}
	case PhaseBid, PhasePlay:
		if n == MaxCards {
			if g.trump > cards.NoSuit {
				return bad("trump %d", g.trump)
			}
			want.trump = g.trump
		} else {
			want.turned, want.trump = turned, turned.Suit()
		}
		sum := 0
		for i := range Seats {
			s := (int(first) + i) % Seats
			b := g.bids[s]
			if b == noBid && g.phase == PhaseBid {
				break
			}
			if b < 0 || int(b) > n {
				return bad("bid %d", b)
			}
			want.bids[s] = b
			sum += int(b)
			if g.phase == PhaseBid {
				want.turn = int8((s + 1) % Seats)
			}
		}
		if g.phase == PhaseBid {
			if want.bids[dealer] != noBid {
				return bad("the dealer bid but play has not started")
			}
			break
		}
		if sum == n {
			return bad("bids total the cards dealt")
		}
		if err := g.validatePlay(&want, &dealt, n); err != nil {
			return err
		}
	default:
		return bad("phase %d", g.phase)
	}
	if *g != want {
		return bad("hand state does not match the deal")
	}
	return nil
}

// validatePlay checks the play phase against the deal and copies the
// checked play bookkeeping into want.
func (g *Game) validatePlay(want *Game, dealt *[Seats]cards.Set, n int) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrBadState}, args...)...)
	}
	if g.trickNo < 0 || int(g.trickNo) >= n {
		return bad("trick %d", g.trickNo)
	}
	sum := 0
	for s := range Seats {
		if g.tricks[s] < 0 {
			return bad("tricks %d", g.tricks[s])
		}
		sum += int(g.tricks[s])
	}
	if sum != int(g.trickNo) {
		return bad("tricks total %d after %d tricks", sum, g.trickNo)
	}
	if g.leader < 0 || g.leader >= Seats || (g.trickNo == 0 && g.leader != want.leader) {
		return bad("leader %d", g.leader)
	}
	if g.nPlayed < 0 || g.nPlayed >= Seats {
		return bad("%d cards in the trick", g.nPlayed)
	}
	want.tricks, want.trickNo, want.leader, want.nPlayed = g.tricks, g.trickNo, g.leader, g.nPlayed
	want.turn = (g.leader + g.nPlayed) % Seats
	var inTrick [Seats]bool
	for i := range int(g.nPlayed) {
		c, j, s := g.trickCards[i], g.trickJoker[i], (int(g.leader)+i)%Seats
		if !c.Valid() || !dealt[s].Has(c) || g.hands[s].Has(c) {
			return bad("trick card %d", c)
		}
		switch {
		case !c.IsJoker():
			if j != JokerNone {
				return bad("declaration on %v", c)
			}
		case i == 0:
			if (j != JokerHighest && j != JokerGive) || !g.ledSuit.Valid() {
				return bad("leading joker declared %v %v", j, g.ledSuit)
			}
		default:
			if j != JokerTake && j != JokerDiscard {
				return bad("following joker declared %v", j)
			}
		}
		if i == 0 && !c.IsJoker() && g.ledSuit != c.Suit() {
			return bad("led suit %v under %v", g.ledSuit, c)
		}
		want.trickCards[i], want.trickJoker[i] = c, j
		inTrick[s] = true
	}
	if g.nPlayed > 0 {
		want.ledSuit = g.ledSuit
	}
	var played cards.Set
	for s := range Seats {
		h := g.hands[s]
		gone := dealt[s] &^ h
		wantGone := int(g.trickNo)
		if inTrick[s] {
			wantGone++
		}
		if h&^dealt[s] != 0 || gone.Len() != wantGone {
			return bad("seat %d holds cards that do not match the deal", s)
		}
		played |= gone
	}
	want.hands, want.played = g.hands, played
	return nil
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}
