package sheets_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/classic"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/services/scoring/internal/sheets"
)

func classicSettings(v lobbyv1.ClassicVariant) *lobbyv1.TableSettings {
	return &lobbyv1.TableSettings{
		Game: lobbyv1.Game_GAME_CLASSIC, ClassicVariant: v, Khishti: lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_200,
		Premia: true, Moshla: true, RestDocked: true,
	}
}

func players(n int) []*scoringv1.SheetPlayer {
	names := []string{"giorgi", "ana", "levan", "nika"}
	out := make([]*scoringv1.SheetPlayer, n)
	for i := range out {
		out[i] = &scoringv1.SheetPlayer{Seat: uint32(i), PlayerId: names[i], DisplayName: names[i]}
	}
	return out
}

func hand(i, cards int, bids, tricks []int) *scoringv1.HandResult {
	h := &scoringv1.HandResult{HandIndex: uint32(i), CardsPerSeat: uint32(cards)}
	// Seats listed in reverse: readers must go by the seat field, not order.
	for s := len(tricks) - 1; s >= 0; s-- {
		st := &scoringv1.SeatTricks{Seat: uint32(s), Tricks: uint32(tricks[s])}
		if bids != nil {
			st.Bid = uint32(bids[s])
		}
		h.Seats = append(h.Seats, st)
	}
	return h
}

// pulkaII are the four nine-card hands of the seed sheet's pulka II
// (rules.md's example: Giorgi makes every hand, premia +250; Ana, Levan and
// Nika get moshla −200, −150 and −300).
var pulkaII = [][2][]int{
	{{2, 3, 2, 1}, {2, 3, 3, 1}},
	{{3, 2, 2, 3}, {3, 2, 2, 2}},
	{{1, 1, 1, 5}, {1, 2, 1, 5}},
	{{4, 3, 3, 0}, {4, 3, 2, 0}},
}

func ninesGame(hands int) sheets.Game {
	g := sheets.Game{TableID: "t1", GameID: "g1",
		Start: &scoringv1.GameStarted{Settings: classicSettings(lobbyv1.ClassicVariant_CLASSIC_VARIANT_NINES), Players: players(4)},
		Hands: map[uint32]*scoringv1.HandResult{}}
	for i := range hands {
		p := pulkaII[i%4]
		g.Hands[uint32(i)] = hand(i, 9, p[0], p[1])
	}
	return g
}

func TestBuild_PremiaAndMoshlaOfTheRulesExample(t *testing.T) {
	r, err := sheets.Build(ninesGame(4))
	if err != nil {
		t.Fatal(err)
	}
	p := r.Sheet.GetPulkas()[0]
	if !p.GetFinished() {
		t.Fatal("pulka I of four hands not finished")
	}
	want := []struct{ premia, moshla, total int64 }{{250, 0, 950}, {0, -200, 370}, {0, -150, 150}, {0, -300, 170}}
	for seat, w := range want {
		got := p.GetTotals()[seat]
		if got.GetSeat() != uint32(seat) || got.GetPremia() != w.premia || got.GetMoshla() != w.moshla || got.GetTotal() != w.total {
			t.Errorf("seat %d: %v, want %+v", seat, got, w)
		}
	}
	// The moshla strikes the best hand, the earlier one on a tie.
	struck := map[[2]int]bool{{0, 1}: true, {1, 2}: true, {2, 3}: true}
	for h, row := range p.GetHands() {
		for _, c := range row.GetCells() {
			if c.GetStruck() != struck[[2]int{h, int(c.GetSeat())}] {
				t.Errorf("hand %d seat %d struck=%v", h, c.GetSeat(), c.GetStruck())
			}
		}
	}
}

