package classic

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/fairdeal"
)

// randomPlay plays random legal moves (seeded) until stop says so or the
// game ends, and returns every event.
func randomPlay(t testing.TB, g *Game, seed uint64, stop func(*Game) bool) []Event {
	t.Helper()
	r := cards.NewRNG(seed, 1)
	evs := g.StartEvents(nil)
	var legal []Move
	for !g.Over() && (stop == nil || !stop(g)) {
		legal = g.Legal(g.ToMove(), legal[:0])
		var err error
		evs, err = g.Apply(legal[r.IntN(len(legal))], evs)
		if err != nil {
			t.Fatal(err)
		}
	}
	return evs
}

// localDeck is the deck of hand h of a local game of seed.
func localDeck(seed uint64, h int) cards.Deck {
	d, _ := fairdeal.Shuffle(fairdeal.LocalKey(seed, uint32(h)))
	return d
}

func newGame(t testing.TB, seed uint64, v Variant) *Game {
	t.Helper()
	g, err := New(seed, Settings{Variant: v})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// --- Deck and deal ---

func TestDeal_EveryHandIsAFreshShuffleOfTheWholeDeck(t *testing.T) {
	g := newGame(t, 11, Standard)
	evs := randomPlay(t, g, 11, nil)
	dealt := map[int8][Seats]cards.Set{}
	turned := map[int8]cards.Card{}
	for _, e := range evs {
		switch e.Kind {
		case EventDealt:
			d := dealt[e.Hand]
			d[e.Seat] = e.Cards
			dealt[e.Hand] = d
		case EventTrumpTurned:
			turned[e.Hand] = e.Card
		}
	}
	if len(dealt) != Standard.Hands() {
		t.Fatalf("%d hands dealt, want %d", len(dealt), Standard.Hands())
	}
	for h, d := range dealt {
		n := Standard.CardsInHand(int(h))
		deck := localDeck(11, int(h))
		var all cards.Set
		for s, cs := range d {
			if cs.Len() != n || all&cs != 0 {
				t.Fatalf("hand %d seat %d: %v (%d cards, want %d, disjoint)", h, s, cs, cs.Len(), n)
			}
			all |= cs
		}
		var want cards.Set
		for _, c := range deck[:Seats*n] {
			want = want.With(c)
		}
		if all != want {
			t.Fatalf("hand %d: dealt %v, want the top %d cards of the deck of LocalKey(seed, %d)", h, all, Seats*n, h)
		}
		if n < MaxCards && (turned[h] != deck[Seats*n] || all.Has(turned[h])) {
			t.Fatalf("hand %d: turned %v, want the next card %v", h, turned[h], deck[Seats*n])
		}
	}
}

func TestDeal_NineCardHandsDealTheWholeDeckJokersIncluded(t *testing.T) {
	g := newGame(t, 5, Nines)
	play(t, g, TrumpMove(g.ToMove(), cards.NoSuit).String())
	var all cards.Set
	for s := range Seats {
		all |= g.Hand(s)
	}
	if all != cards.FullDeck || all.Jokers() != cards.Jokers {
		t.Fatalf("nine-card deal covers %v, want all 36 cards", all)
	}
}

// --- Game structure ---

func TestStructure_FirstDealerIsDrawnFromTheSeed(t *testing.T) {
	seen := map[int]bool{}
	for seed := range uint64(64) {
		a, b := newGame(t, seed, Standard), newGame(t, seed, Standard)
		if a.Dealer() != b.Dealer() {
			t.Fatalf("seed %d: dealer %d then %d", seed, a.Dealer(), b.Dealer())
		}
		_, st := fairdeal.Shuffle(fairdeal.LocalKey(seed, 0))
		if want := st.IntN(Seats); a.Dealer() != want {
			t.Fatalf("seed %d: dealer %d, want %d", seed, a.Dealer(), want)
		}
		seen[a.Dealer()] = true
	}
	if len(seen) != Seats {
		t.Fatalf("over 64 seeds the first dealer was only %v", seen)
	}
}

func TestStructure_DealPassesClockwiseAndHandsFollowTheSchedule(t *testing.T) {
	for _, v := range []Variant{Standard, Nines} {
		g := newGame(t, 3, v)
		first := g.Dealer()
		evs := randomPlay(t, g, 3, nil)
		h := 0
		for _, e := range evs {
			if e.Kind != EventHandStarted {
				continue
			}
			if int(e.Hand) != h || int(e.Seat) != (first+h)%Seats || int(e.N) != v.CardsInHand(h) {
				t.Fatalf("%v hand %d: event %+v, want dealer %d and %d cards", v, h, e, (first+h)%Seats, v.CardsInHand(h))
			}
			h++
		}
		if h != v.Hands() || evs[len(evs)-1].Kind != EventGameEnded {
			t.Fatalf("%v: %d hands then %v, want %d then game_ended", v, h, evs[len(evs)-1].Kind, v.Hands())
		}
	}
}

func TestStructure_GameEndsAfterTheLastHand(t *testing.T) {
	g := newGame(t, 8, Nines)
	randomPlay(t, g, 8, nil)
	if !g.Over() || g.ToMove() != -1 || g.Phase() != PhaseOver {
		t.Fatalf("over=%v toMove=%d phase=%v", g.Over(), g.ToMove(), g.Phase())
	}
	for s := range Seats {
		if len(g.Legal(s, nil)) != 0 {
			t.Fatalf("seat %d has moves after the end", s)
		}
	}
	_, err := g.Apply(BidMove(0, 0), nil)
	if !errors.Is(err, ErrGameOver) {
		t.Fatalf("move after the end: %v, want ErrGameOver", err)
	}
	if len(g.HandResults()) != Nines.Hands() {
		t.Fatalf("%d results", len(g.HandResults()))
	}
}

func TestStructure_UnknownVariantIsRejected(t *testing.T) {
	if _, err := New(1, Settings{Variant: Variant(9)}); !errors.Is(err, ErrBadSettings) {
		t.Fatalf("err = %v, want ErrBadSettings", err)
	}
}

// --- Trump ---

// seedWhere finds a seed whose first hand (standard: 1 card) satisfies ok.
func seedWhere(t *testing.T, ok func(*Game) bool) *Game {
	t.Helper()
	for seed := range uint64(10_000) {
		g := newGame(t, seed, Standard)
		if ok(g) {
			return g
		}
	}
	t.Fatal("no seed found")
	return nil
}

func TestTrump_TurnedCardSuitIsTrumpInSmallHands(t *testing.T) {
	for seed := range uint64(50) {
		g := newGame(t, seed, Standard)
		evs := g.StartEvents(nil)
		deck := localDeck(seed, 0)
		turned := deck[Seats]
		last := evs[len(evs)-1]
		if last.Kind != EventTrumpTurned || last.Card != turned || g.Trump() != turned.Suit() || last.Suit != g.Trump() {
			t.Fatalf("seed %d: trump %v, event %+v, want the turned %v", seed, g.Trump(), last, turned)
		}
		if g.Phase() != PhaseBid {
			t.Fatalf("seed %d: phase %v, want bid (no choice in small hands)", seed, g.Phase())
		}
		if _, err := g.Apply(TrumpMove(g.ToMove(), cards.Hearts), nil); !errors.Is(err, ErrWrongPhase) {
			t.Fatalf("choosing trump in a 1-card hand: %v, want ErrWrongPhase", err)
		}
	}
}

func TestTrump_TurnedJokerMeansNoTrump(t *testing.T) {
	g := seedWhere(t, func(g *Game) bool { return g.turned.IsJoker() })
	if g.Trump() != cards.NoSuit {
		t.Fatalf("turned %v gave trump %v, want no trump", g.turned, g.Trump())
	}
	if v := g.View(0); v.Trump != "NT" || v.Turned == nil || !v.Turned.IsJoker() {
		t.Fatalf("view trump %q turned %v", v.Trump, v.Turned)
	}
	// Only the other joker is in play.
	for s := range Seats {
		if g.Hand(s).Has(g.turned) {
			t.Fatalf("the turned joker is in seat %d's hand", s)
		}
	}
	// With no trump a void player may play anything.
	p := build(t, position{hand: 1, dealer: 0, trump: cards.NoSuit,
		hands: [Seats]string{"7D 8D", "AH 9H", "KS QC", "JH 8C"}, bids: [Seats]int8{0, 1, 0, 0}, leader: 1})
	play(t, p, "1 play AH")
	if got := p.Playable(2); got != set(t, "KS QC") {
		t.Fatalf("void seat may play %v, want anything", got)
	}
}

func TestTrump_NineCardHandChosenBySeatAfterDealerFromThreeCards(t *testing.T) {
	g := newGame(t, 21, Nines)
	chooser := (g.Dealer() + 1) % Seats
	if g.Phase() != PhaseTrump || g.ToMove() != chooser {
		t.Fatalf("phase %v, to move %d; want trump chosen by %d", g.Phase(), g.ToMove(), chooser)
	}
	legal := g.Legal(chooser, nil)
	want := []Move{TrumpMove(chooser, cards.Spades), TrumpMove(chooser, cards.Hearts),
		TrumpMove(chooser, cards.Diamonds), TrumpMove(chooser, cards.Clubs), TrumpMove(chooser, cards.NoSuit)}
	if !slices.Equal(legal, want) {
		t.Fatalf("legal = %v, want the four suits and no trump", legal)
	}
	for s := range Seats {
		if s != chooser {
			if _, err := g.Apply(TrumpMove(s, cards.Hearts), nil); !errors.Is(err, ErrNotYourTurn) {
				t.Fatalf("seat %d chose trump: %v", s, err)
			}
		}
	}
	if _, err := g.Apply(TrumpMove(chooser, cards.Suit(7)), nil); !errors.Is(err, ErrBadTrump) {
		t.Fatalf("suit 7: %v, want ErrBadTrump", err)
	}
	if _, err := g.Apply(BidMove(chooser, 1), nil); !errors.Is(err, ErrWrongPhase) {
		t.Fatalf("bid before trump: %v, want ErrWrongPhase", err)
	}
	evs := play(t, g, mv(t, TrumpMove(chooser, cards.Diamonds).String()).String())
	if g.Trump() != cards.Diamonds || g.Phase() != PhaseBid || g.ToMove() != chooser {
		t.Fatalf("after choosing: trump %v phase %v to move %d", g.Trump(), g.Phase(), g.ToMove())
	}
	if evs[0].Kind != EventTrumpChosen || evs[0].Suit != cards.Diamonds || evs[0].To != Public {
		t.Fatalf("first event %+v, want public trump_chosen D", evs[0])
	}
	dealt := 0
	for _, e := range evs[1:] {
		if e.Kind == EventDealt && int(e.To) == int(e.Seat) && e.Cards == g.Hand(int(e.Seat)) && e.Cards.Len() == 9 {
			dealt++
		}
	}
	if dealt != Seats {
		t.Fatalf("%d private nine-card deals after the choice, want 4: %+v", dealt, evs)
	}
}

func TestTrump_NoTrumpMayBeChosen(t *testing.T) {
	g := newGame(t, 2, Nines)
	play(t, g, TrumpMove(g.ToMove(), cards.NoSuit).String())
	if g.Trump() != cards.NoSuit || g.View(0).Trump != "NT" {
		t.Fatalf("trump %v, view %q", g.Trump(), g.View(0).Trump)
	}
}

func TestTrump_ChooserSeesOnlyItsFirstThreeCardsAndOthersNothing(t *testing.T) {
	g := newGame(t, 33, Nines)
	chooser := g.ToMove()
	deck := localDeck(33, 0)
	first := cards.SetOf(deck[0], deck[1], deck[2]) // the chooser is served first
	for seat := -1; seat < Seats; seat++ {
		v := g.View(seat)
		want := []cards.Card{}
		if seat == chooser {
			want = first.Cards()
		}
		if !slices.Equal(v.MyCards, want) || len(v.Played) != 0 || v.Turned != nil || v.Trump != "" {
			t.Fatalf("seat %d sees %v (played %v, turned %v, trump %q), want %v", seat, v.MyCards, v.Played, v.Turned, v.Trump, want)
		}
	}
	evs := g.StartEvents(nil)
	for _, e := range evs {
		if e.Kind == EventDealt {
			t.Fatalf("a seat was shown its cards before trump: %+v", e)
		}
		if e.Kind == EventFirstCards && (int(e.To) != chooser || e.Cards != first) {
			t.Fatalf("first cards event %+v, want %v to seat %d only", e, first, chooser)
		}
	}
	play(t, g, TrumpMove(chooser, cards.Clubs).String())
	if mine := g.View(chooser).MyCards; len(mine) != 9 || g.Hand(chooser)&first != first {
		t.Fatalf("after trump the chooser holds %v, which must include %v", mine, first)
	}
}

// --- Bidding ---

func TestBid_StartsAfterTheDealerAndTheDealerBidsLast(t *testing.T) {
	g := newGame(t, 4, Standard)
	d := g.Dealer()
	for i := 1; i <= Seats; i++ {
		seat := (d + i) % Seats
		if g.ToMove() != seat || g.Phase() != PhaseBid {
			t.Fatalf("bid %d: seat %d to move in %v, want %d", i, g.ToMove(), g.Phase(), seat)
		}
		play(t, g, g.Legal(seat, nil)[0].String())
	}
	if g.Phase() != PhasePlay {
		t.Fatalf("after the dealer's bid: phase %v, want play", g.Phase())
	}
}

func TestBid_IsFromZeroToTheCardsDealt(t *testing.T) {
	g := build(t, position{hand: 2, dealer: 3})
	g.phase, g.bids, g.turn = PhaseBid, [Seats]int8{noBid, noBid, noBid, noBid}, 0
	legal := g.Legal(0, nil)
	if len(legal) != 4 || legal[0].Bid != 0 || legal[3].Bid != 3 {
		t.Fatalf("legal bids in a 3-card hand: %v", legal)
	}
	for _, b := range []int{-1, 4, 9} {
		if _, err := g.Apply(BidMove(0, b), nil); !errors.Is(err, ErrBadBid) {
			t.Fatalf("bid %d: %v, want ErrBadBid", b, err)
		}
	}
	play(t, g, "0 bid 3")
}

func TestBid_DealerMayNotMakeTheTotalEqualTheCards(t *testing.T) {
	g := build(t, position{hand: 3, dealer: 2}) // 4 cards
	g.phase, g.bids, g.turn, g.leader = PhaseBid, [Seats]int8{noBid, noBid, noBid, noBid}, 3, 3
	play(t, g, "3 bid 1", "0 bid 0", "1 bid 2")
	if v := g.View(2); v.Forbidden != 1 {
		t.Fatalf("view forbidden = %d, want 1", v.Forbidden)
	}
	_, err := g.Apply(BidMove(2, 1), nil)
	if !errors.Is(err, ErrDealerBid) {
		t.Fatalf("dealer bid 1 (total 4): %v, want ErrDealerBid", err)
	}
	for _, m := range g.Legal(2, nil) {
		if m.Bid == 1 {
			t.Fatalf("legal bids %v include the forbidden 1", g.Legal(2, nil))
		}
	}
	if n := len(g.Legal(2, nil)); n != 4 {
		t.Fatalf("%d legal dealer bids, want 4", n)
	}
	play(t, g, "2 bid 0")
	if g.Phase() != PhasePlay || g.ToMove() != 3 {
		t.Fatalf("after the dealer: phase %v, to move %d, want play led by 3", g.Phase(), g.ToMove())
	}
}

func TestBid_DealerIsFreeWhenTheOthersAlreadyBidMoreThanTheCards(t *testing.T) {
	g := build(t, position{hand: 1, dealer: 0}) // 2 cards
	g.phase, g.bids, g.turn = PhaseBid, [Seats]int8{noBid, noBid, noBid, noBid}, 1
	play(t, g, "1 bid 2", "2 bid 1", "3 bid 0")
	if n := len(g.Legal(0, nil)); n != 3 || g.View(0).Forbidden != -1 {
		t.Fatalf("dealer has %d bids (forbidden %d), want all 3", n, g.View(0).Forbidden)
	}
}

func TestBid_AllBidsArePublic(t *testing.T) {
	g := newGame(t, 6, Standard)
	s := g.ToMove()
	evs := play(t, g, BidMove(s, 1).String())
	if evs[0].Kind != EventBid || evs[0].To != Public || evs[0].Bid != 1 {
		t.Fatalf("bid event %+v", evs[0])
	}
	for seat := -1; seat < Seats; seat++ {
		if g.View(seat).Bids[s] != 1 {
			t.Fatalf("seat %d does not see the bid", seat)
		}
	}
}

// --- Play ---

func TestPlay_SeatAfterTheDealerLeadsTheFirstTrick(t *testing.T) {
	g := newGame(t, 9, Standard)
	randomPlay(t, g, 9, func(g *Game) bool { return g.Phase() == PhasePlay })
	if g.ToMove() != (g.Dealer()+1)%Seats {
		t.Fatalf("seat %d leads, dealer is %d", g.ToMove(), g.Dealer())
	}
}

func TestPlay_TrickWinnerLeadsTheNextTrick(t *testing.T) {
	g := build(t, position{hand: 1, dealer: 3, trump: cards.Clubs,
		hands: [Seats]string{"7H 8D", "AH 9D", "KH 10D", "QH JD"}, bids: [Seats]int8{0, 1, 0, 0}})
	evs := play(t, g, "0 play 7H", "1 play AH", "2 play KH", "3 play QH")
	if trickWonBy(evs) != 1 || g.ToMove() != 1 || g.Tricks(1) != 1 {
		t.Fatalf("winner %d, to move %d", trickWonBy(evs), g.ToMove())
	}
}

func TestPlay_MustFollowSuit(t *testing.T) {
	g := build(t, position{hand: 1, dealer: 3, trump: cards.Clubs,
		hands: [Seats]string{"7H 8D", "AH 9C", "KH JK1", "QS JD"}, bids: [Seats]int8{0, 1, 0, 0}})
	play(t, g, "0 play 7H")
	if _, err := g.Apply(mv(t, "1 play 9C"), nil); !errors.Is(err, ErrMustFollowSuit) {
		t.Fatalf("trumping while holding hearts: %v, want ErrMustFollowSuit", err)
	}
	if got := g.Playable(1); got != set(t, "AH") {
		t.Fatalf("playable %v, want AH", got)
	}
}

func TestPlay_VoidInTheLedSuitMustTrump(t *testing.T) {
	g := build(t, position{hand: 1, dealer: 3, trump: cards.Clubs,
		hands: [Seats]string{"7H 8D", "AD 9C", "KH JK1", "QS JD"}, bids: [Seats]int8{0, 1, 0, 0}})
	play(t, g, "0 play 7H")
	if _, err := g.Apply(mv(t, "1 play AD"), nil); !errors.Is(err, ErrMustTrump) {
		t.Fatalf("discarding while holding a trump: %v, want ErrMustTrump", err)
	}
	if got := g.Playable(1); got != set(t, "9C") {
		t.Fatalf("playable %v, want 9C", got)
	}
}

func TestPlay_VoidWithoutTrumpMayPlayAnything(t *testing.T) {
	g := build(t, position{hand: 1, dealer: 3, trump: cards.Clubs,
		hands: [Seats]string{"7H 8D", "AD 9S", "KH JK1", "QS JD"}, bids: [Seats]int8{0, 1, 0, 0}})
	play(t, g, "0 play 7H")
	if got := g.Playable(1); got != set(t, "AD 9S") {
		t.Fatalf("playable %v, want anything", got)
	}
}

func TestPlay_BeatingTheTableIsNeverRequired(t *testing.T) {
	g := build(t, position{hand: 1, dealer: 3, trump: cards.Clubs,
		hands: [Seats]string{"KH 8D", "AH 7H", "9C JK1", "QS JD"}, bids: [Seats]int8{0, 1, 0, 0}})
	play(t, g, "0 play KH", "1 play 7H")
	// Seat 2 is void in hearts: it must trump, but seat 3 may then follow low.
	if got := g.Playable(2); got != set(t, "9C JK1") {
		t.Fatalf("playable %v", got)
	}
}

func TestPlay_CardMustBeInHandAndSeatMustBeToMove(t *testing.T) {
	g := build(t, position{hand: 0, dealer: 3, trump: cards.Clubs,
		hands: [Seats]string{"KH", "AH", "9C", "QS"}, bids: [Seats]int8{0, 1, 1, 0}})
	if _, err := g.Apply(mv(t, "0 play AH"), nil); !errors.Is(err, ErrNotInHand) {
		t.Fatalf("card not held: %v", err)
	}
	if _, err := g.Apply(mv(t, "1 play AH"), nil); !errors.Is(err, ErrNotYourTurn) {
		t.Fatalf("out of turn: %v", err)
	}
	if _, err := g.Apply(mv(t, "0 bid 1"), nil); !errors.Is(err, ErrWrongPhase) {
		t.Fatalf("bid during play: %v", err)
	}
	if _, err := g.Apply(Move{Seat: 0, Kind: 9}, nil); !errors.Is(err, ErrUnknownMove) {
		t.Fatalf("unknown kind: %v", err)
	}
}

// trick is a finished trick for the winner table: cards in order of play,
// the leading joker's suit, and declarations.
type trick struct {
	name  string
	trump cards.Suit
	cards string // four cards, lead first
	led   cards.Suit
	decl  [Seats]JokerMode
	want  int // position of the winner
}

func TestPlay_TrickWinner(t *testing.T) {
	S, H, D, C, NT := cards.Spades, cards.Hearts, cards.Diamonds, cards.Clubs, cards.NoSuit
	_ = S
	none := [Seats]JokerMode{}
	for _, tc := range []trick{
		{"highest card of the led suit", C, "7H KH 9D QH", H, none, 1},
		{"off-suit ace never wins", C, "7H AD 9H QS", H, none, 2},
		{"a trump beats the led suit", C, "AH KH 7C QH", H, none, 2},
		{"the highest trump wins", C, "AH 7C KC 8C", H, none, 2},
		{"led trump: highest trump", C, "7C 9C AH 8C", C, none, 1},
		{"no trump: led suit only", NT, "7H 9C AS 8H", H, none, 3},
		{"take joker beats the trump ace", C, "7H AC JK1 QH", H, [Seats]JokerMode{2: JokerTake}, 2},
		{"discarded joker loses", C, "7H 8H JK1 QH", H, [Seats]JokerMode{2: JokerDiscard}, 3},
		{"later take beats earlier take", C, "7H JK1 AC JK2", H, [Seats]JokerMode{1: JokerTake, 3: JokerTake}, 3},
		{"later discard leaves the earlier take", C, "7H JK1 AC JK2", H, [Seats]JokerMode{1: JokerTake, 3: JokerDiscard}, 1},
		{"led highest wins", C, "JK1 AH KH 7H", H, [Seats]JokerMode{0: JokerHighest}, 0},
		{"led highest loses to a trump when its suit is not trump", C, "JK1 AH 7C 9C", H, [Seats]JokerMode{0: JokerHighest}, 3},
		{"led highest in the trump suit cannot be trumped", C, "JK1 AC KC 7H", C, [Seats]JokerMode{0: JokerHighest}, 0},
		{"led highest beaten by a later take", C, "JK1 AH JK2 7H", H, [Seats]JokerMode{0: JokerHighest, 2: JokerTake}, 2},
		{"led highest, later joker discards: the leader wins", C, "JK1 AH JK2 7H", H, [Seats]JokerMode{0: JokerHighest, 2: JokerDiscard}, 0},
		{"led highest, no trump game", NT, "JK1 7S 8D 9C", H, [Seats]JokerMode{0: JokerHighest}, 0},
		{"led give: highest card of the suit wins", C, "JK1 8H AH 7H", H, [Seats]JokerMode{0: JokerGive}, 2},
		{"led give: a trump wins", C, "JK1 AH 7C 8D", H, [Seats]JokerMode{0: JokerGive}, 2},
		{"led give: nobody follows, the joker wins", C, "JK1 7S 8D 9S", H, [Seats]JokerMode{0: JokerGive}, 0},
		{"led give in trump: highest trump", C, "JK1 7C AC 9H", C, [Seats]JokerMode{0: JokerGive}, 2},
		{"led give, later take wins", C, "JK1 AH JK2 7C", H, [Seats]JokerMode{0: JokerGive, 2: JokerTake}, 2},
		{"led give, later discard: the suit's highest wins", C, "JK1 8H JK2 7H", H, [Seats]JokerMode{0: JokerGive, 2: JokerDiscard}, 1},
		{"led give, later discard, nobody follows: the leader", D, "JK1 8S JK2 7S", H, [Seats]JokerMode{0: JokerGive, 2: JokerDiscard}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cs [Seats]cards.Card
			for i, f := range strings.Fields(tc.cards) {
				cs[i] = card(t, f)
			}
			if got := trickWinner(&cs, &tc.decl, tc.led, tc.trump); got != tc.want {
				t.Fatalf("winner = %d (%v), want %d (%v)", got, cs[got], tc.want, cs[tc.want])
			}
			// The same trick through Apply, from seat 2 leading.
			var hands [Seats]string
			for i := range Seats {
				hands[(2+i)%Seats] = cs[i].String()
			}
			g := build(t, position{hand: 0, dealer: 1, trump: tc.trump, hands: hands, bids: [Seats]int8{1, 0, 1, 1}, leader: 2})
			var evs []Event
			for i := range Seats {
				m := Move{Seat: int8((2 + i) % Seats), Kind: MovePlay, Card: cs[i], Joker: tc.decl[i]}
				if i == 0 {
					m.Suit = tc.led
				}
				g.hands[m.Seat] = cs[i].Bit()
				var err error
				if evs, err = g.Apply(m, evs); err != nil {
					t.Fatalf("%v: %v", m, err)
				}
			}
			if got := trickWonBy(evs); got != (2+tc.want)%Seats {
				t.Fatalf("Apply: seat %d won, want %d", got, (2+tc.want)%Seats)
			}
		})
	}
	_, _ = D, H
}

