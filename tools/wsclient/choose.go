package wsclient

import (
	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/cards/cardpb"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// Choose picks one of Legal's moves with a simple, deterministic baseline:
// trump is the longest suit held; the bid counts aces, high trumps and
// jokers; in play a seat that still wants tricks plays its strongest card
// (a joker takes) and otherwise its weakest (a joker discards or gives).
// It is meant to keep games going in tools and tests, not to play well;
// ok is false when the seat has no move now.
func (m *Model) Choose() (Move, bool) {
	legal := m.Legal()
	if len(legal) == 0 {
		return Move{}, false
	}
	switch m.Phase {
	case tablev1.Phase_PHASE_CHOOSE_TRUMP:
		best, n := cards.NoSuit, 0
		for _, s := range cards.Suits {
			if k := m.Hand.OfSuit(s).Len(); k > n {
				best, n = s, k
			}
		}
		return Move{Kind: MoveTrump, Suit: best}, true
	case tablev1.Phase_PHASE_BID:
		want := m.estimate()
		best := legal[0]
		for _, mv := range legal {
			if abs(mv.Tricks-want) < abs(best.Tricks-want) {
				best = mv
			}
		}
		return best, true
	}
	wants := m.wantsTricks()
	var best Move
	found := false
	for _, mv := range legal {
		if mv.Joker != nil {
			continue
		}
		if !found || (wants && stronger(mv.Card, best.Card, m.Trump)) || (!wants && stronger(best.Card, mv.Card, m.Trump)) {
			best, found = mv, true
		}
	}
	// A joker only when nothing else is left, or to take a wanted trick.
	for _, mv := range legal {
		if mv.Joker == nil {
			continue
		}
		a := mv.Joker.Action
		switch {
		case !found && !wants && (a == "discard" || a == "give"):
		case !found && (a == "take" || (a == "highest" && wants)):
		case wants && a == "take" && !m.winsNow(best.Card):
		default:
			continue
		}
		return mv, true
	}
	if !found {
		return legal[0], true
	}
	return best, true
}

// estimate is a rough trick count of the hand.
func (m *Model) estimate() int {
	n := m.Hand.Jokers().Len()
	for set := m.Hand &^ cards.Jokers; set != 0; set &= set - 1 {
		c := set.Lowest()
		if c.Rank() == cards.Ace || (m.TrumpKnown && c.Suit() == m.Trump && c.Rank() >= cards.Queen) {
			n++
		}
	}
	return min(n, m.CardsPerSeat)
}

// wantsTricks: classic — fewer tricks than bid; Japanese — always.
func (m *Model) wantsTricks() bool {
	if m.Japanese() || m.MySeat < 0 || m.MySeat >= len(m.Bids) {
		return true
	}
	return m.Tricks[m.MySeat] < m.Bids[m.MySeat]
}

// winsNow reports whether c would beat every card on the trick so far: a
// taking or leading joker on it wins, a trump beats the led suit, a card of
// another suit never wins.
func (m *Model) winsNow(c cards.Card) bool {
	if !c.Valid() || len(m.Trick) == 0 {
		return c.Valid()
	}
	led := m.Trick[0].Card.Suit()
	if m.Trick[0].Card.IsJoker() {
		led, _ = cardpb.FromSuit(m.Trick[0].Joker.GetSuit())
	}
	trump := cards.NoSuit
	if m.TrumpKnown {
		trump = m.Trump
	}
	if c.Suit() != led && (c.Suit() != trump || !trump.Valid()) {
		return false
	}
	for _, p := range m.Trick {
		if p.Card.IsJoker() {
			a := p.Joker.GetAction()
			if a != tablev1.JokerAction_JOKER_ACTION_DISCARD && a != tablev1.JokerAction_JOKER_ACTION_GIVE {
				return false
			}
			continue
		}
		if p.Card.Suit() == c.Suit() && p.Card.Rank() > c.Rank() {
			return false
		}
		if p.Card.Suit() == trump && c.Suit() != trump {
			return false
		}
	}
	return true
}

// stronger orders cards for the baseline: trumps above other suits, then
// by rank.
func stronger(a, b cards.Card, trump cards.Suit) bool {
	at, bt := a.Suit() == trump && trump.Valid(), b.Suit() == trump && trump.Valid()
	if at != bt {
		return at
	}
	return a.Rank() > b.Rank()
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
