package scoring

// An independent review of the score sheet against /work/shared/spec/rules.md
// ("Scoring one hand", "Premia and moshla", "The score sheet") and seeds
// 000, 001 and 004. docs/rules-review.md lists what was checked and found.
// Literal tables carry the numbers worked out by hand from the rules; the
// matrix and random tests compare Build with rvRef, a second reading of the
// rules written for this review.

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pulka/pulka/pkg/classic"
)

// Every case of the hand table, with the numbers worked out by hand.
func TestReview_HandTable(t *testing.T) {
	for _, c := range []struct {
		name           string
		n, bid, tricks int
		k              Khishti
		points         int
		result         Result
	}{
		{"1 of 1 = 100", 1, 1, 1, Khishti200, 100, ResultMade},
		{"2 of 2 in a nine-card hand = 150", 9, 2, 2, Khishti200, 150, ResultMade},
		{"2 of 2 in a two-card hand: every trick, 200", 2, 2, 2, Khishti200, 200, ResultMade},
		{"3 of 3 in a three-card hand = 300", 3, 3, 3, Khishti200, 300, ResultMade},
		{"4 of 4 in a four-card hand = 400, not 250", 4, 4, 4, Khishti200, 400, ResultMade},
		{"4 of 4 in a nine-card hand = 250", 9, 4, 4, Khishti200, 250, ResultMade},
		{"8 of 8 = 800", 8, 8, 8, Khishti200, 800, ResultMade},
		{"8 of 9 = 450", 9, 8, 8, Khishti200, 450, ResultMade},
		{"9 of 9 = 900", 9, 9, 9, Khishti200, 900, ResultMade},
		{"made pass in a one-card hand = 50", 1, 0, 0, Khishti200, 50, ResultMade},
		{"made pass in a nine-card hand = 50", 9, 0, 0, Khishti200, 50, ResultMade},
		{"failed pass, one trick = 10", 1, 0, 1, Khishti200, 10, ResultMissed},
		{"failed pass, three tricks = 30", 9, 0, 3, Khishti500, 30, ResultMissed},
		{"bid 2 took 1 = 10", 9, 2, 1, Khishti200, 10, ResultMissed},
		{"over: bid 2 took 5 = 50, no bonus", 9, 2, 5, Khishti200, 50, ResultMissed},
		{"over: bid 1 took every trick = 10 a trick", 3, 1, 3, Khishti200, 30, ResultMissed},
		{"khishti 200", 5, 1, 0, Khishti200, -200, ResultKhishti},
		{"khishti 500", 5, 3, 0, Khishti500, -500, ResultKhishti},
		{"khishti 100", 9, 9, 0, Khishti100, -100, ResultKhishti},
		{"khishti per card, one card = -100", 1, 1, 0, KhishtiPerCard, -100, ResultKhishti},
		{"khishti per card, two cards = -200 (seed)", 2, 2, 0, KhishtiPerCard, -200, ResultKhishti},
		{"khishti per card, nine cards = -900", 9, 1, 0, KhishtiPerCard, -900, ResultKhishti},
		{"khishti whatever the table's other numbers: bid every trick, none taken", 4, 4, 0, Khishti200, -200, ResultKhishti},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, r := HandScore(c.n, c.bid, c.tricks, c.k)
			if p != c.points || r != c.result {
				t.Fatalf("HandScore(%d cards, bid %d, took %d, %v) = %d %v, want %d %v",
					c.n, c.bid, c.tricks, c.k, p, r, c.points, c.result)
			}
		})
	}
}

// Every (n, bid, tricks, khishti) agrees with the second reading.
func TestReview_HandTable_EveryCase(t *testing.T) {
	for n := 1; n <= classic.MaxCards; n++ {
		for b := 0; b <= n; b++ {
			for tr := 0; tr <= n; tr++ {
				for k := Khishti200; k <= KhishtiPerCard; k++ {
					p, r := HandScore(n, b, tr, k)
					wp, wr := rvRefHand(n, b, tr, k)
					if p != wp || r != wr {
						t.Fatalf("n=%d bid %d took %d %v: %d %v, want %d %v", n, b, tr, k, p, r, wp, wr)
					}
				}
			}
		}
	}
}

