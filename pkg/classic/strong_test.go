package classic

import (
	"reflect"
	"testing"

	"github.com/pulka/pulka/pkg/cards"
)

// fastStrong keeps the tests quick; the budget changes how well it plays,
// not what it may look at.
var fastStrong = StrongBot{Seed: 7, Rollouts: 24}

func TestStrongBot_AlwaysPlaysLegalMoves(t *testing.T) {
	games := 12
	if testing.Short() || raceOn {
		games = 2
	}
	for i := range games {
		seed := uint64(i) + 500
		players := [Seats]Player{StrongBot{Seed: seed, Rollouts: 16}, Bot{}, StrongBot{Seed: seed + 1, Rollouts: 16}, NewRandomBot(seed)}
		playGame(t, seed, Variant(i%2), players) // checks every move
	}
}

func TestStrongBot_IsDeterministicFromItsSeed(t *testing.T) {
	bots := [Seats]Player{fastStrong, Bot{}, StrongBot{Seed: 9, Rollouts: 24}, Bot{}}
	a := playGame(t, 3, Nines, bots)
	b := playGame(t, 3, Nines, bots)
	if *a != *b {
		t.Fatal("two games of the same seed and bots differ")
	}
}

// TestStrongBot_RolloutsAreItsHardCap: a decision never runs more playouts
// than its budget (each playout at most the rest of one hand), whatever the
// position, so the CPU a move costs has a ceiling that no clock decides; and
// an unset budget is StrongRollouts.
func TestStrongBot_RolloutsAreItsHardCap(t *testing.T) {
	states, _ := recordGame(t, 17)
	for _, b := range []StrongBot{{Seed: 1, Rollouts: 40}, {Seed: 2}} {
		most := 0
		for j := range states {
			g := &states[j]
			m, n := b.decide(g, g.ToMove())
			if n > b.budget() {
				t.Fatalf("move %d (%v): %d playouts, budget %d", j, m, n, b.budget())
			}
			most = max(most, n)
		}
		want := b.Rollouts
		if want == 0 {
			want = StrongRollouts
		}
		// The budget is spent, not just bounded: at least half of it on the
		// busiest decision (rounding down per candidate loses the rest).
		if b.budget() != want || most < want/2 {
			t.Fatalf("budget %d (want %d); the busiest decision ran %d playouts", b.budget(), want, most)
		}
	}
}

func TestStrongBot_SaysNotMyTurn(t *testing.T) {
	g := newGame(t, 1, Standard)
	if _, ok := fastStrong.Choose(g, (g.ToMove()+1)%Seats); ok {
		t.Fatal("strong bot moved out of turn")
	}
	if _, ok := fastStrong.Choose(g, -1); ok {
		t.Fatal("strong bot moved for seat -1")
	}
}

// TestStrongBot_IsHonest is the rule that a bot decides only from what its
// seat may see: in every position of some self-play games the other seats'
// cards are dealt anew among them (same counts) and the hand's hidden key
// replaced; the seat's View stays the same, and so must the move.
func TestStrongBot_IsHonest(t *testing.T) {
	games := 3
	if testing.Short() || raceOn {
		games = 1
	}
	checked := 0
	for i := range games {
		states, _ := recordGame(t, uint64(40+i))
		for j := range states {
			g := &states[j]
			seat := g.ToMove()
			if g.phase != PhaseBid && g.phase != PhasePlay {
				continue
			}
			r := cards.NewRNG(uint64(j), 77)
			other := reshuffleHidden(g, seat, &r)
			if other.hands == g.hands {
				continue // nothing hidden to move (one seat holds every unseen card, say)
			}
			if !reflect.DeepEqual(g.View(seat), other.View(seat)) {
				t.Fatalf("the reshuffle changed seat %d's view", seat)
			}
			for _, p := range []Player{fastStrong, Bot{}} {
				a, _ := p.Choose(g, seat)
				b, _ := p.Choose(&other, seat)
				if a != b {
					t.Fatalf("game %d move %d: %T at seat %d chose %v, with the hidden cards reshuffled %v", i, j, p, seat, a, b)
				}
			}
			checked++
		}
	}
	if checked < 50 {
		t.Fatalf("only %d positions checked", checked)
	}
}

// reshuffleHidden deals the cards of every seat but seat anew among those
// seats, each keeping its count, and replaces the hand's key.
func reshuffleHidden(g *Game, seat int, r *cards.RNG) Game {
	w := *g
	var pool []cards.Card
	for s := range Seats {
		if s != seat {
			pool = append(pool, g.hands[s].Cards()...)
		}
	}
	for i := len(pool) - 1; i > 0; i-- {
		j := r.IntN(i + 1)
		pool[i], pool[j] = pool[j], pool[i]
	}
	for s := range Seats {
		if s == seat {
			continue
		}
		n := g.hands[s].Len()
		w.hands[s] = cards.SetOf(pool[:n]...)
		pool = pool[n:]
	}
	w.key[0] ^= 0xff
	w.localSeed ^= 0xdead
	return w
}

