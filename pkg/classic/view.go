package classic

import "github.com/pulka/pulka/pkg/cards"

// View is what one seat may know of the game: its own cards and everything
// public. It never holds another seat's cards (only how many they hold).
type View struct {
	Seat      int          `json:"seat"` // -1 for a spectator
	Variant   Variant      `json:"variant"`
	Hands     int          `json:"hands"` // hands in the game
	Hand      int          `json:"hand"`  // current hand, 0-based (== hands when over)
	Pulka     int          `json:"pulka"` // 0-based
	Cards     int          `json:"cards"` // cards dealt to each seat this hand
	Dealer    int          `json:"dealer"`
	Phase     Phase        `json:"phase"`
	ToMove    int          `json:"toMove"` // -1 when over
	Trump     string       `json:"trump"`  // S, H, D, C, NT (no trump), "" while unchosen
	Turned    *cards.Card  `json:"turned,omitempty"`
	MyCards   []cards.Card `json:"myCards"`
	HandSizes [Seats]int   `json:"handSizes"`
	Bids      [Seats]int   `json:"bids"` // -1 = not bid yet
	Tricks    [Seats]int   `json:"tricks"`
	// Forbidden is the bid the dealer may not make when the dealer is to bid, else -1.
	Forbidden int          `json:"forbidden"`
	TrickNo   int          `json:"trickNo"` // 0-based
	Leader    int          `json:"leader"`
	Trick     []PlayedCard `json:"trick"`
	Played    []cards.Card `json:"played"` // cards played so far this hand
	Results   []HandResult `json:"results"`
	Over      bool         `json:"over"`
}

// PlayedCard is a card on the table in the current trick.
type PlayedCard struct {
	Seat  int        `json:"seat"`
	Card  cards.Card `json:"card"`
	Joker JokerMode  `json:"joker,omitempty"`
	Suit  string     `json:"suit,omitempty"` // the suit a leading joker named
}

// View returns what seat may see; seat -1 (or any number that is not a seat)
// is a spectator, who sees no cards in hand.
func (g *Game) View(seat int) View {
	if seat < 0 || seat >= Seats {
		seat = -1
	}
	v := View{
		Seat: seat, Variant: g.variant, Hands: g.variant.Hands(), Hand: int(g.hand),
		Pulka: g.variant.PulkaOf(int(g.hand)), Cards: g.CardsDealt(), Dealer: g.Dealer(),
		Phase: g.phase, ToMove: g.ToMove(), Forbidden: -1, TrickNo: int(g.trickNo),
		Leader: int(g.leader), MyCards: []cards.Card{}, Trick: []PlayedCard{},
		Results: g.HandResults(), Over: g.Over(),
	}
	if v.Results == nil {
		v.Results = []HandResult{}
	}
	if g.Over() {
		v.Pulka = Pulkas - 1
		v.Dealer = -1
		v.Leader = -1
	}
	switch g.phase {
	case PhaseTrump:
		// Only the chooser has looked at cards: its first three.
		chooser := (v.Dealer + 1) % Seats
		if seat == chooser {
			_, first, _ := deal(g.key, MaxCards, v.Dealer)
			v.MyCards = first[chooser].Cards()
		}
		for s := range Seats {
			v.HandSizes[s] = 3
		}
	case PhaseBid, PhasePlay:
		v.Trump = suitText(g.trump)
		if g.turned != cards.NoCard {
			t := g.turned
			v.Turned = &t
		}
		if seat >= 0 {
			v.MyCards = g.hands[seat].Cards()
		}
		for s := range Seats {
			v.HandSizes[s] = g.hands[s].Len()
		}
	}
	for s := range Seats {
		v.Bids[s] = int(g.bids[s])
		v.Tricks[s] = int(g.tricks[s])
	}
	if g.phase == PhaseBid && g.ToMove() == g.Dealer() {
		if f := g.forbiddenBid(g.Dealer()); f >= 0 && f <= g.CardsDealt() {
			v.Forbidden = f
		}
	}
	for i := range int(g.nPlayed) {
		p := PlayedCard{Seat: (int(g.leader) + i) % Seats, Card: g.trickCards[i], Joker: g.trickJoker[i]}
		if i == 0 && p.Card.IsJoker() {
			p.Suit = g.ledSuit.String()
		}
		v.Trick = append(v.Trick, p)
	}
	v.Played = g.played.Cards()
	return v
}
