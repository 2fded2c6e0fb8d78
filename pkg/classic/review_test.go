package classic

// An independent review of the engine against /work/shared/spec/rules.md
// (classic section). Every test here is named after the rule it checks;
// docs/rules-review.md lists what was checked and what was found. The
// reference functions at the bottom (rvRefPlayable, rvRefWinner) are written
// from the wording of rules.md, not from play.go, and random games are
// checked against them move by move.

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/pulka/pulka/pkg/cards"
)

// rvFollow is a follow-obligation case: seat 0 leads (hand 2 of the standard
// game: 3 cards each, dealer 3), the moves in before are played, and the
// next seat to move must be allowed exactly want.
type rvFollow struct {
	name   string
	trump  cards.Suit
	hands  [Seats]string
	before []string
	want   string // the cards the seat to move may play
}

func rvRunFollow(t *testing.T, cases []rvFollow) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := build(t, position{hand: 2, dealer: 3, trump: tc.trump, hands: tc.hands,
				bids: [Seats]int8{1, 1, 0, 0}, leader: 0})
			play(t, g, tc.before...)
			seat := g.ToMove()
			want := set(t, tc.want)
			if got := g.Playable(seat); got != want {
				t.Fatalf("seat %d may play %v, want %v", seat, got, want)
			}
			// Apply agrees with Playable card by card, and a refused card
			// names a rule and leaves the game as it was.
			for _, c := range g.Hand(seat).Cards() {
				m := PlayMove(seat, c)
				if c.IsJoker() {
					m = JokerMove(seat, c, JokerTake, 0)
				}
				before := *g
				probe := g.Clone()
				_, err := probe.Apply(m, nil)
				if want.Has(c) != (err == nil) {
					t.Fatalf("%v: err %v, but playable=%v", m, err, want.Has(c))
				}
				if err != nil {
					if !errors.Is(err, ErrMustFollowSuit) && !errors.Is(err, ErrMustTrump) && !errors.Is(err, ErrMustPlayHighest) {
						t.Fatalf("%v refused with %v, want a follow rule", m, err)
					}
					if _, err2 := g.Apply(m, nil); err2 == nil || *g != before {
						t.Fatalf("%v: a refused move changed the game", m)
					}
				}
			}
		})
	}
}

// Led joker "highest" in S: holders of S play their highest S (a joker is
// also allowed); a seat void in S trumps if able, else plays anything.
func TestReview_LedJokerHighest_FollowObligations(t *testing.T) {
	S, H, C, NT := cards.Spades, cards.Hearts, cards.Clubs, cards.NoSuit
	_ = S
	rvRunFollow(t, []rvFollow{
		{name: "holds S: only its highest S", trump: C,
			hands:  [Seats]string{"JK1 7D 8D", "9H AH 7S", "KH QH 8C", "QS JD 9C"},
			before: []string{"0 play JK1 highest H"}, want: "AH"},
		{name: "holds S and a joker: highest S or the joker", trump: C,
			hands:  [Seats]string{"JK1 7D 8D", "9H JH JK2", "KH QH 8C", "QS JD 9C"},
			before: []string{"0 play JK1 highest H"}, want: "JH JK2"},
		{name: "holds S and trumps: still the highest S, no trump", trump: C,
			hands:  [Seats]string{"JK1 7D 8D", "9H AC KC", "KH QH 8C", "QS JD 9C"},
			before: []string{"0 play JK1 highest H"}, want: "9H"},
		{name: "void in S with trumps: any trump (not only the highest)", trump: C,
			hands:  [Seats]string{"JK1 7D 8D", "7C AC 9S", "KH QH 8C", "QS JD 9C"},
			before: []string{"0 play JK1 highest H"}, want: "7C AC"},
		{name: "void in S with trumps and a joker", trump: C,
			hands:  [Seats]string{"JK1 7D 8D", "7C JK2 9S", "KH QH 8C", "QS JD 9C"},
			before: []string{"0 play JK1 highest H"}, want: "7C JK2"},
		{name: "void in S and in trump: anything", trump: C,
			hands:  [Seats]string{"JK1 7D 8D", "9S AD 10D", "KH QH 8C", "QS JD 9C"},
			before: []string{"0 play JK1 highest H"}, want: "9S AD 10D"},
		{name: "S is trump: the highest trump", trump: H,
			hands:  [Seats]string{"JK1 7D 8D", "9H QH 7S", "KH 10H 8C", "QS JD 9C"},
			before: []string{"0 play JK1 highest H"}, want: "QH"},
		{name: "S is trump, void: anything", trump: H,
			hands:  [Seats]string{"JK1 7D 8D", "9S AD 7C", "KH 10H 8C", "QS JD 9C"},
			before: []string{"0 play JK1 highest H"}, want: "9S AD 7C"},
		{name: "no trump hand, void in S: anything", trump: NT,
			hands:  [Seats]string{"JK1 7D 8D", "9S AD 7C", "KH 10H 8C", "QS JD 9C"},
			before: []string{"0 play JK1 highest H"}, want: "9S AD 7C"},
		{name: "the demand binds every seat, the third too", trump: C,
			hands:  [Seats]string{"JK1 7D 8D", "9S AD 7C", "KH 10H 8H", "QS JD 9C"},
			before: []string{"0 play JK1 highest H", "1 play 7C"}, want: "KH"},
		{name: "a joker played on the trick does not change the demand", trump: C,
			hands:  [Seats]string{"JK1 7D 8D", "JK2 AD 7C", "KH 10H 8H", "QS JD 9C"},
			before: []string{"0 play JK1 highest H", "1 play JK2 take"}, want: "KH"},
	})
}

