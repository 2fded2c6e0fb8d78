package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/pulka/pulka/pkg/scoring"
)

// sheetJSON is the score command's output as a consumer reads it, by the
// field names the command promises.
type sheetJSON struct {
	Hands []struct {
		Cards  int       `json:"cards"`
		Bids   [4]int    `json:"bids"`
		Tricks [4]int    `json:"tricks"`
		Points [4]int    `json:"points"`
		Result [4]string `json:"result"`
	} `json:"hands"`
	Pulkas   []pulkaJSON `json:"pulkas"`
	Total    [4]int      `json:"total"`
	OnCourse [4]bool     `json:"onCourse"`
}

type pulkaJSON struct {
	Finished bool    `json:"finished"`
	Premia   [4]int  `json:"premia"`
	Moshla   [4]int  `json:"moshla"`
	Struck   [4]int  `json:"struck"`
	Total    [4]int  `json:"total"`
	OnCourse [4]bool `json:"onCourse"`
}

// runCmd runs pulkactl in-process and returns stdout, stderr and the exit
// code main would use.
func runCmd(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	code = exitCode(err, &errOut)
	return out.String(), errOut.String(), code
}

func scoreJSON(t *testing.T, stdin string) sheetJSON {
	t.Helper()
	out, errOut, code := runCmd(t, stdin, "score")
	if code != 0 {
		t.Fatalf("score exited %d: %s", code, errOut)
	}
	var s sheetJSON
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("output is not the sheet JSON: %v\n%s", err, out)
	}
	return s
}

