package classic

import (
	"testing"

	"github.com/pulka/pulka/pkg/cards"
)

// playGame plays a whole game with one player per seat and returns the
// final state.
func playGame(t testing.TB, seed uint64, v Variant, players [Seats]Player) *Game {
	t.Helper()
	g := newGame(t, seed, v)
	var evs [16]Event
	var legal [32]Move
	for !g.Over() {
		seat := g.ToMove()
		m, ok := players[seat].Choose(g, seat)
		if !ok {
			t.Fatalf("seat %d to move but its player says not", seat)
		}
		if !containsMove(g.Legal(seat, legal[:0]), m) {
			t.Fatalf("hand %d: player at seat %d chose %v, not in %v", g.hand, seat, m, g.Legal(seat, nil))
		}
		if _, err := g.Apply(m, evs[:0]); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

func TestBot_AlwaysPlaysLegalMoves(t *testing.T) {
	games := 2_000
	if testing.Short() || raceOn {
		games = 200
	}
	for i := range games {
		seed := uint64(i) + 1000
		players := [Seats]Player{Bot{}, Bot{}, Bot{}, Bot{}}
		if i%2 == 1 {
			players[i%Seats] = NewRandomBot(seed)
			players[(i+1)%Seats] = NewRandomBot(seed + 1)
		}
		playGame(t, seed, Variant(i%3/2), players) // checks every move
	}
}

func TestBot_IsDeterministic(t *testing.T) {
	bots := [Seats]Player{Bot{}, Bot{}, Bot{}, Bot{}}
	a := playGame(t, 77, Standard, bots)
	b := playGame(t, 77, Standard, bots)
	if *a != *b {
		t.Fatal("two games of the same seed and bots differ")
	}
	r1 := playGame(t, 5, Nines, [Seats]Player{NewRandomBot(1), NewRandomBot(2), NewRandomBot(3), NewRandomBot(4)})
	r2 := playGame(t, 5, Nines, [Seats]Player{NewRandomBot(1), NewRandomBot(2), NewRandomBot(3), NewRandomBot(4)})
	if *r1 != *r2 {
		t.Fatal("random bots with the same seeds differ")
	}
}

func TestBot_SaysNotMyTurn(t *testing.T) {
	g := newGame(t, 1, Standard)
	other := (g.ToMove() + 1) % Seats
	if _, ok := (Bot{}).Choose(g, other); ok {
		t.Fatal("baseline moved out of turn")
	}
	if _, ok := NewRandomBot(1).Choose(g, other); ok {
		t.Fatal("random bot moved out of turn")
	}
}

func TestBot_ChoosesTrumpFromItsFirstThreeCards(t *testing.T) {
	for _, tc := range []struct {
		first string
		want  cards.Suit
	}{
		{"7H 9H AS", cards.Hearts},
		{"7H 9H 8H", cards.Hearts},
		{"7H 9S 8D", cards.NoSuit},
		{"AD 9S 8C", cards.Diamonds},
		{"JK1 JK2 7C", cards.NoSuit},
		{"KS QD QC", cards.Spades},
		{"8S 9S AD", cards.Spades},
	} {
		if got := ChooseTrumpFor(set(t, tc.first)); got != tc.want {
			t.Errorf("%s: trump %v, want %v", tc.first, got, tc.want)
		}
	}
}

func TestBot_BidsByCountingLikelyTricks(t *testing.T) {
	for _, tc := range []struct {
		hand  string
		trump cards.Suit
		lo    float64
		hi    float64
	}{
		{"JK1 JK2 AH KH QH AS AD AC 7C", cards.Hearts, 6.5, 9},
		{"7S 8S 9S 7D 8D 9D 7C 8C 9C", cards.Hearts, 0, 0.5},
		{"AH KH QH JH 10H 9H 8H 7H 6H", cards.Hearts, 8, 9.5},
		{"JK1 7S 8D 9C 10S 7D 8C 9D 10C", cards.Hearts, 0.8, 1.4},
	} {
		g := &Game{variant: Standard, hand: 8, firstDealer: 3} // a nine-card hand, seat 0 bids first
		g.resetHand()
		g.phase, g.trump, g.leader, g.turn = PhaseBid, tc.trump, 0, 0
		g.hands[0] = set(t, tc.hand)
		if e := estimateBid(g, 0); e < tc.lo || e > tc.hi {
			t.Errorf("%s (trump %v): estimate %.2f, want %.1f..%.1f", tc.hand, tc.trump, e, tc.lo, tc.hi)
		}
	}
}

func TestBot_DealerBidAvoidsTheForbiddenTotal(t *testing.T) {
	// One-card hand, three passes: the dealer holding the trump ace would bid
	// one, which makes the total 1, so it must pass.
	g := build(t, position{hand: 0, dealer: 0, trump: cards.Hearts, hands: [Seats]string{"AH", "7S", "KH", "QH"}})
	g.phase, g.bids, g.turn, g.leader = PhaseBid, [Seats]int8{noBid, 0, 0, 0}, 0, 1
	if m, _ := (Bot{}).Choose(g, 0); m != BidMove(0, 0) {
		t.Fatalf("dealer with the trump ace after three passes bid %v, want 0", m)
	}
	// With a hopeless card after a bid of one it may not pass: it bids one.
	g.hands[0], g.hands[1] = set(t, "7S"), set(t, "AH")
	g.bids = [Seats]int8{noBid, 1, 0, 0}
	if m, _ := (Bot{}).Choose(g, 0); m != BidMove(0, 1) {
		t.Fatalf("hopeless dealer after a bid of one bid %v, want 1 (0 is forbidden)", m)
	}
}

func TestBot_DeclaresJokersByNeed(t *testing.T) {
	pos := position{hand: 1, dealer: 3, trump: cards.Clubs,
		hands: [Seats]string{"AH 8D", "7H JK1", "KH QS", "QH JD"}, bids: [Seats]int8{1, 1, 0, 0}}
	// Seat 1 needs a trick and cannot beat the ace: it takes with the joker.
	g := build(t, pos)
	play(t, g, "0 play AH")
	if m, _ := (Bot{}).Choose(g, 1); m != JokerMove(1, cards.Joker1, JokerTake, 0) {
		t.Fatalf("short of its bid: %v, want a taking joker", m)
	}
	// Bid 0: the joker is thrown away rather than take.
	pos.bids = [Seats]int8{1, 0, 1, 1}
	pos.hands[1] = "AS JK1"
	g = build(t, pos)
	play(t, g, "0 play AH")
	m, _ := Bot{}.Choose(g, 1)
	if m.Card == cards.Joker1 && m.Joker != JokerDiscard {
		t.Fatalf("bid made: %v, want no taking joker", m)
	}
	// Leading with every trick needed: the joker leads 'highest' in trump.
	pos = position{hand: 1, dealer: 3, trump: cards.Clubs,
		hands: [Seats]string{"JK1 7D", "AH 9C", "KH QS", "QH JD"}, bids: [Seats]int8{2, 0, 0, 1}}
	g = build(t, pos)
	if m, _ := (Bot{}).Choose(g, 0); m != JokerMove(0, cards.Joker1, JokerHighest, cards.Clubs) {
		t.Fatalf("lead needing both tricks: %v, want JK1 highest C", m)
	}
}

func TestBot_DucksWhenItHasEnough(t *testing.T) {
	g := build(t, position{hand: 1, dealer: 3, trump: cards.Clubs,
		hands: [Seats]string{"9H 8D", "AH 7H", "KH QS", "QH JD"}, bids: [Seats]int8{1, 0, 0, 0}})
	play(t, g, "0 play 9H")
	if m, _ := (Bot{}).Choose(g, 1); m != PlayMove(1, card(t, "7H")) {
		t.Fatalf("bid 0: played %v, want to duck with 7H", m)
	}
}

// TestBot_BeatsRandomBot plays seeded games of two baseline bots against two
// random-legal bots (seats rotating) and reports each side's exact-bid rate
// and average final score (rules.md's hand table, khishti 200, no premia).
// Run with -v to see the numbers.
func TestBot_BeatsRandomBot(t *testing.T) {
	games := 10_000
	if testing.Short() || raceOn {
		games = 500
	}
	var made, hands, score [2]int
	for i := range games {
		seed := uint64(i)*7919 + 3
		var players [Seats]Player
		var side [Seats]int // 0 = baseline, 1 = random
		for s := range Seats {
			if (s+i)%2 == 0 {
				players[s] = Bot{}
			} else {
				players[s], side[s] = NewRandomBot(seed+uint64(s)), 1
			}
		}
		g := playGame(t, seed, Standard, players)
		for _, r := range g.HandResults() {
			for s := range Seats {
				hands[side[s]]++
				if r.Bids[s] == r.Tricks[s] {
					made[side[s]]++
				}
				score[side[s]] += points(r.Cards, r.Bids[s], r.Tricks[s])
			}
		}
	}
	rate := func(i int) float64 { return float64(made[i]) / float64(hands[i]) }
	avg := func(i int) float64 { return float64(score[i]) / float64(games*2) }
	t.Logf("%d games, 2 baseline + 2 random seats: exact bids baseline %.1f%% random %.1f%%; average final score baseline %.0f random %.0f",
		games, 100*rate(0), 100*rate(1), avg(0), avg(1))
	if rate(0) < rate(1)+0.15 || avg(0) <= avg(1) {
		t.Fatalf("baseline does not clearly beat random play")
	}
}

// winningNow is trickWinner asked of every card at once: in every position
// of recorded games where a trick is open, each ordinary card not yet
// played is in the set exactly when trickWinner, with the card put next on
// the trick, names its player.
func TestWinningNow_AgreesWithTrickWinner(t *testing.T) {
	positions := 0
	for seed := uint64(1); seed <= 40; seed++ {
		states, _ := recordGame(t, seed)
		for i := range states {
			g := &states[i]
			if g.phase != PhasePlay || g.nPlayed == 0 {
				continue
			}
			positions++
			got := g.winningNow()
			for c := range cards.Card(cards.DeckSize) {
				if c.IsJoker() {
					if got.Has(c) {
						t.Fatalf("seed %d position %d: a joker in the set", seed, i)
					}
					continue
				}
				cs, js := g.trickCards, g.trickJoker
				cs[g.nPlayed], js[g.nPlayed] = c, JokerNone
				want := trickWinner(&cs, &js, g.ledSuit, g.trump) == int(g.nPlayed)
				if got.Has(c) != want {
					t.Fatalf("seed %d position %d (trick %v %v, led %v, trump %v): %v wins %t, winningNow says %t",
						seed, i, g.trickCards, g.trickJoker, g.ledSuit, g.trump, c, want, got.Has(c))
				}
			}
		}
	}
	t.Logf("%d positions", positions)
}
