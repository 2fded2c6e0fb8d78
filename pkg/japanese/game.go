package japanese

import (
	"fmt"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/fairdeal"
)

// Sizes of the game.
const (
	// Seats is the number of players.
	Seats = 2
	// TricksPerHand: the whole deck is dealt, 18 cards each.
	TricksPerHand = cards.DeckSize / Seats
	// Columns is the number of table columns per player.
	Columns = 5
	// FirstDeal is the number of cards each seat sees before trump is chosen.
	FirstDeal = 3
	// SecondDeal is the number of cards added to each hand after the choice.
	SecondDeal = 5
	// MaxRecordedHands is how many finished hands HandResults remembers (the
	// most recent ones). Only a long run of 9–9 draws can exceed it: at most
	// 61 hands score before someone reaches 31.
	MaxRecordedHands = 128
	// DefaultTarget is the target score when Settings.Target is 0.
	DefaultTarget = 21
	// MaxLegal bounds the length of Legal's answer (18 cards, two of them
	// jokers led in four ways), so a buffer of this capacity never grows.
	MaxLegal = TricksPerHand + 2*3
)

// Settings are the table's choices.
type Settings struct {
	// Target is the score that ends the match: 11, 15, 21 or 31 (0 means 21).
	Target int `json:"target"`
}

// Validate reports ErrBadTarget for a target the rules do not offer.
func (s Settings) Validate() error {
	switch s.Target {
	case 0, 11, 15, 21, 31:
		return nil
	}
	return fmt.Errorf("%w (got %d)", ErrBadTarget, s.Target)
}

// Phase is the moment of the match.
type Phase uint8

// The phases.
const (
	// PhaseTrump: the declarer has three cards and must choose trump.
	PhaseTrump Phase = iota
	// PhasePlay: the tricks are being played.
	PhasePlay
	// PhaseOver: the match has ended.
	PhaseOver
	// PhaseDeal: a live match waits for the current hand's shuffle key
	// (Deal). Nobody is to move; a seat may still resign.
	PhaseDeal
)

var phaseNames = [...]string{"trump", "play", "over", "deal"}

// String returns "trump", "play" or "over".
func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return fmt.Sprintf("phase(%d)", uint8(p))
}

// MarshalText writes the phase's name.
func (p Phase) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// Game is a match of Japanese joker. It is a plain value: copy it (Clone) to
// explore, compare with ==. The zero Game is not a match: use New or a
// decoder.
type Game struct {
	key       fairdeal.Key // the current hand's shuffle key; zero while it is not dealt
	localSeed uint64       // a local match's seed (fairdeal.LocalKey); 0 in a live one
	local     bool         // deals every hand itself from localSeed
	hand      uint32       // 0-based number of the current (or last) hand
	target    uint8
	phase     Phase
	first     uint8      // declarer of hand 0 (noDeclarer before its deal); they alternate after it
	trump     cards.Suit // NoSuit: bezi, or not chosen yet
	chosen    bool       // trump has been chosen this hand
	leader    uint8
	trickNo   uint8      // tricks completed in this hand
	named     cards.Suit // the suit a led joker named, NoSuit otherwise
	winner    int8
	reason    EndReason
	finished  uint32 // hands finished (scored)
	trick     [Seats]cards.Card
	tricks    [Seats]uint8
	scores    [Seats]uint8
	hands     [Seats]cards.Set
	gone      cards.Set // cards of this hand's completed tricks (public)
	up        [Seats][Columns]cards.Card
	faceUps   [Seats]cards.Set // the cards of up as sets; derived, not serialised
	down      [Seats][Columns]cards.Card
	results   [MaxRecordedHands]uint8 // finished hand h at h%MaxRecordedHands: see packResult
}

// noDeclarer is Game.first before hand 0 is dealt.
const noDeclarer = 0xff

// New starts a local match — self play, tests, benchmarks — that deals every
// hand h itself from fairdeal.LocalKey(seed, h): it deals hand 0's first
// three cards each at once (drawing the first declarer with them).
// StartEvents describes that deal. Live tables use NewLive.
func New(seed uint64, settings Settings) (*Game, error) {
	g, err := newUndealt(settings)
	if err != nil {
		return nil, err
	}
	g.local, g.localSeed = true, seed
	g.startHand()
	return g, nil
}