// rvPulka is one nine-card pulka designed so that each seat's best hand
// sits somewhere different, with ties, and with a khishti:
//
//	tricks      seat 0   seat 1   seat 2   seat 3
//	hand 0      2 (150)  3 (200)  4 (250)  0 (50)
//	hand 1      4 (250)  1 (100)  1 (100)  3 (200)
//	hand 2      1 (100)  2 (150)  3 (200)  3 (200)
//	hand 3      3 (200)  3 (200)  0 (50)   3 (200)
//
// The scores are those of a made bid. A seat that does not earn the premia
// misses one hand: seat 0 bids 4 in hand 3 (30), seat 1 bids 4 in hand 0
// (30), seat 2 bids 1 in hand 3 (a khishti), seat 3 bids 2 in hand 1 (30).
var rvTricks = [4][4]int{{2, 3, 4, 0}, {4, 1, 1, 3}, {1, 2, 3, 3}, {3, 3, 0, 3}}

var rvMiss = [4]struct{ hand, bid int }{{3, 4}, {0, 4}, {3, 1}, {1, 2}}

// rvPulkaHands returns the pulka where exactly the seats in earners made
// every hand.
func rvPulkaHands(earners [4]bool) []HandResult {
	hands := make([]HandResult, 4)
	for h := range hands {
		hands[h].Tricks = rvTricks[h]
		hands[h].Bids = rvTricks[h]
	}
	for s, e := range earners {
		if !e {
			hands[rvMiss[s].hand].Bids[s] = rvMiss[s].bid
		}
	}
	return hands
}

// Premia and moshla with 0, 1, 2, 3 or 4 earners, literal numbers for the
// defaults (premia, moshla, rest docked).
func TestReview_PremiaAndMoshla_Defaults(t *testing.T) {
	for _, c := range []struct {
		name    string
		earners [4]bool
		premia  [4]int
		moshla  [4]int
		struck  [4]int
	}{
		{"nobody: no moshla for anyone", [4]bool{}, [4]int{}, [4]int{}, [4]int{-1, -1, -1, -1}},
		{"one: every other player is docked, the earlier of equal bests struck",
			[4]bool{true, false, false, false}, [4]int{250, 0, 0, 0}, [4]int{0, -200, -250, -200}, [4]int{-1, 3, 0, 2}},
		{"one, another seat", [4]bool{false, false, false, true},
			[4]int{0, 0, 0, 200}, [4]int{-250, -200, -250, 0}, [4]int{1, 3, 0, -1}},
		{"two: rest docked", [4]bool{true, true, false, false},
			[4]int{250, 200, 0, 0}, [4]int{0, 0, -250, -200}, [4]int{-1, -1, 0, 2}},
		{"three: rest docked", [4]bool{true, true, false, true},
			[4]int{250, 200, 0, 200}, [4]int{0, 0, -250, 0}, [4]int{-1, -1, 0, -1}},
		{"four: nobody left to dock", [4]bool{true, true, true, true},
			[4]int{250, 200, 250, 200}, [4]int{}, [4]int{-1, -1, -1, -1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := DefaultSettings()
			s.Variant = classic.Nines
			sheet := mustBuild(t, s, rvPulkaHands(c.earners))
			p := sheet.Pulkas[0]
			if p.Premia != c.premia || p.Moshla != c.moshla || p.Struck != c.struck {
				t.Fatalf("premia %v moshla %v struck %v, want %v %v %v", p.Premia, p.Moshla, p.Struck, c.premia, c.moshla, c.struck)
			}
			for seat := range Seats {
				if p.Total[seat] != p.Sum[seat]+c.premia[seat]+c.moshla[seat] {
					t.Fatalf("seat %d total %d = sum %d + premia + moshla?", seat, p.Total[seat], p.Sum[seat])
				}
				if p.OnCourse[seat] != c.earners[seat] {
					t.Fatalf("seat %d on course %v, earned %v", seat, p.OnCourse[seat], c.earners[seat])
				}
				for h, row := range sheet.Hands {
					if row.Struck[seat] != (h == c.struck[seat]) {
						t.Fatalf("hand %d seat %d struck %v, want the pulka's struck %d", h, seat, row.Struck[seat], c.struck[seat])
					}
				}
			}
		})
	}
}