// randomGame plays a whole classic game of random, valid hands.
func randomGame(rng *rand.Rand, v lobbyv1.ClassicVariant, k lobbyv1.KhishtiPenalty) (sheets.Game, []scoring.HandResult) {
	st := classicSettings(v)
	st.Khishti = k
	st.RestDocked = rng.IntN(2) == 0
	g := sheets.Game{TableID: "t", GameID: "g", Start: &scoringv1.GameStarted{Settings: st, Players: players(4)},
		Hands: map[uint32]*scoringv1.HandResult{}}
	cv := classic.Variant(v - 1)
	var raw []scoring.HandResult
	for i := range cv.Hands() {
		n := cv.CardsInHand(i)
		var hr scoring.HandResult
		for range n {
			hr.Tricks[rng.IntN(4)]++
		}
		for s := range 4 {
			hr.Bids[s] = rng.IntN(n + 1)
			if rng.IntN(3) == 0 {
				hr.Bids[s] = hr.Tricks[s] // plenty of made hands, so premia happen
			}
		}
		raw = append(raw, hr)
		g.Hands[uint32(i)] = hand(i, n, hr.Bids[:], hr.Tricks[:])
	}
	return g, raw
}

func TestBuild_ClassicSheetIsScoringBuildOfTheHands(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for game := range 200 {
		v := lobbyv1.ClassicVariant(1 + game%2)
		k := lobbyv1.KhishtiPenalty(1 + game%4)
		g, raw := randomGame(rng, v, k)
		cut := rng.IntN(len(raw) + 1)
		for i := cut; i < len(raw); i++ {
			delete(g.Hands, uint32(i))
		}
		r, err := sheets.Build(g)
		if err != nil {
			t.Fatal(err)
		}
		settings, _ := sheets.ClassicSettings(g.Start.GetSettings())
		want, err := scoring.Build(settings, raw[:cut])
		if err != nil {
			t.Fatal(err)
		}
		if r.Played != cut || r.Final != want.Finished || int(r.Sheet.GetCurrentHand()) != want.Next {
			t.Fatalf("game %d: played %d final %v, want %d %v", game, r.Played, r.Final, cut, want.Finished)
		}
		for seat := range 4 {
			if r.Sheet.GetTotals()[seat].GetTotal() != int64(want.Total[seat]) ||
				r.Sheet.GetTotals()[seat].GetOnCourse() != want.OnCourse[seat] {
				t.Fatalf("game %d seat %d: %v, want total %d on course %v", game, seat,
					r.Sheet.GetTotals()[seat], want.Total[seat], want.OnCourse[seat])
			}
		}
		for p, pt := range want.Pulkas {
			sp := r.Sheet.GetPulkas()[p]
			for seat := range 4 {
				got := sp.GetTotals()[seat]
				if got.GetPremia() != int64(pt.Premia[seat]) || got.GetMoshla() != int64(pt.Moshla[seat]) || got.GetTotal() != int64(pt.Total[seat]) {
					t.Fatalf("game %d pulka %d seat %d: %v, want %+v", game, p, seat, got, pt)
				}
			}
			for h, row := range sp.GetHands() {
				wr := want.Hands[pt.First+h]
				for _, c := range row.GetCells() {
					s := c.GetSeat()
					if c.GetPoints()+c.GetPenalty() != int64(wr.Points[s]) || c.GetStruck() != wr.Struck[s] || c.GetBid() != uint32(wr.Bids[s]) {
						t.Fatalf("game %d hand %d seat %d: cell %v, row %+v", game, pt.First+h, s, c, wr)
					}
				}
			}
		}
	}
}

func TestBuild_KhishtiCellHasPenaltyNotPoints(t *testing.T) {
	g := ninesGame(0)
	g.Start.Settings.Khishti = lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_PER_CARD
	g.Hands[0] = hand(0, 9, []int{2, 3, 2, 1}, []int{0, 3, 5, 1})
	r, err := sheets.Build(g)
	if err != nil {
		t.Fatal(err)
	}
	c := r.Sheet.GetPulkas()[0].GetHands()[0].GetCells()[0]
	if c.GetOutcome() != scoringv1.HandOutcome_HAND_OUTCOME_KHISHTI || c.GetPoints() != 0 || c.GetPenalty() != -900 {
		t.Fatalf("khishti cell %v, want outcome khishti, points 0, penalty -900", c)
	}
	if made := r.Sheet.GetPulkas()[0].GetHands()[0].GetCells()[1]; made.GetOutcome() != scoringv1.HandOutcome_HAND_OUTCOME_MADE || made.GetPoints() != 200 {
		t.Fatalf("made cell %v", made)
	}
	if missed := r.Sheet.GetPulkas()[0].GetHands()[0].GetCells()[2]; missed.GetOutcome() != scoringv1.HandOutcome_HAND_OUTCOME_MISSED || missed.GetPoints() != 50 {
		t.Fatalf("missed cell %v", missed)
	}
}