// NewLive starts a live match: no seed lives in it. Before each hand it is
// in PhaseDeal and waits for Deal with that hand's shuffle key (the table's
// commit–reveal, docs/fair-play.md).
func NewLive(settings Settings) (*Game, error) {
	g, err := newUndealt(settings)
	if err != nil {
		return nil, err
	}
	g.startHand()
	return g, nil
}

func newUndealt(settings Settings) (*Game, error) {
	if err := settings.Validate(); err != nil {
		return nil, err
	}
	if settings.Target == 0 {
		settings.Target = DefaultTarget
	}
	return &Game{target: uint8(settings.Target), first: noDeclarer, winner: -1}, nil
}

// Deal deals the current hand's first three cards each from key k and
// appends their events (as StartEvents gives them). Hand 0's deal also draws
// the first declarer: the stream's next IntN(2) after the shuffle. It
// returns ErrWrongPhase when the match is not waiting for a deal (a local
// match never is).
func (g *Game) Deal(k fairdeal.Key, buf []Event) ([]Event, error) {
	if g.phase != PhaseDeal {
		return buf, fmt.Errorf("%w: no hand waits for a deal (phase %v)", ErrWrongPhase, g.phase)
	}
	g.dealFrom(k)
	return g.dealEvents(buf), nil
}

// AwaitingDeal reports whether the match waits for Deal.
func (g *Game) AwaitingDeal() bool { return g.phase == PhaseDeal }

// StartEvents appends the events of the deal New made (hand started, the
// first three cards of each seat), for the service to publish before the
// first move. It describes the current hand when called later.
func (g *Game) StartEvents(buf []Event) []Event {
	if g.phase != PhaseTrump {
		return buf
	}
	return g.dealEvents(buf)
}

// Clone returns an independent copy.
func (g *Game) Clone() *Game {
	c := *g
	return &c
}

// Settings returns the match's settings (Target filled in).
func (g *Game) Settings() Settings { return Settings{Target: int(g.target)} }

// Phase returns the current phase.
func (g *Game) Phase() Phase { return g.phase }

// Over reports whether the match has ended.
func (g *Game) Over() bool { return g.phase == PhaseOver }

// Hand returns the 0-based number of the current hand (the last one once over).
func (g *Game) Hand() int { return int(g.hand) }

// Trick returns the 0-based number of the trick being played.
func (g *Game) Trick() int { return int(g.trickNo) }

// Declarer returns the seat that chooses trump and leads in the current
// hand; -1 before hand 0 is dealt (the first declarer is drawn with it).
func (g *Game) Declarer() int {
	if g.first == noDeclarer {
		return -1
	}
	return int((uint32(g.first) + g.hand) % Seats)
}

// Trump returns the trump suit, NoSuit for bezi; chosen is false while the
// declarer has not chosen yet.
func (g *Game) Trump() (s cards.Suit, chosen bool) {
	return g.trump, g.chosen
}

// Scores returns each seat's match score.
func (g *Game) Scores() [Seats]int { return [Seats]int{int(g.scores[0]), int(g.scores[1])} }

// TricksTaken returns each seat's tricks in the current hand.
func (g *Game) TricksTaken() [Seats]int { return [Seats]int{int(g.tricks[0]), int(g.tricks[1])} }

// Winner returns the seat that won the match, or -1.
func (g *Game) Winner() int { return int(g.winner) }

// EndReason returns why the match ended (ReasonNone while it goes on).
func (g *Game) EndReason() EndReason { return g.reason }

// ToMove returns the seat whose move it is, -1 once the match is over.
func (g *Game) ToMove() int {
	switch g.phase {
	case PhaseTrump:
		return g.Declarer()
	case PhasePlay:
		if g.trick[g.leader] == cards.NoCard {
			return int(g.leader)
		}
		return int(1 - g.leader)
	}
	return -1
}

