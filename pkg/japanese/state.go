package japanese

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/fairdeal"
)

// stateVersion is the first byte of MarshalBinary's output and the
// "version" of MarshalJSON's; bump it when the layout changes.
//
// Version 2 holds the current hand's shuffle key, the local flag and the
// local seed where version 1 held the match's seed. Version 1 is not read:
// its deals came from a seed the game id made public.
const stateVersion = 2

// binarySize is the length of a version-2 binary state.
const binarySize = 1 + 32 + 1 + 8 + 4 + 4 + 10 + 6 + 3*8 + 4*Columns + MaxRecordedHands

// MarshalBinary writes the whole state: the version byte, then the fields in
// a fixed little-endian layout.
func (g *Game) MarshalBinary() ([]byte, error) {
	return g.AppendBinary(make([]byte, 0, binarySize))
}

// AppendBinary appends the MarshalBinary encoding to b.
func (g *Game) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, stateVersion)
	b = append(b, g.key[:]...)
	b = append(b, boolByte(g.local))
	b = binary.LittleEndian.AppendUint64(b, g.localSeed)
	b = binary.LittleEndian.AppendUint32(b, g.hand)
	b = binary.LittleEndian.AppendUint32(b, g.finished)
	b = append(b, g.target, uint8(g.phase), g.first, uint8(g.trump), boolByte(g.chosen),
		g.leader, g.trickNo, uint8(g.named), uint8(g.winner), uint8(g.reason))
	b = append(b, uint8(g.trick[0]), uint8(g.trick[1]), g.tricks[0], g.tricks[1], g.scores[0], g.scores[1])
	b = binary.LittleEndian.AppendUint64(b, uint64(g.hands[0]))
	b = binary.LittleEndian.AppendUint64(b, uint64(g.hands[1]))
	b = binary.LittleEndian.AppendUint64(b, uint64(g.gone))
	for s := range Seats {
		for i := range Columns {
			b = append(b, uint8(g.up[s][i]), uint8(g.down[s][i]))
		}
	}
	return append(b, g.results[:]...), nil
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// UnmarshalBinary restores a state written by MarshalBinary. It rejects
// anything that is not a reachable-looking state (ErrBadState) and leaves g
// unchanged then.
func (g *Game) UnmarshalBinary(b []byte) error {
	if len(b) == 0 || b[0] != stateVersion {
		return fmt.Errorf("%w: unknown version", ErrBadState)
	}
	if len(b) != binarySize {
		return fmt.Errorf("%w: %d bytes, want %d", ErrBadState, len(b), binarySize)
	}
	var n Game
	p := b[1:]
	copy(n.key[:], p)
	if p[32] > 1 {
		return fmt.Errorf("%w: local flag %d", ErrBadState, p[32])
	}
	n.local = p[32] == 1
	n.localSeed = binary.LittleEndian.Uint64(p[33:])
	p = p[41:]
	n.hand = binary.LittleEndian.Uint32(p)
	n.finished = binary.LittleEndian.Uint32(p[4:])
	p = p[8:]
	if p[4] > 1 {
		return fmt.Errorf("%w: flag byte %d", ErrBadState, p[4])
	}
	n.target, n.phase, n.first, n.trump, n.chosen = p[0], Phase(p[1]), p[2], cards.Suit(p[3]), p[4] == 1
	n.leader, n.trickNo, n.named, n.winner, n.reason = p[5], p[6], cards.Suit(p[7]), int8(p[8]), EndReason(p[9])
	p = p[10:]
	n.trick = [Seats]cards.Card{cards.Card(p[0]), cards.Card(p[1])}
	n.tricks = [Seats]uint8{p[2], p[3]}
	n.scores = [Seats]uint8{p[4], p[5]}
	p = p[6:]
	n.hands[0] = cards.Set(binary.LittleEndian.Uint64(p))
	n.hands[1] = cards.Set(binary.LittleEndian.Uint64(p[8:]))
	n.gone = cards.Set(binary.LittleEndian.Uint64(p[16:]))
	p = p[24:]
	for s := range Seats {
		for i := range Columns {
			n.up[s][i], n.down[s][i] = cards.Card(p[0]), cards.Card(p[1])
			p = p[2:]
		}
	}
	copy(n.results[:], p)
	n.syncFaceUps()
	if err := n.validate(); err != nil {
		return err
	}
	*g = n
	return nil
}

