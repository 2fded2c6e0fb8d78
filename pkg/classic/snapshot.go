package classic

import (
	"fmt"
	"math"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/fairdeal"
)

// State is a Game's whole state as plain exported values — hidden cards
// included: it is for server-side snapshots, never for a client — so that a
// durable format outside this package (the table's protobuf snapshot,
// docs/table.md) can hold it field by field. Game.State writes it;
// Game.SetState reads it back with the checks UnmarshalBinary makes.
type State struct {
	// Key is the current hand's shuffle key; zero while the hand waits for
	// its deal, and once the game is over.
	Key fairdeal.Key
	// Local: the game deals every hand itself from LocalSeed (New).
	Local     bool
	LocalSeed uint64
	Variant   Variant
	// Hand is the current hand, 0-based; Variant.Hands() once over.
	Hand int
	// FirstDealer is hand 0's dealer; -1 before its deal.
	FirstDealer int
	Phase       Phase
	// Turn is the seat to move; -1 when nobody is.
	Turn int
	// Trump is cards.NoSuit for no trump, and until a nine-card hand's trump
	// is chosen.
	Trump cards.Suit
	// Turned is the card turned for trump; cards.NoCard when none is.
	Turned cards.Card
	// Bids are the current hand's bids; -1 for a seat that has not bid.
	Bids   [Seats]int
	Tricks [Seats]int
	// Hands are the cards each seat still holds.
	Hands [Seats]cards.Set
	// Played are the cards played in this hand, the current trick's included.
	Played cards.Set
	// TricksFinished counts the current hand's finished tricks.
	TricksFinished int
	// Leader is the seat that led the current trick.
	Leader int
	// LedSuit is the suit led to the current trick; cards.NoSuit before its
	// first card.
	LedSuit cards.Suit
	// Trick is the current trick in order of play from Leader.
	Trick []TrickCard
	// Results are the finished hands in order, one per hand before Hand.
	Results []HandResult
}

// TrickCard is a card of the current trick and, for a joker, what its player
// declared (JokerNone for any other card).
type TrickCard struct {
	Card  cards.Card
	Joker JokerMode
}

// State returns g's whole state.
func (g *Game) State() State {
	s := State{Key: g.key, Local: g.local, LocalSeed: g.localSeed, Variant: g.variant,
		Hand: int(g.hand), FirstDealer: int(g.firstDealer), Phase: g.phase, Turn: int(g.turn),
		Trump: g.trump, Turned: g.turned, Hands: g.hands, Played: g.played,
		TricksFinished: int(g.trickNo), Leader: int(g.leader), LedSuit: g.ledSuit}
	for i := range Seats {
		s.Bids[i], s.Tricks[i] = int(g.bids[i]), int(g.tricks[i])
	}
	if g.nPlayed > 0 {
		s.Trick = make([]TrickCard, g.nPlayed)
		for i := range s.Trick {
			s.Trick[i] = TrickCard{Card: g.trickCards[i], Joker: g.trickJoker[i]}
		}
	}
	s.Results = g.AppendHandResults(make([]HandResult, 0, g.hand))
	return s
}

// SetState makes g the state s, which must be one the rules can reach from
// its key (the checks of UnmarshalBinary); otherwise it returns an error
// wrapping ErrBadState and leaves g unchanged.
func (g *Game) SetState(s State) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrBadState}, args...)...)
	}
	// Every number must fit the game's small fields before it is narrowed;
	// validate then checks what the rules allow.
	small := []int{s.Hand, s.FirstDealer, s.Turn, s.TricksFinished, s.Leader}
	for i := range Seats {
		small = append(small, s.Bids[i], s.Tricks[i])
	}
	for _, v := range small {
		if v < -1 || v > math.MaxInt8 {
			return bad("number %d out of range", v)
		}
	}
	if len(s.Trick) >= Seats || len(s.Results) > maxHands || len(s.Results) != s.Hand {
		return bad("%d cards in the trick, %d results in hand %d", len(s.Trick), len(s.Results), s.Hand)
	}
	if !s.Variant.Valid() {
		return bad("variant %d", s.Variant)
	}
	n := Game{key: s.Key, local: s.Local, localSeed: s.LocalSeed, variant: s.Variant,
		hand: int8(s.Hand), firstDealer: int8(s.FirstDealer), phase: s.Phase, turn: int8(s.Turn),
		trump: s.Trump, turned: s.Turned, hands: s.Hands, played: s.Played,
		trickNo: int8(s.TricksFinished), leader: int8(s.Leader), nPlayed: int8(len(s.Trick)), ledSuit: s.LedSuit}
	for i := range Seats {
		n.bids[i], n.tricks[i] = int8(s.Bids[i]), int8(s.Tricks[i])
		n.trickCards[i], n.trickJoker[i] = cards.NoCard, JokerNone
	}
	for i, c := range s.Trick {
		n.trickCards[i], n.trickJoker[i] = c.Card, c.Joker
	}
	for h, r := range s.Results {
		if r.Cards != s.Variant.CardsInHand(h) {
			return bad("hand %d: %d cards, the variant deals %d", h+1, r.Cards, s.Variant.CardsInHand(h))
		}
		for i := range Seats {
			if r.Bids[i] < 0 || r.Bids[i] > MaxCards || r.Tricks[i] < 0 || r.Tricks[i] > MaxCards {
				return bad("hand %d: bid or tricks out of range", h+1)
			}
			n.results[h].bids[i], n.results[h].tricks[i] = int8(r.Bids[i]), int8(r.Tricks[i])
		}
	}
	if err := n.validate(); err != nil {
		return err
	}
	*g = n
	return nil
}
