package classic

import "github.com/pulka/pulka/pkg/cards"

// Legal appends every legal move of seat to buf; nothing when it is not that
// seat's turn. A joker appears once per legal declaration: take and discard
// when it follows, highest and give in each of the four suits when it leads.
// It does not allocate when buf has room (at most 23 moves: a leader holding
// seven cards and both jokers).
func (g *Game) Legal(seat int, buf []Move) []Move {
	if seat != g.ToMove() {
		return buf
	}
	s := int8(seat)
	switch g.phase {
	case PhaseTrump:
		for su := cards.Spades; su <= cards.NoSuit; su++ {
			buf = append(buf, Move{Seat: s, Kind: MoveTrump, Suit: su})
		}
	case PhaseBid:
		n := g.CardsDealt()
		forbidden := g.forbiddenBid(seat)
		for b := 0; b <= n; b++ {
			if b != forbidden {
				buf = append(buf, Move{Seat: s, Kind: MoveBid, Bid: int8(b)})
			}
		}
	case PhasePlay:
		set := g.playable(seat)
		lead := g.nPlayed == 0
		for set != 0 {
			c := set.Lowest()
			set &= set - 1
			switch {
			case !c.IsJoker():
				buf = append(buf, Move{Seat: s, Kind: MovePlay, Card: c})
			case lead:
				for _, su := range cards.Suits {
					buf = append(buf, Move{Seat: s, Kind: MovePlay, Card: c, Joker: JokerHighest, Suit: su})
				}
				for _, su := range cards.Suits {
					buf = append(buf, Move{Seat: s, Kind: MovePlay, Card: c, Joker: JokerGive, Suit: su})
				}
			default:
				buf = append(buf, Move{Seat: s, Kind: MovePlay, Card: c, Joker: JokerTake},
					Move{Seat: s, Kind: MovePlay, Card: c, Joker: JokerDiscard})
			}
		}
	}
	return buf
}

// forbiddenBid returns the bid seat may not make: for the dealer the one
// that would make the four bids total the cards dealt, else -1.
func (g *Game) forbiddenBid(seat int) int {
	if seat != g.Dealer() {
		return -1
	}
	rest := 0
	for s := range Seats {
		if s != seat {
			rest += int(g.bids[s])
		}
	}
	return g.CardsDealt() - rest // negative (so never a bid) once the others overbid
}

// Playable returns the cards seat may play now (empty when it is not its
// turn to play). Jokers are in it whenever the seat holds them.
func (g *Game) Playable(seat int) cards.Set {
	if g.phase != PhasePlay || seat != int(g.turn) {
		return 0
	}
	return g.playable(seat)
}

// playable is the follow rule: the led suit if you have it (only its highest
// card under a led 'highest' joker), else trump if you have it, else
// anything; a joker always.
func (g *Game) playable(seat int) cards.Set {
	h := g.hands[seat]
	if g.nPlayed == 0 {
		return h
	}
	jokers := h.Jokers()
	if of := h.OfSuit(g.ledSuit); of != 0 {
		if g.trickJoker[0] == JokerHighest {
			return jokers | of.Highest().Bit()
		}
		return jokers | of
	}
	if tr := h.OfSuit(g.trump); tr != 0 {
		return jokers | tr
	}
	return h
}

// Apply checks m and plays it, appending the events it caused to buf. A
// rejected move leaves the game untouched and returns a *MoveError. It does
// not allocate when buf has room (a move that ends a hand and deals the next
// adds at most 12 events).
func (g *Game) Apply(m Move, buf []Event) ([]Event, error) {
	if err := g.check(m); err != nil {
		return buf, &MoveError{Hand: int(g.hand), Trick: int(g.trickNo), Seat: int(m.Seat), Move: m, Err: err}
	}
	switch m.Kind {
	case MoveTrump:
		g.trump = m.Suit
		g.phase = PhaseBid
		return g.appendTrumpChosen(buf, &g.hands), nil
	case MoveBid:
		return g.applyBid(m, buf), nil
	}
	return g.applyPlay(m, buf), nil
}