func bad(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadState}, args...)...)
}

// validate checks that the state is one the rules can reach: every card in
// exactly one place, counts that add up, the deal's columns where the deal
// put them, a scoreboard consistent with the phase.
func (g *Game) validate() error {
	if (Settings{Target: int(g.target)}).Validate() != nil || g.target == 0 {
		return bad("target %d", g.target)
	}
	undealt := g.hand == 0 && !g.dealt()
	if g.phase > PhaseDeal || (g.first >= Seats && !(undealt && g.first == noDeclarer)) || g.trump > cards.NoSuit || g.leader >= Seats ||
		g.trickNo > TricksPerHand || g.named > cards.NoSuit || g.winner < -1 || g.winner >= Seats ||
		g.reason > ReasonForfeit {
		return bad("field out of range")
	}
	over := g.phase == PhaseOver
	if over != (g.winner >= 0) || over != (g.reason != ReasonNone) {
		return bad("winner/reason do not match the phase")
	}
	wantFinished := g.hand
	if g.reason == ReasonTarget {
		wantFinished++
	}
	if g.finished != wantFinished {
		return bad("%d hands finished in hand %d", g.finished, g.hand)
	}
	if err := g.validateScores(); err != nil {
		return err
	}
	if !g.local && g.localSeed != 0 {
		return bad("a live match with a seed")
	}
	if g.local && g.key != fairdeal.LocalKey(g.localSeed, g.hand) {
		return bad("a local match's key is not its seed's")
	}
	if g.dealt() && g.hand == 0 {
		if _, first := fairdeal.ShuffleDraw(g.key, Seats); int(g.first) != first {
			return bad("first declarer %d is not the key's", g.first)
		}
	}
	if g.chosen {
		return g.validatePlay()
	}
	if !g.dealt() {
		return g.validateUndealt()
	}
	return g.validateTrump()
}

// validateUndealt checks a hand waiting for its deal (or a match resigned
// while it waited): nothing of it exists yet.
func (g *Game) validateUndealt() error {
	if g.local || (g.phase != PhaseDeal && (g.phase != PhaseOver || g.reason == ReasonTarget)) {
		return bad("an undealt hand in phase %v", g.phase)
	}
	if (g.hand == 0) != (g.first == noDeclarer) {
		return bad("first declarer %d in hand %d", g.first, g.hand)
	}
	if g.trump != cards.NoSuit || g.named != cards.NoSuit || g.trickNo != 0 || g.gone != 0 ||
		g.tricks != [Seats]uint8{} || g.leader != 0 || g.hands != [Seats]cards.Set{} ||
		g.trick != [Seats]cards.Card{cards.NoCard, cards.NoCard} {
		return bad("hand state before the deal of hand %d", g.hand)
	}
	for s := range Seats {
		for i := range Columns {
			if g.up[s][i] != cards.NoCard || g.down[s][i] != cards.NoCard {
				return bad("columns before the deal")
			}
		}
	}
	return nil
}

func (g *Game) validateScores() error {
	sum := [Seats]int{}
	for h := range MaxRecordedHands {
		r := g.results[h]
		// Slot h holds a hand once h hands have finished, and forever after.
		if uint32(h) >= g.finished {
			if r != 0 {
				return bad("result in an unused slot")
			}
			continue
		}
		if r&0x1f > TricksPerHand || r>>5 > uint8(cards.NoSuit) {
			return bad("result byte %#x", r)
		}
		d := 2*int(r&0x1f) - TricksPerHand
		if d > 0 {
			sum[0] += d
		} else {
			sum[1] -= d
		}
	}
	t := int(g.target)
	for s := range Seats {
		sc := int(g.scores[s])
		if g.finished <= MaxRecordedHands && sc != sum[s] {
			return bad("seat %d score %d, hands add up to %d", s, sc, sum[s])
		}
		if sc >= t+TricksPerHand {
			return bad("score %d", sc)
		}
		if sc >= t && (g.reason != ReasonTarget || int(g.winner) != s) {
			return bad("seat %d at %d has not won", s, sc)
		}
	}
	if g.reason == ReasonTarget && int(g.scores[g.winner]) < t {
		return bad("winner below target")
	}
	return nil
}

