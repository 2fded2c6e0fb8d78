package scoring

import (
	"errors"
	"strings"
	"testing"

	"github.com/pulka/pulka/pkg/classic"
)

func hr(bids, tricks [4]int) HandResult { return HandResult{Bids: bids, Tricks: tricks} }

// seedGame is pulka I and II of seeds 000/001, seats Giorgi, Ana, Levan, Nika,
// played with the per-card khishti. Hands 1-3 are the seed's; the rest are
// chosen so that pulka II gives Giorgi 150, 200, 100, 250 (all made) and Nika
// 100, 20 (missed), 300, 50, as in the seed. No bids add up to the cards dealt,
// so the dealer restriction holds whoever dealt.
var seedGame = []HandResult{
	hr([4]int{1, 0, 0, 1}, [4]int{1, 0, 0, 0}), // 1: 100, 50, 50, -100
	hr([4]int{0, 1, 2, 0}, [4]int{1, 1, 0, 0}), // 2: 10, 100, -200, 50
	hr([4]int{1, 1, 0, 2}, [4]int{1, 1, 0, 1}), // 3: 100, 100, 50, 10
	hr([4]int{1, 1, 1, 0}, [4]int{2, 0, 1, 1}), // 4: 20, -400, 100, 10
	hr([4]int{2, 1, 0, 1}, [4]int{2, 1, 1, 1}), // 5: 150, 100, 10, 100
	hr([4]int{0, 2, 2, 1}, [4]int{0, 2, 3, 1}), // 6: 50, 150, 30, 100
	hr([4]int{3, 0, 2, 1}, [4]int{3, 1, 2, 1}), // 7: 200, 10, 150, 100
	hr([4]int{8, 0, 0, 1}, [4]int{8, 0, 0, 0}), // 8: 800, 50, 50, -800
	hr([4]int{2, 3, 2, 1}, [4]int{2, 3, 3, 1}), // 9: 150, 200, 30, 100
	hr([4]int{3, 2, 2, 3}, [4]int{3, 2, 2, 2}), // 10: 200, 150, 150, 20
	hr([4]int{1, 1, 1, 5}, [4]int{1, 2, 1, 5}), // 11: 100, 20, 100, 300
	hr([4]int{4, 3, 3, 0}, [4]int{4, 3, 2, 0}), // 12: 250, 200, 20, 50
}

func perCard() Settings {
	s := DefaultSettings()
	s.Khishti = KhishtiPerCard
	return s
}

func ninesWith(edit func(*Settings)) Settings {
	s := DefaultSettings()
	s.Variant = classic.Nines
	if edit != nil {
		edit(&s)
	}
	return s
}

func mustBuild(t *testing.T, s Settings, hands []HandResult) Sheet {
	t.Helper()
	sheet, err := Build(s, hands)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return sheet
}

type wantPulka struct {
	premia, moshla, struck, total [4]int
}

func checkPulka(t *testing.T, got PulkaTotals, want wantPulka) {
	t.Helper()
	if !got.Finished {
		t.Errorf("pulka %d not finished", got.Index+1)
	}
	if got.Premia != want.premia {
		t.Errorf("premia %v, want %v", got.Premia, want.premia)
	}
	if got.Moshla != want.moshla {
		t.Errorf("moshla %v, want %v", got.Moshla, want.moshla)
	}
	if got.Struck != want.struck {
		t.Errorf("struck %v, want %v", got.Struck, want.struck)
	}
	if got.Total != want.total {
		t.Errorf("total %v, want %v", got.Total, want.total)
	}
}

