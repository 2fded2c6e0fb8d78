package classic

import "github.com/pulka/pulka/pkg/cards"

// Player chooses the move of a seat. Choose returns ok == false when it is
// not that seat's turn.
type Player interface {
	Choose(g *Game, seat int) (m Move, ok bool)
}

// Bot is the baseline player: deterministic, always legal, allocation-free,
// and honest: it decides only from what its seat's View shows (its own
// cards, bids, tricks, trump, the cards played this hand, the trick on the
// table). It plays to make its bid exactly. The service uses it for seats
// whose player has left and for the move made when a player's time runs out.
type Bot struct{}

// Choose picks seat's move.
func (Bot) Choose(g *Game, seat int) (Move, bool) {
	if seat != g.ToMove() {
		return Move{}, false
	}
	switch g.phase {
	case PhaseTrump:
		_, first, _ := deal(g.seed, int(g.hand), MaxCards, g.Dealer())
		return TrumpMove(seat, ChooseTrumpFor(first[seat])), true
	case PhaseBid:
		return BidMove(seat, chooseBid(g, seat)), true
	}
	k := knowledgeOf(g, seat)
	if g.nPlayed == 0 {
		return k.lead(), true
	}
	return k.follow(), true
}

// ChooseTrumpFor is the baseline's trump from the first three cards: the
// longest suit (the better top card breaks ties) when it has two cards or
// its single card is a king or ace; no trump when the three are scattered
// and low.
func ChooseTrumpFor(first cards.Set) cards.Suit {
	best, bestScore, bestLen := cards.NoSuit, -1, 0
	var bestTop cards.Rank
	for _, s := range cards.Suits {
		in := first.OfSuit(s)
		n := in.Len()
		if n == 0 {
			continue
		}
		top := in.Highest().Rank()
		if score := n*16 + int(top); score > bestScore {
			best, bestScore, bestLen, bestTop = s, score, n, top
		}
	}
	if bestLen >= 2 || (bestLen == 1 && bestTop >= cards.King) {
		return best
	}
	return cards.NoSuit
}

// chooseBid bids the rounded estimate of the tricks the hand will take,
// moved by one when the dealer may not bid it.
func chooseBid(g *Game, seat int) int {
	n := g.CardsDealt()
	e := EstimateTricks(g.hands[seat], g.trump, n, g.unseenBy(seat).Len())
	b := int(e + 0.5)
	b = min(max(b, 0), n)
	if f := g.forbiddenBid(seat); b == f {
		// Go to the side the estimate leans to, if there is room.
		switch {
		case b == 0:
			b = 1
		case b == n:
			b = n - 1
		case e >= float64(b):
			b++
		default:
			b--
		}
	}
	return b
}

// unseenBy is every card seat cannot place: not its own, not played this
// hand, not the turned card.
func (g *Game) unseenBy(seat int) cards.Set {
	u := cards.FullDeck &^ g.hands[seat] &^ g.played
	if g.turned != cards.NoCard {
		u = u.Without(g.turned)
	}
	return u
}

// EstimateTricks is the baseline's count of the tricks hand h should take
// with trump (cards.NoSuit = none) in an n-card hand, when unseen cards are
// unknown to the bidder (3n of them are in the other hands). Jokers are
// nearly sure tricks; a card counts as much as the chance that no higher
// card of its suit is in play, less for the third and later cards of a
// side suit (they get trumped), and long trumps win by length.
func EstimateTricks(h cards.Set, trump cards.Suit, n, unseen int) float64 {
	if unseen <= 0 {
		unseen = 1
	}
	p := float64(3*n) / float64(unseen) // chance an unseen card is in play
	if p > 1 {
		p = 1
	}
	e := 0.95 * float64(h.Jokers().Len())
	for _, s := range cards.Suits {
		mine := h.OfSuit(s)
		l := mine.Len()
		if l == 0 {
			continue
		}
		higher, i := 0, 0 // unseen cards above the current one; my cards above it
		for r := cards.Ace; ; r-- {
			c := cards.New(s, r)
			if !c.IsJoker() {
				if !mine.Has(c) {
					higher++
				} else {
					e += cardValue(s == trump, trump == cards.NoSuit, float64(higher)*p, i, l)
					i++
				}
			}
			if r == cards.Six {
				break
			}
		}
		if s == trump && l > 3 {
			e += 0.6 * float64(l-3)
		}
	}
	return min(e, float64(n))
}