// Led joker "give" in S: others follow S with any card of S; void seats
// trump if able.
func TestReview_LedJokerGive_FollowObligations(t *testing.T) {
	C, H, NT := cards.Clubs, cards.Hearts, cards.NoSuit
	rvRunFollow(t, []rvFollow{
		{name: "holds S: any S", trump: C,
			hands:  [Seats]string{"JK1 7D 8D", "9H AH 7S", "KH QH 8C", "QS JD 9C"},
			before: []string{"0 play JK1 give H"}, want: "9H AH"},
		{name: "holds S and a joker", trump: C,
			hands:  [Seats]string{"JK1 7D 8D", "9H AH JK2", "KH QH 8C", "QS JD 9C"},
			before: []string{"0 play JK1 give H"}, want: "9H AH JK2"},
		{name: "void in S: trump", trump: C,
			hands:  [Seats]string{"JK1 7D 8D", "9C AC 7S", "KH QH 8C", "QS JD 9H"},
			before: []string{"0 play JK1 give H"}, want: "9C AC"},
		{name: "void in S and trump: anything", trump: C,
			hands:  [Seats]string{"JK1 7D 8D", "9S AD 7S", "KH QH 8C", "QS JD 9H"},
			before: []string{"0 play JK1 give H"}, want: "9S AD 7S"},
		{name: "S is trump: any trump", trump: H,
			hands:  [Seats]string{"JK1 7D 8D", "9H AH 7S", "KH QH 8C", "QS JD 9C"},
			before: []string{"0 play JK1 give H"}, want: "9H AH"},
		{name: "no trump hand, void in S: anything", trump: NT,
			hands:  [Seats]string{"JK1 7D 8D", "9S AD 7C", "KH 10H 8C", "QS JD 9C"},
			before: []string{"0 play JK1 give H"}, want: "9S AD 7C"},
	})
}

// A joker may be played at any time, and a joker played on a trick somebody
// else led changes nothing about what the others must follow: the led suit
// is the first card's.
func TestReview_NonLedJoker_FollowObligations(t *testing.T) {
	C := cards.Clubs
	rvRunFollow(t, []rvFollow{
		{name: "holding the led suit, the joker is still allowed", trump: C,
			hands:  [Seats]string{"7H 7D 8D", "9H AH JK1", "KH QH 8C", "QS JD 9C"},
			before: []string{"0 play 7H"}, want: "9H AH JK1"},
		{name: "void with trumps, the joker is allowed", trump: C,
			hands:  [Seats]string{"7H 7D 8D", "10C AD JK1", "KH QH 8C", "QS JD 9C"},
			before: []string{"0 play 7H"}, want: "10C JK1"},
		{name: "after a take joker the led suit is still the first card's", trump: C,
			hands:  [Seats]string{"7H 7D 8D", "10C AD JK1", "KH QS 8C", "QH JD 9C"},
			before: []string{"0 play 7H", "1 play JK1 take"}, want: "KH"},
		{name: "after a discard joker too", trump: C,
			hands:  [Seats]string{"7H 7D 8D", "10C AD JK1", "KS QS 8C", "QH JD 9C"},
			before: []string{"0 play 7H", "1 play JK1 discard"}, want: "8C"},
	})
}

