package japanese

import "github.com/pulka/pulka/pkg/cards"

// StrongRollouts is StrongBot's default budget: the playouts one decision
// may run, a hard CPU cap that never depends on a clock.
const StrongRollouts = 256

// StrongBot plays by flat Monte Carlo over what its seat cannot see: for
// each candidate card it deals the hidden cards (the opponent's hand and
// every face-down card, its own included) anew, consistently with the
// public counts, plays the hand out with the baseline for both seats, and
// keeps the card that gains most on the opponent (the hand's points are
// the difference in tricks; finishing the match counts extra).
//
// Its random numbers come from Seed and a hash of what its seat may see, so
// it is deterministic and honest: two games that look the same from its
// seat get the same move (TestStrongBot_IsHonest). Rollouts caps its CPU
// (0 means StrongRollouts).
type StrongBot struct {
	Seed     uint64
	Rollouts int
}

// Choose picks seat's move.
func (b StrongBot) Choose(g *Game, seat int) (Move, bool) {
	if seat < 0 || seat != g.ToMove() {
		return Move{}, false
	}
	m, _ := b.decide(g, seat)
	return m, true
}

// decide is seat's move and the playouts it cost: never more than the
// budget, or one per candidate when there are more candidates.
func (b StrongBot) decide(g *Game, seat int) (Move, int) {
	if g.phase == PhaseTrump {
		m, _ := Bot{}.Choose(g, seat)
		return m, 0
	}
	var buf [MaxLegal]Move
	cands := cards.OneJoker(g.Legal(seat, buf[:0]), func(m Move) cards.Card { return m.Card })
	if len(cands) == 1 {
		return cands[0], 0
	}
	budget := b.Rollouts
	if budget <= 0 {
		budget = StrongRollouts
	}
	samples := max(budget/len(cands), 1)
	base, _ := Bot{}.Choose(g, seat)
	s := newSampler(g, seat, b.Seed)
	var total [MaxLegal]float64
	for range samples {
		world := s.sample()
		for i, m := range cands {
			v, ok := playout(&world, m, seat)
			if !ok {
				return base, 0 // a bug in the simulation: the baseline's move is legal
			}
			total[i] += v
		}
	}
	best := 0
	for i, m := range cands {
		if m == base {
			best = i
		}
	}
	for i := range cands {
		if total[i] > total[best]+1e-9 {
			best = i
		}
	}
	return cands[best], samples * len(cands)
}

// matchBonus is what ending the match is worth, in tricks of difference.
const matchBonus = 6

// playout plays m in a copy of from, then the hand to its end with the
// baseline, and returns what it gained seat over the opponent: the
// difference of the points scored, and matchBonus for the match won or
// lost. ok is false only if the engine refused a simulated move (a bug:
// the caller falls back on a legal move).
func playout(from *Game, m Move, seat int) (_ float64, ok bool) {
	w := *from
	g := &w
	var evs [24]Event
	for {
		if _, err := g.Apply(m, evs[:0]); err != nil {
			return 0, false
		}
		if g.phase != PhasePlay || g.hand != from.hand {
			break
		}
		m, _ = Bot{}.Choose(g, g.ToMove())
	}
	v := float64(int(g.scores[seat])-int(from.scores[seat])) - float64(int(g.scores[1-seat])-int(from.scores[1-seat]))
	if g.phase == PhaseOver {
		if int(g.winner) == seat {
			v += matchBonus
		} else {
			v -= matchBonus
		}
	}
	return v, true
}

// sampler deals the cards a seat cannot see: the opponent's hand and the
// face-down cards under both seats' remaining columns.
type sampler struct {
	g      *Game
	seat   int
	rng    cards.RNG
	hidden cards.Set
}

func newSampler(g *Game, seat int, seed uint64) *sampler {
	s := &sampler{g: g, seat: seat, rng: cards.NewRNG(viewHash(g, seat, seed), 0x5eed)}
	s.hidden = cards.FullDeck &^ g.hands[seat] &^ g.faceUps[0] &^ g.faceUps[1] &^ g.gone
	for _, c := range g.trick {
		if c != cards.NoCard {
			s.hidden = s.hidden.Without(c)
		}
	}
	return s
}

// sample returns a copy of the game with the hidden cards dealt anew, each
// place keeping its count.
func (s *sampler) sample() Game {
	w := *s.g
	w.local = false // a simulation never deals the next hand
	var deck [cards.DeckSize]cards.Card
	n := 0
	for u := s.hidden; u != 0; u &= u - 1 {
		deck[n] = u.Lowest()
		n++
	}
	for i := n - 1; i > 0; i-- {
		j := s.rng.IntN(i + 1)
		deck[i], deck[j] = deck[j], deck[i]
	}
	opp := 1 - s.seat
	k := w.hands[opp].Len()
	w.hands[opp] = cards.SetOf(deck[:k]...)
	for p := range Seats {
		for i := range Columns {
			if w.down[p][i] != cards.NoCard {
				w.down[p][i] = deck[k]
				k++
			}
		}
	}
	return w
}

// viewHash mixes seed with what seat may see.
func viewHash(g *Game, seat int, seed uint64) uint64 {
	h := seed ^ 0x9e3779b97f4a7c15
	mix := func(v uint64) { h = splitmix(h ^ v) }
	mix(uint64(seat)<<32 | uint64(g.hand))
	mix(uint64(g.hands[seat]))
	mix(uint64(g.faceUps[0]))
	mix(uint64(g.faceUps[1]))
	mix(uint64(g.gone))
	mix(uint64(g.trick[0])<<8 | uint64(g.trick[1]) | uint64(g.named)<<16 | uint64(g.trump)<<24 | uint64(g.trickNo)<<32)
	mix(uint64(g.scores[0])<<8 | uint64(g.scores[1]) | uint64(g.tricks[0])<<16 | uint64(g.tricks[1])<<24)
	return h
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
