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
	if seat < 0 || seat != g.ToMove() { // nobody moves while a hand waits for its deal, or after the end
		return Move{}, false
	}
	switch g.phase {
	case PhaseTrump:
		return TrumpMove(seat, ChooseTrumpFor(g.firstCards(seat))), true
	case PhaseBid:
		return BidMove(seat, chooseBid(g, seat)), true
	}
	k := knowledgeOf(g, seat)
	if g.nPlayed == 0 {
		return k.lead(), true
	}
	return k.follow(), true
}

// firstCards is the three cards the trump chooser of a nine-card hand has
// looked at.
func (g *Game) firstCards(seat int) cards.Set {
	if g.seatOnly {
		return g.hands[seat]
	}
	_, first, _ := deal(g.key, MaxCards, g.Dealer())
	return first[seat]
}

// ChooseTrumpFor is the baseline's trump from the first three cards: the
// longest suit (the better top card breaks ties) when it has two cards or
// its single card is a king or ace; no trump when the three are scattered
// and low.
func ChooseTrumpFor(first cards.Set) cards.Suit {
	best, n, top := first.LongestSuit()
	if n >= 2 || (n == 1 && top >= cards.King) {
		return best
	}
	return cards.NoSuit
}

// chooseBid bids the rounded estimate of the tricks the hand will take,
// moved by one when the dealer may not bid it.
func chooseBid(g *Game, seat int) int {
	n := g.CardsDealt()
	e := estimateBid(g, seat)
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

// The features a bid is estimated from; see handFeatures and bidFeatures.
const (
	featOne         = iota
	featJokers      // jokers held
	featTopTrumps   // trumps with no higher trump in play (A, A-K, ...)
	featTrumps      // chance-weighted worth of the other trumps
	featSideTops    // side cards with no higher card of their suit in play
	featSide        // chance-weighted worth of the other side cards
	featLength      // trumps beyond three
	featLead        // the seat leads the first trick
	featRuff        // void side suits it holds trumps for
	featBidsBefore  // the bids already made
	featBiddersLeft // seats still to bid after this one
	numFeatures
)

// handFeatures describes a freshly dealt hand h for bidding with trump
// (cards.NoSuit = none); out is the turned card (cards.NoCard if none),
// which is out of play. A card that is not a sure top counts as much as
// the chance that no higher card of its suit is in play, less for the
// second and later cards of a side suit, which get trumped.
func handFeatures(h cards.Set, trump cards.Suit, out cards.Card, leads bool) [numFeatures]float64 {
	n := h.Len()
	unseen := cards.DeckSize - n
	if out != cards.NoCard {
		unseen--
	}
	p := min(float64(Seats-1)*float64(n)/float64(unseen), 1) // chance an unseen card is in play
	var f [numFeatures]float64
	f[featOne] = 1
	f[featJokers] = float64(h.Jokers().Len())
	if leads {
		f[featLead] = 1
	}
	trumps := h.OfSuit(trump).Len()
	for _, s := range cards.Suits {
		mine := h.OfSuit(s)
		l := mine.Len()
		if l == 0 {
			if s != trump && trumps > 0 && f[featRuff] < float64(trumps) {
				f[featRuff]++
			}
			continue
		}
		higher, i := 0, 0 // unseen cards above the current one; own cards above it
		for r := cards.Ace; ; r-- {
			c := cards.New(s, r)
			switch {
			case c.IsJoker() || c == out:
			case !mine.Has(c):
				higher++
			case higher == 0 && s == trump:
				f[featTopTrumps]++
				i++
			case higher == 0 && i == 0:
				f[featSideTops]++
				i++
			default:
				v := 1 - 0.5*max(float64(higher)*p-0.6*float64(i), 0)
				if v > 0 {
					switch {
					case s == trump:
						f[featTrumps] += v
					case trump == cards.NoSuit:
						f[featSide] += v * noTrumpKeep[i]
					default:
						f[featSide] += v * sideKeep[i]
					}
				}
				i++
			}
			if r == cards.Six {
				break
			}
		}
		if s == trump && l > 3 {
			f[featLength] += float64(l - 3)
		}
	}
	return f
}

// sideKeep and noTrumpKeep are how much of its worth the i-th highest card
// of a side suit keeps: later rounds of a suit get trumped or run out.
var (
	sideKeep    = [MaxCards]float64{0.85, 0.6, 0.3, 0.15, 0.05, 0, 0, 0, 0}
	noTrumpKeep = [MaxCards]float64{0.95, 0.75, 0.5, 0.35, 0.2, 0.1, 0.05, 0, 0}
)

// bidWeights[n] turns bidFeatures into expected tricks in an n-card hand.
// They are least-squares fits to the tricks the baseline itself took in
// self-play, pulled towards a card player's valuation (bidPrior in the
// tests): refit with `go test -run TestBot_BidEstimatesAreCalibrated -refit -v`
// after changing how the bot plays.
var bidWeights = [MaxCards + 1][numFeatures]float64{
	1: {-0.287, 1.030, 0.994, 0.782, 0.682, 0.614, 0.600, 0.130, 0.253, -0.152, -0.020},
	2: {-0.092, 1.069, 0.971, 0.760, 0.537, 0.480, 0.600, 0.123, 0.237, -0.229, -0.106},
	3: {0.233, 1.079, 0.913, 0.677, 0.495, 0.366, 0.600, 0.159, 0.269, -0.235, -0.189},
	4: {0.543, 1.044, 0.879, 0.690, 0.502, 0.280, 0.531, 0.127, 0.304, -0.221, -0.244},
	5: {0.931, 1.053, 0.864, 0.728, 0.492, 0.265, 0.393, 0.106, 0.280, -0.228, -0.332},
	6: {1.246, 1.058, 0.841, 0.782, 0.525, 0.226, 0.270, 0.136, 0.296, -0.220, -0.412},
	7: {1.303, 1.056, 0.822, 0.807, 0.615, 0.248, 0.279, 0.011, 0.304, -0.179, -0.396},
	8: {1.208, 1.060, 0.807, 0.799, 0.647, 0.292, 0.351, -0.189, 0.293, -0.128, -0.300},
	9: {1.617, 1.055, 0.732, 0.608, 0.687, 0.535, 0.805, 0.018, 0.331, -0.177, -0.466},
}

// bidFeatures is handFeatures plus what the table has said: the sum of the
// bids before this seat's (tricks the others will fight for, or duck) and
// how many seats bid after it.
func bidFeatures(g *Game, seat int) [numFeatures]float64 {
	f := handFeatures(g.hands[seat], g.trump, g.turned, seat == int(g.leader))
	for s := range Seats {
		if g.bids[s] > 0 {
			f[featBidsBefore] += float64(g.bids[s])
		}
	}
	f[featBiddersLeft] = float64((g.Dealer() - seat + Seats) % Seats)
	return f
}

// estimateBid is the baseline's expectation of the tricks seat will take.
func estimateBid(g *Game, seat int) float64 { return estimateWith(&bidWeights, g, seat) }

// estimateWith is the tricks seat is expected to take by a table of
// weights (bidWeights, strongBidWeights) over bidFeatures, within the
// cards dealt.
func estimateWith(weights *[MaxCards + 1][numFeatures]float64, g *Game, seat int) float64 {
	n := g.CardsDealt()
	f := bidFeatures(g, seat)
	return min(max(weighted(&weights[n], &f), 0), float64(n))
}

// weighted is the sum of the features f by the weights w.
func weighted(w, f *[numFeatures]float64) float64 {
	e := 0.0
	for i := range w {
		e += w[i] * f[i]
	}
	return e
}

// knowledge is what the bot's seat may know, gathered once per decision.
type knowledge struct {
	g      *Game
	seat   int
	hand   cards.Set
	legal  cards.Set // playable now, jokers included
	unseen cards.Set
	trump  cards.Suit
	need   int // tricks still wanted to make the bid exactly (negative: over)
	left   int // cards in hand, so tricks still to play
	after  int // seats still to play to this trick after this one
	jokers int
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

// wantsTricks is true while short of the bid, and also once over it: a
// missed bid scores 10 a trick, so the extra tricks are worth taking.
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
		sure := cards.NoCard
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
	ordinary := k.legal &^ cards.Jokers
	winners := ordinary & k.g.winningNow()
	losers := ordinary &^ winners
	if k.wantsTricks() {
		if winners != 0 {
			cheapest := k.lowest(winners)
			if k.after == 0 {
				return PlayMove(seat, cheapest)
			}
			// The cheapest winner that should hold, else the cheapest
			// winner all the same (the strong cards are kept for later).
			safe := cards.NoCard
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
			return PlayMove(seat, cheapest)
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
