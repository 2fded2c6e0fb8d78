package classic

import (
	"fmt"

	"github.com/pulka/pulka/pkg/cards"
)

// Settings choose the game. Scoring settings (khishti, premia, moshla) belong
// to the score sheet, not to the rules of play.
type Settings struct {
	Variant Variant `json:"variant"`
}

// Phase is the moment of the current hand.
type Phase uint8

// The phases of a hand. The zero value is no phase: a zero Game is not a game.
const (
	PhaseTrump Phase = iota + 1 // nine-card hand: the seat after the dealer names trump
	PhaseBid                    // seats bid in turn
	PhasePlay                   // tricks are played
	PhaseOver                   // the game has ended
)

var phaseNames = [...]string{"", "trump", "bid", "play", "over"}

func (p Phase) String() string {
	if int(p) < len(phaseNames) && p != 0 {
		return phaseNames[p]
	}
	return fmt.Sprintf("Phase(%d)", uint8(p))
}

// MarshalText writes the phase's name.
func (p Phase) MarshalText() ([]byte, error) {
	if p == 0 || int(p) >= len(phaseNames) {
		return nil, fmt.Errorf("classic: invalid phase %d", uint8(p))
	}
	return []byte(phaseNames[p]), nil
}

// UnmarshalText reads a phase's name.
func (p *Phase) UnmarshalText(b []byte) error {
	for i, n := range phaseNames {
		if i > 0 && n == string(b) {
			*p = Phase(i)
			return nil
		}
	}
	return fmt.Errorf("classic: unknown phase %q", b)
}

// HandResult is one finished hand: cards dealt to each seat, and each seat's
// bid and tricks taken. It is all the score sheet needs.
type HandResult struct {
	Cards  int    `json:"cards"`
	Bids   [4]int `json:"bids"`
	Tricks [4]int `json:"tricks"`
}

type handRecord struct {
	bids, tricks [Seats]int8
}

// maxHands is the most hands any variant has.
const maxHands = 24

// firstDealerStream is the RNG stream the first dealer is drawn from. Hand h
// is shuffled from stream h, so this only has to be far from 0..23. The value
// is fixed forever: changing it would change every stored game.
const firstDealerStream uint64 = 0x6465616c6572 // "dealer"

// noBid marks a seat that has not bid yet.
const noBid int8 = -1

// Game is a whole classic game. It is plain data (no pointers, slices or
// maps), so copying it is a cheap snapshot and == compares two states.
// The deal of every hand comes from the seed, so no RNG lives in it.
type Game struct {
	seed    uint64
	hands   [Seats]cards.Set // cards each seat still holds
	played  cards.Set        // cards played this hand, the current trick included
	results [maxHands]handRecord

	variant     Variant
	hand        int8 // current hand, 0-based; == Hands() once over
	firstDealer int8
	phase       Phase
	turn        int8 // seat to move
	trump       cards.Suit
	turned      cards.Card // card turned for trump, NoCard in nine-card hands

	bids   [Seats]int8 // noBid until a seat bids
	tricks [Seats]int8

	trickNo    int8 // tricks finished in this hand
	leader     int8 // seat that led the current trick
	nPlayed    int8 // cards in the current trick
	ledSuit    cards.Suit
	trickCards [Seats]cards.Card // in order of play; NoCard when empty
	trickJoker [Seats]JokerMode
}

// New starts a game: draws the first dealer from the seed and deals hand 1.
// Use StartEvents for the events of that first deal.
func New(seed uint64, settings Settings) (*Game, error) {
	if !settings.Variant.Valid() {
		return nil, fmt.Errorf("%w: variant %d", ErrBadSettings, settings.Variant)
	}
	g := &Game{seed: seed, variant: settings.Variant}
	r := cards.NewRNG(seed, firstDealerStream)
	g.firstDealer = int8(r.IntN(Seats))
	g.startHand(0)
	return g, nil
}

// Clone returns an independent copy.
func (g *Game) Clone() *Game { c := *g; return &c }

// Seed returns the seed every deal of the game comes from.
func (g *Game) Seed() uint64 { return g.seed }