// Every subset of earners under every combination of premia, moshla and
// restDocked, against the second reading.
func TestReview_PremiaAndMoshla_EverySetting(t *testing.T) {
	for mask := range 16 {
		var earners [4]bool
		for s := range Seats {
			earners[s] = mask&(1<<s) != 0
		}
		hands := rvPulkaHands(earners)
		for _, premia := range []bool{true, false} {
			for _, moshla := range []bool{true, false} {
				for _, docked := range []bool{true, false} {
					s := Settings{Variant: classic.Nines, Khishti: KhishtiPerCard, Premia: premia, Moshla: moshla, RestDocked: docked}
					name := fmt.Sprintf("earners %v premia %v moshla %v restDocked %v", earners, premia, moshla, docked)
					sheet := mustBuild(t, s, hands)
					want := rvRef(s, hands)
					rvCompare(t, name, sheet, want)
				}
			}
		}
	}
}

// The struck hand: the earlier of equal bests; it keeps its points, and the
// moshla is a separate entry. A khishti is never the best hand: a player
// whose every hand was a khishti has no ordinary hand and nothing to strike
// (seat 1), and a khishti never outranks a poor missed hand (seat 2).
func TestReview_StruckHandAndKhishtiNeverBest(t *testing.T) {
	s := DefaultSettings()
	s.Variant = classic.Nines
	s.Khishti = Khishti100
	hands := []HandResult{
		{Bids: [4]int{2, 5, 3, 5}, Tricks: [4]int{2, 0, 2, 5}}, // 150, khishti, 20, 300
		{Bids: [4]int{3, 4, 1, 2}, Tricks: [4]int{3, 0, 0, 6}}, // 200, khishti, khishti, 60
		{Bids: [4]int{1, 1, 1, 2}, Tricks: [4]int{1, 0, 2, 6}}, // 100, khishti, 20, 60
		{Bids: [4]int{3, 2, 2, 1}, Tricks: [4]int{3, 0, 0, 6}}, // 200, khishti, khishti, 60
	}
	sheet := mustBuild(t, s, hands)
	p := sheet.Pulkas[0]
	if p.Premia != [4]int{200, 0, 0, 0} {
		t.Fatalf("premia %v, want the best hand once (200, twice on the sheet)", p.Premia)
	}
	if p.Moshla != [4]int{0, 0, -20, -300} || p.Struck != [4]int{-1, -1, 0, 0} {
		t.Fatalf("moshla %v struck %v", p.Moshla, p.Struck)
	}
	if p.Sum != [4]int{650, -400, -160, 480} || p.Total != [4]int{850, -400, -180, 180} {
		t.Fatalf("sum %v total %v", p.Sum, p.Total)
	}
	if sheet.Hands[0].Points[2] != 20 || !sheet.Hands[0].Struck[2] || sheet.Hands[2].Struck[2] ||
		sheet.Hands[0].Points[3] != 300 || !sheet.Hands[0].Struck[3] {
		t.Fatalf("the struck hands keep their points and only the earlier 20 is struck: %+v", sheet.Hands)
	}
}

// The seed example of 000/001/004, pulka II as nine-card hands: Giorgi 150,
// 200, 100, 250 all made → 700, premia +250, 950 (9.5); Nika 100, 20, 300,
// 50 → 470, moshla −300, 170 (1.7). Ana and Levan miss hands and lose their
// own best. Every hand has a missed bid, as the dealer restriction demands.
func TestReview_SeedPulkaII(t *testing.T) {
	s := DefaultSettings()
	s.Variant = classic.Nines
	hands := []HandResult{
		{Bids: [4]int{2, 2, 3, 1}, Tricks: [4]int{2, 3, 3, 1}}, // 150 30  200 100
		{Bids: [4]int{3, 1, 2, 4}, Tricks: [4]int{3, 2, 2, 2}}, // 200 20  150 20
		{Bids: [4]int{1, 2, 2, 5}, Tricks: [4]int{1, 2, 1, 5}}, // 100 150 10  300
		{Bids: [4]int{4, 3, 1, 0}, Tricks: [4]int{4, 3, 2, 0}}, // 250 200 20  50
	}
	sheet := mustBuild(t, s, hands)
	p := sheet.Pulkas[0]
	want := struct{ sum, premia, moshla, total, struck [4]int }{
		sum:    [4]int{700, 400, 380, 470},
		premia: [4]int{250, 0, 0, 0},
		moshla: [4]int{0, -200, -200, -300},
		total:  [4]int{950, 200, 180, 170},
		struck: [4]int{-1, 3, 0, 2},
	}
	got := struct{ sum, premia, moshla, total, struck [4]int }{p.Sum, p.Premia, p.Moshla, p.Total, p.Struck}
	if got != want {
		t.Fatalf("pulka %+v, want %+v", got, want)
	}
	if FormatPoints(p.Total[0]) != "9.5" || FormatPoints(p.Total[3]) != "1.7" {
		t.Fatalf("written %s and %s, want 9.5 and 1.7", FormatPoints(p.Total[0]), FormatPoints(p.Total[3]))
	}
}