func TestBuild_OutOfOrderHandsWaitForTheGap(t *testing.T) {
	g := ninesGame(6)
	delete(g.Hands, 2)
	r, err := sheets.Build(g)
	if err != nil {
		t.Fatal(err)
	}
	if r.Played != 2 || r.Waiting != 3 || r.Final || r.Version != 5 || r.Sheet.GetCurrentHand() != 2 {
		t.Fatalf("with hand 2 missing: played %d waiting %d final %v version %d", r.Played, r.Waiting, r.Final, r.Version)
	}
	g.Hands[2] = hand(2, 9, pulkaII[2][0], pulkaII[2][1])
	r, err = sheets.Build(g)
	if err != nil || r.Played != 6 || r.Waiting != 0 || r.Version != 13 {
		t.Fatalf("gap filled: played %d waiting %d version %d %v", r.Played, r.Waiting, r.Version, err)
	}
}

func TestBuild_VersionGrowsWithEveryHandAndTheEnd(t *testing.T) {
	var prev uint64
	for n := 0; n <= 16; n++ {
		r, err := sheets.Build(ninesGame(n))
		if err != nil {
			t.Fatal(err)
		}
		again, _ := sheets.Build(ninesGame(n))
		if r.Version != again.Version || !proto.Equal(r.Sheet, again.Sheet) {
			t.Fatalf("%d hands: Build is not deterministic", n)
		}
		if r.Version <= prev {
			t.Fatalf("%d hands: version %d not above %d", n, r.Version, prev)
		}
		if r.Final != (n == 16) {
			t.Fatalf("%d hands: final=%v", n, r.Final)
		}
		prev = r.Version
	}
}

func TestBuild_LastHandOfTheVariantEndsTheGame(t *testing.T) {
	r, err := sheets.Build(ninesGame(16))
	if err != nil {
		t.Fatal(err)
	}
	if !r.Final || len(r.Standings) != 4 {
		t.Fatalf("16 nines hands: final %v standings %v", r.Final, r.Standings)
	}
	for _, tot := range r.Sheet.GetTotals() {
		if tot.GetOnCourse() {
			t.Fatalf("on course after the game: %v", tot)
		}
	}
	// Every pulka repeats the rules example: Giorgi wins with 4 × 950.
	if s := r.Standings[0]; s.GetSeat() != 0 || s.GetPlace() != 1 || s.GetTotal() != 3800 || s.GetPlayerId() != "giorgi" {
		t.Fatalf("winner %v", s)
	}
}

func TestBuild_GameEndedEarly(t *testing.T) {
	incomplete := &scoringv1.GameEnded{Completed: false}
	cases := []struct {
		name  string
		hands []int
		end   *scoringv1.GameEnded
		final bool
	}{
		{"ended early, all hands here", []int{0, 1, 2, 3, 4}, incomplete, true},
		{"ended early, a hand still missing", []int{0, 1, 3, 4}, incomplete, false},
		{"ended before any hand", nil, incomplete, true},
		{"ended early, the last played hand still in flight", []int{0, 1, 2}, &scoringv1.GameEnded{Completed: false, HandsPlayed: 4}, false},
		{"ended early, every played hand here", []int{0, 1, 2, 3}, &scoringv1.GameEnded{Completed: false, HandsPlayed: 4}, true},
		{"completed but hands missing", []int{0, 1, 2}, &scoringv1.GameEnded{Completed: true}, false},
		{"no end yet", []int{0, 1, 2}, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := ninesGame(0)
			for _, i := range tc.hands {
				p := pulkaII[i%4]
				g.Hands[uint32(i)] = hand(i, 9, p[0], p[1])
			}
			g.End = tc.end
			r, err := sheets.Build(g)
			if err != nil {
				t.Fatal(err)
			}
			if r.Final != tc.final || (r.Final && len(r.Standings) != 4) {
				t.Fatalf("final %v (standings %d), want %v", r.Final, len(r.Standings), tc.final)
			}
			if r.Final && len(r.Sheet.GetPulkas()) > 1 && r.Sheet.GetPulkas()[1].GetFinished() {
				t.Fatal("a classic pulka cut short must stay unfinished (no premia or moshla)")
			}
		})
	}
}