// TestSampler_DealsConsistentWorlds is the property that every sampled
// world keeps the public counts, never moves a seen card, and respects what
// the current trick showed: a seat that did not follow holds none of the
// led suit.
func TestSampler_DealsConsistentWorlds(t *testing.T) {
	states, _ := recordGame(t, 5)
	for j := range states {
		g := &states[j]
		if g.phase != PhasePlay {
			continue
		}
		seat := g.ToMove()
		s := newSampler(g, seat, uint64(j))
		for range 20 {
			w := s.sample()
			if w.hands[seat] != g.hands[seat] {
				t.Fatal("the sampler changed the seat's own cards")
			}
			var all cards.Set
			for o := range Seats {
				if w.hands[o].Len() != g.hands[o].Len() {
					t.Fatalf("seat %d holds %d cards in a sample, %d in the game", o, w.hands[o].Len(), g.hands[o].Len())
				}
				if all&w.hands[o] != 0 {
					t.Fatal("a card dealt twice")
				}
				all |= w.hands[o]
				if o != seat && w.hands[o]&^s.allow[o] != 0 {
					t.Fatalf("seat %d got %v, which the trick showed it cannot hold", o, w.hands[o]&^s.allow[o])
				}
			}
			if all&g.played != 0 || (g.turned != cards.NoCard && all.Has(g.turned)) {
				t.Fatal("a played or turned card dealt again")
			}
		}
	}
}

func TestSampler_ASeatThatDidNotFollowIsVoid(t *testing.T) {
	g := build(t, position{hand: 2, dealer: 3, trump: cards.Clubs,
		hands: [Seats]string{"AH 8D 7S", "7C JD 9S", "KH QS 8S", "QH JH 6D"}, bids: [Seats]int8{1, 1, 0, 0}})
	play(t, g, "0 play AH", "1 play 7C") // seat 1 shows it has no hearts
	s := newSampler(g, 2, 1)
	if s.allow[1].OfSuit(cards.Hearts) != 0 {
		t.Fatalf("seat 1 may still hold hearts: %v", s.allow[1].OfSuit(cards.Hearts))
	}
	if s.allow[3].OfSuit(cards.Hearts) == 0 {
		t.Fatal("seat 3, which has not played, may not hold hearts")
	}
}

func TestEvaluator_PremiaRules(t *testing.T) {
	// Hand 2 of the standard game (3 cards): pulka I, five hands to go after it.
	g := build(t, position{hand: 2, dealer: 3, trump: cards.Clubs,
		hands: [Seats]string{"AH 8D 7S", "7C JD 9S", "KH QS 8S", "QH JH 6D"}})
	// Hands 0 and 1: seat 0 made both (on course), seat 1 missed hand 1, seats 2 and 3 missed hand 0.
	g.results[0] = handRecord{bids: [Seats]int8{1, 0, 1, 1}, tricks: [Seats]int8{1, 0, 0, 0}}
	g.results[1] = handRecord{bids: [Seats]int8{1, 0, 0, 0}, tricks: [Seats]int8{1, 1, 0, 0}}
	made := handRecord{bids: [Seats]int8{1, 1, 0, 0}, tricks: [Seats]int8{1, 1, 1, 0}}
	missed := handRecord{bids: [Seats]int8{1, 1, 0, 0}, tricks: [Seats]int8{0, 2, 1, 0}}
	for _, tc := range []struct {
		rule       string
		seat       int
		r          handRecord
		atLeast    float64
		atMost     float64
		wantRival  int
		wantCourse bool
	}{
		{"an exact bid on course is worth more than its points (the premia)", 0, made, 101, 1000, -1, true},
		{"a khishti on course costs the penalty and the margin", 0, missed, -200 - khishtiMargin, -200 - khishtiMargin, -1, true},
		{"off course with the only seat on course making it: its premia costs this seat a moshla", 1, made, -1000, 99, 0, false},
		{"off course, the seat on course breaks: plain points", 1, missed, 10 * 2, 10 * 2, 0, false},
	} {
		e := newEvaluator(g, tc.seat, &ScoreRules{})
		if e.rival != tc.wantRival || e.course[tc.seat] != tc.wantCourse {
			t.Errorf("%s: rival %d course %v, want %d %v", tc.rule, e.rival, e.course[tc.seat], tc.wantRival, tc.wantCourse)
		}
		if v := e.value(tc.r); v < tc.atLeast || v > tc.atMost {
			t.Errorf("%s: value %.1f, want %.0f..%.0f", tc.rule, v, tc.atLeast, tc.atMost)
		}
	}
}