// validateTrump checks a hand waiting for its trump: exactly the first deal.
func (g *Game) validateTrump() error {
	d := g.deck()
	decl := g.Declarer()
	if g.trump != cards.NoSuit || g.named != cards.NoSuit || g.trickNo != 0 || g.gone != 0 ||
		g.tricks != [Seats]uint8{} || int(g.leader) != decl ||
		g.trick != [Seats]cards.Card{cards.NoCard, cards.NoCard} ||
		g.hands[decl] != cards.SetOf(d[0], d[1], d[2]) || g.hands[1-decl] != cards.SetOf(d[3], d[4], d[5]) {
		return bad("not the first deal of hand %d", g.hand)
	}
	if g.phase == PhasePlay || g.phase == PhaseDeal || (g.phase == PhaseOver && g.reason == ReasonTarget) {
		return bad("phase %v without trump", g.phase)
	}
	for s := range Seats {
		for i := range Columns {
			if g.up[s][i] != cards.NoCard || g.down[s][i] != cards.NoCard {
				return bad("columns before the trump choice")
			}
		}
	}
	return nil
}

// validatePlay checks a hand whose trump is chosen.
func (g *Game) validatePlay() error {
	if g.phase == PhaseTrump || g.phase == PhaseDeal || !g.dealt() {
		return bad("trump chosen in phase %v", g.phase)
	}
	if (g.trickNo == TricksPerHand) != (g.reason == ReasonTarget) {
		return bad("trick %d in phase %v", g.trickNo, g.phase)
	}
	if int(g.tricks[0])+int(g.tricks[1]) != int(g.trickNo) || g.gone.Len() != 2*int(g.trickNo) {
		return bad("tricks do not add up")
	}
	l, a := int(g.leader), 1-int(g.leader)
	if g.trick[a] != cards.NoCard {
		return bad("a complete trick left on the table")
	}
	if (g.named != cards.NoSuit) != (g.trick[l].IsJoker()) {
		return bad("named suit without a led joker")
	}
	if g.trickNo == 0 && int(g.leader) != g.Declarer() {
		return bad("the declarer leads the first trick")
	}
	if g.reason == ReasonTarget && g.results[g.hand%MaxRecordedHands] != packResult(g.tricks[0], g.trump) {
		return bad("last hand's record")
	}
	d := g.deck()
	var all cards.Set
	add := func(c cards.Set) error {
		if all&c != 0 || c&^cards.FullDeck != 0 {
			return bad("a card in two places")
		}
		all |= c
		return nil
	}
	if err := add(g.gone); err != nil {
		return err
	}
	for k, s := range [Seats]int{g.Declarer(), 1 - g.Declarer()} {
		if err := add(g.hands[s]); err != nil {
			return err
		}
		played := int(g.trickNo)
		if c := g.trick[s]; c != cards.NoCard {
			if err := add(c.Bit()); err != nil {
				return err
			}
			played++
		}
		cols := 0
		for i := range Columns {
			up, down := g.up[s][i], g.down[s][i]
			if up == cards.NoCard && down == cards.NoCard {
				continue
			}
			if up != d[21+10*k+i] || down != d[16+10*k+i] {
				return bad("seat %d column %d is not the deal's", s, i)
			}
			if err := add(up.Bit() | down.Bit()); err != nil {
				return err
			}
			cols++
		}
		if cols == 1 || (cols < Columns && played < 2) {
			return bad("seat %d has %d columns after %d cards", s, cols, played)
		}
		if g.hands[s].Len()+2*cols+played != TricksPerHand {
			return bad("seat %d holds the wrong number of cards", s)
		}
	}
	if all != cards.FullDeck {
		return bad("cards missing")
	}
	return nil
}