func TestBuild_RefusedHandStopsTheSheetBeforeIt(t *testing.T) {
	for name, bad := range map[string]*scoringv1.HandResult{
		"cards of another variant": hand(2, 8, []int{2, 2, 2, 1}, []int{2, 2, 2, 2}),
		"tricks do not add up":     hand(2, 9, []int{2, 3, 2, 1}, []int{2, 3, 3, 2}),
		"bid over the cards":       hand(2, 9, []int{10, 3, 2, 1}, []int{2, 3, 3, 1}),
		"three seats":              hand(2, 9, []int{3, 3, 3}, []int{3, 3, 3}),
	} {
		t.Run(name, func(t *testing.T) {
			g := ninesGame(4)
			g.Hands[2] = bad
			r, err := sheets.Build(g)
			if err != nil {
				t.Fatal(err)
			}
			var ie *scoring.InputError
			if r.Played != 2 || !errors.As(r.Refused, &ie) || ie.Hand != 2 || r.Waiting != 2 {
				t.Fatalf("played %d waiting %d refused %v", r.Played, r.Waiting, r.Refused)
			}
		})
	}
}

func japaneseGame(target uint32, tricks ...[2]int) sheets.Game {
	g := sheets.Game{TableID: "t", GameID: "j", Hands: map[uint32]*scoringv1.HandResult{},
		Start: &scoringv1.GameStarted{Settings: &lobbyv1.TableSettings{Game: lobbyv1.Game_GAME_JAPANESE, JapaneseTarget: target},
			Players: players(2)}}
	for i, tr := range tricks {
		g.Hands[uint32(i)] = hand(i, 18, nil, tr[:])
	}
	return g
}

func TestBuild_JapaneseWinnerScoresTheDifferenceUntilTheTarget(t *testing.T) {
	g := japaneseGame(11, [2]int{11, 7}, [2]int{9, 9}, [2]int{5, 13}, [2]int{14, 4})
	r, err := sheets.Build(g)
	if err != nil {
		t.Fatal(err)
	}
	// 4–0, 0–0, 0–8, 10–0: 14–8, seat 0 passed 11 in hand 4.
	if !r.Final || r.Sheet.GetTotals()[0].GetTotal() != 14 || r.Sheet.GetTotals()[1].GetTotal() != 8 {
		t.Fatalf("final %v totals %v", r.Final, r.Sheet.GetTotals())
	}
	cells := r.Sheet.GetPulkas()[0].GetHands()[1].GetCells()
	if cells[0].GetPoints() != 0 || cells[1].GetPoints() != 0 || cells[0].Bid != nil {
		t.Fatalf("9–9 scores nothing and has no bids: %v", cells)
	}
	if r.Standings[0].GetSeat() != 0 || r.Standings[0].GetPlace() != 1 || r.Standings[1].GetPlace() != 2 {
		t.Fatalf("standings %v", r.Standings)
	}
	// A hand after the target is refused: the match was over.
	g.Hands[4] = hand(4, 18, nil, []int{9, 9})
	r, _ = sheets.Build(g)
	if r.Played != 4 || r.Refused == nil || !r.Final {
		t.Fatalf("hand after the end: played %d refused %v", r.Played, r.Refused)
	}
	if _, err := sheets.Build(japaneseGame(12)); !errors.Is(err, sheets.ErrInvalid) {
		t.Fatalf("target 12: %v", err)
	}
}