// sideKeep is how much of its value the i-th highest card of a side suit
// keeps: later rounds of a suit get trumped or run out.
var sideKeep = [MaxCards]float64{0.85, 0.6, 0.3, 0.15, 0.05, 0, 0, 0, 0}

// cardValue is one card's share of a trick. out is the expected number of
// higher cards of its suit in the other hands; i is how many of the seat's
// own cards of that suit are higher (they draw those cards out); l is the
// suit's length in hand.
func cardValue(isTrump, noTrump bool, out float64, i, l int) float64 {
	v := 1 - 0.5*max(out-0.6*float64(i), 0)
	if v <= 0 {
		return 0
	}
	switch {
	case isTrump:
		return v
	case noTrump:
		return v * [MaxCards]float64{0.95, 0.75, 0.5, 0.35, 0.2, 0.1, 0.05, 0, 0}[i]
	}
	_ = l
	return v * sideKeep[i]
}

// knowledge is what the bot's seat may know, gathered once per decision.
type knowledge struct {
	g       *Game
	seat    int
	hand    cards.Set
	legal   cards.Set // playable now, jokers included
	unseen  cards.Set
	trump   cards.Suit
	need    int // tricks still wanted to make the bid exactly (negative: over)
	left    int // cards in hand, so tricks still to play
	after   int // seats still to play to this trick after this one
	jokers  int
	ordered [Seats]cards.Card
}

func knowledgeOf(g *Game, seat int) knowledge {
	h := g.hands[seat]
	return knowledge{
		g: g, seat: seat, hand: h, legal: g.playable(seat), unseen: g.unseenBy(seat),
		trump: g.trump, need: int(g.bids[seat]) - int(g.tricks[seat]), left: h.Len(),
		after: Seats - 1 - int(g.nPlayed), jokers: h.Jokers().Len(),
	}
}

// higherUnseen returns the unseen cards of c's suit above c.
func (k *knowledge) higherUnseen(c cards.Card) cards.Set {
	above := ^(c.Bit()<<1 - 1)
	return k.unseen.OfSuit(c.Suit()) & above
}

// isTop reports whether no unseen card of c's suit is higher.
func (k *knowledge) isTop(c cards.Card) bool { return k.higherUnseen(c) == 0 }

// winsNow reports whether playing c (an ordinary card) would put the seat
// ahead in the trick as it stands.
func (k *knowledge) winsNow(c cards.Card) bool {
	g := k.g
	cs, js := g.trickCards, g.trickJoker
	cs[g.nPlayed] = c
	js[g.nPlayed] = JokerNone
	return trickWinner(&cs, &js, g.ledSuit, g.trump) == int(g.nPlayed)
}

// holds estimates whether c, winning now, stays the winner: nobody after
// can follow higher, and no unseen joker or trump is a threat worth fearing.
func (k *knowledge) holds(c cards.Card) bool {
	if k.after == 0 {
		return true
	}
	if k.unseen.Jokers() != 0 && k.left <= 2 {
		return false
	}
	if c.Suit() == k.g.ledSuit || c.Suit() == k.trump {
		if !k.isTop(c) {
			return false
		}
	}
	if c.Suit() != k.trump && k.trump.Valid() && k.g.trickJoker[0] != JokerHighest {
		// A side card is safe while the others are likely still to hold its suit.
		return k.unseen.OfSuit(k.trump) == 0 || k.unseen.OfSuit(c.Suit()).Len() >= 2*k.after
	}
	return true
}