// Seed 000, the first three hands with the per-card khishti: 210 (2.1),
// 250 (2.5), −100 (−1), −40 (−0.4); only Ana is still on course.
func TestReview_SeedFirstThreeHands(t *testing.T) {
	s := DefaultSettings()
	s.Khishti = KhishtiPerCard
	sheet := mustBuild(t, s, []HandResult{
		{Bids: [4]int{1, 0, 0, 1}, Tricks: [4]int{1, 0, 0, 0}},
		{Bids: [4]int{0, 1, 2, 0}, Tricks: [4]int{1, 1, 0, 0}},
		{Bids: [4]int{1, 1, 0, 2}, Tricks: [4]int{1, 1, 0, 1}},
	})
	wantTotal := [4]string{"2.1", "2.5", "-1", "-0.4"}
	for seat := range Seats {
		if got := FormatPoints(sheet.Total[seat]); got != wantTotal[seat] {
			t.Fatalf("seat %d total %s, want %s", seat, got, wantTotal[seat])
		}
	}
	if sheet.OnCourse != [4]bool{false, true, false, false} {
		t.Fatalf("on course %v, want only Ana", sheet.OnCourse)
	}
	if sheet.Hands[0].Result[3] != ResultKhishti || sheet.Hands[1].Result[0] != ResultMissed || sheet.Hands[1].Result[3] != ResultMade {
		t.Fatalf("results %+v", sheet.Hands)
	}
}

// Pulka totals and the grand total are written divided by 100; the counting
// stays in whole points.
func TestReview_HundredNotation(t *testing.T) {
	for _, c := range []struct {
		points int
		text   string
	}{
		{950, "9.5"}, {170, "1.7"}, {750, "7.5"}, {470, "4.7"}, {900, "9"}, {-200, "-2"}, {-40, "-0.4"},
		{50, "0.5"}, {0, "0"}, {2380, "23.8"}, {-360, "-3.6"}, {10, "0.1"}, {-10, "-0.1"}, {1430, "14.3"},
	} {
		if got := FormatPoints(c.points); got != c.text {
			t.Errorf("FormatPoints(%d) = %q, want %q", c.points, got, c.text)
		}
		if back, err := ParsePoints(c.text); err != nil || back != c.points {
			t.Errorf("ParsePoints(%q) = %d, %v", c.text, back, err)
		}
	}
}

// The colour of a player's total: green (on course) while every hand of
// the current pulka was made, red once one is missed; a new pulka starts
// green. With the premia off nobody is on course, and nobody once the game
// is over (both decisions of the package, see docs/rules-review.md).
func TestReview_OnCourseFlags(t *testing.T) {
	s := DefaultSettings()
	s.Variant = classic.Nines
	hands := rvPulkaHands([4]bool{true, false, false, false}) // pulka I: only seat 0 makes every hand
	for _, c := range []struct {
		name   string
		played int
		premia bool
		want   [4]bool
	}{
		{"before any hand: everybody", 0, true, [4]bool{true, true, true, true}},
		{"after hand 1: seat 1 missed it", 1, true, [4]bool{true, false, true, true}},
		{"after hand 2: seat 3 missed too", 2, true, [4]bool{true, false, true, false}},
		{"after hand 4: the pulka is over, the next one starts green", 4, true, [4]bool{true, true, true, true}},
		{"after hand 5: seats 0 and 3 missed the first hand of pulka II", 5, true, [4]bool{false, true, true, false}},
		{"premia off: nobody", 2, false, [4]bool{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := append([]HandResult(nil), hands...)
			// Pulka II, hand 1: seat 0 bids 3 and takes 2, seat 3 bids 1 and takes 2.
			in = append(in, HandResult{Bids: [4]int{3, 3, 2, 1}, Tricks: [4]int{2, 3, 2, 2}})
			ss := s
			ss.Premia = c.premia
			sheet := mustBuild(t, ss, in[:c.played])
			if sheet.OnCourse != c.want {
				t.Fatalf("on course %v, want %v", sheet.OnCourse, c.want)
			}
		})
	}
	// Game over: every hand played.
	var all []HandResult
	for range classic.Nines.Hands() / 4 {
		all = append(all, hands...)
	}
	sheet := mustBuild(t, s, all)
	if !sheet.Finished || sheet.OnCourse != [4]bool{} {
		t.Fatalf("finished %v on course %v", sheet.Finished, sheet.OnCourse)
	}
	for _, p := range sheet.Pulkas {
		if p.OnCourse != [4]bool{true, false, false, false} {
			t.Fatalf("pulka %d on course %v: it records who earned the premia", p.Index+1, p.OnCourse)
		}
	}
}

