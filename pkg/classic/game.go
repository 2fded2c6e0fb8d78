package classic

import (
	"fmt"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/fairdeal"
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
	// PhaseDeal: a live game waits for the current hand's shuffle key
	// (Deal). Nobody is to move.
	PhaseDeal
)

var phaseNames = [...]string{"", "trump", "bid", "play", "over", "deal"}

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

// noBid marks a seat that has not bid yet.
const noBid int8 = -1

// Game is a whole classic game. It is plain data (no pointers, slices or
// maps), so copying it is a cheap snapshot and == compares two states.
// Each hand is dealt from its own shuffle key (fairdeal.Shuffle), so no RNG
// lives in it: a live game (NewLive) is handed the key by Deal when the
// hand is to be dealt; a local game (New) makes it from its seed.
type Game struct {
	key       fairdeal.Key // the current hand's shuffle key; zero while none is dealt
	localSeed uint64       // a local game's seed (fairdeal.LocalKey); 0 in a live game
	local     bool         // deals every hand itself from localSeed

	hands   [Seats]cards.Set // cards each seat still holds
	played  cards.Set        // cards played this hand, the current trick included
	results [maxHands]handRecord

	variant     Variant
	hand        int8 // current hand, 0-based; == Hands() once over
	firstDealer int8 // drawn when hand 0 is dealt; -1 before
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

	// seatOnly: a game made by FromView from one seat's view. It has no
	// key: the cards a seat has looked at are its hand.
	seatOnly bool
}

// New starts a local game — self play, bots' simulations, tests, the
// terminal demo — that deals every hand h itself from
// fairdeal.LocalKey(seed, h); it deals hand 0 at once. Use StartEvents for
// the events of that first deal. Live tables use NewLive: their deals must
// not follow from one seed.
func New(seed uint64, settings Settings) (*Game, error) {
	g, err := newUndealt(settings)
	if err != nil {
		return nil, err
	}
	g.local, g.localSeed = true, seed
	g.startHand(0)
	return g, nil
}

// NewLive starts a live game: no seed lives in it. Before each hand it is in
// PhaseDeal and waits for Deal with that hand's shuffle key (the table's
// commit–reveal, docs/fair-play.md).
func NewLive(settings Settings) (*Game, error) {
	g, err := newUndealt(settings)
	if err != nil {
		return nil, err
	}
	g.startHand(0)
	return g, nil
}

func newUndealt(settings Settings) (*Game, error) {
	if !settings.Variant.Valid() {
		return nil, fmt.Errorf("%w: variant %d", ErrBadSettings, settings.Variant)
	}
	return &Game{variant: settings.Variant, firstDealer: -1}, nil
}

// Deal deals the current hand from key k and appends the events of the deal
// (as StartEvents gives them). Hand 0's deal also draws the first dealer:
// the stream's next IntN(4) after the shuffle. It returns ErrWrongPhase when
// the game is not waiting for a deal (a local game never is).
func (g *Game) Deal(k fairdeal.Key, buf []Event) ([]Event, error) {
	if g.phase != PhaseDeal {
		return buf, fmt.Errorf("%w: no hand waits for a deal (phase %v)", ErrWrongPhase, g.phase)
	}
	first := g.dealHand(k)
	return g.appendHandStart(buf, &g.hands, first, g.turned), nil
}

// AwaitingDeal reports whether the game waits for Deal.
func (g *Game) AwaitingDeal() bool { return g.phase == PhaseDeal }

// Clone returns an independent copy.
func (g *Game) Clone() *Game { c := *g; return &c }

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

// Dealer returns the dealer of the current hand; -1 before hand 0 is dealt
// (the first dealer is drawn with its deal).
func (g *Game) Dealer() int {
	if g.firstDealer < 0 {
		return -1
	}
	return g.dealerOf(int(g.hand))
}

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

// deal is the deal of key k: the cards of every seat, the first three
// cards of every seat (nine-card hands) and the turned card (NoCard in
// nine-card hands). Seats are served clockwise from the seat after the
// dealer: n cards each in small hands, then the next card is turned; in
// nine-card hands three each, then six each (docs/fair-play.md).
func deal(k fairdeal.Key, n, dealer int) (hands, first [Seats]cards.Set, turned cards.Card) {
	d, _ := fairdeal.ShuffleDraw(k, Seats)
	return dealDeck(&d, n, dealer)
}

// dealDeck lays deck d out as deal describes.
func dealDeck(d *cards.Deck, n, dealer int) (hands, first [Seats]cards.Set, turned cards.Card) {
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

// startHand starts hand h: a local game deals it, a live one waits for
// Deal; after the last hand the game ends. It returns the chooser's first
// three cards in a nine-card hand a local game dealt.
func (g *Game) startHand(h int) (first cards.Set) {
	g.hand = int8(h)
	g.resetHand()
	g.key = fairdeal.Key{}
	g.turn = -1
	if h >= g.variant.Hands() {
		g.phase = PhaseOver
		return 0
	}
	if !g.local {
		g.phase = PhaseDeal
		return 0
	}
	return g.dealHand(fairdeal.LocalKey(g.localSeed, uint32(h)))
}

// dealHand deals the current hand from key k.
func (g *Game) dealHand(k fairdeal.Key) (first cards.Set) {
	d, firstDealer := fairdeal.ShuffleDraw(k, Seats)
	if g.hand == 0 {
		g.firstDealer = int8(firstDealer)
	}
	g.key = k
	n := g.CardsDealt()
	dealer := g.Dealer()
	chooser := int8((dealer + 1) % Seats)
	var firsts [Seats]cards.Set
	g.hands, firsts, g.turned = dealDeck(&d, n, dealer)
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
	hands, firsts, turned := deal(g.key, g.CardsDealt(), g.Dealer())
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