// Legal appends every legal move of seat to buf: nothing when it is not
// seat's turn. A led joker appears once per suit it may name. Resigning is
// always possible before the end and is not listed. With cap(buf) >=
// len(buf)+MaxLegal it does not allocate.
func (g *Game) Legal(seat int, buf []Move) []Move {
	if seat < 0 || seat != g.ToMove() {
		return buf
	}
	if g.phase == PhaseTrump {
		for s := cards.Spades; s <= cards.NoSuit; s++ {
			buf = append(buf, TrumpMove(seat, s))
		}
		return buf
	}
	leading := g.trick[g.leader] == cards.NoCard
	for set := g.legalSet(seat); set != 0; set &= set - 1 {
		c := set.Lowest()
		if leading && c.IsJoker() {
			for _, s := range cards.Suits {
				buf = append(buf, LeadJoker(seat, c, s))
			}
			continue
		}
		buf = append(buf, PlayMove(seat, c))
	}
	return buf
}

// LegalCards returns the cards seat may play now (empty when not its turn).
func (g *Game) LegalCards(seat int) cards.Set {
	if g.phase != PhasePlay || seat < 0 || seat != g.ToMove() {
		return 0
	}
	return g.legalSet(seat)
}

// faceUp returns seat's face-up column cards.
func (g *Game) faceUp(seat int) cards.Set { return g.faceUps[seat] }

// syncFaceUps derives faceUps from up, after a decoder filled up.
func (g *Game) syncFaceUps() {
	for s := range Seats {
		g.faceUps[s] = 0
		for _, c := range g.up[s] {
			if c != cards.NoCard {
				g.faceUps[s] |= c.Bit()
			}
		}
	}
}

// firstCard reports whether seat has not played a card yet this hand.
func (g *Game) firstCard(seat int) bool {
	return g.trickNo == 0 && g.trick[seat] == cards.NoCard
}

// available is what seat could play if no follow rule applied: the hand,
// plus the face-up column cards after the first card. The follow rules look
// at exactly these cards, never at face-down ones.
func (g *Game) available(seat int) cards.Set {
	if g.firstCard(seat) {
		return g.hands[seat]
	}
	return g.hands[seat] | g.faceUp(seat)
}

// legalSet is the cards seat may play now; the caller checks it is seat's
// turn in PhasePlay.
func (g *Game) legalSet(seat int) cards.Set {
	avail := g.available(seat)
	lead := g.trick[g.leader]
	if lead == cards.NoCard {
		return avail
	}
	jokers := avail.Jokers()
	trump := g.trump
	if lead.IsJoker() {
		if s := avail.OfSuit(g.named); s != 0 {
			return s.Highest().Bit() | jokers
		}
		if g.named != trump {
			if t := avail.OfSuit(trump); t != 0 {
				return t | jokers
			}
		}
		return avail
	}
	if s := avail.OfSuit(lead.Suit()); s != 0 {
		return s | jokers
	}
	if t := avail.OfSuit(trump); t != 0 { // OfSuit(NoSuit) is empty: bezi has no trump
		return t | jokers
	}
	return avail
}

// illegalReason says which rule forbids card (which is available to seat but
// not in legalSet).
func (g *Game) illegalReason(seat int) error {
	avail := g.available(seat)
	lead := g.trick[g.leader]
	if lead.IsJoker() {
		if avail.OfSuit(g.named) != 0 {
			return ErrMustPlayHighest
		}
		return ErrMustTrump
	}
	if avail.OfSuit(lead.Suit()) != 0 {
		return ErrMustFollowSuit
	}
	return ErrMustTrump
}

