package japanese

import (
	"errors"
	"strings"
	"testing"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/fairdeal"
)

// Rule tests, one per rule of rules.md's "Japanese joker" section, named
// after it, plus the decisions of docs/rules-japanese.md.

func TestDeck_WholeDeckDealtEveryHand(t *testing.T) {
	for seed := range uint64(20) {
		g := newGame(t, seed)
		mustApply(t, g, TrumpMove(g.Declarer(), cards.Hearts))
		var all cards.Set
		for s := range Seats {
			if n := g.hands[s].Len(); n != FirstDeal+SecondDeal {
				t.Fatalf("seed %d seat %d: %d cards in hand, want 8", seed, s, n)
			}
			if all&g.hands[s] != 0 {
				t.Fatalf("seed %d: a card dealt twice", seed)
			}
			all |= g.hands[s]
			for i := range Columns {
				up, down := g.up[s][i], g.down[s][i]
				if !up.Valid() || !down.Valid() || all.Has(up) || all.Has(down) || up == down {
					t.Fatalf("seed %d seat %d column %d: %v on %v", seed, s, i, up, down)
				}
				all = all.With(up).With(down)
			}
		}
		if all != cards.FullDeck {
			t.Fatalf("seed %d: dealt %v, want the whole deck", seed, all)
		}
	}
}

func TestDeck_HandIsDealtFromShuffledSeedAndHandNumber(t *testing.T) {
	g := newGame(t, 77)
	d := localDeck(77, 0)
	if got, want := g.hands[g.Declarer()], cards.SetOf(d[0], d[1], d[2]); got != want {
		t.Fatalf("declarer's first cards %v, want %v", got, want)
	}
	playHand(t, g)
	d = localDeck(77, 1)
	if got, want := g.hands[g.Declarer()], cards.SetOf(d[0], d[1], d[2]); got != want {
		t.Fatalf("hand 1: declarer's first cards %v, want %v", got, want)
	}
}

// playHand plays the current hand to its end with baseline bots.
func playHand(t *testing.T, g *Game) {
	t.Helper()
	h := g.hand
	for !g.Over() && g.hand == h {
		s := g.ToMove()
		m, _ := Bot{}.Choose(g, s)
		mustApply(t, g, m)
	}
}

func TestDeal_EighteenTricksPerHand(t *testing.T) {
	g := newGame(t, 5)
	tricks := 0
	for !g.Over() && g.hand == 0 {
		m, _ := Bot{}.Choose(g, g.ToMove())
		tricks += len(eventsOf(mustApply(t, g, m), EventTrickWon))
	}
	if tricks != TricksPerHand {
		t.Fatalf("hand 0 had %d tricks, want 18", tricks)
	}
}

func TestDeclarer_FirstDrawnFromSeedThenAlternates(t *testing.T) {
	var seen [Seats]int
	for seed := range uint64(64) {
		g := newGame(t, seed)
		_, st := fairdeal.Shuffle(fairdeal.LocalKey(seed, 0))
		if want := st.IntN(Seats); g.Declarer() != want {
			t.Fatalf("seed %d: declarer %d, want %d from the seed", seed, g.Declarer(), want)
		}
		seen[g.Declarer()]++
		first := g.Declarer()
		for h := 1; h <= 3 && !g.Over(); h++ {
			playHand(t, g)
			if g.Over() {
				break
			}
			if want := (first + h) % Seats; g.Declarer() != want || g.ToMove() != want {
				t.Fatalf("seed %d hand %d: declarer %d to move %d, want %d", seed, h, g.Declarer(), g.ToMove(), want)
			}
		}
	}
	if seen[0] == 0 || seen[1] == 0 {
		t.Fatalf("first declarers %v: the draw never picks one seat", seen)
	}
}

func TestDeal_DeclarerSeesOnlyThreeCardsBeforeChoosingTrump(t *testing.T) {
	g := newGame(t, 9)
	for _, seat := range []int{g.Declarer(), 1 - g.Declarer(), -1} {
		v := g.View(seat)
		want := FirstDeal
		if seat < 0 {
			want = 0
		}
		if len(v.MyCards) != want || len(v.Columns[0])+len(v.Columns[1]) != 0 || v.Trump != "" {
			t.Fatalf("seat %d before trump: %d cards, columns %v, trump %q", seat, len(v.MyCards), v.Columns, v.Trump)
		}
		if v.HandSizes != [Seats]int{FirstDeal, FirstDeal} || v.Phase != PhaseTrump {
			t.Fatalf("seat %d: sizes %v phase %v", seat, v.HandSizes, v.Phase)
		}
	}
	ev := g.StartEvents(nil)
	for _, e := range eventsOf(ev, EventDealt) {
		if e.To != e.Seat || e.Cards != g.hands[e.Seat] || e.Cards.Len() != FirstDeal {
			t.Fatalf("dealt event %+v: must be private with the seat's three cards", e)
		}
	}
}