func TestSheet_SeedPulkaI_FirstThreeHandsWithPerCardKhishti(t *testing.T) {
	sheet := mustBuild(t, perCard(), seedGame[:3])
	wantPoints := [][4]int{{100, 50, 50, -100}, {10, 100, -200, 50}, {100, 100, 50, 10}}
	wantResult := [][4]Result{
		{ResultMade, ResultMade, ResultMade, ResultKhishti},
		{ResultMissed, ResultMade, ResultKhishti, ResultMade},
		{ResultMade, ResultMade, ResultMade, ResultMissed},
	}
	for h, row := range sheet.Hands {
		if row.Cards != h+1 || row.Points != wantPoints[h] || row.Result != wantResult[h] {
			t.Errorf("hand %d: %d cards %v %v, want %d cards %v %v",
				h+1, row.Cards, row.Points, row.Result, h+1, wantPoints[h], wantResult[h])
		}
	}
	if want := [4]int{210, 250, -100, -40}; sheet.Total != want {
		t.Errorf("total %v, want %v", sheet.Total, want)
	}
	written := []string{"2.1", "2.5", "-1", "-0.4"}
	for seat, w := range written {
		if got := FormatPoints(sheet.Total[seat]); got != w {
			t.Errorf("seat %d written %q, want %q", seat, got, w)
		}
	}
	// Ana made all three hands, her pass included: she alone is on course.
	if want := [4]bool{false, true, false, false}; sheet.OnCourse != want || sheet.Pulkas[0].OnCourse != want {
		t.Errorf("on course %v / %v, want %v", sheet.OnCourse, sheet.Pulkas[0].OnCourse, want)
	}
	p := sheet.Pulkas[0]
	if len(sheet.Pulkas) != 1 || p.Finished || p.Played != 3 || p.Size != 8 || p.Premia != [4]int{} || p.Moshla != [4]int{} {
		t.Errorf("pulka I = %+v, want unfinished, 3 of 8 played, no premia or moshla", p)
	}
	if sheet.Next != 3 || sheet.Finished {
		t.Errorf("next %d finished %v, want 3 false", sheet.Next, sheet.Finished)
	}
}

func TestSheet_SeedPulkaII_OnePremiaDocksEveryoneElse(t *testing.T) {
	sheet := mustBuild(t, perCard(), seedGame)
	if len(sheet.Pulkas) != 2 {
		t.Fatalf("%d pulkas, want 2", len(sheet.Pulkas))
	}
	// Pulka I: everybody missed a hand or had a khishti, so there is only
	// the sum of the hands.
	checkPulka(t, sheet.Pulkas[0], wantPulka{
		struck: [4]int{-1, -1, -1, -1},
		total:  [4]int{1430, 160, 240, -530},
	})
	// Pulka II: Giorgi 700 + 250 = 950; Nika 470 - 300 = 170; Ana's best,
	// 200, came twice and the earlier (hand 9) is struck; Levan's 150.
	checkPulka(t, sheet.Pulkas[1], wantPulka{
		premia: [4]int{250, 0, 0, 0},
		moshla: [4]int{0, -200, -150, -300},
		struck: [4]int{-1, 8, 9, 10},
		total:  [4]int{950, 370, 150, 170},
	})
	if got := sheet.Pulkas[1].Sum; got != [4]int{700, 570, 300, 470} {
		t.Errorf("pulka II sum %v", got)
	}
	if FormatPoints(sheet.Pulkas[1].Total[0]) != "9.5" || FormatPoints(sheet.Pulkas[1].Total[3]) != "1.7" {
		t.Errorf("pulka II written %s and %s, want 9.5 and 1.7",
			FormatPoints(sheet.Pulkas[1].Total[0]), FormatPoints(sheet.Pulkas[1].Total[3]))
	}
	if want := [4]int{2380, 530, 390, -360}; sheet.Total != want {
		t.Errorf("grand total %v, want %v", sheet.Total, want)
	}
	for h, row := range sheet.Hands {
		want := [4]bool{false, h == 8, h == 9, h == 10}
		if row.Struck != want {
			t.Errorf("hand %d struck %v, want %v", h+1, row.Struck, want)
		}
	}
	// Pulka III has not started: everybody starts green.
	if sheet.OnCourse != [4]bool{true, true, true, true} {
		t.Errorf("on course %v at the start of pulka III", sheet.OnCourse)
	}
}

// Two premia earners: s0 (200,150,50,250) and s1 (200,250,300,50).
var twoPremia = []HandResult{
	hr([4]int{3, 3, 1, 1}, [4]int{3, 3, 2, 1}), // 200, 200, 20, 100
	hr([4]int{2, 4, 2, 2}, [4]int{2, 4, 1, 2}), // 150, 250, 10, 150
	hr([4]int{0, 5, 2, 1}, [4]int{0, 5, 2, 2}), // 50, 300, 150, 20
	hr([4]int{4, 0, 2, 1}, [4]int{4, 0, 4, 1}), // 250, 50, 40, 100
}