func TestStandings_TiesShareAPlace(t *testing.T) {
	sheet := &scoringv1.Sheet{Players: players(4), Settings: classicSettings(lobbyv1.ClassicVariant_CLASSIC_VARIANT_STANDARD)}
	for seat, total := range []int64{500, 700, 500, 100} {
		sheet.Totals = append(sheet.Totals, &scoringv1.SeatTotal{Seat: uint32(seat), Total: total})
	}
	got := fmt.Sprint(placeList(sheets.Standings(sheet, nil)))
	if want := "[1:s1:700 2:s0:500 2:s2:500 4:s3:100]"; got != want {
		t.Fatalf("standings %s, want %s", got, want)
	}
	all := &scoringv1.Sheet{Players: players(2), Totals: []*scoringv1.SeatTotal{{Seat: 0, Total: 3}, {Seat: 1, Total: 3}}}
	if got := fmt.Sprint(placeList(sheets.Standings(all, nil))); got != "[1:s0:3 1:s1:3]" {
		t.Fatalf("a draw: %s", got)
	}
}

func TestStandings_JapaneseResignerIsLastWhateverTheScore(t *testing.T) {
	sheet := &scoringv1.Sheet{Players: players(2), Settings: &lobbyv1.TableSettings{Game: lobbyv1.Game_GAME_JAPANESE},
		Totals: []*scoringv1.SeatTotal{{Seat: 0, Total: 9}, {Seat: 1, Total: 2}}}
	loser := uint32(0)
	got := fmt.Sprint(placeList(sheets.Standings(sheet, &scoringv1.GameEnded{LoserSeat: &loser})))
	if got != "[1:s1:2 2:s0:9]" {
		t.Fatalf("standings %s, want the resigner last", got)
	}
}

func placeList(ss []*scoringv1.Standing) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%d:s%d:%d", s.GetPlace(), s.GetSeat(), s.GetTotal())
	}
	return out
}