// --- Jokers ---

func TestJoker_MayBePlayedAtAnyTime(t *testing.T) {
	g := build(t, position{hand: 1, dealer: 3, trump: cards.Clubs,
		hands: [Seats]string{"7H 8D", "AH JK1", "KH JK2", "QS JD"}, bids: [Seats]int8{0, 1, 0, 0}})
	play(t, g, "0 play 7H")
	legal := g.Legal(1, nil)
	want := []Move{PlayMove(1, card(t, "AH")),
		JokerMove(1, cards.Joker1, JokerTake, 0), JokerMove(1, cards.Joker1, JokerDiscard, 0)}
	slices.SortFunc(legal, func(a, b Move) int { return int(a.Card) - int(b.Card) })
	slices.SortFunc(want, func(a, b Move) int { return int(a.Card) - int(b.Card) })
	if !slices.Equal(legal, want) {
		t.Fatalf("legal %v, want %v", legal, want)
	}
}

func TestJoker_FollowingJokerDeclaresTakeOrDiscard(t *testing.T) {
	g := build(t, position{hand: 1, dealer: 3, trump: cards.Clubs,
		hands: [Seats]string{"7H 8D", "AH JK1", "KH JK2", "QS JD"}, bids: [Seats]int8{0, 1, 0, 0}})
	play(t, g, "0 play 7H")
	for _, m := range []Move{
		{Seat: 1, Kind: MovePlay, Card: cards.Joker1},
		{Seat: 1, Kind: MovePlay, Card: cards.Joker1, Joker: JokerHighest, Suit: cards.Hearts},
		{Seat: 1, Kind: MovePlay, Card: cards.Joker1, Joker: JokerGive, Suit: cards.Hearts},
		{Seat: 1, Kind: MovePlay, Card: cards.Joker1, Joker: 9},
	} {
		if _, err := g.Apply(m, nil); !errors.Is(err, ErrBadJokerDeclaration) {
			t.Fatalf("%+v: %v, want ErrBadJokerDeclaration", m, err)
		}
	}
}