// Settings returns the game's settings.
func (g *Game) Settings() Settings { return Settings{Variant: g.variant} }

// Phase returns the phase of the current hand.
func (g *Game) Phase() Phase { return g.phase }

// Over reports whether the game has ended.
func (g *Game) Over() bool { return g.phase == PhaseOver }

// ToMove returns the seat whose move it is, or -1 when the game is over.
func (g *Game) ToMove() int {
	if g.phase < PhaseTrump || g.phase > PhasePlay {
		return -1
	}
	return int(g.turn)
}

// HandIndex returns the current hand, 0-based (Hands() once the game is over).
func (g *Game) HandIndex() int { return int(g.hand) }

// CardsDealt returns how many cards each seat was dealt in the current hand.
func (g *Game) CardsDealt() int { return g.variant.CardsInHand(int(g.hand)) }

// Dealer returns the dealer of the current hand.
func (g *Game) Dealer() int { return g.dealerOf(int(g.hand)) }

func (g *Game) dealerOf(h int) int { return (int(g.firstDealer) + h) % Seats }

// Trump returns the trump suit (cards.NoSuit for no trump, and while a
// nine-card hand's trump is still to be chosen).
func (g *Game) Trump() cards.Suit { return g.trump }

// Hand returns the cards seat still holds. It is hidden information: show it
// only to that seat (View does this).
func (g *Game) Hand(seat int) cards.Set {
	if seat < 0 || seat >= Seats {
		return 0
	}
	return g.hands[seat]
}

// Bid returns seat's bid in the current hand, or -1 before it bids.
func (g *Game) Bid(seat int) int {
	if seat < 0 || seat >= Seats {
		return -1
	}
	return int(g.bids[seat])
}

// Tricks returns how many tricks seat has taken in the current hand.
func (g *Game) Tricks(seat int) int {
	if seat < 0 || seat >= Seats {
		return 0
	}
	return int(g.tricks[seat])
}

// HandResults returns every finished hand in order.
func (g *Game) HandResults() []HandResult {
	return g.AppendHandResults(nil)
}

// AppendHandResults appends every finished hand in order to buf.
func (g *Game) AppendHandResults(buf []HandResult) []HandResult {
	for h := 0; h < int(g.hand) && h < maxHands; h++ {
		r := HandResult{Cards: g.variant.CardsInHand(h)}
		for s := range Seats {
			r.Bids[s] = int(g.results[h].bids[s])
			r.Tricks[s] = int(g.results[h].tricks[s])
		}
		buf = append(buf, r)
	}
	return buf
}

// deal is the deal of hand h: the cards of every seat, the first three
// cards of every seat (nine-card hands) and the turned card (NoCard in
// nine-card hands). Seats are served clockwise from the seat after the
// dealer: n cards each in small hands, then the next card is turned; in
// nine-card hands three each, then six each.
func deal(seed uint64, h, n, dealer int) (hands, first [Seats]cards.Set, turned cards.Card) {
	d := cards.Shuffled(seed, uint64(h))
	turned = cards.NoCard
	for i := range Seats {
		s := (dealer + 1 + i) % Seats
		if n == MaxCards {
			for _, c := range d[3*i : 3*i+3] {
				first[s] = first[s].With(c)
			}
			hands[s] = first[s]
			for _, c := range d[12+6*i : 18+6*i] {
				hands[s] = hands[s].With(c)
			}
			continue
		}
		for _, c := range d[n*i : n*i+n] {
			hands[s] = hands[s].With(c)
		}
	}
	if n < MaxCards {
		turned = d[Seats*n]
	}
	return hands, first, turned
}

// resetHand clears everything that belongs to one hand.
func (g *Game) resetHand() {
	g.hands = [Seats]cards.Set{}
	g.played = 0
	g.trump = cards.NoSuit
	g.turned = cards.NoCard
	g.bids = [Seats]int8{noBid, noBid, noBid, noBid}
	g.tricks = [Seats]int8{}
	g.trickNo = 0
	g.leader = 0
	g.nPlayed = 0
	g.clearTrick()
}