func TestTrump_DeclarerChoosesASuitOrBezi(t *testing.T) {
	g := newGame(t, 3)
	decl := g.Declarer()
	legal := g.Legal(decl, nil)
	if len(legal) != 5 {
		t.Fatalf("declarer's choices %v, want 4 suits and bezi", legal)
	}
	for i, s := range []cards.Suit{cards.Spades, cards.Hearts, cards.Diamonds, cards.Clubs, cards.NoSuit} {
		if legal[i] != TrumpMove(decl, s) {
			t.Fatalf("choice %d = %v", i, legal[i])
		}
	}
	if other := g.Legal(1-decl, nil); len(other) != 0 {
		t.Fatalf("the other seat may choose trump: %v", other)
	}
	cases := []struct {
		name string
		m    Move
		want error
	}{
		{"not the declarer", TrumpMove(1-decl, cards.Hearts), ErrNotYourTurn},
		{"no such trump", TrumpMove(decl, cards.Suit(5)), ErrBadTrump},
		{"a card before trump", PlayMove(decl, g.hands[decl].Lowest()), ErrWrongPhase},
	}
	for _, c := range cases {
		before := *g
		if _, err := g.Apply(c.m, nil); !errors.Is(err, c.want) || *g != before {
			t.Errorf("%s: err %v, want %v, state unchanged %v", c.name, err, c.want, *g == before)
		}
	}
	ev := mustApply(t, g, TrumpMove(decl, cards.NoSuit))
	if tr, chosen := g.Trump(); tr != cards.NoSuit || !chosen || g.View(-1).Trump != "bezi" {
		t.Fatalf("after choosing bezi: trump %v chosen %v", tr, chosen)
	}
	if tc := eventsOf(ev, EventTrumpChosen); len(tc) != 1 || tc[0].To != Public || tc[0].Suit != cards.NoSuit || int(tc[0].Seat) != decl {
		t.Fatalf("trump event %+v", tc)
	}
}

func TestDeal_AfterTrumpFiveToHandAndFiveColumnsEach(t *testing.T) {
	g := newGame(t, 11)
	first := g.hands
	ev := mustApply(t, g, TrumpMove(g.Declarer(), cards.Clubs))
	for s := range Seats {
		if g.hands[s]&first[s] != first[s] || g.hands[s].Len() != 8 {
			t.Fatalf("seat %d: hand %v does not keep %v plus five", s, g.hands[s], first[s])
		}
		if len(g.View(s).Columns[s]) != Columns {
			t.Fatalf("seat %d: %d columns", s, len(g.View(s).Columns[s]))
		}
	}
	dealt := eventsOf(ev, EventDealt)
	if len(dealt) != Seats {
		t.Fatalf("dealt events %v", dealt)
	}
	for _, e := range dealt {
		if e.To != e.Seat || e.Cards.Len() != SecondDeal || e.Cards|first[e.Seat] != g.hands[e.Seat] {
			t.Fatalf("second deal event %+v", e)
		}
	}
	cols := eventsOf(ev, EventColumnsDealt)
	if len(cols) != Seats || cols[0].To != Public || cols[0].Columns != g.up[cols[0].Seat] {
		t.Fatalf("columns events %+v", cols)
	}
}

func TestPlay_DeclarerLeadsFirstTrick(t *testing.T) {
	for seed := range uint64(10) {
		g := newGame(t, seed)
		mustApply(t, g, TrumpMove(g.Declarer(), cards.Spades))
		if g.ToMove() != g.Declarer() || len(g.Legal(1-g.Declarer(), nil)) != 0 {
			t.Fatalf("seed %d: %d to move, declarer %d", seed, g.ToMove(), g.Declarer())
		}
	}
}

func TestPlay_FirstCardOfTheHandMustComeFromTheHand(t *testing.T) {
	g := newGame(t, 21)
	decl := g.Declarer()
	mustApply(t, g, TrumpMove(decl, cards.NoSuit))
	for _, m := range g.Legal(decl, nil) {
		if !g.hands[decl].Has(m.Card) {
			t.Fatalf("declarer's first card %v is not from the hand", m)
		}
	}
	before := *g
	if _, err := g.Apply(PlayMove(decl, g.up[decl][0]), nil); !errors.Is(err, ErrFirstCardFromHand) || *g != before {
		t.Fatalf("leading a face-up card first: %v", err)
	}
	// The answer is the other seat's first card: from the hand too, in bezi
	// with no suit to follow even when the face-up card would fit.
	mustApply(t, g, PlayMove(decl, (g.hands[decl]&^cards.Jokers).Lowest()))
	other := 1 - decl
	for _, m := range g.Legal(other, nil) {
		if !g.hands[other].Has(m.Card) {
			t.Fatalf("answer %v on the first card is not from the hand", m)
		}
	}
	if _, err := g.Apply(PlayMove(other, g.up[other][2]), nil); !errors.Is(err, ErrFirstCardFromHand) {
		t.Fatalf("answering with a face-up card first: %v", err)
	}
}