func TestJoker_LeadingJokerNamesASuitAndHighestOrGive(t *testing.T) {
	g := build(t, position{hand: 1, dealer: 3, trump: cards.Clubs,
		hands: [Seats]string{"7H JK1", "AH 8S", "KH JK2", "QS JD"}, bids: [Seats]int8{0, 1, 0, 0}})
	legal := g.Legal(0, nil)
	jokers := 0
	for _, m := range legal {
		if m.Card == cards.Joker1 {
			jokers++
			if (m.Joker != JokerHighest && m.Joker != JokerGive) || !m.Suit.Valid() {
				t.Fatalf("leading joker move %v", m)
			}
		}
	}
	if jokers != 8 || len(legal) != 9 {
		t.Fatalf("legal %v: want 7H and the joker as highest/give in 4 suits", legal)
	}
	for _, m := range []Move{
		JokerMove(0, cards.Joker1, JokerTake, 0),
		JokerMove(0, cards.Joker1, JokerDiscard, 0),
		{Seat: 0, Kind: MovePlay, Card: cards.Joker1, Joker: JokerHighest, Suit: cards.NoSuit},
	} {
		if _, err := g.Apply(m, nil); !errors.Is(err, ErrBadJokerDeclaration) {
			t.Fatalf("%v: %v, want ErrBadJokerDeclaration", m, err)
		}
	}
}