func TestMoshla_TwoPremia_RestDockedDocksTheOthers(t *testing.T) {
	sheet := mustBuild(t, ninesWith(nil), twoPremia)
	checkPulka(t, sheet.Pulkas[0], wantPulka{
		premia: [4]int{250, 300, 0, 0},
		moshla: [4]int{0, 0, -150, -150},
		struck: [4]int{-1, -1, 2, 1},
		total:  [4]int{900, 1100, 70, 220},
	})
}

func TestMoshla_TwoPremia_RestNotDockedSparesThem(t *testing.T) {
	sheet := mustBuild(t, ninesWith(func(s *Settings) { s.RestDocked = false }), twoPremia)
	checkPulka(t, sheet.Pulkas[0], wantPulka{
		premia: [4]int{250, 300, 0, 0},
		struck: [4]int{-1, -1, -1, -1},
		total:  [4]int{900, 1100, 220, 370},
	})
}

// Three premia earners; s3 took 10, 10, 20, 20.
var threePremia = []HandResult{
	hr([4]int{3, 3, 2, 0}, [4]int{3, 3, 2, 1}), // 200, 200, 150, 10
	hr([4]int{2, 4, 2, 2}, [4]int{2, 4, 2, 1}), // 150, 250, 150, 10
	hr([4]int{0, 5, 2, 1}, [4]int{0, 5, 2, 2}), // 50, 300, 150, 20
	hr([4]int{4, 0, 3, 1}, [4]int{4, 0, 3, 2}), // 250, 50, 200, 20
}

func TestMoshla_ThreePremia_RestDockedFollowsTheSetting(t *testing.T) {
	docked := mustBuild(t, ninesWith(nil), threePremia)
	checkPulka(t, docked.Pulkas[0], wantPulka{
		premia: [4]int{250, 300, 200, 0},
		moshla: [4]int{0, 0, 0, -20},
		struck: [4]int{-1, -1, -1, 2}, // the earlier of two 20s
		total:  [4]int{900, 1100, 850, 40},
	})
	spared := mustBuild(t, ninesWith(func(s *Settings) { s.RestDocked = false }), threePremia)
	checkPulka(t, spared.Pulkas[0], wantPulka{
		premia: [4]int{250, 300, 200, 0},
		struck: [4]int{-1, -1, -1, -1},
		total:  [4]int{900, 1100, 850, 60},
	})
}

// Four bids that add up to the cards break the dealer restriction, so four
// premia cannot happen in a real game; the sheet still follows the rule.
func TestMoshla_FourPremia_NobodyDocked(t *testing.T) {
	four := []HandResult{
		hr([4]int{3, 3, 2, 1}, [4]int{3, 3, 2, 1}),
		hr([4]int{2, 4, 2, 1}, [4]int{2, 4, 2, 1}),
		hr([4]int{0, 5, 2, 2}, [4]int{0, 5, 2, 2}),
		hr([4]int{4, 0, 3, 2}, [4]int{4, 0, 3, 2}),
	}
	sheet := mustBuild(t, ninesWith(nil), four)
	checkPulka(t, sheet.Pulkas[0], wantPulka{
		premia: [4]int{250, 300, 200, 150},
		struck: [4]int{-1, -1, -1, -1},
		total:  [4]int{900, 1100, 850, 650},
	})
}

func TestPremia_Off_NobodyEarnsItAndNobodyIsDocked(t *testing.T) {
	sheet := mustBuild(t, ninesWith(func(s *Settings) { s.Premia = false }), twoPremia)
	checkPulka(t, sheet.Pulkas[0], wantPulka{
		struck: [4]int{-1, -1, -1, -1},
		total:  [4]int{650, 800, 220, 370},
	})
	if sheet.Pulkas[0].OnCourse != [4]bool{} || sheet.OnCourse != [4]bool{} {
		t.Errorf("on course %v / %v with the premia off", sheet.Pulkas[0].OnCourse, sheet.OnCourse)
	}
}

func TestMoshla_Off_PremiaStillPaid(t *testing.T) {
	sheet := mustBuild(t, ninesWith(func(s *Settings) { s.Moshla = false }), twoPremia)
	checkPulka(t, sheet.Pulkas[0], wantPulka{
		premia: [4]int{250, 300, 0, 0},
		struck: [4]int{-1, -1, -1, -1},
		total:  [4]int{900, 1100, 220, 370},
	})
}

