package japanese

import (
	"bytes"
	"slices"
	"testing"

	"github.com/pulka/pulka/pkg/cards"
)

// Properties over many seeded random matches (random-legal players).

var targets = [...]int{11, 15, 21, 31}

func propertyMatches(t *testing.T) int {
	if testing.Short() {
		return 1000
	}
	return 10000
}

// publicCards is what everyone may see: face-up columns, the cards of the
// completed tricks, the trick on the table.
func (g *Game) publicCards() cards.Set {
	s := g.gone | g.faceUp(0) | g.faceUp(1)
	for _, c := range g.trick {
		if c != cards.NoCard {
			s |= c.Bit()
		}
	}
	return s
}

func (g *Game) faceDown() cards.Set {
	var s cards.Set
	for seat := range Seats {
		for _, c := range g.down[seat] {
			if c != cards.NoCard {
				s |= c.Bit()
			}
		}
	}
	return s
}

func eventCards(e Event) cards.Set {
	s := e.Cards
	if e.Card.Valid() {
		s |= e.Card.Bit()
	}
	for _, c := range e.Columns {
		if c.Valid() {
			s |= c.Bit()
		}
	}
	return s
}

// checkHidden proves that no view and no event shows a card its audience may
// not know: a view shows only the seat's own hand and public cards; a
// face-down card shows up only when it reaches its owner's hand, and then
// only in an event to that owner.
func checkHidden(t *testing.T, before, after *Game, m Move, ev []Event, views bool) {
	for _, seat := range []int{-1, 0, 1} {
		if !views {
			break
		}
		allowed := after.publicCards()
		if seat >= 0 {
			allowed |= after.hands[seat]
		}
		if leak := cardsIn(after.View(seat)) &^ allowed; leak != 0 {
			t.Fatalf("seed %d: view of seat %d shows %v", after.localSeed, seat, leak)
		}
	}
	down := before.faceDown()
	for _, e := range ev {
		var allowed cards.Set
		switch {
		case e.Hand != before.hand: // the next hand's deal
			allowed = after.publicCards()
			if e.To >= 0 {
				allowed |= after.hands[e.To]
			}
		case after.hand != before.hand || after.Over() && after.reason == ReasonTarget: // the last trick
			allowed = before.publicCards() | m.Card.Bit()
		default:
			allowed = before.publicCards() | after.publicCards()
			if e.To >= 0 {
				allowed |= after.hands[e.To]
			}
		}
		shown := eventCards(e)
		if leak := shown &^ allowed; leak != 0 {
			t.Fatalf("seed %d: move %v: event %+v shows %v", after.localSeed, m, e, leak)
		}
		if fd := shown & down; fd != 0 {
			owner := -1
			for s := range Seats {
				for _, c := range before.down[s] {
					if fd.Has(c) {
						owner = s
					}
				}
			}
			if e.Kind != EventFaceDownToHand || int(e.To) != owner || after.hands[owner]&fd != fd {
				t.Fatalf("seed %d: face-down %v in event %+v (owner %d)", after.localSeed, fd, e, owner)
			}
		}
	}
}

// checkLegality proves that Legal lists moves Apply accepts, that every move
// not listed is rejected, leaving the state untouched, and that the player to
// move always has a move.
func checkLegality(t *testing.T, g *Game, legal []Move, evBuf []Event) {
	s := g.ToMove()
	if len(legal) == 0 {
		t.Fatalf("seed %d: seat %d to move has no legal move", g.localSeed, s)
	}
	if other := g.Legal(1-s, nil); len(other) != 0 {
		t.Fatalf("seed %d: seat %d not to move has moves %v", g.localSeed, 1-s, other)
	}
	for _, m := range legal {
		work := *g
		if _, err := work.Apply(m, evBuf[:0]); err != nil {
			t.Fatalf("seed %d: legal %v rejected: %v", g.localSeed, m, err)
		}
	}
	try := func(m Move) {
		if slices.Contains(legal, m) {
			return
		}
		work := *g
		if _, err := work.Apply(m, evBuf[:0]); err == nil || work != *g {
			t.Fatalf("seed %d: %v not in Legal %v but accepted (%v) or state changed", g.localSeed, m, legal, err)
		}
	}
	for c := range cards.Card(cards.DeckSize) {
		try(PlayMove(s, c))
		if c.IsJoker() {
			for _, su := range cards.Suits {
				try(LeadJoker(s, c, su))
			}
		}
	}
	for su := cards.Spades; su <= cards.NoSuit; su++ {
		try(TrumpMove(s, su))
	}
	// The seat not to move: one card it holds and one trump choice are enough,
	// everything it sends is refused before its cards are looked at.
	try(PlayMove(1-s, g.hands[1-s].Lowest()))
	try(TrumpMove(1-s, cards.Hearts))
}

func roundTrip(t *testing.T, g *Game) {
	b, err := g.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back Game
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatalf("seed %d: UnmarshalBinary of a real state: %v", g.localSeed, err)
	}
	if back != *g {
		t.Fatalf("seed %d: binary round trip changed the state", g.localSeed)
	}
}

type recorded struct {
	seed  uint64
	set   Settings
	moves []Move
	final Game
}