func TestJoker_LedHighestForcesTheHighestCardOfItsSuit(t *testing.T) {
	g := build(t, position{hand: 2, dealer: 3, trump: cards.Clubs,
		hands: [Seats]string{"JK1 7D 8D", "AH 9H 7C", "KH JK2 QH", "QS JD 8C"}, bids: [Seats]int8{0, 1, 0, 1}})
	play(t, g, "0 play JK1 highest H")
	if _, err := g.Apply(mv(t, "1 play 9H"), nil); !errors.Is(err, ErrMustPlayHighest) {
		t.Fatalf("lower heart: %v, want ErrMustPlayHighest", err)
	}
	if _, err := g.Apply(mv(t, "1 play 7C"), nil); !errors.Is(err, ErrMustFollowSuit) {
		t.Fatalf("trump while holding hearts: %v, want ErrMustFollowSuit", err)
	}
	if got := g.Playable(1); got != set(t, "AH") {
		t.Fatalf("playable %v, want AH", got)
	}
	play(t, g, "1 play AH")
	if got := g.Playable(2); got != set(t, "KH JK2") {
		t.Fatalf("playable %v, want KH or the joker", got)
	}
	play(t, g, "2 play KH")
	// Seat 3 is void in hearts: the normal rule, trump if able.
	if got := g.Playable(3); got != set(t, "8C") {
		t.Fatalf("void seat may play %v, want the trump 8C", got)
	}
	if _, err := g.Apply(mv(t, "3 play QS"), nil); !errors.Is(err, ErrMustTrump) {
		t.Fatalf("void seat discarding: %v, want ErrMustTrump", err)
	}
	evs := play(t, g, "3 play 8C")
	if trickWonBy(evs) != 3 {
		t.Fatalf("winner %d, want the trump (seat 3)", trickWonBy(evs))
	}
}