func TestPremia_BestScoreTwiceIsAddedOnce_AndEarlierEqualBestIsStruck(t *testing.T) {
	hands := []HandResult{
		hr([4]int{4, 2, 1, 1}, [4]int{4, 3, 1, 1}), // 250, 30, 100, 100
		hr([4]int{4, 2, 2, 2}, [4]int{4, 2, 1, 2}), // 250, 150, 10, 150
		hr([4]int{1, 3, 3, 3}, [4]int{1, 3, 3, 2}), // 100, 200, 200, 20
		hr([4]int{0, 4, 4, 0}, [4]int{0, 4, 4, 1}), // 50, 250, 250, 10
	}
	sheet := mustBuild(t, ninesWith(nil), hands)
	checkPulka(t, sheet.Pulkas[0], wantPulka{
		premia: [4]int{250, 0, 0, 0},
		moshla: [4]int{0, -250, -250, -150},
		struck: [4]int{-1, 3, 3, 1},
		total:  [4]int{900, 380, 310, 130},
	})
}

func TestPremia_MadePassCountsAsMade(t *testing.T) {
	// s0 passes and makes it in every hand: 50 each, premia 50.
	hands := []HandResult{
		hr([4]int{0, 3, 3, 2}, [4]int{0, 4, 3, 2}),
		hr([4]int{0, 3, 3, 2}, [4]int{0, 4, 3, 2}),
		hr([4]int{0, 3, 3, 2}, [4]int{0, 4, 3, 2}),
		hr([4]int{0, 3, 3, 2}, [4]int{0, 4, 3, 2}),
	}
	sheet := mustBuild(t, ninesWith(nil), hands)
	// s2 and s3 also made every hand: three earners, the rest docked.
	checkPulka(t, sheet.Pulkas[0], wantPulka{
		premia: [4]int{50, 0, 200, 150},
		moshla: [4]int{0, -40, 0, 0},
		struck: [4]int{-1, 0, -1, -1},
		total:  [4]int{250, 120, 1000, 750},
	})
}

func TestMoshla_KhishtiIsNeverTheBestHand(t *testing.T) {
	hands := []HandResult{
		hr([4]int{3, 3, 1, 1}, [4]int{3, 6, 0, 0}), // 200, 60, -900, -900
		hr([4]int{2, 4, 2, 2}, [4]int{2, 4, 3, 0}), // 150, 250, 30, -900
		hr([4]int{0, 5, 2, 1}, [4]int{0, 5, 4, 0}), // 50, 300, 40, -900
		hr([4]int{4, 0, 2, 1}, [4]int{4, 1, 4, 0}), // 250, 10, 40, -900
	}
	sheet := mustBuild(t, ninesWith(func(s *Settings) { s.Khishti = KhishtiPerCard }), hands)
	// s2's best ordinary hand is 40 (the earlier, hand 3), whatever the
	// khishti; s3 had nothing but khishti: nothing to strike, no moshla.
	checkPulka(t, sheet.Pulkas[0], wantPulka{
		premia: [4]int{250, 0, 0, 0},
		moshla: [4]int{0, -300, -40, 0},
		struck: [4]int{-1, 2, 2, -1},
		total:  [4]int{900, 320, -830, -3600},
	})
}

func TestPulka_UnfinishedHasNoPremiaOrMoshla(t *testing.T) {
	sheet := mustBuild(t, ninesWith(nil), twoPremia[:3])
	p := sheet.Pulkas[0]
	if p.Finished || p.Premia != [4]int{} || p.Moshla != [4]int{} || p.Struck != [4]int{-1, -1, -1, -1} {
		t.Errorf("unfinished pulka = %+v", p)
	}
	if want := [4]bool{true, true, false, false}; p.OnCourse != want || sheet.OnCourse != want {
		t.Errorf("on course %v / %v, want %v", p.OnCourse, sheet.OnCourse, want)
	}
	if p.Total != [4]int{400, 750, 180, 270} || sheet.Total != p.Total {
		t.Errorf("totals %v / %v", p.Total, sheet.Total)
	}
}

func TestSheet_EmptyGame(t *testing.T) {
	sheet := mustBuild(t, DefaultSettings(), nil)
	if len(sheet.Hands) != 0 || len(sheet.Pulkas) != 0 || sheet.Hands == nil || sheet.Pulkas == nil {
		t.Errorf("empty sheet has %d hands, %d pulkas (nil slices are written as null)", len(sheet.Hands), len(sheet.Pulkas))
	}
	if sheet.Next != 0 || sheet.Finished || sheet.OnCourse != [4]bool{true, true, true, true} {
		t.Errorf("empty sheet: next %d finished %v on course %v", sheet.Next, sheet.Finished, sheet.OnCourse)
	}
}