// check is every rule a move must keep; it changes nothing.
func (g *Game) check(m Move) error {
	switch {
	case g.phase == PhaseOver:
		return ErrGameOver
	case g.phase < PhaseTrump || g.phase > PhaseOver:
		return ErrWrongPhase
	case int(m.Seat) != int(g.turn):
		return ErrNotYourTurn
	}
	switch m.Kind {
	case MoveTrump:
		if g.phase != PhaseTrump {
			return ErrWrongPhase
		}
		if m.Suit > cards.NoSuit {
			return ErrBadTrump
		}
	case MoveBid:
		if g.phase != PhaseBid {
			return ErrWrongPhase
		}
		if m.Bid < 0 || int(m.Bid) > g.CardsDealt() {
			return ErrBadBid
		}
		if int(m.Bid) == g.forbiddenBid(int(m.Seat)) {
			return ErrDealerBid
		}
	case MovePlay:
		if g.phase != PhasePlay {
			return ErrWrongPhase
		}
		return g.checkPlay(m)
	default:
		return ErrUnknownMove
	}
	return nil
}

func (g *Game) checkPlay(m Move) error {
	c := m.Card
	h := g.hands[m.Seat]
	if !h.Has(c) {
		return ErrNotInHand
	}
	if c.IsJoker() {
		lead := g.nPlayed == 0
		switch m.Joker {
		case JokerHighest, JokerGive:
			if !lead || !m.Suit.Valid() {
				return ErrBadJokerDeclaration
			}
		case JokerTake, JokerDiscard:
			if lead {
				return ErrBadJokerDeclaration
			}
		default:
			return ErrBadJokerDeclaration
		}
		return nil
	}
	if g.playable(int(m.Seat)).Has(c) {
		return nil
	}
	if h.OfSuit(g.ledSuit) != 0 {
		if c.Suit() == g.ledSuit {
			return ErrMustPlayHighest
		}
		return ErrMustFollowSuit
	}
	return ErrMustTrump
}

func (g *Game) applyBid(m Move, buf []Event) []Event {
	g.bids[m.Seat] = m.Bid
	buf = append(buf, Event{Kind: EventBid, To: Public, Hand: g.hand, Seat: m.Seat,
		Card: cards.NoCard, Suit: cards.NoSuit, Bid: m.Bid})
	if int(m.Seat) == g.Dealer() {
		g.phase = PhasePlay
		g.turn = g.leader
		return buf
	}
	g.turn = (g.turn + 1) % Seats
	return buf
}

func (g *Game) applyPlay(m Move, buf []Event) []Event {
	c := m.Card
	ev := Event{Kind: EventPlayed, To: Public, Hand: g.hand, Trick: g.trickNo, Seat: m.Seat,
		Card: c, Suit: cards.NoSuit}
	i := g.nPlayed
	if c.IsJoker() {
		ev.Joker = m.Joker
		g.trickJoker[i] = m.Joker
		if i == 0 {
			ev.Suit = m.Suit
		}
	}
	if i == 0 {
		if c.IsJoker() {
			g.ledSuit = m.Suit
		} else {
			g.ledSuit = c.Suit()
		}
	}
	g.trickCards[i] = c
	g.hands[m.Seat] = g.hands[m.Seat].Without(c)
	g.played = g.played.With(c)
	g.nPlayed++
	buf = append(buf, ev)
	if g.nPlayed < Seats {
		g.turn = (g.turn + 1) % Seats
		return buf
	}

	winner := int8((int(g.leader) + trickWinner(&g.trickCards, &g.trickJoker, g.ledSuit, g.trump)) % Seats)
	g.tricks[winner]++
	buf = append(buf, Event{Kind: EventTrickWon, To: Public, Hand: g.hand, Trick: g.trickNo, Seat: winner,
		Card: cards.NoCard, Suit: cards.NoSuit})
	g.trickNo++
	g.clearTrick()
	g.leader, g.turn = winner, winner
	if int(g.trickNo) < g.CardsDealt() {
		return buf
	}

	// The hand is over: record it and deal the next one.
	g.results[g.hand] = handRecord{bids: g.bids, tricks: g.tricks}
	buf = append(buf, Event{Kind: EventHandEnded, To: Public, Hand: g.hand,
		Card: cards.NoCard, Suit: cards.NoSuit, N: int8(g.CardsDealt()), Bids: g.bids, Tricks: g.tricks})
	first := g.startHand(int(g.hand) + 1)
	switch g.phase {
	case PhaseOver:
		return append(buf, Event{Kind: EventGameEnded, To: Public, Hand: g.hand,
			Card: cards.NoCard, Suit: cards.NoSuit})
	case PhaseDeal:
		return buf // a live game: the next hand waits for Deal
	}
	return g.appendHandStart(buf, &g.hands, first, g.turned)
}