// rvTrick is one whole trick led by seat 0, with the winning seat.
type rvTrick struct {
	name  string
	trump cards.Suit
	moves [Seats]string
	want  int
}

func TestReview_TrickWinner(t *testing.T) {
	C, NT := cards.Clubs, cards.NoSuit
	for _, tc := range []rvTrick{
		// Led joker "highest" in S.
		{"highest S not trump: the highest of two trumps wins", C,
			[Seats]string{"0 play JK1 highest H", "1 play 8C", "2 play KC", "3 play AH"}, 2},
		{"highest S not trump: a low trump still beats the joker", C,
			[Seats]string{"0 play JK1 highest H", "1 play AH", "2 play 7C", "3 play KH"}, 2},
		{"highest S not trump, nobody trumps: the joker", C,
			[Seats]string{"0 play JK1 highest H", "1 play AH", "2 play KD", "3 play AS"}, 0},
		{"highest S is trump: the trump ace cannot beat the joker", C,
			[Seats]string{"0 play JK1 highest C", "1 play AC", "2 play KC", "3 play 7H"}, 0},
		{"highest S in a no-trump hand: the joker", NT,
			[Seats]string{"0 play JK1 highest H", "1 play AH", "2 play AC", "3 play AD"}, 0},
		{"highest S, a later take beats the trump", C,
			[Seats]string{"0 play JK1 highest H", "1 play AC", "2 play JK2 take", "3 play 7H"}, 2},
		{"highest S, a later discard leaves the trump", C,
			[Seats]string{"0 play JK1 highest H", "1 play 9C", "2 play JK2 discard", "3 play 7H"}, 1},
		{"highest S, a later discard, nobody trumps: the led joker", C,
			[Seats]string{"0 play JK1 highest H", "1 play AH", "2 play JK2 discard", "3 play 7D"}, 0},
		// Led joker "give" in S: the joker is the lowest card of S.
		{"give: the highest S wins", C,
			[Seats]string{"0 play JK1 give H", "1 play 7H", "2 play AH", "3 play 9H"}, 2},
		{"give: even a seven of S beats the joker", C,
			[Seats]string{"0 play JK1 give H", "1 play 7H", "2 play AD", "3 play AS"}, 1},
		{"give: the highest trump beats S", C,
			[Seats]string{"0 play JK1 give H", "1 play AH", "2 play 7C", "3 play 8C"}, 3},
		{"give: nobody plays S or trump, the joker wins", C,
			[Seats]string{"0 play JK1 give H", "1 play AD", "2 play AS", "3 play KD"}, 0},
		{"give in trump: the highest trump", C,
			[Seats]string{"0 play JK1 give C", "1 play 9C", "2 play AC", "3 play AH"}, 2},
		{"give, no trump hand, off-suit aces lose to the joker", NT,
			[Seats]string{"0 play JK1 give H", "1 play AD", "2 play AS", "3 play AC"}, 0},
		{"give, a later take wins", C,
			[Seats]string{"0 play JK1 give H", "1 play AH", "2 play 9C", "3 play JK2 take"}, 3},
		{"give, a later discard, nobody follows: the led joker", C,
			[Seats]string{"0 play JK1 give H", "1 play AD", "2 play JK2 discard", "3 play AS"}, 0},
		// A joker on a trick somebody else led.
		{"take beats the trump ace", C,
			[Seats]string{"0 play 7H", "1 play JK1 take", "2 play AC", "3 play AH"}, 1},
		{"discard loses, the led suit wins", C,
			[Seats]string{"0 play 7H", "1 play JK1 discard", "2 play 8H", "3 play 8D"}, 2},
		{"discard loses, the trump wins", C,
			[Seats]string{"0 play 7H", "1 play JK1 discard", "2 play 8H", "3 play 7C"}, 3},
		// Two jokers in one trick: the later one may take or discard.
		{"take then take: the later", C,
			[Seats]string{"0 play 7H", "1 play JK1 take", "2 play AC", "3 play JK2 take"}, 3},
		{"take then discard: the earlier take", C,
			[Seats]string{"0 play 7H", "1 play JK1 take", "2 play JK2 discard", "3 play AC"}, 1},
		{"discard then take: the later", C,
			[Seats]string{"0 play 7H", "1 play JK1 discard", "2 play JK2 take", "3 play AC"}, 2},
		{"discard then discard: the led suit", C,
			[Seats]string{"0 play 7H", "1 play JK1 discard", "2 play JK2 discard", "3 play 8H"}, 3},
		{"discard then discard, nobody follows: the leader", C,
			[Seats]string{"0 play 7H", "1 play JK1 discard", "2 play JK2 discard", "3 play AS"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each seat holds exactly its card, so every move is legal and
			// only the winner is under test.
			var hands [Seats]string
			for s, m := range tc.moves {
				hands[s] = mv(t, m).Card.String()
			}
			g := build(t, position{hand: 0, dealer: 3, trump: tc.trump, hands: hands,
				bids: [Seats]int8{1, 0, 1, 0}, leader: 0})
			var evs []Event
			for _, m := range tc.moves {
				var err error
				if evs, err = g.Apply(mv(t, m), evs); err != nil {
					t.Fatalf("%s: %v", m, err)
				}
			}
			if got := trickWonBy(evs); got != tc.want {
				t.Fatalf("seat %d won, want %d", got, tc.want)
			}
			if got := rvRefWinnerOf(rvPlayed(evs), tc.trump); got != tc.want {
				t.Fatalf("the reference reading says %d, the table %d: fix the table", got, tc.want)
			}
		})
	}
}