func TestJoker_LedHighestWinsWhenNobodyTrumps(t *testing.T) {
	g := build(t, position{hand: 1, dealer: 3, trump: cards.Clubs,
		hands: [Seats]string{"JK1 7D", "AH 9H", "KH QH", "7S JD"}, bids: [Seats]int8{1, 1, 0, 1}})
	evs := play(t, g, "0 play JK1 highest H", "1 play AH", "2 play KH", "3 play 7S")
	if trickWonBy(evs) != 0 {
		t.Fatalf("winner %d, want the joker", trickWonBy(evs))
	}
}

func TestJoker_LedGiveLetsOthersFollowWithAnyCardOfTheSuit(t *testing.T) {
	g := build(t, position{hand: 2, dealer: 3, trump: cards.Clubs,
		hands: [Seats]string{"JK1 7D 8D", "AH 9H 7C", "KH 10S QD", "QS JD 8C"}, bids: [Seats]int8{0, 1, 0, 1}})
	play(t, g, "0 play JK1 give H")
	if got := g.Playable(1); got != set(t, "AH 9H") {
		t.Fatalf("playable %v, want any heart", got)
	}
	play(t, g, "1 play 9H", "2 play KH")
	if got := g.Playable(3); got != set(t, "8C") {
		t.Fatalf("void seat may play %v, want the trump", got)
	}
	evs := play(t, g, "3 play 8C")
	if trickWonBy(evs) != 3 {
		t.Fatalf("winner %d, want the trump", trickWonBy(evs))
	}
}

