package scoring

import "testing"

type handCase struct {
	name               string
	cards, bid, tricks int
	khishti            Khishti
	wantPoints         int
	wantResult         Result
}

func runHandCases(t *testing.T, cases []handCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, r := HandScore(c.cards, c.bid, c.tricks, c.khishti)
			if p != c.wantPoints || r != c.wantResult {
				t.Errorf("HandScore(cards %d, bid %d, took %d, khishti %s) = %d %s, want %d %s",
					c.cards, c.bid, c.tricks, c.khishti, p, r, c.wantPoints, c.wantResult)
			}
		})
	}
}

func TestHandScore_AllTricksBidAndTaken_100PerCard(t *testing.T) {
	runHandCases(t, []handCase{
		{"1 of 1 = 100", 1, 1, 1, Khishti200, 100, ResultMade},
		{"2 of 2 = 200 (not 150)", 2, 2, 2, Khishti200, 200, ResultMade},
		{"4 of 4 = 400 (not 250)", 4, 4, 4, Khishti200, 400, ResultMade},
		{"8 of 8 = 800", 8, 8, 8, Khishti200, 800, ResultMade},
		{"9 of 9 = 900", 9, 9, 9, Khishti200, 900, ResultMade},
	})
}

func TestHandScore_MadeBid_50TimesBidPlusOne(t *testing.T) {
	runHandCases(t, []handCase{
		{"1 of 2 = 100", 2, 1, 1, Khishti200, 100, ResultMade},
		{"2 of 3 = 150", 3, 2, 2, Khishti200, 150, ResultMade},
		{"2 of 9 = 150", 9, 2, 2, Khishti200, 150, ResultMade},
		{"3 of 4 = 200", 4, 3, 3, Khishti200, 200, ResultMade},
		{"8 of 9 = 450", 9, 8, 8, Khishti200, 450, ResultMade},
	})
}

func TestHandScore_MadePass_50(t *testing.T) {
	runHandCases(t, []handCase{
		{"pass in a 1-card hand", 1, 0, 0, Khishti200, 50, ResultMade},
		{"pass in a 9-card hand", 9, 0, 0, KhishtiPerCard, 50, ResultMade},
	})
}

func TestHandScore_MissedBid_10PerTrickTaken(t *testing.T) {
	runHandCases(t, []handCase{
		{"bid 2 took 1 = 10", 9, 2, 1, Khishti200, 10, ResultMissed},
		{"bid 1 took 3 = 30: extra tricks are no bonus", 9, 1, 3, Khishti200, 30, ResultMissed},
		{"failed pass: bid 0 took 1 = 10", 2, 0, 1, Khishti200, 10, ResultMissed},
		{"failed pass: bid 0 took all 9 = 90", 9, 0, 9, Khishti200, 90, ResultMissed},
		{"bid 9 took 8 = 80", 9, 9, 8, KhishtiPerCard, 80, ResultMissed},
	})
}

func TestHandScore_Khishti_PenaltyIsTheTableSetting(t *testing.T) {
	runHandCases(t, []handCase{
		{"200", 9, 3, 0, Khishti200, -200, ResultKhishti},
		{"500", 9, 3, 0, Khishti500, -500, ResultKhishti},
		{"100", 9, 3, 0, Khishti100, -100, ResultKhishti},
		{"per-card in a 2-card hand = -200", 2, 2, 0, KhishtiPerCard, -200, ResultKhishti},
		{"per-card in a 1-card hand = -100", 1, 1, 0, KhishtiPerCard, -100, ResultKhishti},
		{"per-card in a 9-card hand = -900", 9, 1, 0, KhishtiPerCard, -900, ResultKhishti},
		{"fixed 200 ignores the cards", 1, 1, 0, Khishti200, -200, ResultKhishti},
	})
}

// The nine-card values of seed 000, with how the sheet writes them.
func TestHandScore_SeedNineCardMadeBids(t *testing.T) {
	want := []struct {
		points  int
		written string
	}{
		{50, "0.5"}, {100, "1"}, {150, "1.5"}, {200, "2"}, {250, "2.5"},
		{300, "3"}, {350, "3.5"}, {400, "4"}, {450, "4.5"}, {900, "9"},
	}
	for bid, w := range want {
		p, r := HandScore(9, bid, bid, Khishti200)
		if p != w.points || r != ResultMade {
			t.Errorf("%d of 9: %d %s, want %d made", bid, p, r, w.points)
		}
		if got := FormatPoints(p); got != w.written {
			t.Errorf("%d of 9 written %q, want %q", bid, got, w.written)
		}
	}
}

func TestKhishti_ParsesNamesAndNumbers(t *testing.T) {
	cases := []struct {
		in   string
		want Khishti
	}{
		{`"200"`, Khishti200}, {`"500"`, Khishti500}, {`"100"`, Khishti100},
		{`"per-card"`, KhishtiPerCard}, {`"PerCard"`, KhishtiPerCard},
		{`500`, Khishti500}, {`100`, Khishti100}, {`200`, Khishti200},
	}
	for _, c := range cases {
		k := Khishti(99)
		if err := k.UnmarshalJSON([]byte(c.in)); err != nil || k != c.want {
			t.Errorf("%s: %v %v, want %v", c.in, k, err, c.want)
		}
	}
	for _, bad := range []string{`"300"`, `300`, `1.5`, `true`, `"per card"`, `[]`} {
		var k Khishti
		if err := k.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("%s: accepted as %v", bad, k)
		}
	}
}