// runChecked plays one random match, checking every property at every move.
func runChecked(t *testing.T, seed uint64, moves []Move) recorded {
	t.Helper()
	set := Settings{Target: targets[seed%uint64(len(targets))]}
	g, err := New(seed, set)
	if err != nil {
		t.Fatal(err)
	}
	players := [Seats]Player{NewRandomBot(seed), NewRandomBot(seed ^ 0x9e3779b97f4a7c15)}
	if seed%5 == 0 { // some matches against the baseline reach other positions (safe joker leads, ...)
		players[seed/5%2] = Bot{}
	}
	var (
		legal   = make([]Move, 0, MaxLegal)
		evBuf   = make([]Event, 0, 16)
		tricks  [Seats]int
		points  [Seats]int
		handNo  = uint32(0)
		trickEv = 0
	)
	for step := 0; !g.Over(); step++ {
		if step > 100000 {
			t.Fatalf("seed %d: match does not end", seed)
		}
		s := g.ToMove()
		legal = g.Legal(s, legal[:0])
		if len(legal) == 0 {
			t.Fatalf("seed %d: seat %d to move has no legal move", seed, s)
		}
		// The exhaustive checks run on a share of the moves (a different
		// share in every match) to keep 10,000 matches fast under -race.
		if (step+int(seed))%checkEvery == 0 {
			checkLegality(t, g, legal, evBuf)
		}
		if step%16 == 0 {
			roundTrip(t, g)
		}
		m, _ := players[s].Choose(g, s)
		if !slices.Contains(legal, m) {
			t.Fatalf("seed %d: player chose %v, not in Legal", seed, m)
		}
		before := *g
		ev, err := g.Apply(m, evBuf[:0])
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		checkHidden(t, &before, g, m, ev, (step+int(seed))%checkEvery == 1%checkEvery)
		moves = append(moves, m)
		for _, e := range ev {
			switch e.Kind {
			case EventTrickWon:
				if e.Hand != handNo {
					t.Fatalf("seed %d: trick of hand %d during hand %d", seed, e.Hand, handNo)
				}
				trickEv++
			case EventHandEnded:
				if int(e.Tricks[0])+int(e.Tricks[1]) != TricksPerHand || trickEv != TricksPerHand {
					t.Fatalf("seed %d hand %d: tricks %v, %d trick events; want 18", seed, e.Hand, e.Tricks, trickEv)
				}
				for s := range Seats {
					tricks[s] += int(e.Tricks[s])
					points[s] += int(e.Points[s])
				}
				handNo, trickEv = e.Hand+1, 0
			}
		}
	}
	roundTrip(t, g)
	if g.Scores() != points {
		t.Fatalf("seed %d: scores %v, hands add up to %v", seed, g.Scores(), points)
	}
	w := g.Winner()
	if g.EndReason() != ReasonTarget || g.Scores()[w] < set.Target || g.Scores()[1-w] >= set.Target {
		t.Fatalf("seed %d: ended %v with scores %v, target %d, winner %d", seed, g.EndReason(), g.Scores(), set.Target, w)
	}
	return recorded{seed: seed, set: set, moves: moves, final: *g}
}

// replay plays the recorded moves from a fresh game; at move k (if k >= 0)
// it passes the state through the given encoding and carries on from the copy.
func replay(t *testing.T, r recorded, k int, encode func(*Game) ([]byte, error), decode func(*Game, []byte) error) Game {
	t.Helper()
	g, err := New(r.seed, r.set)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]Event, 0, 16)
	for i, m := range r.moves {
		if i == k {
			b, err := encode(g)
			if err != nil {
				t.Fatal(err)
			}
			var back Game
			if err := decode(&back, b); err != nil {
				t.Fatalf("seed %d move %d: %v", r.seed, i, err)
			}
			g = &back
		}
		if buf, err = g.Apply(m, buf[:0]); err != nil {
			t.Fatalf("seed %d replay move %d %v: %v", r.seed, i, m, err)
		}
	}
	return *g
}

func TestProperties_RandomMatches(t *testing.T) {
	n := propertyMatches(t)
	moves := make([]Move, 0, 1024)
	var hands, totalMoves int
	for seed := range uint64(n) {
		r := runChecked(t, seed, moves[:0])
		moves = r.moves
		hands += len(r.final.HandResults())
		totalMoves += len(r.moves)

		// Same seed + same moves = same final state.
		if got := replay(t, r, -1, nil, nil); got != r.final {
			t.Fatalf("seed %d: replaying the moves gave another final state", seed)
		}
		// Serialise → deserialise → continue equals never serialising, at a
		// point of the match chosen by the seed, in both encodings.
		k := int(seed*7919) % len(r.moves)
		if got := replay(t, r, k, (*Game).MarshalBinary, (*Game).UnmarshalBinary); got != r.final {
			t.Fatalf("seed %d: continuing after a binary round trip at move %d diverged", seed, k)
		}
		if seed%10 == 0 {
			if got := replay(t, r, k, (*Game).MarshalJSON, (*Game).UnmarshalJSON); got != r.final {
				t.Fatalf("seed %d: continuing after a JSON round trip at move %d diverged", seed, k)
			}
		}
	}
	t.Logf("%d matches, %d hands, %d moves", n, hands, totalMoves)
}

func TestProperties_SameSeedSameDeal(t *testing.T) {
	for seed := range uint64(100) {
		a, b := newGame(t, seed), newGame(t, seed)
		if *a != *b {
			t.Fatalf("seed %d: two new games differ", seed)
		}
		ea, eb := a.StartEvents(nil), b.StartEvents(nil)
		if !slices.Equal(ea, eb) {
			t.Fatalf("seed %d: start events differ", seed)
		}
		ba, _ := a.MarshalBinary()
		bb, _ := b.MarshalBinary()
		if !bytes.Equal(ba, bb) {
			t.Fatalf("seed %d: encodings differ", seed)
		}
	}
}