// check validates m against the current state without changing it.
func (g *Game) check(m Move) error {
	if m.Kind == KindNone || m.Kind > KindForfeit {
		return ErrBadMove
	}
	if m.Seat < 0 || m.Seat >= Seats {
		return ErrBadSeat
	}
	if g.phase == PhaseOver {
		return ErrGameOver
	}
	switch m.Kind {
	case KindResign, KindForfeit:
		if m.Card != cards.NoCard || m.Suit != cards.NoSuit {
			return ErrBadMove
		}
		return nil
	case KindTrump:
		if m.Card != cards.NoCard {
			return ErrBadMove
		}
		if m.Suit > cards.NoSuit {
			return ErrBadTrump
		}
		if g.phase != PhaseTrump {
			return ErrWrongPhase
		}
		if m.Seat != g.Declarer() {
			return ErrNotYourTurn
		}
		return nil
	}
	// KindPlay
	if g.phase != PhasePlay {
		return ErrWrongPhase
	}
	if m.Seat != g.ToMove() {
		return ErrNotYourTurn
	}
	if !m.Card.Valid() {
		return ErrNotInHand
	}
	if m.Card.IsJoker() && g.trick[g.leader] == cards.NoCard {
		if !m.Suit.Valid() {
			return ErrBadJokerDeclaration
		}
	} else if m.Suit != cards.NoSuit {
		return ErrBadJokerDeclaration
	}
	if !g.hands[m.Seat].Has(m.Card) {
		if !g.faceUp(m.Seat).Has(m.Card) {
			return ErrNotInHand
		}
		if g.firstCard(m.Seat) {
			return ErrFirstCardFromHand
		}
	}
	if !g.legalSet(m.Seat).Has(m.Card) {
		return g.illegalReason(m.Seat)
	}
	return nil
}

// Apply validates m and plays it, appending the events it caused to buf. A
// rejected move leaves the game untouched and returns a *MoveError. With
// enough capacity in buf (16 events) the success path does not allocate.
func (g *Game) Apply(m Move, buf []Event) ([]Event, error) {
	if err := g.check(m); err != nil {
		return buf, &MoveError{Hand: int(g.hand), Trick: int(g.trickNo), Seat: m.Seat, Move: m, Err: err}
	}
	switch m.Kind {
	case KindResign:
		return g.end(1-m.Seat, ReasonResigned, buf), nil
	case KindForfeit:
		return g.end(1-m.Seat, ReasonForfeit, buf), nil
	case KindTrump:
		return g.chooseTrump(m.Suit, buf), nil
	}
	return g.play(m.Seat, m.Card, m.Suit, buf), nil
}

// Resign ends the match: seat gives up and the opponent wins.
func (g *Game) Resign(seat int, buf []Event) ([]Event, error) {
	return g.Apply(ResignMove(seat), buf)
}

// Forfeit ends the match as lost by seat, whose reconnect grace ran out.
func (g *Game) Forfeit(seat int, buf []Event) ([]Event, error) {
	return g.Apply(ForfeitMove(seat), buf)
}

func (g *Game) end(winner int, why EndReason, buf []Event) []Event {
	g.phase, g.winner, g.reason = PhaseOver, int8(winner), why
	e := g.event(EventGameEnded)
	e.Seat, e.Reason, e.Scores = int8(winner), why, g.scores
	return append(buf, e)
}

// event returns a public event of kind k in the current hand and trick,
// with every card field empty (NoCard, NoSuit, no column, no seat).
func (g *Game) event(k EventKind) Event {
	return Event{Kind: k, To: Public, Seat: -1, Column: -1, Card: cards.NoCard, Suit: cards.NoSuit,
		Hand: g.hand, Trick: g.trickNo,
		Columns: [Columns]cards.Card{cards.NoCard, cards.NoCard, cards.NoCard, cards.NoCard, cards.NoCard}}
}

// deck is the deal of the current hand. Its layout: [0,3) the declarer's
// first cards, [3,6) the other seat's, [6,11) and [11,16) the second deal to
// the declarer's and the other's hand, then per column i the declarer's
// face-down 16+i and face-up 21+i, the other's face-down 26+i and face-up
// 31+i (docs/fair-play.md).
func (g *Game) deck() cards.Deck {
	d, _ := fairdeal.ShuffleDraw(g.key, Seats)
	return d
}

// dealt reports whether the current hand has been dealt: a live hand has
// no key until Deal (a key of 32 zero bytes is never one HMAC-SHA256 gives).
func (g *Game) dealt() bool { return g.key != fairdeal.Key{} }

// startHand starts hand g.hand with nothing dealt: a local match deals it at
// once, a live one waits in PhaseDeal.
func (g *Game) startHand() {
	g.key = fairdeal.Key{}
	g.phase, g.trump, g.chosen, g.named = PhaseDeal, cards.NoSuit, false, cards.NoSuit
	g.leader, g.trickNo, g.gone = 0, 0, 0
	g.trick = [Seats]cards.Card{cards.NoCard, cards.NoCard}
	g.tricks = [Seats]uint8{}
	g.hands = [Seats]cards.Set{}
	for s := range Seats {
		g.faceUps[s] = 0
		for i := range Columns {
			g.up[s][i], g.down[s][i] = cards.NoCard, cards.NoCard
		}
	}
	if g.local {
		g.dealFrom(fairdeal.LocalKey(g.localSeed, g.hand))
	}
}