// The turned card's suit is trump in 1–8 card hands; a turned joker means no
// trump, and it is out of play, so only the other joker can be held.
func TestReview_TurnedJokerMeansNoTrump(t *testing.T) {
	found := 0
	for seed := uint64(0); seed < 3000 && found < 5; seed++ {
		g := newGame(t, seed, Standard)
		// Walk the first three hands (1, 2, 3 cards) of this seed.
		for h := 0; h < 3 && !g.Over(); h++ {
			v := g.View(0)
			if v.Turned == nil {
				t.Fatalf("seed %d hand %d: no turned card in a %d-card hand", seed, h, v.Cards)
			}
			turned := *v.Turned
			var held cards.Set
			for s := range Seats {
				held |= g.Hand(s)
			}
			if held.Has(turned) {
				t.Fatalf("seed %d hand %d: turned %v is also in a hand", seed, h, turned)
			}
			if turned.IsJoker() {
				found++
				if g.Trump() != cards.NoSuit || v.Trump != "NT" {
					t.Fatalf("seed %d hand %d: turned joker, trump %v (%q), want no trump", seed, h, g.Trump(), v.Trump)
				}
				if held.Jokers().Len() > 1 {
					t.Fatalf("seed %d hand %d: both jokers in play with one turned", seed, h)
				}
			} else if g.Trump() != turned.Suit() {
				t.Fatalf("seed %d hand %d: turned %v, trump %v", seed, h, turned, g.Trump())
			}
			rvPlayHand(t, g, seed)
		}
	}
	if found == 0 {
		t.Fatal("no turned joker in 3000 seeds: the search is broken")
	}
}

// rvPlayed keeps the played events.
func rvPlayed(evs []Event) []Event {
	var out []Event
	for _, e := range evs {
		if e.Kind == EventPlayed {
			out = append(out, e)
		}
	}
	return out
}