func TestPlay_FaceUpCardsPlayableFromTheSecondCard(t *testing.T) {
	g := pos{Trump: cards.Hearts, TrickNo: 1,
		Hands: [Seats]string{"7D", "8D"},
		Up:    [Seats]string{"AS KS QS JS 10S", "AC KC QC JC 10C"},
		Down:  [Seats]string{"9S 8S 7S 9D 8H", "9C 8C 7C 9H 10H"}}.game(t)
	if got, want := g.LegalCards(0), setOf(t, "7D AS KS QS JS 10S"); got != want {
		t.Fatalf("leader's second card: legal %v, want hand and face-up %v", got, want)
	}
	if v := g.View(1); !v.ColumnsOpen[0] || !v.ColumnsOpen[1] {
		t.Fatalf("columns open %v", v.ColumnsOpen)
	}
}

func TestColumns_PlayingAFaceUpCardMovesItsFaceDownCardToTheOwnersHand(t *testing.T) {
	g := pos{Trump: cards.Hearts, TrickNo: 1,
		Hands: [Seats]string{"7D", "8D"},
		Up:    [Seats]string{"AS KS QS JS 10S", "AC KC QC JC 10C"},
		Down:  [Seats]string{"9S 8S 7S 9D 8H", "9C 8C 7C 9H 10H"}}.game(t)
	ev := mustApply(t, g, PlayMove(0, card(t, "KS")))
	if !g.hands[0].Has(card(t, "8S")) || g.up[0][1] != cards.NoCard || g.down[0][1] != cards.NoCard {
		t.Fatalf("after playing KS: hand %v, column 1 %v/%v", g.hands[0], g.up[0][1], g.down[0][1])
	}
	if len(ev) != 2 || ev[0].Kind != EventCardPlayed || ev[0].To != Public || ev[0].Column != 1 {
		t.Fatalf("events %+v", ev)
	}
	if e := ev[1]; e.Kind != EventFaceDownToHand || e.To != 0 || e.Card != card(t, "8S") || e.Column != 1 {
		t.Fatalf("face-down event %+v: must be private to the owner", e)
	}
	if v := g.View(1); len(v.Columns[0]) != 4 || v.HandSizes[0] != 2 {
		t.Fatalf("opponent's view: columns %v, sizes %v", v.Columns[0], v.HandSizes)
	}
}

func TestColumns_PlayingOneOfTheLastTwoClearsTheTable(t *testing.T) {
	g := pos{Trump: cards.Hearts, TrickNo: 4,
		Hands: [Seats]string{"7D", "8D"},
		Up:    [Seats]string{"- - AS - KS", "AC KC QC JC 10C"},
		Down:  [Seats]string{"- - 9S - 8S", "9C 8C 7C 9H 10H"}}.game(t)
	ev := mustApply(t, g, PlayMove(0, card(t, "AS")))
	if want := setOf(t, "7D 9S KS 8S"); g.hands[0] != want {
		t.Fatalf("hand %v, want %v", g.hands[0], want)
	}
	for i := range Columns {
		if g.up[0][i] != cards.NoCard || g.down[0][i] != cards.NoCard {
			t.Fatalf("column %d left after clearing", i)
		}
	}
	kinds := []EventKind{EventCardPlayed, EventFaceDownToHand, EventTableCleared, EventFaceDownToHand}
	if len(ev) != len(kinds) {
		t.Fatalf("events %+v", ev)
	}
	for i, k := range kinds {
		if ev[i].Kind != k {
			t.Fatalf("event %d is %v, want %v", i, ev[i].Kind, k)
		}
	}
	if ev[2].To != Public || ev[2].Card != card(t, "KS") || ev[2].Column != 4 {
		t.Fatalf("table cleared %+v: public, with the face-up card", ev[2])
	}
	if ev[3].To != 0 || ev[3].Card != card(t, "8S") {
		t.Fatalf("last face-down %+v: private to its owner", ev[3])
	}
}

func TestColumns_ThreeLeftDoNotClear(t *testing.T) {
	g := pos{Trump: cards.Hearts, TrickNo: 4,
		Hands: [Seats]string{"7D", "8D"},
		Up:    [Seats]string{"- QS AS - KS", "AC KC QC JC 10C"},
		Down:  [Seats]string{"- 7S 9S - 8S", "9C 8C 7C 9H 10H"}}.game(t)
	mustApply(t, g, PlayMove(0, card(t, "AS")))
	if g.hands[0] != setOf(t, "7D 9S") || g.up[0][1] == cards.NoCard || g.up[0][4] == cards.NoCard {
		t.Fatalf("hand %v columns %v", g.hands[0], g.up[0])
	}
}