// winningNow is the set of ordinary cards that, played next, would put
// their player ahead in the trick as it stands (what trickWinner would say
// of each: TestWinningNow_AgreesWithTrickWinner). The bots ask it for every
// card a follower could play, so it is one pass over the trick, not one
// trickWinner per card.
func (g *Game) winningNow() cards.Set {
	n := int(g.nPlayed)
	led, trump, first := g.ledSuit, g.trump, g.trickJoker[0]
	topTrump, topLed := cards.NoCard, cards.NoCard
	for i := range n {
		if i > 0 && g.trickJoker[i] == JokerTake {
			return 0 // the last 'take' joker wins whatever follows
		}
		c := g.trickCards[i]
		if c.IsJoker() || !c.Valid() {
			continue
		}
		if c.Suit() == trump && (topTrump == cards.NoCard || c > topTrump) {
			topTrump = c
		}
		if c.Suit() == led && (topLed == cards.NoCard || c > topLed) {
			topLed = c
		}
	}
	var win cards.Set
	if trump.Valid() && (first != JokerHighest || led != trump) {
		above := cards.SuitMask(trump)
		if topTrump != cards.NoCard {
			above &= ^(topTrump.Bit()<<1 - 1)
			return above &^ cards.Jokers
		}
		win = above &^ cards.Jokers
	}
	if first == JokerHighest {
		return win
	}
	if led.Valid() {
		above := cards.SuitMask(led) &^ cards.Jokers
		if topLed != cards.NoCard {
			above &= ^(topLed.Bit()<<1 - 1)
		}
		win |= above
	}
	return win
}

// trickWinner returns the position (0 = the lead) of the card that wins a
// full trick:
//   - the last joker declared take wins, whatever else was played;
//   - otherwise the highest trump wins, except under a joker that led
//     'highest' in the trump suit itself, which no trump can beat;
//   - otherwise a joker that led 'highest' wins;
//   - otherwise the highest card of the led suit (a 'give' joker is below
//     every card of its suit, so it wins only when nobody followed);
//
// A discarded joker never wins.
func trickWinner(cs *[Seats]cards.Card, js *[Seats]JokerMode, led, trump cards.Suit) int {
	for i := Seats - 1; i > 0; i-- {
		if js[i] == JokerTake {
			return i
		}
	}
	best := -1
	if trump.Valid() {
		for i, c := range cs {
			if c.Suit() == trump && (best < 0 || c > cs[best]) {
				best = i
			}
		}
		if best >= 0 && (js[0] != JokerHighest || led != trump) {
			return best
		}
	}
	if js[0] == JokerHighest {
		return 0
	}
	best = 0
	for i := 1; i < Seats; i++ {
		c := cs[i]
		if c.Suit() == led && (cs[best].IsJoker() || c > cs[best]) {
			best = i
		}
	}
	return best
}