// likelyWinners counts the ordinary cards in hand that should take a trick
// later: top cards of their suit (side suits only while the suit is still
// around).
func (k *knowledge) likelyWinners() int {
	n := 0
	for _, s := range cards.Suits {
		mine := k.hand.OfSuit(s)
		if mine == 0 {
			continue
		}
		top := mine.Highest()
		if !k.isTop(top) {
			continue
		}
		n++
		if s == k.trump {
			// More top trumps in a row.
			rest := mine.Without(top)
			for rest != 0 {
				c := rest.Highest()
				if k.higherUnseen(c) != 0 {
					break
				}
				n++
				rest = rest.Without(c)
			}
		}
	}
	return n
}

// lowest is the least useful card of set: the lowest rank, side suits before
// trumps.
func (k *knowledge) lowest(set cards.Set) cards.Card {
	best, bestScore := cards.NoCard, 1<<30
	for s := set &^ cards.Jokers; s != 0; s &= s - 1 {
		c := s.Lowest()
		score := int(c.Rank())
		if c.Suit() == k.trump {
			score += 20
		}
		if score < bestScore {
			best, bestScore = c, score
		}
	}
	return best
}

// dangerous is the card of set most likely to win a trick the seat does not
// want: the highest rank, trumps first.
func (k *knowledge) dangerous(set cards.Set) cards.Card {
	best, bestScore := cards.NoCard, -1<<30
	for s := set &^ cards.Jokers; s != 0; s &= s - 1 {
		c := s.Lowest()
		score := int(c.Rank()) - k.higherUnseen(c).Len()
		if c.Suit() == k.trump {
			score += 20
		}
		if score > bestScore {
			best, bestScore = c, score
		}
	}
	return best
}

func (k *knowledge) wantsTricks() bool { return k.need != 0 }

// useJoker reports whether a trick wanted now is worth a joker: when every
// remaining trick is needed, or when the other cards will not make the bid.
func (k *knowledge) useJoker() bool {
	return k.jokers > 0 && (k.need >= k.left || k.need > k.likelyWinners()+k.jokers-1)
}

func (k *knowledge) joker() cards.Card { return k.hand.Jokers().Lowest() }

// lead chooses the card to lead.
func (k *knowledge) lead() Move {
	seat := k.seat
	if k.hand&^cards.Jokers == 0 {
		if k.wantsTricks() {
			return JokerMove(seat, k.joker(), JokerHighest, k.pullSuit())
		}
		return JokerMove(seat, k.joker(), JokerGive, k.commonSuit())
	}
	if k.wantsTricks() {
		// A sure winner first.
		var sure cards.Card = cards.NoCard
		for s := k.hand &^ cards.Jokers; s != 0; s &= s - 1 {
			c := s.Lowest()
			if !k.isTop(c) {
				continue
			}
			if c.Suit() != k.trump && k.trump.Valid() && k.unseen.OfSuit(k.trump) != 0 &&
				k.unseen.OfSuit(c.Suit()).Len() < 3 {
				continue // likely trumped
			}
			if sure == cards.NoCard || c.Suit() == k.trump {
				sure = c
			}
		}
		if sure != cards.NoCard && (k.jokers == 0 || k.need < k.left) {
			return PlayMove(seat, sure)
		}
		if k.useJoker() || (k.jokers > 0 && sure == cards.NoCard && k.need >= k.left) {
			return JokerMove(seat, k.joker(), JokerHighest, k.pullSuit())
		}
		if sure != cards.NoCard {
			return PlayMove(seat, sure)
		}
		// Nothing sure: lead low from the longest side suit, saving trumps.
		return PlayMove(seat, k.lowFromLongest())
	}
	// Ducking: lead the card least likely to win.
	best, bestScore := cards.NoCard, -1<<30
	for s := k.hand &^ cards.Jokers; s != 0; s &= s - 1 {
		c := s.Lowest()
		score := 4*k.higherUnseen(c).Len() - int(c.Rank())
		if c.Suit() == k.trump {
			score -= 30
		}
		if score > bestScore {
			best, bestScore = c, score
		}
	}
	if best != cards.NoCard && k.higherUnseen(best) != 0 {
		return PlayMove(seat, best)
	}
	if k.jokers > 0 {
		// Give the trick away in the suit the others most surely hold.
		return JokerMove(seat, k.joker(), JokerGive, k.commonSuit())
	}
	return PlayMove(seat, best)
}

