package japanese

import (
	"errors"
	"fmt"

	"github.com/pulka/pulka/pkg/cards"
)

// ErrBadView is FromView's refusal of a view no match in play can show.
var ErrBadView = errors.New("japanese: a view no match in play can show")

// FromView is a match that agrees with everything v's seat knows — its hand,
// every face-up card, the trick, the cards of this hand's finished tricks,
// trump, tricks and scores — with the opponent's hand and every face-down
// card made up of the cards the seat cannot place, in card order: a guess,
// never the truth.
//
// It is how a client runs the engine's bots: they decide only from what
// their seat may know, so Bot.Choose(FromView(g.View(s)), s) is the move
// Bot.Choose(g, s) makes (tested over random matches, the strong bot's
// too). The match is for choosing a move, not for playing on.
func FromView(v View) (*Game, error) {
	if err := (Settings{Target: v.Target}).Validate(); err != nil || v.Target == 0 {
		return nil, fmt.Errorf("%w: target %d", ErrBadView, v.Target)
	}
	if v.Seat < 0 || v.Seat >= Seats || (v.Phase != PhaseTrump && v.Phase != PhasePlay) || v.Hand < 0 ||
		v.Declarer < 0 || v.Declarer >= Seats || v.Leader < 0 || v.Leader >= Seats ||
		v.Trick < 0 || v.Trick >= TricksPerHand || len(v.CurrentTrick) >= Seats {
		return nil, fmt.Errorf("%w: no match in play", ErrBadView)
	}
	g := &Game{
		hand: uint32(v.Hand), target: uint8(v.Target), phase: v.Phase,
		first: uint8((v.Declarer + v.Hand) % Seats), // declarers alternate: hand h's is (first + h) % 2
		trump: cards.NoSuit, leader: uint8(v.Leader), trickNo: uint8(v.Trick), named: cards.NoSuit, winner: -1,
	}
	if v.Trump != "" {
		s, err := parseTrump(v.Trump)
		if err != nil {
			return nil, fmt.Errorf("%w: trump %q", ErrBadView, v.Trump)
		}
		g.trump, g.chosen = s, true
	}
	for s := range Seats {
		if v.Tricks[s] < 0 || v.Tricks[s] > TricksPerHand || v.Scores[s] < 0 || v.Scores[s] >= v.Target {
			return nil, fmt.Errorf("%w: seat %d tricks %d score %d", ErrBadView, s, v.Tricks[s], v.Scores[s])
		}
		g.tricks[s], g.scores[s] = uint8(v.Tricks[s]), uint8(v.Scores[s])
		g.trick[s] = cards.NoCard
		for c := range Columns {
			g.up[s][c], g.down[s][c] = cards.NoCard, cards.NoCard
		}
	}
	var known cards.Set // every card the view places
	place := func(c cards.Card) error {
		if !c.Valid() || known.Has(c) {
			return fmt.Errorf("%w: card %v twice or unknown", ErrBadView, c)
		}
		known = known.With(c)
		return nil
	}
	for _, c := range v.Played {
		if err := place(c); err != nil {
			return nil, err
		}
		g.gone = g.gone.With(c)
	}
	for _, c := range v.MyCards {
		if err := place(c); err != nil {
			return nil, err
		}
		g.hands[v.Seat] = g.hands[v.Seat].With(c)
	}
	for i, tc := range v.CurrentTrick {
		if tc.Seat != (v.Leader+i)%Seats {
			return nil, fmt.Errorf("%w: trick card %d by seat %d", ErrBadView, i, tc.Seat)
		}
		if err := place(tc.Card); err != nil {
			return nil, err
		}
		g.trick[tc.Seat] = tc.Card
		if i == 0 && tc.Card.IsJoker() {
			s, err := cards.ParseSuit(tc.Named)
			if err != nil || !s.Valid() {
				return nil, fmt.Errorf("%w: a led joker names %q", ErrBadView, tc.Named)
			}
			g.named = s
		}
	}
	for s := range Seats {
		for _, col := range v.Columns[s] {
			if col.Column < 0 || col.Column >= Columns || g.up[s][col.Column] != cards.NoCard {
				return nil, fmt.Errorf("%w: column %d", ErrBadView, col.Column)
			}
			if err := place(col.Up); err != nil {
				return nil, err
			}
			g.up[s][col.Column] = col.Up
		}
	}
	g.syncFaceUps()
	rest := cards.FullDeck &^ known
	take := func() (cards.Card, error) {
		c := rest.Lowest()
		if c == cards.NoCard {
			return c, fmt.Errorf("%w: more cards than the deck", ErrBadView)
		}
		rest = rest.Without(c)
		return c, nil
	}
	o := 1 - v.Seat
	for range v.HandSizes[o] {
		c, err := take()
		if err != nil {
			return nil, err
		}
		g.hands[o] = g.hands[o].With(c)
	}
	for s := range Seats {
		for c := range Columns {
			if g.up[s][c] == cards.NoCard {
				continue
			}
			d, err := take()
			if err != nil {
				return nil, err
			}
			g.down[s][c] = d
		}
	}
	if err := g.checkFromView(v); err != nil {
		return nil, err
	}
	return g, nil
}

// checkFromView checks that v's sizes and turn fit its phase, as a real
// match's view always does: the bots may trust the match they get.
func (g *Game) checkFromView(v View) error {
	if g.hands[v.Seat].Len() != v.HandSizes[v.Seat] || v.HandSizes[1-v.Seat] < 0 {
		return fmt.Errorf("%w: hand sizes %v", ErrBadView, v.HandSizes)
	}
	switch {
	case g.phase == PhaseTrump && (g.chosen || len(v.CurrentTrick) > 0 || g.trickNo > 0):
		return fmt.Errorf("%w: trump to choose with cards played", ErrBadView)
	case g.phase == PhasePlay && !g.chosen:
		return fmt.Errorf("%w: play before trump", ErrBadView)
	case v.ToMove != g.ToMove():
		return fmt.Errorf("%w: seat %d to move, not %d", ErrBadView, v.ToMove, g.ToMove())
	case g.phase == PhasePlay && g.legalSet(g.ToMove()) == 0 && g.ToMove() == v.Seat:
		return fmt.Errorf("%w: nothing to play", ErrBadView)
	}
	return nil
}
