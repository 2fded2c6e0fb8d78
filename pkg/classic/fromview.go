package classic

import (
	"fmt"

	"github.com/pulka/pulka/pkg/cards"
)

// FromView is a game that matches everything v's seat knows — its own
// cards, the bids, tricks, trump, the trick on the table, the cards played
// this hand, the hands before — with the other seats' hands made up of the
// cards the seat cannot place, in card order: a guess, never the truth.
//
// It is how a client runs the engine's bots: Bot decides only from what its
// seat may know, so Bot.Choose(FromView(g.View(s)), s) is the move
// Bot.Choose(g, s) makes (tested over random games), and the Go clients
// need no bot of their own. The game is for choosing a move, not for
// playing on: it has no shuffle key.
func FromView(v View) (*Game, error) {
	if !v.Variant.Valid() {
		return nil, fmt.Errorf("%w: variant %d", ErrBadSettings, v.Variant)
	}
	if v.Seat < 0 || v.Seat >= Seats || v.Phase < PhaseTrump || v.Phase > PhasePlay ||
		v.Hand < 0 || v.Hand >= v.Variant.Hands() || v.Dealer < 0 || v.Dealer >= Seats ||
		v.ToMove < 0 || v.ToMove >= Seats || len(v.Trick) >= Seats || v.TrickNo < 0 || v.TrickNo >= MaxCards {
		return nil, fmt.Errorf("%w: a view of no game in play", ErrBadView)
	}
	g := &Game{
		variant: v.Variant, hand: int8(v.Hand), firstDealer: int8(((v.Dealer-v.Hand)%Seats + Seats) % Seats),
		phase: v.Phase, turn: int8(v.ToMove), trump: cards.NoSuit, turned: cards.NoCard,
		trickNo: int8(v.TrickNo), leader: int8(v.Leader), nPlayed: int8(len(v.Trick)), ledSuit: cards.NoSuit,
		seatOnly: true,
	}
	if v.Trump != "" {
		s, ok := suitFromText(v.Trump)
		if !ok {
			return nil, fmt.Errorf("%w: trump %q", ErrBadView, v.Trump)
		}
		g.trump = s
	}
	if v.Turned != nil {
		g.turned = *v.Turned
	}
	for s := range Seats {
		if v.Bids[s] < -1 || v.Bids[s] > MaxCards || v.Tricks[s] < 0 || v.Tricks[s] > MaxCards {
			return nil, fmt.Errorf("%w: seat %d bid %d tricks %d", ErrBadView, s, v.Bids[s], v.Tricks[s])
		}
		g.bids[s], g.tricks[s] = int8(v.Bids[s]), int8(v.Tricks[s])
	}
	for h, r := range v.Results {
		if h >= maxHands {
			break
		}
		for s := range Seats {
			g.results[h].bids[s], g.results[h].tricks[s] = int8(r.Bids[s]), int8(r.Tricks[s])
		}
	}
	for i := range g.trickCards {
		g.trickCards[i] = cards.NoCard
	}
	for i, p := range v.Trick {
		if !p.Card.Valid() {
			return nil, fmt.Errorf("%w: trick card %d", ErrBadView, p.Card)
		}
		g.trickCards[i], g.trickJoker[i] = p.Card, p.Joker
		lead := p.Joker == JokerHighest || p.Joker == JokerGive
		follow := p.Joker == JokerTake || p.Joker == JokerDiscard
		if p.Seat != (v.Leader+i)%Seats || (p.Card.IsJoker() && (i == 0) != lead) || (p.Card.IsJoker() && !lead && !follow) ||
			(!p.Card.IsJoker() && p.Joker != JokerNone) {
			return nil, fmt.Errorf("%w: trick card %d: %v by seat %d", ErrBadView, i, p.Card, p.Seat)
		}
		if i > 0 {
			continue
		}
		g.ledSuit = p.Card.Suit()
		if p.Card.IsJoker() {
			s, ok := suitFromText(p.Suit)
			if !ok || !s.Valid() {
				return nil, fmt.Errorf("%w: a led joker names %q", ErrBadView, p.Suit)
			}
			g.ledSuit = s
		}
	}
	for _, c := range v.Played {
		if !c.Valid() {
			return nil, fmt.Errorf("%w: played card %d", ErrBadView, c)
		}
		g.played = g.played.With(c)
	}
	for _, c := range v.MyCards {
		if !c.Valid() || g.played.Has(c) || c == g.turned {
			return nil, fmt.Errorf("%w: card %v in hand", ErrBadView, c)
		}
		g.hands[v.Seat] = g.hands[v.Seat].With(c)
	}
	if err := g.checkFromView(v); err != nil {
		return nil, err
	}
	rest := cards.FullDeck &^ g.hands[v.Seat] &^ g.played
	if g.turned != cards.NoCard {
		rest = rest.Without(g.turned)
	}
	for s := range Seats {
		if s == v.Seat {
			continue
		}
		for range v.HandSizes[s] {
			c := rest.Lowest()
			if c == cards.NoCard {
				return nil, fmt.Errorf("%w: hand sizes %v leave no cards for seat %d", ErrBadView, v.HandSizes, s)
			}
			g.hands[s], rest = g.hands[s].With(c), rest.Without(c)
		}
	}
	return g, nil
}

// checkFromView checks that v's hand sizes, turn and trick fit its phase,
// as a real game's view always does: the bots may trust the game they get.
func (g *Game) checkFromView(v View) error {
	n := g.CardsDealt()
	for s := range Seats {
		want := n
		switch g.phase {
		case PhaseTrump:
			want = 3
		case PhasePlay:
			want = n - int(g.trickNo)
			if (s-int(g.leader)+Seats)%Seats < int(g.nPlayed) {
				want--
			}
		}
		if v.HandSizes[s] != want || (s == v.Seat && g.hands[s].Len() != want) {
			return fmt.Errorf("%w: seat %d holds %d cards, not %d", ErrBadView, s, v.HandSizes[s], want)
		}
	}
	for i := range int(g.nPlayed) {
		if !g.played.Has(g.trickCards[i]) {
			return fmt.Errorf("%w: trick card %v not among the played", ErrBadView, g.trickCards[i])
		}
	}
	switch {
	case g.phase == PhasePlay && (v.Leader < 0 || v.Leader >= Seats || v.ToMove != (v.Leader+len(v.Trick))%Seats):
		return fmt.Errorf("%w: seat %d to move after %d cards led by seat %d", ErrBadView, v.ToMove, len(v.Trick), v.Leader)
	case g.phase == PhaseTrump && v.ToMove != (v.Dealer+1)%Seats:
		return fmt.Errorf("%w: seat %d chooses trump, dealer %d", ErrBadView, v.ToMove, v.Dealer)
	case g.phase != PhasePlay && (len(v.Trick) > 0 || g.trickNo > 0):
		return fmt.Errorf("%w: cards on the table before the play", ErrBadView)
	case g.phase == PhasePlay && g.trump == cards.NoSuit && v.Trump == "":
		return fmt.Errorf("%w: play without a trump", ErrBadView)
	}
	return nil
}

// suitFromText reads suitText's words: S, H, D, C, or NT for no trump.
func suitFromText(t string) (cards.Suit, bool) {
	if t == "NT" {
		return cards.NoSuit, true
	}
	s, err := cards.ParseSuit(t)
	return s, err == nil && s.Valid()
}