// TestEvaluator_TheTablesSheet: the bot prices what the table's sheet
// writes — its khishti penalty, and no course or rival when the premia or
// the moshla is off.
func TestEvaluator_TheTablesSheet(t *testing.T) {
	g := build(t, position{hand: 2, dealer: 3, trump: cards.Clubs,
		hands: [Seats]string{"AH 8D 7S", "7C JD 9S", "KH QS 8S", "QH JH 6D"}})
	g.results[0] = handRecord{bids: [Seats]int8{1, 0, 1, 1}, tricks: [Seats]int8{1, 0, 0, 0}}
	g.results[1] = handRecord{bids: [Seats]int8{1, 0, 0, 0}, tricks: [Seats]int8{1, 1, 0, 0}}
	khishti := handRecord{bids: [Seats]int8{1, 1, 0, 0}, tricks: [Seats]int8{0, 2, 1, 0}}
	var perCard ScoreRules
	for n := range perCard.Khishti {
		perCard.Khishti[n] = 100 * n
	}
	for _, tc := range []struct {
		rule      string
		rules     ScoreRules
		seat      int
		wantCost  int
		onCourse  bool
		wantRival int
	}{
		{"the default table: khishti 200, premia and moshla on", ScoreRules{}, 0, 200 + khishtiMargin, true, -1},
		{"a per-card khishti in a three-card hand is 300", perCard, 0, 300 + khishtiMargin, true, -1},
		{"no premia: nobody is on course", ScoreRules{NoPremia: true}, 0, 200 + khishtiMargin, false, -1},
		{"no premia: nobody is worth breaking", ScoreRules{NoPremia: true}, 1, 200 + khishtiMargin, false, -1},
		{"no moshla: the one on course costs the others nothing", ScoreRules{NoMoshla: true}, 1, 200 + khishtiMargin, false, -1},
		{"moshla on: the one on course is the rival", ScoreRules{}, 1, 200 + khishtiMargin, false, 0},
	} {
		e := newEvaluator(g, tc.seat, &tc.rules)
		if e.khishti != tc.wantCost || e.course[tc.seat] != tc.onCourse || e.rival != tc.wantRival {
			t.Errorf("%s: khishti %d course %v rival %d", tc.rule, e.khishti, e.course[tc.seat], e.rival)
		}
		if tc.seat == 0 {
			if v := e.value(khishti); v != -float64(tc.wantCost) {
				t.Errorf("%s: a khishti is worth %.0f, want %d", tc.rule, v, -tc.wantCost)
			}
		}
	}
}

func TestStrongBot_DucksWhenItHasEnough(t *testing.T) {
	g := build(t, position{hand: 1, dealer: 3, trump: cards.Clubs,
		hands: [Seats]string{"9H 8D", "AH 7H", "KH QS", "QH JD"}, bids: [Seats]int8{1, 0, 0, 0}})
	play(t, g, "0 play 9H")
	if m, _ := fastStrong.Choose(g, 1); m != PlayMove(1, card(t, "7H")) {
		t.Fatalf("bid 0: played %v, want to duck with 7H", m)
	}
}

func TestStrongBot_TakesWithTheJokerWhenItMustWin(t *testing.T) {
	g := build(t, position{hand: 1, dealer: 3, trump: cards.Clubs,
		hands: [Seats]string{"AH 8D", "7H JK1", "KH QS", "QH JD"}, bids: [Seats]int8{1, 2, 0, 0}})
	play(t, g, "0 play AH")
	if m, _ := fastStrong.Choose(g, 1); m != JokerMove(1, cards.Joker1, JokerTake, 0) {
		t.Fatalf("needing both tricks with a joker and a losing heart: %v, want a taking joker", m)
	}
}

func TestStrongBot_DealerNeverBidsTheForbiddenTotal(t *testing.T) {
	g := build(t, position{hand: 0, dealer: 0, trump: cards.Hearts, hands: [Seats]string{"AH", "7S", "KH", "QH"}})
	g.phase, g.bids, g.turn, g.leader = PhaseBid, [Seats]int8{noBid, 0, 0, 0}, 0, 1
	if m, _ := fastStrong.Choose(g, 0); m != BidMove(0, 0) {
		t.Fatalf("dealer with the trump ace after three passes bid %v, want 0 (1 is forbidden)", m)
	}
}

func TestLevel_ParsesAndPicksItsBot(t *testing.T) {
	for _, tc := range []struct {
		name string
		want Level
		bot  Player
	}{
		{"easy", LevelEasy, Bot{}},
		{"normal", LevelNormal, StrongBot{Rollouts: NormalRollouts}},
		{"strong", LevelStrong, StrongBot{Rollouts: StrongRollouts}},
	} {
		l, err := ParseLevel(tc.name)
		if err != nil || l != tc.want || l.String() != tc.name {
			t.Errorf("ParseLevel(%q) = %v, %v", tc.name, l, err)
		}
		if got := BotFor(l); got != tc.bot {
			t.Errorf("BotFor(%v) = %#v, want %#v", l, got, tc.bot)
		}
	}
	for _, bad := range []string{"", "hard", "Strong", "0"} {
		if _, err := ParseLevel(bad); err == nil {
			t.Errorf("ParseLevel(%q) accepted", bad)
		}
	}
	if BotFor(0) != BotFor(LevelDefault) {
		t.Error("an unset level does not get the default bot")
	}
}

func BenchmarkStrongBot(b *testing.B) {
	states, _ := recordGame(b, 3)
	bot := StrongBot{Seed: 1, Rollouts: StrongRollouts}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		g := &states[i]
		_, _ = bot.Choose(g, g.ToMove())
		if i++; i == len(states) {
			i = 0
		}
	}
}