// pullSuit is the suit a leading 'highest' joker names: trump (nothing but
// the other joker beats it, and it draws their high trumps); with no trump,
// the suit where the card above the seat's best is still out.
func (k *knowledge) pullSuit() cards.Suit {
	if k.trump.Valid() {
		return k.trump
	}
	best, bestScore := cards.Spades, -1<<30
	for _, s := range cards.Suits {
		mine := k.hand.OfSuit(s)
		score := -k.unseen.OfSuit(s).Len()
		if mine != 0 && k.higherUnseen(mine.Highest()).Len() == 1 {
			score += 100 + int(mine.Highest().Rank())
		}
		if score > bestScore {
			best, bestScore = s, score
		}
	}
	return best
}

// commonSuit is the suit with the most unseen cards.
func (k *knowledge) commonSuit() cards.Suit {
	best, n := cards.Spades, -1
	for _, s := range cards.Suits {
		if l := k.unseen.OfSuit(s).Len(); l > n {
			best, n = s, l
		}
	}
	return best
}

// lowFromLongest is the lowest card of the longest side suit (trumps only
// when nothing else is left).
func (k *knowledge) lowFromLongest() cards.Card {
	best, bestLen := cards.NoCard, -1
	for _, s := range cards.Suits {
		if s == k.trump {
			continue
		}
		mine := k.hand.OfSuit(s)
		if l := mine.Len(); l > bestLen && l > 0 {
			best, bestLen = mine.Lowest(), l
		}
	}
	if best == cards.NoCard {
		best = k.lowest(k.hand)
	}
	return best
}

// follow chooses the card to play on a trick somebody else led.
func (k *knowledge) follow() Move {
	seat := k.seat
	var winners, losers cards.Set
	for s := k.legal &^ cards.Jokers; s != 0; s &= s - 1 {
		c := s.Lowest()
		if k.winsNow(c) {
			winners = winners.With(c)
		} else {
			losers = losers.With(c)
		}
	}
	if k.wantsTricks() {
		if winners != 0 {
			cheapest := k.lowest(winners)
			if k.after == 0 {
				return PlayMove(seat, cheapest)
			}
			// The cheapest winner that should hold, else the strongest.
			var safe cards.Card = cards.NoCard
			for s := winners; s != 0; s &= s - 1 {
				c := s.Lowest()
				if k.holds(c) && (safe == cards.NoCard || k.lowest(safe.Bit()|c.Bit()) == c) {
					safe = c
				}
			}
			if safe != cards.NoCard {
				return PlayMove(seat, safe)
			}
			if k.jokers > 0 && k.useJoker() {
				return JokerMove(seat, k.joker(), JokerTake, 0)
			}
			return PlayMove(seat, k.dangerous(winners))
		}
		if k.jokers > 0 && k.useJoker() {
			return JokerMove(seat, k.joker(), JokerTake, 0)
		}
		if losers != 0 {
			return PlayMove(seat, k.lowest(losers))
		}
		return JokerMove(seat, k.joker(), JokerTake, 0)
	}
	// Ducking: shed the most dangerous card that still loses.
	if losers != 0 {
		return PlayMove(seat, k.dangerous(losers))
	}
	if k.jokers > 0 {
		return JokerMove(seat, k.joker(), JokerDiscard, 0)
	}
	if k.after == 0 {
		return PlayMove(seat, k.dangerous(winners))
	}
	return PlayMove(seat, k.lowest(winners))
}

// RandomBot plays a uniformly random legal move from its own seeded
// generator: the yardstick the baseline is measured against.
type RandomBot struct {
	rng cards.RNG
	buf [32]Move
}

// NewRandomBot returns a RandomBot seeded with seed.
func NewRandomBot(seed uint64) *RandomBot { return &RandomBot{rng: cards.NewRNG(seed, 0)} }

// Choose picks one of seat's legal moves at random.
func (b *RandomBot) Choose(g *Game, seat int) (Move, bool) {
	legal := g.Legal(seat, b.buf[:0])
	if len(legal) == 0 {
		return Move{}, false
	}
	return legal[b.rng.IntN(len(legal))], true
}