// cardsIn returns every card a view shows.
func cardsIn(v View) cards.Set {
	s := cards.SetOf(v.MyCards...) | cards.SetOf(v.LegalCards...) | cards.SetOf(v.Played...)
	for _, side := range v.Columns {
		for _, c := range side {
			s = s.With(c.Up)
		}
	}
	for _, tc := range v.CurrentTrick {
		s = s.With(tc.Card)
	}
	return s
}

func TestHidden_FaceDownCardsAreHiddenFromBothPlayers(t *testing.T) {
	g := newGame(t, 31)
	ev := mustApply(t, g, TrumpMove(g.Declarer(), cards.Diamonds))
	var down cards.Set
	for s := range Seats {
		for _, c := range g.down[s] {
			down = down.With(c)
		}
	}
	for _, seat := range []int{0, 1, -1} {
		if leak := cardsIn(g.View(seat)) & down; leak != 0 {
			t.Fatalf("seat %d sees face-down %v", seat, leak)
		}
	}
	for _, e := range ev {
		if leak := (e.Cards | cards.SetOf(e.Columns[:]...)) & down; leak != 0 || (e.Card.Valid() && down.Has(e.Card)) {
			t.Fatalf("event %+v shows a face-down card", e)
		}
	}
}

func TestHidden_FaceUpCardsArePublic(t *testing.T) {
	g := newGame(t, 32)
	mustApply(t, g, TrumpMove(g.Declarer(), cards.Diamonds))
	for _, seat := range []int{0, 1, -1} {
		v := g.View(seat)
		for s := range Seats {
			for i, cv := range v.Columns[s] {
				if cv.Column != i || cv.Up != g.up[s][i] {
					t.Fatalf("seat %d sees column %d of %d as %+v", seat, i, s, cv)
				}
			}
		}
		if seat >= 0 && cardsIn(v)&g.hands[1-seat] != 0 {
			t.Fatalf("seat %d sees the other hand", seat)
		}
	}
}

// followCase is one answer position: the leader (seat 0) has led Lead.
type followCase struct {
	name     string
	trump    cards.Suit
	trickNo  int
	lead     string
	named    cards.Suit
	hand, up string
	down     string
	legal    string
	bad      string // an illegal card and the error it gets
	badErr   error
	play     string // a legal card to play, and who then takes the trick
	takes    int
}

func (c followCase) game(t *testing.T) *Game {
	trickNo := c.trickNo
	if trickNo == 0 {
		trickNo = 1
	}
	if trickNo < 0 {
		trickNo = 0
	}
	return pos{Trump: c.trump, TrickNo: trickNo, Lead: c.lead, Named: c.named,
		Hands: [Seats]string{"", c.hand}, Up: [Seats]string{"", c.up}, Down: [Seats]string{"", c.down}}.game(t)
}

func runFollowCases(t *testing.T, cases []followCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := c.game(t)
			if got, want := g.LegalCards(1), setOf(t, c.legal); got != want {
				t.Fatalf("legal %v, want %v", got, want)
			}
			if c.bad != "" {
				before := *g
				_, err := g.Apply(PlayMove(1, card(t, c.bad)), nil)
				if !errors.Is(err, c.badErr) || *g != before {
					t.Fatalf("playing %s: %v, want %v (state unchanged: %v)", c.bad, err, c.badErr, *g == before)
				}
			}
			if c.play != "" {
				ev := mustApply(t, g, PlayMove(1, card(t, c.play)))
				won := eventsOf(ev, EventTrickWon)
				if len(won) != 1 || int(won[0].Seat) != c.takes {
					t.Fatalf("trick won %+v, want seat %d", won, c.takes)
				}
				if g.ToMove() != c.takes || int(g.leader) != c.takes {
					t.Fatalf("seat %d leads next, want the winner %d", g.ToMove(), c.takes)
				}
			}
		})
	}
}

func TestFollow_SuitInHandOrFaceUpMustBeFollowed(t *testing.T) {
	runFollowCases(t, []followCase{
		{name: "suit in hand", trump: cards.Hearts, lead: "10D", hand: "7D AS 8H", legal: "7D",
			bad: "AS", badErr: ErrMustFollowSuit, play: "7D", takes: 0},
		{name: "suit only face up", trump: cards.Hearts, lead: "10D", hand: "AS 8H", up: "QD 7C", down: "6D 8C",
			legal: "QD", bad: "8H", badErr: ErrMustFollowSuit, play: "QD", takes: 1},
		{name: "any card of the suit, beating not required", trump: cards.Hearts, lead: "10D", hand: "7D KD",
			legal: "7D KD", play: "7D", takes: 0},
		{name: "face-down cards do not count", trump: cards.Hearts, lead: "10D", hand: "AS 8H", up: "7C 8C",
			down: "QD KD", legal: "8H", bad: "AS", badErr: ErrMustTrump, play: "8H", takes: 1},
		{name: "first card looks only at the hand", trump: cards.Hearts, trickNo: -1, lead: "10D", hand: "AS 8H",
			up: "QD 7C 9C 10C JC", down: "6D 8C 7S 8S 9S", legal: "8H", bad: "QD", badErr: ErrFirstCardFromHand},
	})
}