func readSeed(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/seed_pulkas_I_II.json")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// handsJSON writes hands as the score command reads them.
func handsJSON(settings string, hands ...[2][4]int) string {
	var b strings.Builder
	b.WriteString("{" + settings)
	if settings != "" {
		b.WriteString(",")
	}
	b.WriteString(`"hands":[`)
	for i, h := range hands {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"bids":[%d,%d,%d,%d],"tricks":[%d,%d,%d,%d]}`,
			h[0][0], h[0][1], h[0][2], h[0][3], h[1][0], h[1][1], h[1][2], h[1][3])
	}
	b.WriteString("]}")
	return b.String()
}

func TestScore_SeedPulkaI_FirstThreeHands(t *testing.T) {
	in := handsJSON(`"khishti":"per-card"`,
		[2][4]int{{1, 0, 0, 1}, {1, 0, 0, 0}},
		[2][4]int{{0, 1, 2, 0}, {1, 1, 0, 0}},
		[2][4]int{{1, 1, 0, 2}, {1, 1, 0, 1}},
	)
	s := scoreJSON(t, in)
	if want := [4]int{210, 250, -100, -40}; s.Total != want {
		t.Errorf("total %v, want %v", s.Total, want)
	}
	if len(s.Hands) != 3 || s.Hands[1].Cards != 2 || s.Hands[1].Points != [4]int{10, 100, -200, 50} ||
		s.Hands[1].Result != [4]string{"missed", "made", "khishti", "made"} ||
		s.Hands[1].Bids != [4]int{0, 1, 2, 0} || s.Hands[1].Tricks != [4]int{1, 1, 0, 0} {
		t.Errorf("hand 2 = %+v", s.Hands[1])
	}
	if len(s.Pulkas) != 1 || s.Pulkas[0].Finished || s.OnCourse != [4]bool{false, true, false, false} {
		t.Errorf("pulkas %+v on course %v", s.Pulkas, s.OnCourse)
	}

	text, _, code := runCmd(t, in, "score", "--text", "--names", "Giorgi,Ana,Levan,Nika")
	if code != 0 {
		t.Fatalf("--text exited %d", code)
	}
	sul := lineStarting(t, text, "sul")
	if got := strings.Fields(sul)[1:]; strings.Join(got, " ") != "2.1 2.5 -1 -0.4" {
		t.Errorf("sul line %q, want 2.1 2.5 -1 -0.4", sul)
	}
	for _, want := range []string{"Pulka I (in progress, 3 of 8 hands)", "on course for the premia: Ana", "hand 4 of 24", "khishti per-card"} {
		if !strings.Contains(text, want) {
			t.Errorf("text sheet lacks %q:\n%s", want, text)
		}
	}
}

func TestScore_SeedPulkaII_PremiaAndMoshla(t *testing.T) {
	s := scoreJSON(t, readSeed(t))
	if len(s.Pulkas) != 2 || !s.Pulkas[0].Finished || !s.Pulkas[1].Finished {
		t.Fatalf("pulkas %+v", s.Pulkas)
	}
	p := s.Pulkas[1]
	if p.Total[0] != 950 || p.Premia[0] != 250 || p.Total[3] != 170 || p.Moshla[3] != -300 || p.Struck[3] != 10 {
		t.Errorf("pulka II: Giorgi %d (premia %d), Nika %d (moshla %d, struck %d); want 950 (+250), 170 (-300, hand index 10)",
			p.Total[0], p.Premia[0], p.Total[3], p.Moshla[3], p.Struck[3])
	}
	// Ana scored 200 in hands 9 and 12: the earlier is struck.
	if p.Struck[1] != 8 {
		t.Errorf("Ana's struck hand %d, want 8", p.Struck[1])
	}

	text, _, _ := runCmd(t, readSeed(t), "score", "--text", "--names", "Giorgi,Ana,Levan,Nika")
	sigma := strings.Split(text, "  Σ")
	if len(sigma) != 3 {
		t.Fatalf("want two Σ lines:\n%s", text)
	}
	for _, want := range []string{"9.5 (+2.5)", "1.7 (-3)", "3.7 (-2)"} {
		if !strings.Contains(strings.SplitN(sigma[2], "\n", 2)[0], want) {
			t.Errorf("pulka II Σ line lacks %q:\n%s", want, text)
		}
	}
	// Struck hands are marked in their rows: hand 9 (Ana), 10 (Levan), 11 (Nika).
	rows := rowsOf(text, "9")
	if len(rows) != 4 {
		t.Fatalf("want four 9-card rows:\n%s", text)
	}
	for i, wantSeat := range []int{1, 2, 3, -1} {
		marks := strings.Count(rows[i], "×")
		if (wantSeat >= 0) != (marks == 1) {
			t.Errorf("row %q has %d struck marks", rows[i], marks)
		}
	}
	if !strings.Contains(text, "Pulka II (finished)") || !strings.Contains(text, "hand 13 of 24 (8 cards, pulka III)") {
		t.Errorf("heading or foot missing:\n%s", text)
	}
}

// Two-premia and related fixtures, in nine-card hands.
var (
	twoPremia = [][2][4]int{
		{{3, 3, 1, 1}, {3, 3, 2, 1}}, // 200, 200, 20, 100
		{{2, 4, 2, 2}, {2, 4, 1, 2}}, // 150, 250, 10, 150
		{{0, 5, 2, 1}, {0, 5, 2, 2}}, // 50, 300, 150, 20
		{{4, 0, 2, 1}, {4, 0, 4, 1}}, // 250, 50, 40, 100
	}
	fourPremia = [][2][4]int{
		{{3, 3, 2, 1}, {3, 3, 2, 1}},
		{{2, 4, 2, 1}, {2, 4, 2, 1}},
		{{0, 5, 2, 2}, {0, 5, 2, 2}},
		{{4, 0, 3, 2}, {4, 0, 3, 2}},
	}
	khishtiEverywhere = [][2][4]int{
		{{3, 3, 1, 1}, {3, 6, 0, 0}}, // 200, 60, -900, -900
		{{2, 4, 2, 2}, {2, 4, 3, 0}}, // 150, 250, 30, -900
		{{0, 5, 2, 1}, {0, 5, 4, 0}}, // 50, 300, 40, -900
		{{4, 0, 2, 1}, {4, 1, 4, 0}}, // 250, 10, 40, -900
	}
)

func TestScore_PremiaAndMoshlaSettings(t *testing.T) {
	none := [4]int{-1, -1, -1, -1}
	cases := []struct {
		name     string
		settings string
		hands    [][2][4]int
		want     pulkaJSON
	}{
		{"two premia, rest docked", `"variant":"nines"`, twoPremia, pulkaJSON{
			Premia: [4]int{250, 300, 0, 0}, Moshla: [4]int{0, 0, -150, -150}, Struck: [4]int{-1, -1, 2, 1}, Total: [4]int{900, 1100, 70, 220}}},
		{"two premia, rest not docked", `"variant":"nines","restDocked":false`, twoPremia, pulkaJSON{
			Premia: [4]int{250, 300, 0, 0}, Struck: none, Total: [4]int{900, 1100, 220, 370}}},
		{"four premia", `"variant":"nines"`, fourPremia, pulkaJSON{
			Premia: [4]int{250, 300, 200, 150}, Struck: none, Total: [4]int{900, 1100, 850, 650}}},
		{"premia off", `"variant":"nines","premia":false`, twoPremia, pulkaJSON{
			Struck: none, Total: [4]int{650, 800, 220, 370}}},
		{"moshla off", `"variant":"nines","moshla":false`, twoPremia, pulkaJSON{
			Premia: [4]int{250, 300, 0, 0}, Struck: none, Total: [4]int{900, 1100, 220, 370}}},
		{"khishti never the best hand", `"variant":"nines","khishti":"per-card"`, khishtiEverywhere, pulkaJSON{
			Premia: [4]int{250, 0, 0, 0}, Moshla: [4]int{0, -300, -40, 0}, Struck: [4]int{-1, 2, 2, -1}, Total: [4]int{900, 320, -830, -3600}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := scoreJSON(t, handsJSON(c.settings, c.hands...))
			if len(s.Pulkas) != 1 {
				t.Fatalf("%d pulkas", len(s.Pulkas))
			}
			got := s.Pulkas[0]
			if !got.Finished || got.Premia != c.want.Premia || got.Moshla != c.want.Moshla ||
				got.Struck != c.want.Struck || got.Total != c.want.Total {
				t.Errorf("pulka = %+v\nwant   %+v", got, c.want)
			}
			if s.Total != got.Total {
				t.Errorf("grand total %v, pulka %v", s.Total, got.Total)
			}
		})
	}
}

func TestScore_BadInputExits2NamingTheHand(t *testing.T) {
	ok := `{"bids":[1,0,0,1],"tricks":[1,0,0,0]}`
	cases := []struct {
		name, in string
		want     []string
	}{
		{"three seats", `{"hands":[` + ok + `,{"bids":[0,1,1],"tricks":[1,1,0,0]}]}`, []string{"hand 2", "3 bids", "seats"}},
		{"five trick counts", `{"hands":[{"bids":[1,0,0,1],"tricks":[1,0,0,0,0]}]}`, []string{"hand 1", "5 trick counts"}},
		{"missing bids", `{"hands":[{"tricks":[1,0,0,0]}]}`, []string{"hand 1", "0 bids"}},
		{"bid out of range", `{"hands":[` + ok + `,{"bids":[0,3,0,0],"tricks":[1,1,0,0]}]}`, []string{"hand 2", "seat 2 bid 3", "out of range"}},
		{"negative tricks", `{"hands":[{"bids":[0,0,0,0],"tricks":[2,-1,0,0]}]}`, []string{"hand 1", "seat 1 took 2"}},
		{"tricks not adding up", `{"hands":[` + ok + `,` + ok + `]}`, []string{"hand 2", "add up to 1, want 2"}},
		{"too many hands", handsJSON(`"variant":"nines"`, append(append(append(append(append([][2][4]int{}, twoPremia...), twoPremia...), twoPremia...), twoPremia...), twoPremia[0])...), []string{"hand 17", "nines has 16"}},
		{"malformed JSON", `{"hands":[` + ok + `,`, []string{"malformed"}},
		{"syntax error", `{"hands":[` + ok + `,}]}`, []string{"invalid JSON at byte"}},
		{"empty input", "  \n", []string{"no JSON"}},
		{"unknown field", `{"restDock":false}`, []string{`unknown field "restDock"`}},
		{"unknown field in a hand", `{"hands":[` + ok + `,{"bids":[0,1,1,0],"tricks":[1,1,0,0],"dealer":2}]}`, []string{"hand 2", `unknown field "dealer"`}},
		{"trailing data", `{"hands":[]} {"hands":[]}`, []string{"after the JSON value"}},
		{"unknown variant", `{"variant":"tens"}`, []string{"unknown variant"}},
		{"unknown khishti", `{"khishti":"300"}`, []string{"unknown khishti"}},
		{"fractional bid", `{"hands":[{"bids":[1.5,0,0,1],"tricks":[1,0,0,0]}]}`, []string{"hand 1", "cannot unmarshal"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := runCmd(t, c.in, "score")
			if code != 2 {
				t.Fatalf("exit %d, want 2; stderr %q", code, errOut)
			}
			if out != "" {
				t.Errorf("wrote %q to stdout on bad input", out)
			}
			for _, w := range c.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q does not say %q", errOut, w)
				}
			}
		})
	}
}

func TestScore_ParserErrorsAreTyped(t *testing.T) {
	_, err := scoreSheet([]byte(`{"hands":[{"bids":[0,1,1],"tricks":[1,0,0,0]}]}`))
	var ie *scoring.InputError
	if !errors.As(err, &ie) || ie.Hand != 0 || !errors.Is(err, scoring.ErrSeats) {
		t.Errorf("error %v, want an InputError for hand 0 wrapping ErrSeats", err)
	}
	if _, err := scoreSheet([]byte(`{"nope":1}`)); !errors.Is(err, errMalformed) {
		t.Errorf("unknown field: %v, want errMalformed", err)
	}
}

func TestScore_KhishtiMayBeANumber(t *testing.T) {
	s := scoreJSON(t, handsJSON(`"khishti":500`, [2][4]int{{1, 0, 0, 1}, {1, 0, 0, 0}}))
	if s.Hands[0].Points[3] != -500 {
		t.Errorf("khishti 500 wrote %d", s.Hands[0].Points[3])
	}
}

func TestScore_ColorMarksStruckHands(t *testing.T) {
	text, _, code := runCmd(t, readSeed(t), "score", "--text", "--color")
	if code != 0 || !strings.Contains(text, ansiStrike) || !strings.Contains(text, ansiRed) {
		t.Errorf("exit %d, colour sheet lacks strike-through or red:\n%q", code, text)
	}
	plain, _, _ := runCmd(t, readSeed(t), "score", "--text")
	if strings.Contains(plain, "\x1b[") {
		t.Errorf("plain sheet has ANSI escapes")
	}
}

func TestScore_FlagErrorsExit2(t *testing.T) {
	for _, args := range [][]string{{"score", "--bogus"}, {"score", "extra"}, {"score", "--text", "--names", "a,b"}} {
		if _, _, code := runCmd(t, "{}", args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if out, errOut, code := runCmd(t, "", "score", "-h"); code != 0 || !strings.Contains(out+errOut, "--text") && !strings.Contains(out+errOut, "-text") {
		t.Errorf("score -h: exit %d, output %q", code, out+errOut)
	}
}

func lineStarting(t *testing.T, text, prefix string) string {
	t.Helper()
	for l := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("no line starting %q in:\n%s", prefix, text)
	return ""
}

// rowsOf returns the hand rows with the given number of cards.
func rowsOf(text, cards string) []string {
	var rows []string
	for l := range strings.SplitSeq(text, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == cards && strings.HasPrefix(l, "    ") {
			rows = append(rows, l)
		}
	}
	return rows
}