// stateJSON is the JSON snapshot: the same fields as the binary form.
type stateJSON struct {
	Version  int                     `json:"version"`
	Key      string                  `json:"key"`
	Local    bool                    `json:"local,omitempty"`
	Seed     uint64                  `json:"seed,string"`
	Hand     uint32                  `json:"hand"`
	Finished uint32                  `json:"finished"`
	Target   uint8                   `json:"target"`
	Phase    uint8                   `json:"phase"`
	First    uint8                   `json:"firstDeclarer"`
	Trump    uint8                   `json:"trump"`
	Chosen   bool                    `json:"trumpChosen"`
	Leader   uint8                   `json:"leader"`
	TrickNo  uint8                   `json:"trick"`
	Named    uint8                   `json:"named"`
	Winner   int8                    `json:"winner"`
	Reason   uint8                   `json:"reason"`
	Current  [Seats]uint8            `json:"currentTrick"`
	Tricks   [Seats]uint8            `json:"tricks"`
	Scores   [Seats]uint8            `json:"scores"`
	Hands    [Seats]uint64           `json:"hands"`
	Gone     uint64                  `json:"gone"`
	Up       [Seats][Columns]uint8   `json:"up"`
	Down     [Seats][Columns]uint8   `json:"down"`
	Results  [MaxRecordedHands]uint8 `json:"results"`
}

// MarshalJSON writes the whole state (hidden cards included: it is for the
// server's snapshots, never for a client — clients get View).
func (g *Game) MarshalJSON() ([]byte, error) {
	j := stateJSON{Version: stateVersion, Key: fairdeal.Hex(g.key), Local: g.local, Seed: g.localSeed, Hand: g.hand, Finished: g.finished,
		Target: g.target, Phase: uint8(g.phase), First: g.first, Trump: uint8(g.trump), Chosen: g.chosen,
		Leader: g.leader, TrickNo: g.trickNo, Named: uint8(g.named), Winner: g.winner, Reason: uint8(g.reason),
		Current: [Seats]uint8{uint8(g.trick[0]), uint8(g.trick[1])}, Tricks: g.tricks, Scores: g.scores,
		Hands: [Seats]uint64{uint64(g.hands[0]), uint64(g.hands[1])}, Gone: uint64(g.gone), Results: g.results}
	for s := range Seats {
		for i := range Columns {
			j.Up[s][i], j.Down[s][i] = uint8(g.up[s][i]), uint8(g.down[s][i])
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON restores a state written by MarshalJSON, with the same checks
// as UnmarshalBinary.
func (g *Game) UnmarshalJSON(b []byte) error {
	var j stateJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("%w: %w", ErrBadState, err)
	}
	if j.Version != stateVersion {
		return bad("unknown version %d", j.Version)
	}
	key, err := fairdeal.ParseSeed(j.Key)
	if err != nil {
		return fmt.Errorf("%w: key: %w", ErrBadState, err)
	}
	n := Game{key: key, local: j.Local, localSeed: j.Seed, hand: j.Hand, finished: j.Finished, target: j.Target, phase: Phase(j.Phase),
		first: j.First, trump: cards.Suit(j.Trump), chosen: j.Chosen, leader: j.Leader, trickNo: j.TrickNo,
		named: cards.Suit(j.Named), winner: j.Winner, reason: EndReason(j.Reason),
		trick: [Seats]cards.Card{cards.Card(j.Current[0]), cards.Card(j.Current[1])}, tricks: j.Tricks,
		scores: j.Scores, hands: [Seats]cards.Set{cards.Set(j.Hands[0]), cards.Set(j.Hands[1])},
		gone: cards.Set(j.Gone), results: j.Results}
	for s := range Seats {
		for i := range Columns {
			n.up[s][i], n.down[s][i] = cards.Card(j.Up[s][i]), cards.Card(j.Down[s][i])
		}
	}
	n.syncFaceUps()
	if err := n.validate(); err != nil {
		return err
	}
	*g = n
	return nil
}