func TestFollow_VoidInSuitMustTrump(t *testing.T) {
	runFollowCases(t, []followCase{
		{name: "trump in hand", trump: cards.Hearts, lead: "10D", hand: "AS 8H 9H", legal: "8H 9H",
			bad: "AS", badErr: ErrMustTrump, play: "8H", takes: 1},
		{name: "trump only face up", trump: cards.Hearts, lead: "10D", hand: "AS", up: "8H 7C", down: "9S 8C",
			legal: "8H", bad: "AS", badErr: ErrMustTrump, play: "8H", takes: 1},
		{name: "trump led, void in trump: any card", trump: cards.Hearts, lead: "10H", hand: "AS 7C",
			legal: "AS 7C", play: "AS", takes: 0},
	})
}

func TestFollow_BeziHasNoTrumpToPlay(t *testing.T) {
	runFollowCases(t, []followCase{
		{name: "void in bezi: any card", trump: cards.NoSuit, lead: "10D", hand: "AS 8H", legal: "AS 8H",
			play: "8H", takes: 0},
		{name: "bezi still follows suit", trump: cards.NoSuit, lead: "10D", hand: "AS JD", legal: "JD",
			bad: "AS", badErr: ErrMustFollowSuit, play: "JD", takes: 1},
	})
}

func TestFollow_VoidInSuitAndTrumpAnyCard(t *testing.T) {
	runFollowCases(t, []followCase{
		{name: "neither suit nor trump", trump: cards.Hearts, lead: "10D", hand: "AS 7C", legal: "AS 7C",
			play: "AS", takes: 0},
	})
}

func TestJoker_AlwaysLegal(t *testing.T) {
	runFollowCases(t, []followCase{
		{name: "holding the led suit", trump: cards.Hearts, lead: "10D", hand: "7D JK1", legal: "7D JK1",
			play: "JK1", takes: 1},
		{name: "holding trumps", trump: cards.Hearts, lead: "10D", hand: "7H JK2 AS", legal: "7H JK2",
			play: "JK2", takes: 1},
		{name: "named suit held", trump: cards.Hearts, lead: "JK1", named: cards.Spades, hand: "AS JK2",
			legal: "AS JK2", play: "JK2", takes: 1},
	})
}

func TestJoker_InAnswerTakesTheTrickTrumpsIncluded(t *testing.T) {
	runFollowCases(t, []followCase{
		{name: "over the trump ace", trump: cards.Hearts, lead: "AH", hand: "JK2 7H", legal: "JK2 7H",
			play: "JK2", takes: 1},
		{name: "over a plain ace", trump: cards.NoSuit, lead: "AD", hand: "JK1 7C", legal: "JK1 7C",
			play: "JK1", takes: 1},
	})
}

func TestJoker_TwoJokersTheSecondWins(t *testing.T) {
	runFollowCases(t, []followCase{
		{name: "joker led naming trump", trump: cards.Hearts, lead: "JK1", named: cards.Hearts, hand: "JK2 AH",
			legal: "JK2 AH", play: "JK2", takes: 1},
		{name: "joker led in bezi", trump: cards.NoSuit, lead: "JK2", named: cards.Clubs, hand: "JK1",
			legal: "JK1", play: "JK1", takes: 1},
	})
}

func TestJoker_LedJokerDemandsTheHighestOfTheNamedSuit(t *testing.T) {
	runFollowCases(t, []followCase{
		{name: "highest is face up", trump: cards.Hearts, lead: "JK1", named: cards.Spades, hand: "9S 7S 8H",
			up: "KS 7C", down: "8C 9C", legal: "KS", bad: "9S", badErr: ErrMustPlayHighest, play: "KS", takes: 0},
		{name: "highest is in hand", trump: cards.Hearts, lead: "JK1", named: cards.Spades, hand: "AS 7S",
			up: "KS 7C", down: "8C 9C", legal: "AS", bad: "KS", badErr: ErrMustPlayHighest, play: "AS", takes: 0},
		{name: "other suits refused while holding it", trump: cards.Hearts, lead: "JK1", named: cards.Spades,
			hand: "7S AH", legal: "7S", bad: "AH", badErr: ErrMustPlayHighest, play: "7S", takes: 0},
	})
}

func TestJoker_LedNonTrumpSuitVoidOpponentMustTrumpAndTheTrumpTakes(t *testing.T) {
	runFollowCases(t, []followCase{
		{name: "trump in hand", trump: cards.Hearts, lead: "JK1", named: cards.Spades, hand: "8H 9H 7D",
			legal: "8H 9H", bad: "7D", badErr: ErrMustTrump, play: "8H", takes: 1},
		{name: "trump face up", trump: cards.Hearts, lead: "JK2", named: cards.Clubs, hand: "7D",
			up: "7H 8D", down: "8C 9C", legal: "7H", bad: "7D", badErr: ErrMustTrump, play: "7H", takes: 1},
		{name: "no trump either: joker takes", trump: cards.Hearts, lead: "JK1", named: cards.Spades,
			hand: "7D 8C", legal: "7D 8C", play: "8C", takes: 0},
	})
}