// rvPlayHand plays the current hand to its end with random legal moves.
func rvPlayHand(t *testing.T, g *Game, seed uint64) {
	t.Helper()
	h := g.HandIndex()
	b := NewRandomBot(seed)
	for !g.Over() && g.HandIndex() == h {
		m, ok := b.Choose(g, g.ToMove())
		if !ok {
			t.Fatal("no legal move")
		}
		if _, err := g.Apply(m, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// Nine-card hands: three cards each, the seat after the dealer sees its three
// and chooses a suit or no trump, then six more each; that seat then bids
// first and leads the first trick.
func TestReview_NineCardHand_TrumpChosenBySeatAfterDealerAfterThreeCards(t *testing.T) {
	choices := []cards.Suit{cards.Spades, cards.Hearts, cards.Diamonds, cards.Clubs, cards.NoSuit}
	for _, v := range []Variant{Standard, Nines} {
		for seed := uint64(40); seed < 44; seed++ {
			g := newGame(t, seed, v)
			for !g.Over() {
				n := g.CardsDealt()
				if n != MaxCards {
					if g.Phase() != PhaseBid {
						t.Fatalf("%d-card hand starts in phase %v, want bid", n, g.Phase())
					}
					rvPlayHand(t, g, seed)
					continue
				}
				chooser := (g.Dealer() + 1) % Seats
				if g.Phase() != PhaseTrump || g.ToMove() != chooser {
					t.Fatalf("%v seed %d hand %d: phase %v, %d to move, want trump by %d",
						v, seed, g.HandIndex(), g.Phase(), g.ToMove(), chooser)
				}
				for s := range Seats {
					if got := len(g.Legal(s, nil)); (s == chooser) != (got == 5) || (s != chooser && got != 0) {
						t.Fatalf("seat %d has %d trump moves", s, got)
					}
				}
				first := cards.SetOf(g.View(chooser).MyCards...)
				if first.Len() != 3 {
					t.Fatalf("chooser sees %v, want its first three cards", first)
				}
				trump := choices[(int(seed)+g.HandIndex())%len(choices)]
				play(t, g, TrumpMove(chooser, trump).String())
				if g.Trump() != trump || g.Phase() != PhaseBid || g.ToMove() != chooser {
					t.Fatalf("after choosing %v: trump %v phase %v to move %d", trump, g.Trump(), g.Phase(), g.ToMove())
				}
				if h := g.Hand(chooser); h.Len() != MaxCards || h&first != first {
					t.Fatalf("chooser's hand %v does not hold its first three %v", h, first)
				}
				rvPlayHand(t, g, seed)
			}
		}
	}
}

// The dealer may not bid the number that makes the four bids total exactly
// n. When the others already bid more than n together, nothing is forbidden.
func TestReview_DealerRestriction(t *testing.T) {
	for _, tc := range []struct {
		hand      int // standard hand index: decides n
		others    [3]int
		forbidden int // -1: nothing forbidden
	}{
		{0, [3]int{0, 0, 0}, 1},
		{0, [3]int{1, 0, 0}, 0},
		{0, [3]int{1, 1, 0}, -1},
		{0, [3]int{1, 1, 1}, -1},
		{2, [3]int{0, 0, 0}, 3},
		{2, [3]int{1, 1, 0}, 1},
		{2, [3]int{3, 0, 0}, 0},
		{2, [3]int{2, 2, 0}, -1},
		{7, [3]int{8, 8, 8}, -1},
		{7, [3]int{2, 3, 3}, 0},
		{7, [3]int{2, 2, 2}, 2},
	} {
		n := Standard.CardsInHand(tc.hand)
		t.Run(fmt.Sprintf("n=%d others=%v", n, tc.others), func(t *testing.T) {
			g := newGame(t, 77, Standard)
			for g.HandIndex() < tc.hand {
				rvPlayHand(t, g, 77)
			}
			dealer := g.Dealer()
			for i, b := range tc.others {
				seat := (dealer + 1 + i) % Seats
				if g.ToMove() != seat {
					t.Fatalf("seat %d to bid, want %d (clockwise from the dealer's left)", g.ToMove(), seat)
				}
				if g.View(seat).Forbidden != -1 {
					t.Fatalf("seat %d is not the dealer but has a forbidden bid", seat)
				}
				play(t, g, BidMove(seat, b).String())
			}
			if g.ToMove() != dealer {
				t.Fatalf("seat %d to bid, want the dealer %d last", g.ToMove(), dealer)
			}
			var want []Move
			for b := 0; b <= n; b++ {
				if b != tc.forbidden {
					want = append(want, BidMove(dealer, b))
				}
			}
			if got := g.Legal(dealer, nil); !slices.Equal(got, want) {
				t.Fatalf("dealer may bid %v, want %v", got, want)
			}
			for s := range Seats {
				if f := g.View(s).Forbidden; f != tc.forbidden {
					t.Fatalf("seat %d's view shows forbidden %d, want %d", s, f, tc.forbidden)
				}
			}
			for b := 0; b <= n; b++ {
				_, err := g.Clone().Apply(BidMove(dealer, b), nil)
				if b == tc.forbidden && !errors.Is(err, ErrDealerBid) {
					t.Fatalf("dealer bid %d: %v, want ErrDealerBid", b, err)
				}
				if b != tc.forbidden && err != nil {
					t.Fatalf("dealer bid %d: %v", b, err)
				}
			}
		})
	}
}

// Only the dealer is restricted: a seat that bids earlier may make the
// running total anything.
func TestReview_DealerRestriction_OthersAreFree(t *testing.T) {
	g := newGame(t, 78, Standard) // hand 0: one card each
	dealer := g.Dealer()
	for i := range 3 {
		seat := (dealer + 1 + i) % Seats
		if got := len(g.Legal(seat, nil)); got != 2 {
			t.Fatalf("seat %d has %d bids, want 0 and 1", seat, got)
		}
		play(t, g, BidMove(seat, 0).String())
	}
}

// The deal passes clockwise every hand; the seat after the dealer bids
// first (or names trump first) and leads the first trick; the winner of a
// trick leads the next; the dealer bids last; hands follow the schedule.
func TestReview_DealerRotationAndWhoLeads(t *testing.T) {
	for _, v := range []Variant{Standard, Nines} {
		for seed := uint64(500); seed < 506; seed++ {
			g := newGame(t, seed, v)
			first := g.Dealer()
			evs := g.StartEvents(nil)
			bots := [Seats]Player{Bot{}, NewRandomBot(seed), Bot{}, NewRandomBot(seed + 1)}
			for !g.Over() {
				m, ok := bots[g.ToMove()].Choose(g, g.ToMove())
				if !ok {
					t.Fatal("bot has no move")
				}
				var err error
				if evs, err = g.Apply(m, evs); err != nil {
					t.Fatal(err)
				}
			}
			rvCheckOrder(t, v, first, evs)
		}
	}
}

func rvCheckOrder(t *testing.T, v Variant, first int, evs []Event) {
	t.Helper()
	hand, dealer, next, bidsSeen, tricks := -1, -1, -1, 0, 0
	for _, e := range evs {
		switch e.Kind {
		case EventHandStarted:
			if hand >= 0 && tricks != v.CardsInHand(hand) {
				t.Fatalf("hand %d had %d tricks", hand, tricks)
			}
			hand++
			dealer = int(e.Seat)
			if dealer != (first+hand)%Seats || int(e.N) != v.CardsInHand(hand) {
				t.Fatalf("hand %d: dealer %d with %d cards, want %d with %d",
					hand, dealer, e.N, (first+hand)%Seats, v.CardsInHand(hand))
			}
			next, bidsSeen, tricks = (dealer+1)%Seats, 0, 0
		case EventTrumpChosen:
			if int(e.Seat) != (dealer+1)%Seats {
				t.Fatalf("hand %d: seat %d chose trump, dealer %d", hand, e.Seat, dealer)
			}
		case EventBid:
			if int(e.Seat) != next {
				t.Fatalf("hand %d: seat %d bid, want %d", hand, e.Seat, next)
			}
			bidsSeen++
			if bidsSeen == Seats && int(e.Seat) != dealer {
				t.Fatalf("hand %d: the last bid is seat %d's, not the dealer's", hand, e.Seat)
			}
			next = (next + 1) % Seats
			if bidsSeen == Seats {
				next = (dealer + 1) % Seats // the first trick's leader
			}
		case EventPlayed:
			if int(e.Seat) != next {
				t.Fatalf("hand %d trick %d: seat %d played, want %d", hand, e.Trick, e.Seat, next)
			}
			next = (next + 1) % Seats
		case EventTrickWon:
			tricks++
			next = int(e.Seat)
		}
	}
	if hand != v.Hands()-1 {
		t.Fatalf("%d hands, want %d", hand+1, v.Hands())
	}
}

// The schedules: standard is 1..8, 9×4, 8..1, 9×4 in pulkas of 8, 4, 8, 4;
// nines is four pulkas of four nine-card hands.
func TestReview_Schedules(t *testing.T) {
	for _, tc := range []struct {
		v      Variant
		cards  []int
		pulkas []int // hands per pulka
	}{
		{Standard, []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 9, 9, 9, 8, 7, 6, 5, 4, 3, 2, 1, 9, 9, 9, 9}, []int{8, 4, 8, 4}},
		{Nines, []int{9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9}, []int{4, 4, 4, 4}},
	} {
		if tc.v.Hands() != len(tc.cards) {
			t.Fatalf("%v: %d hands, want %d", tc.v, tc.v.Hands(), len(tc.cards))
		}
		for h, n := range tc.cards {
			if tc.v.CardsInHand(h) != n {
				t.Fatalf("%v hand %d: %d cards, want %d", tc.v, h+1, tc.v.CardsInHand(h), n)
			}
		}
		h := 0
		for p, size := range tc.pulkas {
			first, end := tc.v.PulkaHands(p)
			if first != h || end != h+size {
				t.Fatalf("%v pulka %d: hands [%d,%d), want [%d,%d)", tc.v, p+1, first, end, h, h+size)
			}
			for ; h < end; h++ {
				if tc.v.PulkaOf(h) != p {
					t.Fatalf("%v hand %d in pulka %d, want %d", tc.v, h+1, tc.v.PulkaOf(h)+1, p+1)
				}
			}
		}
	}
}

// A game is its seed plus its moves: replaying the same moves on the same
// seed gives the same game.
func TestReview_GameIsItsSeedAndItsMoves(t *testing.T) {
	g := newGame(t, 901, Standard)
	var moves []Move
	b := NewRandomBot(5)
	for !g.Over() {
		m, _ := b.Choose(g, g.ToMove())
		moves = append(moves, m)
		play(t, g, m.String())
	}
	again := newGame(t, 901, Standard)
	for _, m := range moves {
		if _, err := again.Apply(m, nil); err != nil {
			t.Fatal(err)
		}
	}
	if *again != *g {
		t.Fatal("replaying the seed and the moves gave another game")
	}
}

// Random games (bots and random players) checked move by move against the
// reference reading of rules.md: the playable cards, the trick winners, the
// bids the dealer may make, and that only the seat to move has moves.
func TestReview_RandomGamesAgreeWithTheRulesReading(t *testing.T) {
	games := 600
	if testing.Short() {
		games = 20
	}
	var jokerLeads [5]int
	for i := range games {
		seed := uint64(7000 + i)
		v := Standard
		if i%3 == 0 {
			v = Nines
		}
		g := newGame(t, seed, v)
		var bots [Seats]Player
		for s := range Seats {
			if (i+s)%4 == 0 {
				bots[s] = Bot{}
			} else {
				bots[s] = NewRandomBot(seed*4 + uint64(s))
			}
		}
		var trick []Event
		for !g.Over() {
			seat := g.ToMove()
			for s := range Seats {
				if s != seat && len(g.Legal(s, nil)) != 0 {
					t.Fatalf("seed %d: seat %d has moves on seat %d's turn", seed, s, seat)
				}
			}
			if g.Phase() == PhasePlay {
				if got, want := g.Playable(seat), rvRefPlayable(g.Hand(seat), trick, g.Trump()); got != want {
					t.Fatalf("seed %d hand %d: seat %d may play %v, the rules say %v (trick %v)",
						seed, g.HandIndex(), seat, got, want, trick)
				}
			}
			if g.Phase() == PhaseBid {
				rvCheckBids(t, g, seat)
			}
			m, _ := bots[seat].Choose(g, seat)
			trump := g.Trump()
			evs, err := g.Apply(m, nil)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			for _, e := range evs {
				switch e.Kind {
				case EventPlayed:
					trick = append(trick, e)
					if len(trick) == 1 && e.Card.IsJoker() {
						jokerLeads[e.Joker]++
					}
				case EventTrickWon:
					if want := rvRefWinnerOf(trick, trump); int(e.Seat) != want {
						t.Fatalf("seed %d hand %d: trick %v (trump %v) won by %d, the rules say %d",
							seed, e.Hand, trick, trump, e.Seat, want)
					}
					trick = trick[:0]
				}
			}
		}
	}
	if jokerLeads[JokerHighest] == 0 || jokerLeads[JokerGive] == 0 {
		t.Fatalf("joker leads %v: the random games never led a joker both ways", jokerLeads)
	}
}

// rvCheckBids: every seat may bid 0..n, except that the dealer may not make
// the total n.
func rvCheckBids(t *testing.T, g *Game, seat int) {
	t.Helper()
	n := g.CardsDealt()
	forbidden := -1
	if seat == g.Dealer() {
		sum := 0
		for s := range Seats {
			if s != seat {
				sum += g.Bid(s)
			}
		}
		forbidden = n - sum
	}
	var want []Move
	for b := 0; b <= n; b++ {
		if b != forbidden {
			want = append(want, BidMove(seat, b))
		}
	}
	if got := g.Legal(seat, nil); !slices.Equal(got, want) {
		t.Fatalf("seat %d (dealer %d) may bid %v, want %v", seat, g.Dealer(), got, want)
	}
}

// rvRefPlayable is rules.md's "Play" section read literally: on a lead,
// anything. Otherwise the led suit is the first card's suit, or the suit a
// leading joker named. Holding it, play it (under a led "highest", only the
// highest of it); void in it, play a trump if able; otherwise anything. A
// joker is allowed at any time.
func rvRefPlayable(hand cards.Set, trick []Event, trump cards.Suit) cards.Set {
	if len(trick) == 0 {
		return hand
	}
	lead := trick[0]
	led := lead.Card.Suit()
	if lead.Card.IsJoker() {
		led = lead.Suit
	}
	var allowed []cards.Card
	var ofLed, trumps []cards.Card
	for _, c := range hand.Cards() {
		switch {
		case c.IsJoker():
			allowed = append(allowed, c)
		case c.Suit() == led:
			ofLed = append(ofLed, c)
		case trump != cards.NoSuit && c.Suit() == trump:
			trumps = append(trumps, c)
		}
	}
	switch {
	case len(ofLed) > 0 && lead.Card.IsJoker() && lead.Joker == JokerHighest:
		top := ofLed[0]
		for _, c := range ofLed {
			if c.Rank() > top.Rank() {
				top = c
			}
		}
		allowed = append(allowed, top)
	case len(ofLed) > 0:
		allowed = append(allowed, ofLed...)
	case len(trumps) > 0:
		allowed = append(allowed, trumps...)
	default:
		return hand
	}
	return cards.SetOf(allowed...)
}

// rvRefWinnerOf returns the seat that wins a complete trick (four played
// events in order), read from rules.md:
//   - a joker declared take wins unless a later joker in the trick also
//     takes (two jokers: the later one, if it takes, wins);
//   - a led "highest" joker wins, except that when its suit is not trump and
//     someone trumped, the highest trump wins;
//   - a led "give" joker is the lowest card of its suit: the highest card of
//     the suit wins, or the highest trump if any was played; if nobody played
//     the suit or a trump, the joker wins;
//   - an ordinary lead: the highest trump, else the highest card of the led
//     suit. A discarded joker never wins.
func rvRefWinnerOf(trick []Event, trump cards.Suit) int {
	if len(trick) != Seats {
		return -2
	}
	take := -1
	for i, e := range trick[1:] {
		if e.Card.IsJoker() && e.Joker == JokerTake {
			take = i + 1
		}
	}
	if take >= 0 {
		return int(trick[take].Seat)
	}
	highestOf := func(s cards.Suit) int {
		best := -1
		for i, e := range trick {
			if !e.Card.IsJoker() && s != cards.NoSuit && e.Card.Suit() == s &&
				(best < 0 || e.Card.Rank() > trick[best].Card.Rank()) {
				best = i
			}
		}
		return best
	}
	lead := trick[0]
	topTrump := highestOf(trump)
	switch {
	case lead.Card.IsJoker() && lead.Joker == JokerHighest:
		if lead.Suit != trump && topTrump >= 0 {
			return int(trick[topTrump].Seat)
		}
		return int(lead.Seat)
	case lead.Card.IsJoker(): // give
		if topTrump >= 0 {
			return int(trick[topTrump].Seat)
		}
		if top := highestOf(lead.Suit); top >= 0 {
			return int(trick[top].Seat)
		}
		return int(lead.Seat)
	}
	if topTrump >= 0 {
		return int(trick[topTrump].Seat)
	}
	return int(trick[highestOf(lead.Card.Suit())].Seat)
}