func (g *Game) clearTrick() {
	g.nPlayed = 0
	g.ledSuit = cards.NoSuit
	g.trickCards = [Seats]cards.Card{cards.NoCard, cards.NoCard, cards.NoCard, cards.NoCard}
	g.trickJoker = [Seats]JokerMode{}
}

// startHand deals hand h, or ends the game after the last hand. It returns
// the chooser's first three cards in a nine-card hand.
func (g *Game) startHand(h int) (first cards.Set) {
	g.hand = int8(h)
	g.resetHand()
	if h >= g.variant.Hands() {
		g.phase = PhaseOver
		g.turn = -1
		return 0
	}
	n := g.variant.CardsInHand(h)
	dealer := g.dealerOf(h)
	chooser := int8((dealer + 1) % Seats)
	var firsts [Seats]cards.Set
	g.hands, firsts, g.turned = deal(g.seed, h, n, dealer)
	g.leader = chooser
	g.turn = chooser
	if n == MaxCards {
		g.phase = PhaseTrump
		return firsts[chooser]
	}
	g.trump = g.turned.Suit() // a joker has NoSuit: no trump
	g.phase = PhaseBid
	return 0
}

// StartEvents appends the events that began the current hand (hand started,
// the private deal of each seat, trump turned or chosen) as Apply emits them
// when a hand begins. Use it after New for the first hand, whose deal no
// Apply reported. While a nine-card hand's trump is unchosen it gives only
// the chooser's first three cards.
func (g *Game) StartEvents(buf []Event) []Event {
	if g.phase < PhaseTrump || g.phase > PhasePlay {
		return buf
	}
	hands, firsts, turned := deal(g.seed, int(g.hand), g.CardsDealt(), g.Dealer())
	buf = g.appendHandStart(buf, &hands, firsts[(g.Dealer()+1)%Seats], turned)
	if g.phase != PhaseTrump && g.CardsDealt() == MaxCards {
		buf = g.appendTrumpChosen(buf, &hands)
	}
	return buf
}

// appendHandStart appends what the seats learn when hand g.hand is dealt:
// hands, the chooser's first three cards and the turned card come from
// the deal.
func (g *Game) appendHandStart(buf []Event, hands *[Seats]cards.Set, first cards.Set, turned cards.Card) []Event {
	n := g.CardsDealt()
	dealer := g.Dealer()
	buf = append(buf, Event{Kind: EventHandStarted, To: Public, Hand: g.hand, Seat: int8(dealer),
		Card: cards.NoCard, Suit: cards.NoSuit, N: int8(n)})
	if n == MaxCards {
		chooser := (dealer + 1) % Seats
		return append(buf, Event{Kind: EventFirstCards, To: int8(chooser), Hand: g.hand,
			Seat: int8(chooser), Card: cards.NoCard, Suit: cards.NoSuit, Cards: first, N: 3})
	}
	buf = appendDealt(buf, g.hand, hands)
	return append(buf, Event{Kind: EventTrumpTurned, To: Public, Hand: g.hand,
		Card: turned, Suit: turned.Suit()})
}

// appendTrumpChosen appends the chosen trump and then the whole deal of a
// nine-card hand.
func (g *Game) appendTrumpChosen(buf []Event, hands *[Seats]cards.Set) []Event {
	dealer := g.Dealer()
	buf = append(buf, Event{Kind: EventTrumpChosen, To: Public, Hand: g.hand,
		Seat: int8((dealer + 1) % Seats), Card: cards.NoCard, Suit: g.trump})
	return appendDealt(buf, g.hand, hands)
}

// appendDealt gives every seat its whole hand, privately.
func appendDealt(buf []Event, hand int8, hands *[Seats]cards.Set) []Event {
	for s := range Seats {
		buf = append(buf, Event{Kind: EventDealt, To: int8(s), Hand: hand, Seat: int8(s),
			Card: cards.NoCard, Suit: cards.NoSuit, Cards: hands[s], N: int8(hands[s].Len())})
	}
	return buf
}