func TestJoker_LedNamingTrumpNoOrdinaryCardTakesIt(t *testing.T) {
	runFollowCases(t, []followCase{
		{name: "trump ace given", trump: cards.Hearts, lead: "JK1", named: cards.Hearts, hand: "AH 7D",
			legal: "AH", play: "AH", takes: 0},
		{name: "void in trump", trump: cards.Hearts, lead: "JK1", named: cards.Hearts, hand: "AS 7D",
			legal: "AS 7D", play: "AS", takes: 0},
	})
}

func TestJoker_LedInBeziNoOrdinaryCardTakesIt(t *testing.T) {
	runFollowCases(t, []followCase{
		{name: "named suit given", trump: cards.NoSuit, lead: "JK1", named: cards.Diamonds, hand: "AD 7C",
			legal: "AD", play: "AD", takes: 0},
		{name: "void in the named suit", trump: cards.NoSuit, lead: "JK1", named: cards.Diamonds, hand: "AH 7C",
			legal: "AH 7C", play: "AH", takes: 0},
	})
}

func TestJoker_LedJokerMustNameASuitAndOnlyALedJokerNamesOne(t *testing.T) {
	g := pos{Trump: cards.Hearts, TrickNo: 1, Hands: [Seats]string{"JK1 7D", "JK2 8D"}}.game(t)
	legal := g.Legal(0, nil)
	var named []cards.Suit
	for _, m := range legal {
		if m.Card == cards.Joker1 {
			named = append(named, m.Suit)
		}
	}
	if len(named) != 4 {
		t.Fatalf("led joker choices %v, want one per suit", named)
	}
	for _, m := range []Move{PlayMove(0, cards.Joker1), LeadJoker(0, cards.Joker1, cards.Suit(9)),
		LeadJoker(0, card(t, "7D"), cards.Spades)} {
		if _, err := g.Apply(m, nil); !errors.Is(err, ErrBadJokerDeclaration) {
			t.Fatalf("%v: %v, want ErrBadJokerDeclaration", m, err)
		}
	}
	mustApply(t, g, PlayMove(0, card(t, "7D")))
	if _, err := g.Apply(LeadJoker(1, cards.Joker2, cards.Spades), nil); !errors.Is(err, ErrBadJokerDeclaration) {
		t.Fatalf("answering joker naming a suit: %v", err)
	}
}

func TestTrick_HigherCardOfTheLedSuitOrATrumpTakesIt(t *testing.T) {
	runFollowCases(t, []followCase{
		{name: "higher of the suit", trump: cards.Hearts, lead: "10D", hand: "QD", legal: "QD", play: "QD", takes: 1},
		{name: "lower of the suit", trump: cards.Hearts, lead: "10D", hand: "7D", legal: "7D", play: "7D", takes: 0},
		{name: "trump on a plain suit", trump: cards.Hearts, lead: "AD", hand: "7H", legal: "7H", play: "7H", takes: 1},
		{name: "discard loses", trump: cards.Hearts, lead: "7D", hand: "AS", legal: "AS", play: "AS", takes: 0},
		{name: "bezi: other suit loses", trump: cards.NoSuit, lead: "7D", hand: "AH", legal: "AH", play: "AH", takes: 0},
		{name: "trump over trump", trump: cards.Hearts, lead: "KH", hand: "AH", legal: "AH", play: "AH", takes: 1},
	})
}

// lastTrick is the 18th trick: seat 0 leads AS, seat 1 answers 7S, so seat 0
// takes it.
func lastTrick(t *testing.T, tricks, scores [Seats]int, target int) *Game {
	return pos{Trump: cards.Hearts, TrickNo: TricksPerHand - 1, Tricks: tricks, Scores: scores, Target: target,
		Hands: [Seats]string{"AS", "7S"}}.game(t)
}

func TestScore_MoreTricksScoresTheDifference(t *testing.T) {
	g := lastTrick(t, [Seats]int{10, 7}, [Seats]int{3, 5}, 21)
	mustApply(t, g, PlayMove(0, card(t, "AS")))
	ev := mustApply(t, g, PlayMove(1, card(t, "7S")))
	he := eventsOf(ev, EventHandEnded)
	if len(he) != 1 || he[0].Tricks != [Seats]uint8{11, 7} || he[0].Points != [Seats]uint8{4, 0} ||
		he[0].Scores != [Seats]uint8{7, 5} {
		t.Fatalf("11-7 hand ended %+v, want 4 points to seat 0", he)
	}
	if g.Scores() != [Seats]int{7, 5} || g.Phase() != PhaseTrump || g.Hand() != 1 {
		t.Fatalf("scores %v phase %v hand %d", g.Scores(), g.Phase(), g.Hand())
	}
	hr := g.HandResults()
	if len(hr) != 1 || hr[0].Tricks != [Seats]int{11, 7} || hr[0].Points != [Seats]int{4, 0} || hr[0].Trump != "H" {
		t.Fatalf("hand results %+v", hr)
	}
	if len(eventsOf(ev, EventHandStarted)) != 1 || len(eventsOf(ev, EventDealt)) != Seats {
		t.Fatalf("next hand not dealt: %+v", ev)
	}
}