// Whole games from the rules engine: every result it produces is accepted,
// the sheet agrees with the second reading, and four premia never happen
// because the dealer restriction keeps the bids from totalling the cards.
func TestReview_EngineGamesMakeValidSheets(t *testing.T) {
	games := 60
	if testing.Short() {
		games = 10
	}
	r := rand.New(rand.NewPCG(31, 41))
	var premias, moshlas int
	for i := range games {
		v := classic.Variant(i % 2)
		g, err := classic.New(uint64(3000+i), classic.Settings{Variant: v})
		if err != nil {
			t.Fatal(err)
		}
		var players [4]classic.Player
		for s := range Seats {
			if (i+s)%2 == 0 {
				players[s] = classic.Bot{}
			} else {
				players[s] = classic.NewRandomBot(uint64(i*4 + s))
			}
		}
		for !g.Over() {
			m, _ := players[g.ToMove()].Choose(g, g.ToMove())
			if _, err := g.Apply(m, nil); err != nil {
				t.Fatal(err)
			}
		}
		var hands []HandResult
		for h, res := range g.HandResults() {
			if res.Cards != v.CardsInHand(h) {
				t.Fatalf("hand %d: engine dealt %d, the sheet expects %d", h, res.Cards, v.CardsInHand(h))
			}
			hands = append(hands, HandResult{Bids: res.Bids, Tricks: res.Tricks})
		}
		s := Settings{Variant: v, Khishti: Khishti(r.IntN(4)), Premia: r.IntN(4) > 0, Moshla: r.IntN(4) > 0, RestDocked: r.IntN(2) == 0}
		sheet, err := Build(s, hands)
		if err != nil {
			t.Fatalf("game %d: %v", i, err)
		}
		if !sheet.Finished || sheet.Next != v.Hands() {
			t.Fatalf("game %d: finished %v next %d", i, sheet.Finished, sheet.Next)
		}
		rvCompare(t, fmt.Sprintf("game %d", i), sheet, rvRef(s, hands))
		for _, p := range sheet.Pulkas {
			earned := 0
			for seat := range Seats {
				if p.Premia[seat] > 0 {
					earned++
					premias++
				}
				if p.Moshla[seat] < 0 {
					moshlas++
				}
			}
			if earned == Seats {
				t.Fatalf("game %d pulka %d: four premia in a real game", i, p.Index+1)
			}
		}
	}
	if premias == 0 || moshlas == 0 {
		t.Fatalf("%d premias and %d moshlas in %d games: the test saw nothing", premias, moshlas, games)
	}
}

// Random inputs (many made bids, so premia, moshla and ties occur) against
// the second reading, for every setting.
func TestReview_RandomSheetsAgreeWithTheRulesReading(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 8))
	for i := range 3000 {
		s, hands := randomGame(r)
		sheet, err := Build(s, hands)
		if err != nil {
			t.Fatal(err)
		}
		rvCompare(t, fmt.Sprintf("case %d %+v", i, s), sheet, rvRef(s, hands))
	}
}