func TestJoker_TwoJokersTheLaterTakes(t *testing.T) {
	g := build(t, position{hand: 1, dealer: 3, trump: cards.Clubs,
		hands: [Seats]string{"JK1 7D", "AH 9H", "JK2 QH", "7S JD"}, bids: [Seats]int8{1, 1, 0, 1}})
	evs := play(t, g, "0 play JK1 highest H", "1 play AH", "2 play JK2 take", "3 play 7S")
	if trickWonBy(evs) != 2 {
		t.Fatalf("winner %d, want the later joker", trickWonBy(evs))
	}
}

// --- Hands ---

func TestHand_EndsAfterItsTricksRecordsTheResultAndDealsTheNext(t *testing.T) {
	g := newGame(t, 12, Standard)
	var evs []Event
	randomPlay(t, g, 12, func(g *Game) bool { return g.Phase() == PhasePlay })
	bids := [Seats]int8{}
	for s := range Seats {
		bids[s] = int8(g.Bid(s))
	}
	leader := g.ToMove()
	m := g.Legal(leader, nil)[0]
	for i := range Seats {
		var err error
		evs, err = g.Apply(m, evs)
		if err != nil {
			t.Fatal(err)
		}
		if i < Seats-1 {
			m = g.Legal(g.ToMove(), nil)[0]
		}
	}
	kinds := []EventKind{}
	for _, e := range evs {
		kinds = append(kinds, e.Kind)
	}
	want := []EventKind{EventPlayed, EventPlayed, EventPlayed, EventPlayed, EventTrickWon, EventHandEnded,
		EventHandStarted, EventDealt, EventDealt, EventDealt, EventDealt, EventTrumpTurned}
	if !slices.Equal(kinds, want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	res := g.HandResults()
	w := trickWonBy(evs)
	if len(res) != 1 || res[0].Cards != 1 || res[0].Tricks[w] != 1 || int8(res[0].Bids[0]) != bids[0] {
		t.Fatalf("results %+v", res)
	}
	if g.HandIndex() != 1 || g.CardsDealt() != 2 || g.Phase() != PhaseBid {
		t.Fatalf("next hand %d of %d cards in %v", g.HandIndex(), g.CardsDealt(), g.Phase())
	}
}

// --- Events, errors ---

func TestEvents_DealtCardsArePrivate(t *testing.T) {
	g := newGame(t, 13, Standard)
	for _, e := range randomPlay(t, g, 13, nil) {
		private := e.Kind == EventDealt || e.Kind == EventFirstCards
		if private != (e.To != Public) || (private && e.To != e.Seat) {
			t.Fatalf("event %+v: private=%v to=%d", e, private, e.To)
		}
		if private && e.Visible(int(e.To+1)%Seats) {
			t.Fatalf("event %+v visible to another seat", e)
		}
	}
}

func TestMoveError_NamesHandTrickSeatAndRule(t *testing.T) {
	g := build(t, position{hand: 1, dealer: 3, trump: cards.Clubs,
		hands: [Seats]string{"7H 8D", "AH 9C", "KH JK1", "QS JD"}, bids: [Seats]int8{0, 1, 0, 0}})
	play(t, g, "0 play 7H")
	_, err := g.Apply(mv(t, "1 play 9C"), nil)
	var me *MoveError
	if !errors.As(err, &me) || !errors.Is(err, ErrMustFollowSuit) {
		t.Fatalf("err = %#v", err)
	}
	if me.Hand != 1 || me.Trick != 0 || me.Seat != 1 || me.Move != mv(t, "1 play 9C") {
		t.Fatalf("error fields %+v", me)
	}
	for _, s := range []string{"hand 2", "trick 1", "seat 1", "9C", "follow the suit"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%q does not mention %q", err.Error(), s)
		}
	}
}