func TestScore_NineAllScoresNothing(t *testing.T) {
	g := lastTrick(t, [Seats]int{8, 9}, [Seats]int{3, 5}, 21)
	mustApply(t, g, PlayMove(0, card(t, "AS")))
	ev := mustApply(t, g, PlayMove(1, card(t, "7S")))
	he := eventsOf(ev, EventHandEnded)
	if len(he) != 1 || he[0].Tricks != [Seats]uint8{9, 9} || he[0].Points != [Seats]uint8{} || g.Scores() != [Seats]int{3, 5} {
		t.Fatalf("9-9 hand ended %+v scores %v", he, g.Scores())
	}
}

func TestMatch_EndsWhenAPlayerReachesOrPassesTheTarget(t *testing.T) {
	cases := []struct {
		name   string
		target int
		before int
		over   bool
	}{
		{"reaches 21 exactly", 21, 17, true},
		{"passes 21", 21, 20, true},
		{"falls short of 21", 21, 16, false},
		{"reaches 11", 11, 7, true},
		{"passes 31", 31, 30, true},
		{"falls short of 31", 31, 26, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := lastTrick(t, [Seats]int{10, 7}, [Seats]int{c.before, 0}, c.target)
			mustApply(t, g, PlayMove(0, card(t, "AS")))
			ev := mustApply(t, g, PlayMove(1, card(t, "7S")))
			if g.Over() != c.over {
				t.Fatalf("%d+4 of %d: over %v", c.before, c.target, g.Over())
			}
			if !c.over {
				return
			}
			ge := eventsOf(ev, EventGameEnded)
			if len(ge) != 1 || ge[0].Seat != 0 || ge[0].Reason != ReasonTarget || g.Winner() != 0 || g.ToMove() != -1 {
				t.Fatalf("game ended %+v winner %d", ge, g.Winner())
			}
			if len(g.Legal(0, nil))+len(g.Legal(1, nil))+len(g.Legal(-1, nil)) != 0 {
				t.Fatal("legal moves after the end")
			}
			if _, err := g.Apply(ResignMove(1), nil); !errors.Is(err, ErrGameOver) {
				t.Fatalf("move after the end: %v", err)
			}
		})
	}
}

func TestSettings_TargetIs11_15_21Or31(t *testing.T) {
	for _, tg := range []int{11, 15, 21, 31} {
		g, err := New(1, Settings{Target: tg})
		if err != nil || g.Settings().Target != tg {
			t.Errorf("target %d: %v", tg, err)
		}
	}
	if g, err := New(1, Settings{}); err != nil || g.Settings().Target != DefaultTarget {
		t.Errorf("default target: %v", err)
	}
	for _, tg := range []int{-1, 1, 10, 20, 30, 32, 255, 256 + 21} {
		if _, err := New(1, Settings{Target: tg}); !errors.Is(err, ErrBadTarget) {
			t.Errorf("target %d: %v, want ErrBadTarget", tg, err)
		}
	}
}

func TestMatch_ResigningOrForfeitingEndsItAndTheOpponentWins(t *testing.T) {
	cases := []struct {
		name   string
		setup  func(g *Game)
		end    func(g *Game, seat int) ([]Event, error)
		reason EndReason
	}{
		{"resign before trump", func(*Game) {}, func(g *Game, s int) ([]Event, error) { return g.Resign(s, nil) }, ReasonResigned},
		{"resign move mid-hand", func(g *Game) {
			mustApply(t, g, TrumpMove(g.Declarer(), cards.Hearts))
		}, func(g *Game, s int) ([]Event, error) { return g.Apply(ResignMove(s), nil) }, ReasonResigned},
		{"forfeit", func(g *Game) {
			mustApply(t, g, TrumpMove(g.Declarer(), cards.Hearts))
		}, func(g *Game, s int) ([]Event, error) { return g.Forfeit(s, nil) }, ReasonForfeit},
	}
	for _, c := range cases {
		for seat := range Seats {
			g := newGame(t, 40)
			c.setup(g)
			ev, err := c.end(g, seat)
			if err != nil {
				t.Fatalf("%s seat %d: %v", c.name, seat, err)
			}
			if !g.Over() || g.Winner() != 1-seat || g.EndReason() != c.reason || g.ToMove() != -1 {
				t.Fatalf("%s seat %d: over %v winner %d reason %v", c.name, seat, g.Over(), g.Winner(), g.EndReason())
			}
			if len(ev) != 1 || ev[0].Kind != EventGameEnded || ev[0].To != Public || int(ev[0].Seat) != 1-seat ||
				ev[0].Reason != c.reason {
				t.Fatalf("%s: events %+v", c.name, ev)
			}
			if _, err := g.Resign(1-seat, nil); !errors.Is(err, ErrGameOver) {
				t.Fatalf("%s: second resignation: %v", c.name, err)
			}
		}
	}
}