// dealFrom deals the current hand's first three cards each from key k:
// trump to choose.
func (g *Game) dealFrom(k fairdeal.Key) {
	d, first := fairdeal.ShuffleDraw(k, Seats)
	if g.hand == 0 {
		g.first = uint8(first)
	}
	g.key = k
	decl := g.Declarer()
	g.phase, g.leader = PhaseTrump, uint8(decl)
	g.hands[decl] = cards.SetOf(d[0], d[1], d[2])
	g.hands[1-decl] = cards.SetOf(d[3], d[4], d[5])
}

func (g *Game) dealEvents(buf []Event) []Event {
	e := g.event(EventHandStarted)
	e.Seat = int8(g.Declarer())
	buf = append(buf, e)
	for s := range Seats {
		e = g.event(EventDealt)
		e.To, e.Seat, e.Cards = int8(s), int8(s), g.hands[s]
		buf = append(buf, e)
	}
	return buf
}

// chooseTrump fixes trump and deals the rest of the deck.
func (g *Game) chooseTrump(s cards.Suit, buf []Event) []Event {
	d := g.deck()
	decl := g.Declarer()
	g.trump, g.chosen, g.phase = s, true, PhasePlay
	e := g.event(EventTrumpChosen)
	e.Seat, e.Suit = int8(decl), s
	buf = append(buf, e)
	for k, seat := range [Seats]int{decl, 1 - decl} {
		more := cards.SetOf(d[6+5*k : 11+5*k]...)
		g.hands[seat] |= more
		for i := range Columns {
			g.down[seat][i] = d[16+10*k+i]
			g.up[seat][i] = d[21+10*k+i]
			g.faceUps[seat] |= g.up[seat][i].Bit()
		}
		e = g.event(EventDealt)
		e.To, e.Seat, e.Cards = int8(seat), int8(seat), more
		buf = append(buf, e)
	}
	for seat := range Seats {
		e = g.event(EventColumnsDealt)
		e.Seat, e.Columns = int8(seat), g.up[seat]
		buf = append(buf, e)
	}
	return buf
}

// play puts card on the trick (check has accepted it) and settles the trick
// when it is complete.
func (g *Game) play(seat int, card cards.Card, named cards.Suit, buf []Event) []Event {
	base := g.event(EventNone)
	base.Seat = int8(seat)
	col := -1
	if g.hands[seat].Has(card) {
		g.hands[seat] = g.hands[seat].Without(card)
	} else {
		for i, c := range g.up[seat] {
			if c == card {
				col = i
				break
			}
		}
	}
	e := base
	e.Kind, e.Card, e.Suit, e.Column = EventCardPlayed, card, named, int8(col)
	buf = append(buf, e)
	if col >= 0 {
		buf = g.takeColumn(seat, col, buf, base)
	}
	g.trick[seat] = card
	if seat == int(g.leader) {
		g.named = named
		return buf
	}
	return g.settleTrick(buf, base)
}

// takeColumn removes column col, whose face-up card was just played, and
// moves its face-down card into the owner's hand; if a single column would be
// left, it goes into the hand too.
func (g *Game) takeColumn(seat, col int, buf []Event, base Event) []Event {
	toHand := func(i int) {
		c := g.down[seat][i]
		g.hands[seat] |= c.Bit()
		g.down[seat][i] = cards.NoCard
		e := base
		e.Kind, e.To, e.Card, e.Column = EventFaceDownToHand, int8(seat), c, int8(i)
		buf = append(buf, e)
	}
	g.faceUps[seat] = g.faceUps[seat].Without(g.up[seat][col])
	g.up[seat][col] = cards.NoCard
	toHand(col)
	if rest := g.faceUps[seat]; rest.Len() == 1 {
		up, last := rest.Lowest(), 0
		for i, c := range g.up[seat] {
			if c == up {
				last = i
			}
		}
		g.hands[seat] |= up.Bit()
		g.faceUps[seat] = 0
		g.up[seat][last] = cards.NoCard
		e := base
		e.Kind, e.Card, e.Column = EventTableCleared, up, int8(last)
		buf = append(buf, e)
		toHand(last)
	}
	return buf
}

