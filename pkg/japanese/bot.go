package japanese

import "github.com/pulka/pulka/pkg/cards"

// Player chooses the move of a seat. Choose returns ok == false when it is
// not that seat's turn.
type Player interface {
	Choose(g *Game, seat int) (m Move, ok bool)
}

// Bot is the baseline player: deterministic, always legal, allocation-free,
// and honest — it decides only from what its seat's View shows (its hand,
// the face-up columns, the cards already played, the trick on the table).
// The service uses it for the move it makes when a player's time runs out.
type Bot struct{}

// Choose picks seat's move.
func (Bot) Choose(g *Game, seat int) (Move, bool) {
	if seat < 0 || seat != g.ToMove() { // nobody moves while a hand waits for its deal, or after the end
		return Move{}, false
	}
	if g.phase == PhaseTrump {
		return TrumpMove(seat, ChooseTrumpFor(g.hands[seat])), true
	}
	k := knowledgeOf(g, seat)
	if k.lead == cards.NoCard {
		return k.leadMove(), true
	}
	return PlayMove(seat, k.answer()), true
}

// ChooseTrumpFor is the baseline's trump choice from the first three cards:
// the longest suit (the higher top card breaks ties) when it has two cards or
// a queen or better, bezi when the three cards are weak and scattered.
func ChooseTrumpFor(first cards.Set) cards.Suit {
	best, n, top := first.LongestSuit()
	if n >= 2 || (n == 1 && top >= cards.Queen) {
		return best
	}
	return cards.NoSuit
}

// knowledge is what the bot's seat may know, gathered once per decision.
type knowledge struct {
	seat    int
	legal   cards.Set
	mine    cards.Set // own hand and face-up cards
	outside cards.Set // every card the seat cannot place: the opponent's hand, any face-down card, the opponent's face-up cards
	trump   cards.Suit
	lead    cards.Card
	named   cards.Suit
	left    int // tricks still to play, this one included
}

func knowledgeOf(g *Game, seat int) knowledge {
	mine := g.hands[seat] | g.faceUp(seat)
	onTable := cards.Set(0)
	for _, c := range g.trick {
		if c != cards.NoCard {
			onTable |= c.Bit()
		}
	}
	return knowledge{
		seat:    seat,
		legal:   g.legalSet(seat),
		mine:    mine,
		outside: cards.FullDeck &^ mine &^ g.gone &^ onTable,
		trump:   g.trump,
		lead:    g.trick[g.leader],
		named:   g.named,
		left:    TricksPerHand - int(g.trickNo),
	}
}

// above returns the cards of set ranked above c in c's suit.
func above(set cards.Set, c cards.Card) cards.Set {
	return set.OfSuit(c.Suit()) &^ (c.Bit()<<1 - 1)
}

// cheapest returns the card of set (no jokers) that costs least to give away:
// the lowest rank, non-trumps before trumps; NoCard for an empty set.
func (k *knowledge) cheapest(set cards.Set) cards.Card {
	best, bestCost := cards.NoCard, 1<<30
	for _, s := range cards.Suits {
		c := set.OfSuit(s).Lowest()
		if c == cards.NoCard {
			continue
		}
		cost := int(c.Rank())
		if s == k.trump {
			cost += 16
		}
		if cost < bestCost {
			best, bestCost = c, cost
		}
	}
	return best
}

func (k *knowledge) leadMove() Move {
	jokers := k.legal.Jokers()
	// A led joker loses only to the other joker: lead it once that one is
	// out of the opponent's reach (played, or ours), or when the end forces it.
	if jokers != 0 && (cards.Jokers&k.outside == 0 || k.left <= jokers.Len()) {
		return LeadJoker(k.seat, jokers.Lowest(), k.pullSuit())
	}
	// Lead a master (nothing higher of its suit outside); trumps first, to
	// draw the opponent's trumps.
	master := cards.NoCard
	for _, s := range cards.Suits {
		top := k.legal.OfSuit(s).Highest()
		if top == cards.NoCard || above(k.outside, top) != 0 {
			continue
		}
		if s == k.trump || master == cards.NoCard || (master.Suit() != k.trump && top.Rank() > master.Rank()) {
			master = top
		}
	}
	if master != cards.NoCard {
		return PlayMove(k.seat, master)
	}
	if c := k.cheapest(k.legal &^ cards.Jokers); c != cards.NoCard {
		return PlayMove(k.seat, c)
	}
	return LeadJoker(k.seat, jokers.Lowest(), k.pullSuit())
}

// pullSuit is the suit a led joker names: trump while the opponent may hold
// trumps (no card beats a joker naming trump), otherwise the suit whose
// highest card is outside, to pull it.
func (k *knowledge) pullSuit() cards.Suit {
	if k.trump != cards.NoSuit && k.outside.OfSuit(k.trump) != 0 {
		return k.trump
	}
	best, bestRank := cards.Spades, -1
	for _, s := range cards.Suits {
		top := k.outside.OfSuit(s).Highest()
		if top == cards.NoCard {
			continue
		}
		// Naming a non-trump suit the opponent may lack lets a trump win;
		// only suits with no trump outside are safe, which holds here.
		if r := int(top.Rank()); r > bestRank {
			best, bestRank = s, r
		}
	}
	return best
}

// answer picks the reply to the card led.
func (k *knowledge) answer() cards.Card {
	plain := k.legal &^ cards.Jokers
	var winners cards.Set
	switch {
	case k.lead.IsJoker():
		if k.trump != cards.NoSuit && k.named != k.trump {
			winners = plain.OfSuit(k.trump)
		}
	default:
		winners = above(plain, k.lead)
		if k.trump != cards.NoSuit && k.lead.Suit() != k.trump {
			winners |= plain.OfSuit(k.trump)
		}
	}
	if winners != 0 {
		// Win as cheaply as possible: the lowest card that wins.
		if same := winners.OfSuit(k.lead.Suit()); same != 0 {
			return same.Lowest()
		}
		return k.cheapest(winners)
	}
	jokers := k.legal.Jokers()
	if jokers != 0 && k.jokerWorthIt(jokers.Len()) {
		return jokers.Lowest()
	}
	if c := k.cheapest(plain); c != cards.NoCard {
		return c
	}
	return jokers.Lowest()
}

// jokerWorthIt says whether to take the led card with a joker: always
// against a joker (the second joker wins), against a high card, or when the
// jokers must be played soon anyway.
func (k *knowledge) jokerWorthIt(jokers int) bool {
	switch {
	case k.lead.IsJoker():
		return true
	case k.lead.Suit() == k.trump:
		return k.lead.Rank() >= cards.Queen
	}
	return k.lead.Rank() >= cards.King || k.left <= jokers+1
}

// RandomBot plays uniformly among the moves Legal lists, from its own seeded
// generator: the opponent the baseline is measured against, and the players
// of the property tests.
type RandomBot struct {
	rng cards.RNG
	buf [MaxLegal]Move
}

// NewRandomBot returns a random player drawing from (seed, stream 0).
func NewRandomBot(seed uint64) *RandomBot { return &RandomBot{rng: cards.NewRNG(seed, 0)} }

// Choose picks one of seat's legal moves at random.
func (b *RandomBot) Choose(g *Game, seat int) (Move, bool) {
	ms := g.Legal(seat, b.buf[:0])
	if len(ms) == 0 {
		return Move{}, false
	}
	return ms[b.rng.IntN(len(ms))], true
}