func TestApply_RejectedMoveNamesHandTrickSeatAndRule(t *testing.T) {
	g := pos{Trump: cards.Hearts, TrickNo: 3, Lead: "10D", Hands: [Seats]string{"", "7D AS"}}.game(t)
	_, err := g.Apply(PlayMove(1, card(t, "AS")), nil)
	var me *MoveError
	if !errors.As(err, &me) || me.Hand != 0 || me.Trick != 3 || me.Seat != 1 || !errors.Is(err, ErrMustFollowSuit) {
		t.Fatalf("error %#v", err)
	}
	msg := err.Error()
	for _, want := range []string{"hand 1", "trick 4", "seat 1", "1 play AS", "follow suit"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
}

func TestApply_MalformedMovesAreRejected(t *testing.T) {
	// A deal whose other seat's lowest card is not a joker (a joker led
	// without a suit is refused for its declaration first).
	var g *Game
	for seed := uint64(50); g == nil || g.hands[1-g.ToMove()].Lowest().IsJoker(); seed++ {
		g = newGame(t, seed)
		mustApply(t, g, TrumpMove(g.Declarer(), cards.Hearts))
	}
	s := g.ToMove()
	cases := []struct {
		m    Move
		want error
	}{
		{Move{}, ErrBadMove},
		{Move{Kind: 99, Seat: s}, ErrBadMove},
		{Move{Kind: KindPlay, Seat: -3, Card: 1}, ErrBadSeat},
		{Move{Kind: KindPlay, Seat: 7, Card: 1}, ErrBadSeat},
		{Move{Kind: KindPlay, Seat: s, Card: 200, Suit: cards.NoSuit}, ErrNotInHand},
		{Move{Kind: KindPlay, Seat: s, Card: cards.NoCard, Suit: cards.NoSuit}, ErrNotInHand},
		{Move{Kind: KindPlay, Seat: s, Card: g.hands[1-s].Lowest(), Suit: cards.NoSuit}, ErrNotInHand},
		{Move{Kind: KindPlay, Seat: 1 - s, Card: g.hands[1-s].Lowest(), Suit: cards.NoSuit}, ErrNotYourTurn},
		{Move{Kind: KindResign, Seat: s, Card: 3, Suit: cards.NoSuit}, ErrBadMove},
		{Move{Kind: KindTrump, Seat: s, Card: cards.NoCard, Suit: cards.Hearts}, ErrWrongPhase},
		{Move{Kind: KindTrump, Seat: s, Card: 4, Suit: cards.Hearts}, ErrBadMove},
	}
	for _, c := range cases {
		before := *g
		_, err := g.Apply(c.m, nil)
		var me *MoveError
		if !errors.Is(err, c.want) || !errors.As(err, &me) || *g != before {
			t.Errorf("%v: %v, want %v", c.m, err, c.want)
		}
	}
}

func TestLegal_DoesNotAllocate(t *testing.T) {
	g := newGame(t, 60)
	mustApply(t, g, TrumpMove(g.Declarer(), cards.Hearts))
	buf := make([]Move, 0, MaxLegal)
	s := g.ToMove()
	if n := testing.AllocsPerRun(100, func() { buf = g.Legal(s, buf[:0]) }); n != 0 {
		t.Fatalf("Legal allocates %v times", n)
	}
}

func TestApply_DoesNotAllocate(t *testing.T) {
	start := newGame(t, 61)
	mustApply(t, start, TrumpMove(start.Declarer(), cards.Hearts))
	// Walk into the hand so that columns get played and a trick ends.
	positions := []Game{}
	g := start.Clone()
	for !g.Over() && len(positions) < 60 {
		positions = append(positions, *g)
		m, _ := Bot{}.Choose(g, g.ToMove())
		mustApply(t, g, m)
	}
	var work Game
	buf := make([]Event, 0, 16)
	for i := range positions {
		m, _ := Bot{}.Choose(&positions[i], positions[i].ToMove())
		n := testing.AllocsPerRun(20, func() {
			work = positions[i]
			var err error
			if buf, err = work.Apply(m, buf[:0]); err != nil {
				t.Fatal(err)
			}
		})
		if n != 0 {
			t.Fatalf("Apply(%v) allocates %v times", m, n)
		}
	}
}

// localDeck is the deck of hand h of a local match of seed.
func localDeck(seed uint64, h uint32) cards.Deck {
	d, _ := fairdeal.Shuffle(fairdeal.LocalKey(seed, h))
	return d
}
