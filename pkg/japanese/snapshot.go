package japanese

import (
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
	// its deal.
	Key fairdeal.Key
	// Local: the match deals every hand itself from LocalSeed (New).
	Local     bool
	LocalSeed uint64
	Target    int
	// Hand is the current (or last) hand, 0-based.
	Hand uint32
	// Finished counts the hands finished (scored).
	Finished uint32
	Phase    Phase
	// FirstDeclarer is hand 0's declarer; -1 before its deal.
	FirstDeclarer int
	// Trump is cards.NoSuit for bezi, and until it is chosen.
	Trump       cards.Suit
	TrumpChosen bool
	Leader      int
	// TricksFinished counts the current hand's completed tricks.
	TricksFinished int
	// Named is the suit a led joker named; cards.NoSuit otherwise.
	Named cards.Suit
	// Winner is -1 while the match goes on.
	Winner int
	Reason EndReason
	// Trick is each seat's card in the current trick; cards.NoCard for none.
	Trick  [Seats]cards.Card
	Tricks [Seats]int
	Scores [Seats]int
	Hands  [Seats]cards.Set
	// Gone are the cards of the current hand's completed tricks.
	Gone cards.Set
	// Up and Down are each seat's columns, face up and face down;
	// cards.NoCard where a card has gone.
	Up, Down [Seats][Columns]cards.Card
	// Results are the last MaxRecordedHands (at most) finished hands, oldest
	// first.
	Results []HandRecord
}

// HandRecord is a finished hand as the match keeps it: its trump and each
// seat's tricks.
type HandRecord struct {
	Trump  cards.Suit
	Tricks [Seats]int
}

// State returns g's whole state.
func (g *Game) State() State {
	s := State{Key: g.key, Local: g.local, LocalSeed: g.localSeed, Target: int(g.target), Hand: g.hand,
		Finished: g.finished, Phase: g.phase, FirstDeclarer: int(g.first), Trump: g.trump, TrumpChosen: g.chosen,
		Leader: int(g.leader), TricksFinished: int(g.trickNo), Named: g.named, Winner: int(g.winner),
		Reason: g.reason, Trick: g.trick, Hands: g.hands, Gone: g.gone, Up: g.up, Down: g.down}
	if g.first == noDeclarer {
		s.FirstDeclarer = -1
	}
	for i := range Seats {
		s.Tricks[i], s.Scores[i] = int(g.tricks[i]), int(g.scores[i])
	}
	from := g.finished - min(g.finished, MaxRecordedHands)
	s.Results = make([]HandRecord, 0, g.finished-from)
	for h := from; h < g.finished; h++ {
		r := g.results[h%MaxRecordedHands]
		t0 := int(r & 0x1f)
		s.Results = append(s.Results, HandRecord{Trump: cards.Suit(r >> 5), Tricks: [Seats]int{t0, TricksPerHand - t0}})
	}
	return s
}

// SetState makes g the state s, which must be one the rules can reach (the
// checks of UnmarshalBinary); otherwise it returns an error wrapping
// ErrBadState and leaves g unchanged.
func (g *Game) SetState(s State) error {
	// Every number must fit the game's small fields before it is narrowed;
	// validate then checks what the rules allow.
	small := []int{s.Target, s.Leader, s.TricksFinished, s.Tricks[0], s.Tricks[1], s.Scores[0], s.Scores[1]}
	for _, v := range small {
		if v < 0 || v > math.MaxUint8 {
			return bad("number %d out of range", v)
		}
	}
	if s.FirstDeclarer < -1 || s.FirstDeclarer >= noDeclarer || s.Winner < -1 || s.Winner > math.MaxInt8 {
		return bad("first declarer %d, winner %d", s.FirstDeclarer, s.Winner)
	}
	if want := min(s.Finished, MaxRecordedHands); uint32(len(s.Results)) != want {
		return bad("%d hands recorded, %d finished", len(s.Results), s.Finished)
	}
	n := Game{key: s.Key, local: s.Local, localSeed: s.LocalSeed, hand: s.Hand, finished: s.Finished,
		target: uint8(s.Target), phase: s.Phase, first: uint8(s.FirstDeclarer), trump: s.Trump, chosen: s.TrumpChosen,
		leader: uint8(s.Leader), trickNo: uint8(s.TricksFinished), named: s.Named, winner: int8(s.Winner),
		reason: s.Reason, trick: s.Trick, hands: s.Hands, gone: s.Gone, up: s.Up, down: s.Down}
	if s.FirstDeclarer < 0 {
		n.first = noDeclarer
	}
	for i := range Seats {
		n.tricks[i], n.scores[i] = uint8(s.Tricks[i]), uint8(s.Scores[i])
	}
	from := s.Finished - uint32(len(s.Results))
	for i, r := range s.Results {
		t0 := r.Tricks[0]
		if t0 < 0 || t0 > TricksPerHand || r.Tricks[1] != TricksPerHand-t0 || r.Trump > cards.NoSuit {
			return bad("hand %d: tricks %v, trump %d", from+uint32(i), r.Tricks, r.Trump)
		}
		n.results[(from+uint32(i))%MaxRecordedHands] = packResult(uint8(t0), r.Trump)
	}
	n.syncFaceUps()
	if err := n.validate(); err != nil {
		return err
	}
	*g = n
	return nil
}