func TestValidate(t *testing.T) {
	start := func(mut func(*scoringv1.GameStarted)) *scoringv1.ScoringInput {
		gs := &scoringv1.GameStarted{Settings: classicSettings(lobbyv1.ClassicVariant_CLASSIC_VARIANT_STANDARD), Players: players(4)}
		mut(gs)
		return &scoringv1.ScoringInput{TableId: "t", GameId: "g", Input: &scoringv1.ScoringInput_GameStarted{GameStarted: gs}}
	}
	handIn := func(h *scoringv1.HandResult) *scoringv1.ScoringInput {
		return &scoringv1.ScoringInput{TableId: "t", GameId: "g", Input: &scoringv1.ScoringInput_HandResult{HandResult: h}}
	}
	seven := uint32(7)
	cases := []struct {
		name string
		in   *scoringv1.ScoringInput
		ok   bool
	}{
		{"classic start", start(func(*scoringv1.GameStarted) {}), true},
		{"japanese start", &scoringv1.ScoringInput{TableId: "t", GameId: "g", Input: &scoringv1.ScoringInput_GameStarted{
			GameStarted: japaneseGame(21).Start}}, true},
		{"a hand", handIn(hand(0, 1, []int{1, 0, 0, 0}, []int{1, 0, 0, 0})), true},
		{"a japanese hand", handIn(hand(0, 18, nil, []int{10, 8})), true},
		{"an end", &scoringv1.ScoringInput{TableId: "t", GameId: "g", Input: &scoringv1.ScoringInput_GameEnded{GameEnded: &scoringv1.GameEnded{}}}, true},
		{"no input", &scoringv1.ScoringInput{TableId: "t", GameId: "g"}, false},
		{"no game id", &scoringv1.ScoringInput{TableId: "t", Input: &scoringv1.ScoringInput_GameEnded{GameEnded: &scoringv1.GameEnded{}}}, false},
		{"brace in table id", &scoringv1.ScoringInput{TableId: "t}", GameId: "g", Input: &scoringv1.ScoringInput_GameEnded{GameEnded: &scoringv1.GameEnded{}}}, false},
		{"loser seat 7", &scoringv1.ScoringInput{TableId: "t", GameId: "g", Input: &scoringv1.ScoringInput_GameEnded{GameEnded: &scoringv1.GameEnded{LoserSeat: &seven}}}, false},
		{"unknown game", start(func(gs *scoringv1.GameStarted) { gs.Settings.Game = 0 }), false},
		{"no variant", start(func(gs *scoringv1.GameStarted) { gs.Settings.ClassicVariant = 0 }), false},
		{"no khishti", start(func(gs *scoringv1.GameStarted) { gs.Settings.Khishti = 0 }), false},
		{"three players", start(func(gs *scoringv1.GameStarted) { gs.Players = gs.Players[:3] }), false},
		{"a seat twice", start(func(gs *scoringv1.GameStarted) { gs.Players[3].Seat = 0 }), false},
		{"player id with a brace", start(func(gs *scoringv1.GameStarted) { gs.Players[0].PlayerId = "a{" }), false},
		{"a bot (no player id)", start(func(gs *scoringv1.GameStarted) { gs.Players[0].PlayerId = "" }), true},
		{"three seats", handIn(hand(0, 1, []int{1, 0, 0}, []int{1, 0, 0})), false},
		{"tricks do not add up", handIn(hand(0, 2, []int{1, 0, 0, 0}, []int{1, 0, 0, 0})), false},
		{"bid over the cards", handIn(hand(0, 1, []int{2, 0, 0, 0}, []int{1, 0, 0, 0})), false},
		{"no cards", handIn(hand(0, 0, []int{0, 0, 0, 0}, []int{0, 0, 0, 0})), false},
		{"huge hand index", handIn(hand(sheets.MaxHands, 1, []int{1, 0, 0, 0}, []int{1, 0, 0, 0})), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := sheets.Validate(tc.in)
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, sheets.ErrInvalid)) {
				t.Fatalf("Validate = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func BenchmarkBuild_Standard24Hands(b *testing.B) {
	g, _ := randomGame(rand.New(rand.NewPCG(1, 2)), lobbyv1.ClassicVariant_CLASSIC_VARIANT_STANDARD, lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_200)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sheets.Build(g); err != nil {
			b.Fatal(err)
		}
	}
}

// The rules are read as the table and the lobby read them: an unspecified
// variant or khishti, or a value that names none (also one a byte would wrap
// around to a valid rule), is an invalid input, never another rule.
func TestClassicSettings_RefusesRulesThatNameNone(t *testing.T) {
	ok := &lobbyv1.TableSettings{Game: lobbyv1.Game_GAME_CLASSIC, ClassicVariant: lobbyv1.ClassicVariant_CLASSIC_VARIANT_NINES,
		Khishti: lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_PER_CARD, Premia: true}
	got, err := sheets.ClassicSettings(ok)
	if err != nil || got.Variant != classic.Nines || got.Khishti != scoring.KhishtiPerCard || !got.Premia || got.Moshla {
		t.Fatalf("nines, per-card, premia: %+v %v", got, err)
	}
	for _, v := range []lobbyv1.ClassicVariant{0, 3, 257} {
		bad := &lobbyv1.TableSettings{Game: lobbyv1.Game_GAME_CLASSIC, ClassicVariant: v, Khishti: lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_200}
		if _, err := sheets.ClassicSettings(bad); !errors.Is(err, sheets.ErrInvalid) {
			t.Errorf("variant %d: %v, want ErrInvalid", v, err)
		}
	}
	for _, k := range []lobbyv1.KhishtiPenalty{0, 5, 257} {
		bad := &lobbyv1.TableSettings{Game: lobbyv1.Game_GAME_CLASSIC, ClassicVariant: lobbyv1.ClassicVariant_CLASSIC_VARIANT_STANDARD, Khishti: k}
		if _, err := sheets.ClassicSettings(bad); !errors.Is(err, sheets.ErrInvalid) {
			t.Errorf("khishti %d: %v, want ErrInvalid", k, err)
		}
	}
}