// trickWinner decides the complete trick.
func (g *Game) trickWinner() int {
	l := int(g.leader)
	a := 1 - l
	led, ans := g.trick[l], g.trick[a]
	switch {
	case ans.IsJoker(): // a joker in answer always takes, the second joker too
		return a
	case led.IsJoker():
		// Only a trump given because the named suit was missing beats it.
		if g.trump != cards.NoSuit && g.named != g.trump && ans.Suit() == g.trump {
			return a
		}
		return l
	case ans.Suit() == led.Suit():
		if ans.Rank() > led.Rank() {
			return a
		}
		return l
	case g.trump != cards.NoSuit && ans.Suit() == g.trump:
		return a
	}
	return l
}

func (g *Game) settleTrick(buf []Event, base Event) []Event {
	w := g.trickWinner()
	g.tricks[w]++
	g.gone |= g.trick[0].Bit() | g.trick[1].Bit()
	g.trick = [Seats]cards.Card{cards.NoCard, cards.NoCard}
	g.named = cards.NoSuit
	g.leader = uint8(w)
	e := base
	e.Kind, e.Seat, e.Tricks = EventTrickWon, int8(w), g.tricks
	buf = append(buf, e)
	g.trickNo++
	if g.trickNo < TricksPerHand {
		return buf
	}
	return g.endHand(buf)
}

// endHand scores the hand, then ends the match or deals the next hand.
func (g *Game) endHand(buf []Event) []Event {
	var pts [Seats]uint8
	switch {
	case g.tricks[0] > g.tricks[1]:
		pts[0] = g.tricks[0] - g.tricks[1]
	case g.tricks[1] > g.tricks[0]:
		pts[1] = g.tricks[1] - g.tricks[0]
	}
	g.scores[0] += pts[0]
	g.scores[1] += pts[1]
	g.results[g.hand%MaxRecordedHands] = packResult(g.tricks[0], g.trump)
	g.finished++
	e := g.event(EventHandEnded)
	e.Suit, e.Tricks, e.Points, e.Scores = g.trump, g.tricks, pts, g.scores
	buf = append(buf, e)
	for s := range Seats {
		if int(g.scores[s]) >= int(g.target) {
			return g.end(s, ReasonTarget, buf)
		}
	}
	g.hand++
	g.startHand()
	if g.phase == PhaseDeal {
		return buf // a live match: the next hand waits for Deal
	}
	return g.dealEvents(buf)
}

// packResult stores a finished hand in a byte: seat 0's tricks (0..18, the
// other seat has the rest) and the trump (0..4) above them.
func packResult(tricks0 uint8, trump cards.Suit) uint8 { return tricks0 | uint8(trump)<<5 }

// HandResult is one finished hand.
type HandResult struct {
	Hand     int        `json:"hand"` // 0-based
	Declarer int        `json:"declarer"`
	Trump    string     `json:"trump"` // S, H, D, C or bezi
	Tricks   [Seats]int `json:"tricks"`
	Points   [Seats]int `json:"points"`
}

// HandResults returns the finished hands in order (the most recent
// MaxRecordedHands of them).
func (g *Game) HandResults() []HandResult {
	n := int(g.finished)
	from := max(0, n-MaxRecordedHands)
	out := make([]HandResult, 0, n-from)
	for h := from; h < n; h++ {
		r := g.results[h%MaxRecordedHands]
		t0 := int(r & 0x1f)
		hr := HandResult{
			Hand:     h,
			Declarer: (int(g.first) + h) % Seats,
			Trump:    trumpText(cards.Suit(r >> 5)),
			Tricks:   [Seats]int{t0, TricksPerHand - t0},
		}
		if d := hr.Tricks[0] - hr.Tricks[1]; d > 0 {
			hr.Points[0] = d
		} else {
			hr.Points[1] = -d
		}
		out = append(out, hr)
	}
	return out
}