// rvCompare checks the sheet against the reference.
func rvCompare(t *testing.T, name string, got Sheet, want rvSheet) {
	t.Helper()
	if len(got.Hands) != len(want.points) || len(got.Pulkas) != len(want.pulkas) {
		t.Fatalf("%s: %d hands %d pulkas, want %d %d", name, len(got.Hands), len(got.Pulkas), len(want.points), len(want.pulkas))
	}
	for h, row := range got.Hands {
		if row.Points != want.points[h] || row.Struck != want.struck[h] {
			t.Fatalf("%s hand %d: points %v struck %v, want %v %v", name, h, row.Points, row.Struck, want.points[h], want.struck[h])
		}
	}
	for i, p := range got.Pulkas {
		w := want.pulkas[i]
		if p.Premia != w.premia || p.Moshla != w.moshla || p.Total != w.total || p.Struck != w.struckAt {
			t.Fatalf("%s pulka %d: premia %v moshla %v total %v struck %v, want %v %v %v %v",
				name, i+1, p.Premia, p.Moshla, p.Total, p.Struck, w.premia, w.moshla, w.total, w.struckAt)
		}
	}
	if got.Total != want.total {
		t.Fatalf("%s: sul %v, want %v", name, got.Total, want.total)
	}
}

type rvSheet struct {
	points [][4]int
	struck [][4]bool
	pulkas []rvPulkaTotals
	total  [4]int
}

type rvPulkaTotals struct {
	premia, moshla, total, struckAt [4]int
}

// rvRefHand is the hand table of rules.md.
func rvRefHand(n, b, t int, k Khishti) (int, Result) {
	if t == b {
		if b == n {
			return 100 * n, ResultMade
		}
		return 50 * (b + 1), ResultMade
	}
	if b >= 1 && t == 0 {
		pen := map[Khishti]int{Khishti200: 200, Khishti500: 500, Khishti100: 100, KhishtiPerCard: 100 * n}[k]
		return -pen, ResultKhishti
	}
	return 10 * t, ResultMissed
}

// rvRef is the second reading of "Premia and moshla": per finished pulka,
// the earners are the seats that made every hand (with the premia on); the
// premia is the best ordinary hand; the moshla, if the moshla is on, goes to
// the non-earners when exactly one earned it, or two or three did and the
// rest are docked; it is minus the best ordinary hand (a khishti is never
// one), and the earliest hand with that score is struck.
func rvRef(s Settings, hands []HandResult) rvSheet {
	v := s.Variant
	out := rvSheet{}
	results := make([][4]Result, len(hands))
	for h, in := range hands {
		var pts [4]int
		for seat := range Seats {
			pts[seat], results[h][seat] = rvRefHand(v.CardsInHand(h), in.Bids[seat], in.Tricks[seat], s.Khishti)
		}
		out.points = append(out.points, pts)
		out.struck = append(out.struck, [4]bool{})
	}
	for p := 0; len(hands) > 0 && p <= v.PulkaOf(len(hands)-1); p++ {
		first, end := v.PulkaHands(p)
		finished := len(hands) >= end
		end = min(end, len(hands))
		pt := rvPulkaTotals{struckAt: [4]int{-1, -1, -1, -1}}
		var earners []int
		var best, bestAt [4]int
		for seat := range Seats {
			made := true
			bestAt[seat] = -1
			for h := first; h < end; h++ {
				pt.total[seat] += out.points[h][seat]
				if results[h][seat] != ResultMade {
					made = false
				}
				if results[h][seat] != ResultKhishti && (bestAt[seat] < 0 || out.points[h][seat] > best[seat]) {
					best[seat], bestAt[seat] = out.points[h][seat], h
				}
			}
			if finished && made && s.Premia {
				earners = append(earners, seat)
				pt.premia[seat] = best[seat]
			}
		}
		dock := s.Moshla && (len(earners) == 1 || ((len(earners) == 2 || len(earners) == 3) && s.RestDocked))
		for seat := range Seats {
			earned := false
			for _, e := range earners {
				earned = earned || e == seat
			}
			if dock && !earned && bestAt[seat] >= 0 {
				pt.moshla[seat] = -best[seat]
				pt.struckAt[seat] = bestAt[seat]
				out.struck[bestAt[seat]][seat] = true
			}
			pt.total[seat] += pt.premia[seat] + pt.moshla[seat]
			out.total[seat] += pt.total[seat]
		}
		out.pulkas = append(out.pulkas, pt)
	}
	return out
}