func TestSheet_WholeGameIsFinished(t *testing.T) {
	hands := make([]HandResult, 0, 16)
	for range 4 {
		hands = append(hands, twoPremia...)
	}
	sheet := mustBuild(t, ninesWith(nil), hands)
	if !sheet.Finished || sheet.Next != 16 || len(sheet.Pulkas) != 4 {
		t.Fatalf("finished %v next %d pulkas %d", sheet.Finished, sheet.Next, len(sheet.Pulkas))
	}
	if want := [4]int{3600, 4400, 280, 880}; sheet.Total != want {
		t.Errorf("total %v, want 4 × %v", sheet.Total, [4]int{900, 1100, 70, 220})
	}
	if sheet.OnCourse != [4]bool{} {
		t.Errorf("on course %v after the last hand", sheet.OnCourse)
	}
	for _, p := range sheet.Pulkas {
		if p.Struck != [4]int{-1, -1, p.First + 2, p.First + 1} {
			t.Errorf("pulka %d struck %v, want indexes into the whole sheet", p.Index+1, p.Struck)
		}
	}
}

func TestBuild_RejectsBadHandsNamingTheHand(t *testing.T) {
	good := hr([4]int{1, 0, 0, 1}, [4]int{1, 0, 0, 0})
	cases := []struct {
		name     string
		settings Settings
		hands    []HandResult
		wantErr  error
		wantHand int // 0-based; -1 for errors that are not about a hand
		wantText string
	}{
		{"bid above the cards", DefaultSettings(), []HandResult{good, hr([4]int{3, 0, 0, 0}, [4]int{1, 1, 0, 0})}, ErrBid, 1, "hand 2: seat 1 bid 3"},
		{"negative bid", DefaultSettings(), []HandResult{hr([4]int{0, -1, 0, 0}, [4]int{1, 0, 0, 0})}, ErrBid, 0, "seat 2 bid -1"},
		{"tricks above the cards", DefaultSettings(), []HandResult{good, hr([4]int{0, 0, 0, 0}, [4]int{3, -1, 0, 0})}, ErrTricks, 1, "seat 1 took 3"},
		{"negative tricks", DefaultSettings(), []HandResult{hr([4]int{0, 0, 0, 0}, [4]int{2, -1, 0, 0})}, ErrTricks, 0, "seat 1 took 2"},
		{"tricks short of the cards", DefaultSettings(), []HandResult{good, good, good}, ErrTrickSum, 1, "add up to 1, want 2"},
		{"tricks over the cards", DefaultSettings(), []HandResult{hr([4]int{0, 0, 0, 0}, [4]int{1, 1, 0, 0})}, ErrTrickSum, 0, "want 1"},
		{"a 25th hand", DefaultSettings(), make([]HandResult, 25), ErrTooManyHands, 24, "25 hands given, standard has 24"},
		{"a 17th nines hand", ninesWith(nil), make([]HandResult, 17), ErrTooManyHands, 16, "nines has 16"},
		{"unknown variant", Settings{Variant: 7}, nil, ErrSettings, -1, "variant"},
		{"unknown khishti", Settings{Khishti: 9}, nil, ErrSettings, -1, "khishti"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Build(c.settings, c.hands)
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("error %v, want %v", err, c.wantErr)
			}
			var ie *InputError
			if errors.As(err, &ie) != (c.wantHand >= 0) || (ie != nil && ie.Hand != c.wantHand) {
				t.Errorf("error %#v, want an InputError for hand index %d", err, c.wantHand)
			}
			if !strings.Contains(err.Error(), c.wantText) {
				t.Errorf("error %q does not say %q", err, c.wantText)
			}
		})
	}
}

// The sheet does not know who dealt, so four bids adding up to the cards are
// accepted here; the rules engine refuses them when they are bid.
func TestBuild_DoesNotCheckTheDealerRestriction(t *testing.T) {
	if _, err := Build(DefaultSettings(), []HandResult{hr([4]int{1, 0, 0, 0}, [4]int{1, 0, 0, 0})}); err != nil {
		t.Errorf("bids totalling the cards rejected: %v", err)
	}
}
