package wire

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/pulka/pulka/pkg/classic"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/sheets"
	"github.com/pulka/pulka/pkg/table"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// sheetBefore is Sheet as it was before the fast encoder: protojson of the
// update without its trace, in an envelope json.Marshal writes. The frames
// Sheet writes must decode to the same as these.
func sheetBefore(table, id string, u *scoringv1.SheetUpdate) ([]byte, error) {
	out := u
	if u.GetTrace() != nil {
		out = proto.CloneOf(u)
		out.Trace = nil
	}
	body, err := protoJSON.Marshal(out)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		Type   string          `json:"type"`
		Table  string          `json:"table"`
		ID     string          `json:"id"`
		Update json.RawMessage `json:"update"`
	}{TypeSheet, table, id, body})
}

// referenceSheetBody is protojson of u without its trace.
func referenceSheetBody(u *scoringv1.SheetUpdate) ([]byte, error) {
	out := proto.CloneOf(u)
	out.Trace = nil
	return protoJSON.Marshal(out)
}

// checkSheet checks the fast encoder and Sheet against protojson for u
// (codec.check; the frame is compared with sheetBefore's, so without the
// trace) and reports whether the fast path took it.
func checkSheet(tb testing.TB, name string, u *scoringv1.SheetUpdate) (fast bool) {
	tb.Helper()
	return checkSheetFrame(tb, name, "t1", "1740830400123-0", u)
}

// checkSheetFrame is checkSheet for the frame of table and stream entry id.
func checkSheetFrame(tb testing.TB, name, table, id string, u *scoringv1.SheetUpdate) (fast bool) {
	tb.Helper()
	return codec[*scoringv1.SheetUpdate]{
		what:      "Sheet",
		fast:      appendSheetJSON,
		frame:     func(u *scoringv1.SheetUpdate) ([]byte, error) { return Sheet(table, id, u) },
		reference: referenceSheetBody,
		wantFrame: func(u *scoringv1.SheetUpdate, _ []byte) ([]byte, error) { return sheetBefore(table, id, u) },
	}.check(tb, name, u)
}

// scoredGame is what the scoring service stores of one game (sheets.Game),
// from the scoring inputs the runner derives from the table's events
// (table.ScoringInputs).
type scoredGame struct {
	tableID, gameID string
	start           *scoringv1.GameStarted
	hands           []*scoringv1.HandResult // in order: the inputs come in order here
	end             *scoringv1.GameEnded
}

// add takes one scoring input and reports whether it changes the sheet.
func (g *scoredGame) add(in *scoringv1.ScoringInput) bool {
	g.tableID, g.gameID = in.GetTableId(), in.GetGameId()
	switch x := in.GetInput().(type) {
	case *scoringv1.ScoringInput_GameStarted:
		g.start = x.GameStarted
	case *scoringv1.ScoringInput_HandResult:
		g.hands = append(g.hands, x.HandResult)
	case *scoringv1.ScoringInput_GameEnded:
		g.end = x.GameEnded
	default:
		return false
	}
	return g.start != nil
}

// update is the sheet update the scoring service publishes for g: the sheet
// and version sheets.Build computes, and the trace the scorer adds.
func (g *scoredGame) update(tb testing.TB) *scoringv1.SheetUpdate {
	tb.Helper()
	game := sheets.Game{TableID: g.tableID, GameID: g.gameID, Start: g.start, End: g.end,
		Hands: make(map[uint32]*scoringv1.HandResult, len(g.hands))}
	for _, h := range g.hands {
		game.Hands[h.GetHandIndex()] = h
	}
	res, err := sheets.Build(game)
	if err != nil || res.Refused != nil || res.Waiting != 0 {
		tb.Fatalf("game %s: %v (refused %v, waiting %d)", g.gameID, err, res.Refused, res.Waiting)
	}
	return &scoringv1.SheetUpdate{Version: res.Version, Sheet: res.Sheet,
		Trace: &commonv1.TraceContext{Traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
}

// sheetNames are display names as people choose them: mostly not ASCII,
// some with characters JSON escapes or that look like markup.
var sheetNames = []string{
	"ნინო", "გიორგი ბერიძე", "Нина Петрова", "Şükrü Öztürk", "İlkay Ağaoğlu", "José 🃏",
	"👨‍👩‍👧 family", "日本語", "Player 1", `O'Brien "Ace"`, `back\slash`, "tab\tand\nnewline",
	"<b>&amp;</b>", "line\u2028sep", "del\x7f", "bell\x07", "\ufffdreplacement", "  ",
}

// gameSheets plays game seed (playGame, with sheetNames) and calls visit
// with every sheet update the scoring service publishes for it: one when
// the game starts, one per hand and one at the end. The scoring rules
// (khishti, premia, moshla) vary with the seed, as tables choose them.
func gameSheets(tb testing.TB, seed uint64, visit func(*scoringv1.SheetUpdate)) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x7368656574))
	var g scoredGame
	playGame(tb, seed, sheetNames, func(tbl *table.Table, ev *tablev1.Event) {
		for _, in := range tbl.ScoringInputs([]*tablev1.Event{ev}) {
			if gs := in.GetGameStarted(); gs != nil && gs.GetSettings().GetGame() == lobbyv1.Game_GAME_CLASSIC {
				gs.Settings = proto.CloneOf(gs.GetSettings())
				gs.Settings.Khishti = lobbyv1.KhishtiPenalty(1 + rng.IntN(4))
				gs.Settings.Premia, gs.Settings.Moshla, gs.Settings.RestDocked = rng.IntN(4) != 0, rng.IntN(4) != 0, rng.IntN(2) == 0
			}
			if g.add(in) {
				visit(g.update(tb))
			}
		}
	})
}

// premiaSheets are the sheet updates of a classic game whose hands are
// random but where the seats in premia (a bit mask) always make their bid,
// so that premia, moshla and struck hands come up, which they almost never
// do in random play.
func premiaSheets(tb testing.TB, seed uint64, premia uint, visit func(*scoringv1.SheetUpdate)) {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x7072656d6961))
	rules := scoring.DefaultSettings()
	if seed%3 == 0 {
		rules.Variant = classic.Nines
	}
	rules.Khishti = scoring.Khishti(rng.IntN(4))
	rules.RestDocked = seed%2 == 0
	ts := tablesettings.ClassicSettings(rules).Proto()
	var players []*scoringv1.SheetPlayer
	for seat := range uint32(scoring.Seats) {
		players = append(players, &scoringv1.SheetPlayer{Seat: seat, PlayerId: "p" + strconv.Itoa(int(seat)),
			DisplayName: sheetNames[(int(seed)+int(seat))%len(sheetNames)]})
	}
	id := "tbl" + strconv.FormatUint(seed, 10)
	g := scoredGame{tableID: id, gameID: id + ".premia", start: &scoringv1.GameStarted{Settings: ts, Players: players}}
	visit(g.update(tb))
	for h := range rules.Variant.Hands() {
		n := rules.Variant.CardsInHand(h)
		hr := &scoringv1.HandResult{HandIndex: uint32(h), CardsPerSeat: uint32(n)}
		var tricks [scoring.Seats]int
		for range n {
			tricks[rng.IntN(scoring.Seats)]++
		}
		for seat := range scoring.Seats {
			bid := rng.IntN(n + 1)
			if premia&(1<<seat) != 0 {
				bid = tricks[seat]
			}
			hr.Seats = append(hr.Seats, &scoringv1.SeatTricks{Seat: uint32(seat), Bid: uint32(bid), Tricks: uint32(tricks[seat])})
		}
		g.hands = append(g.hands, hr)
		visit(g.update(tb))
	}
	g.end = &scoringv1.GameEnded{Completed: true, HandsPlayed: uint32(rules.Variant.Hands())}
	visit(g.update(tb))
}

// sheetCoverage counts what the real sheets had in them, so that a test can
// tell the sheets tested what they should.
type sheetCoverage struct {
	updates, fast                                      int
	bidZero, bidUnset, khishti, struck, premia, moshla int
	finished, onCourse, final, nonASCII, escaped       int
	maxFrame                                           int
}

func (c *sheetCoverage) count(u *scoringv1.SheetUpdate) {
	s := u.GetSheet()
	for _, p := range s.GetPlayers() {
		n := p.GetDisplayName()
		if strings.ContainsFunc(n, func(r rune) bool { return r >= 0x80 }) {
			c.nonASCII++
		}
		if strings.ContainsFunc(n, func(r rune) bool { return r < ' ' || r == '"' || r == '\\' }) {
			c.escaped++
		}
	}
	for _, p := range s.GetPulkas() {
		if p.GetFinished() {
			c.finished++
		}
		for _, t := range p.GetTotals() {
			if t.GetPremia() != 0 {
				c.premia++
			}
			if t.GetMoshla() != 0 {
				c.moshla++
			}
		}
		for _, h := range p.GetHands() {
			for _, cell := range h.GetCells() {
				switch {
				case cell.Bid == nil:
					c.bidUnset++
				case *cell.Bid == 0:
					c.bidZero++
				}
				if cell.GetPenalty() != 0 {
					c.khishti++
				}
				if cell.GetStruck() {
					c.struck++
				}
			}
		}
	}
	for _, t := range s.GetTotals() {
		if t.GetOnCourse() {
			c.onCourse++
		}
	}
	if u.GetVersion()%2 == 0 {
		c.final++
	}
}

// TestSheetJSON_RealSheetsEqualProtoJSON encodes every sheet update of many
// random classic and Japanese games (and of classic games where some seats
// make every hand) both ways. Real sheets have known enums, valid UTF-8 and
// no nil elements, so the fast path must take every one of them; and every
// kind of cell and line must have come up, or the sheets did not test what
// they should. The frame must also fit sheetFrameSize, so that it is one
// allocation.
func TestSheetJSON_RealSheetsEqualProtoJSON(t *testing.T) {
	games := 40
	if testing.Short() {
		games = 8
	}
	var c sheetCoverage
	check := func(name string, u *scoringv1.SheetUpdate) {
		c.updates++
		if !checkSheet(t, name, u) {
			t.Fatalf("%s: a real sheet fell back to protojson: %v", name, u)
		}
		c.fast++
		c.count(u)
		frame, err := Sheet("0123456789abcdef", "1740830400123-0", u)
		if err != nil {
			t.Fatal(err)
		}
		if size := sheetFrameSize("0123456789abcdef", "1740830400123-0", u); len(frame) > size {
			t.Errorf("%s: a %d-byte frame outgrew sheetFrameSize %d", name, len(frame), size)
		}
		c.maxFrame = max(c.maxFrame, len(frame))
	}
	for g := range games {
		gameSheets(t, uint64(g), func(u *scoringv1.SheetUpdate) {
			check("game "+strconv.Itoa(g)+" sheet v"+strconv.FormatUint(u.GetVersion(), 10), u)
		})
		premiaSheets(t, uint64(g), uint(g%16), func(u *scoringv1.SheetUpdate) {
			check("premia game "+strconv.Itoa(g)+" sheet v"+strconv.FormatUint(u.GetVersion(), 10), u)
		})
		if t.Failed() {
			t.FailNow()
		}
	}
	if c.fast == 0 {
		t.Fatal("the fast path never ran")
	}
	for what, n := range map[string]int{"bid 0": c.bidZero, "unset bid": c.bidUnset, "khishti": c.khishti,
		"struck hand": c.struck, "premia": c.premia, "moshla": c.moshla, "finished pulka": c.finished,
		"on course": c.onCourse, "final sheet": c.final, "non-ASCII name": c.nonASCII, "escaped name": c.escaped} {
		if n == 0 {
			t.Errorf("no sheet had a %s", what)
		}
	}
	t.Logf("%d sheet updates of %d games, %d by the fast path; largest frame %d bytes; %+v", c.updates, 2*games, c.fast, c.maxFrame, c)
}

// TestSheetJSON_Rules pins each of protojson's rules the encoder follows,
// and the cases it leaves to protojson, with the exact compact body where
// the fast path writes one.
func TestSheetJSON_Rules(t *testing.T) {
	cell := func(c *scoringv1.SheetCell) *scoringv1.SheetUpdate {
		return &scoringv1.SheetUpdate{Sheet: &scoringv1.Sheet{Pulkas: []*scoringv1.SheetPulka{{
			Hands: []*scoringv1.SheetHand{{Cells: []*scoringv1.SheetCell{c}}}}}}}
	}
	name := func(n string) *scoringv1.SheetUpdate {
		return &scoringv1.SheetUpdate{Sheet: &scoringv1.Sheet{Players: []*scoringv1.SheetPlayer{{Seat: 1, DisplayName: n}}}}
	}
	settings := func(s *lobbyv1.TableSettings) *scoringv1.SheetUpdate {
		return &scoringv1.SheetUpdate{Sheet: &scoringv1.Sheet{Settings: s}}
	}
	dur := func(secs int64, nanos int32) *scoringv1.SheetUpdate {
		return settings(&lobbyv1.TableSettings{MoveTime: &durationpb.Duration{Seconds: secs, Nanos: nanos}})
	}
	const cellPath = `{"sheet":{"pulkas":[{"hands":[{"cells":[`
	for _, tc := range []struct {
		name string
		u    *scoringv1.SheetUpdate
		fast bool   // the fast path writes it
		want string // the exact fast body, when fast
		err  bool   // protojson (and so Sheet) fails
	}{
		{name: "empty update", u: &scoringv1.SheetUpdate{}, fast: true, want: `{}`},
		{name: "empty sheet", u: &scoringv1.SheetUpdate{Version: 1, Sheet: &scoringv1.Sheet{}}, fast: true, want: `{"version":"1","sheet":{}}`},
		{name: "every sheet scalar", u: &scoringv1.SheetUpdate{Version: math.MaxUint64, Sheet: &scoringv1.Sheet{
			TableId: "t1", GameId: "t1.00ab", CurrentHand: 23}},
			fast: true, want: `{"version":"18446744073709551615","sheet":{"table_id":"t1","game_id":"t1.00ab","current_hand":23}}`},
		{name: "optional bid 0 written", u: cell(&scoringv1.SheetCell{Bid: proto.Uint32(0)}),
			fast: true, want: cellPath + `{"bid":0}]}]}]}}`},
		{name: "unset bid omitted", u: cell(&scoringv1.SheetCell{Seat: 1, Tricks: 9}),
			fast: true, want: cellPath + `{"seat":1,"tricks":9}]}]}]}}`},
		{name: "zero scalars omitted", u: cell(&scoringv1.SheetCell{Seat: 0, Bid: proto.Uint32(3), Tricks: 0, Points: 0, Penalty: 0,
			Outcome: scoringv1.HandOutcome_HAND_OUTCOME_UNSPECIFIED, Struck: false}),
			fast: true, want: cellPath + `{"bid":3}]}]}]}}`},
		{name: "every cell field", u: cell(&scoringv1.SheetCell{Seat: 3, Bid: proto.Uint32(2), Tricks: 1, Points: 10, Penalty: -200,
			Outcome: scoringv1.HandOutcome_HAND_OUTCOME_MISSED, Struck: true}),
			fast: true, want: cellPath + `{"seat":3,"bid":2,"tricks":1,"points":"10","penalty":"-200","outcome":"HAND_OUTCOME_MISSED","struck":true}]}]}]}}`},
		{name: "negative and extreme int64", u: &scoringv1.SheetUpdate{Sheet: &scoringv1.Sheet{
			Pulkas: []*scoringv1.SheetPulka{{PulkaIndex: 3, Finished: true, Totals: []*scoringv1.SheetPulkaSeat{
				{Seat: 1, Premia: math.MaxInt64, Moshla: math.MinInt64, Total: -1}}}},
			Totals: []*scoringv1.SeatTotal{{Seat: 2, Total: -4250, OnCourse: true}, {}}}},
			fast: true, want: `{"sheet":{"pulkas":[{"pulka_index":3,"finished":true,"totals":[{"seat":1,"premia":"9223372036854775807",` +
				`"moshla":"-9223372036854775808","total":"-1"}]}],"totals":[{"seat":2,"total":"-4250","on_course":true},{}]}}`},
		{name: "empty lists omitted", u: &scoringv1.SheetUpdate{Sheet: &scoringv1.Sheet{Players: []*scoringv1.SheetPlayer{},
			Pulkas: []*scoringv1.SheetPulka{{Hands: []*scoringv1.SheetHand{{Cells: []*scoringv1.SheetCell{}}}, Totals: []*scoringv1.SheetPulkaSeat{}}},
			Totals: []*scoringv1.SeatTotal{}}},
			fast: true, want: `{"sheet":{"pulkas":[{"hands":[{}]}]}}`},
		{name: "empty elements written as {}", u: &scoringv1.SheetUpdate{Sheet: &scoringv1.Sheet{Players: []*scoringv1.SheetPlayer{{}, {}},
			Pulkas: []*scoringv1.SheetPulka{{}}}},
			fast: true, want: `{"sheet":{"players":[{},{}],"pulkas":[{}]}}`},
		{name: "empty settings, stake and durations", u: settings(&lobbyv1.TableSettings{Stake: &lobbyv1.Stake{},
			MoveTime: &durationpb.Duration{}, ReconnectGrace: &durationpb.Duration{}}),
			fast: true, want: `{"sheet":{"settings":{"stake":{},"move_time":"0s","reconnect_grace":"0s"}}}`},
		{name: "classic settings as a table sends them", u: settings(tablesettings.ClassicSettings(scoring.DefaultSettings()).Proto()),
			fast: true, want: `{"sheet":{"settings":{"game":"GAME_CLASSIC","classic_variant":"CLASSIC_VARIANT_STANDARD",` +
				`"khishti":"KHISHTI_PENALTY_200","premia":true,"moshla":true,"rest_docked":true,"move_time":"20s","reconnect_grace":"60s"}}}`},
		{name: "every settings field, free stake", u: settings(&lobbyv1.TableSettings{Game: lobbyv1.Game_GAME_JAPANESE,
			ClassicVariant: lobbyv1.ClassicVariant_CLASSIC_VARIANT_NINES, Khishti: lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_PER_CARD,
			Premia: true, Moshla: true, RestDocked: true, JapaneseTarget: 31, Visibility: lobbyv1.TableVisibility_TABLE_VISIBILITY_PRIVATE,
			HasPassword: true, Stake: &lobbyv1.Stake{Kind: &lobbyv1.Stake_Free{Free: &lobbyv1.FreeStake{}}},
			MoveTime: durationpb.New(1500e6), ReconnectGrace: &durationpb.Duration{Seconds: 90}}),
			fast: true, want: `{"sheet":{"settings":{"game":"GAME_JAPANESE","classic_variant":"CLASSIC_VARIANT_NINES",` +
				`"khishti":"KHISHTI_PENALTY_PER_CARD","premia":true,"moshla":true,"rest_docked":true,"japanese_target":31,` +
				`"visibility":"TABLE_VISIBILITY_PRIVATE","has_password":true,"stake":{"free":{}},"move_time":"1.500s","reconnect_grace":"90s"}}}`},
		{name: "coin stake", u: settings(&lobbyv1.TableSettings{Stake: &lobbyv1.Stake{Kind: &lobbyv1.Stake_Coins{Coins: &lobbyv1.CoinStake{Amount: 250}}}}),
			fast: true, want: `{"sheet":{"settings":{"stake":{"coins":{"amount":"250"}}}}}`},
		{name: "coin stake of 0", u: settings(&lobbyv1.TableSettings{Stake: &lobbyv1.Stake{Kind: &lobbyv1.Stake_Coins{Coins: &lobbyv1.CoinStake{}}}}),
			fast: true, want: `{"sheet":{"settings":{"stake":{"coins":{}}}}}`},

		// Durations: 0, 3, 6 or 9 digits and the sign, as protojson writes them.
		{name: "duration 3 digits", u: dur(20, 1_000_000), fast: true, want: `{"sheet":{"settings":{"move_time":"20.001s"}}}`},
		{name: "duration 6 digits", u: dur(0, 1_000), fast: true, want: `{"sheet":{"settings":{"move_time":"0.000001s"}}}`},
		{name: "duration 9 digits", u: dur(7, 7), fast: true, want: `{"sheet":{"settings":{"move_time":"7.000000007s"}}}`},
		{name: "duration negative", u: dur(-1, -500_000_000), fast: true, want: `{"sheet":{"settings":{"move_time":"-1.500s"}}}`},
		{name: "duration negative below a second", u: dur(0, -5), fast: true, want: `{"sheet":{"settings":{"move_time":"-0.000000005s"}}}`},
		{name: "duration longest", u: dur(maxDurationSeconds, 999_999_999), fast: true,
			want: `{"sheet":{"settings":{"move_time":"315576000000.999999999s"}}}`},
		{name: "duration most negative", u: dur(-maxDurationSeconds, -999_999_999), fast: true,
			want: `{"sheet":{"settings":{"move_time":"-315576000000.999999999s"}}}`},
		{name: "duration seconds too large", u: dur(maxDurationSeconds+1, 0), err: true},
		{name: "duration seconds too small", u: dur(-maxDurationSeconds-1, 0), err: true},
		{name: "duration nanos a whole second", u: dur(1, 1_000_000_000), err: true},
		{name: "duration nanos a whole negative second", u: dur(-1, -1_000_000_000), err: true},
		{name: "duration signs differ", u: dur(1, -1), err: true},
		{name: "duration signs differ the other way", u: dur(-1, 1), err: true},
		{name: "invalid reconnect grace", u: settings(&lobbyv1.TableSettings{ReconnectGrace: &durationpb.Duration{Seconds: math.MinInt64}}), err: true},

		// Names are written byte for byte as protojson writes them.
		{name: "Georgian name", u: name("ნინო"), fast: true, want: `{"sheet":{"players":[{"seat":1,"display_name":"ნინო"}]}}`},
		{name: "Cyrillic name", u: name("Нина Петрова"), fast: true, want: `{"sheet":{"players":[{"seat":1,"display_name":"Нина Петрова"}]}}`},
		{name: "Turkish name", u: name("Şükrü Öztürk"), fast: true, want: `{"sheet":{"players":[{"seat":1,"display_name":"Şükrü Öztürk"}]}}`},
		{name: "emoji", u: name("José 🃏👨‍👩‍👧"), fast: true, want: `{"sheet":{"players":[{"seat":1,"display_name":"José 🃏👨‍👩‍👧"}]}}`},
		{name: "markup not escaped", u: name("<b>&</b>"), fast: true, want: `{"sheet":{"players":[{"seat":1,"display_name":"<b>&</b>"}]}}`},
		{name: "quote and backslash", u: name(`"A\B"`), fast: true, want: `{"sheet":{"players":[{"seat":1,"display_name":"\"A\\B\""}]}}`},
		{name: "control characters", u: name("\x00\b\f\n\r\t\x01\x1f\x7f"), fast: true,
			want: `{"sheet":{"players":[{"seat":1,"display_name":"\u0000\b\f\n\r\t\u0001\u001f` + "\x7f" + `"}]}}`},
		{name: "U+2028 and U+2029 raw", u: name("a\u2028b\u2029"), fast: true,
			want: "{\"sheet\":{\"players\":[{\"seat\":1,\"display_name\":\"a\u2028b\u2029\"}]}}"},
		{name: "U+FFFD written validly", u: name("\ufffd"), fast: true, want: "{\"sheet\":{\"players\":[{\"seat\":1,\"display_name\":\"\ufffd\"}]}}"},
		{name: "invalid UTF-8 name fails", u: name("Nino\xff"), err: true},
		{name: "truncated UTF-8 name fails", u: name("ნ"[:2]), err: true},
		{name: "UTF-8 surrogate fails", u: name("\xed\xa0\x80"), err: true},
		{name: "overlong UTF-8 fails", u: name("\xc0\xaf"), err: true},
		{name: "invalid UTF-8 player id fails", u: &scoringv1.SheetUpdate{Sheet: &scoringv1.Sheet{
			Players: []*scoringv1.SheetPlayer{{PlayerId: "p\x80"}}}}, err: true},
		{name: "invalid UTF-8 table id fails", u: &scoringv1.SheetUpdate{Sheet: &scoringv1.Sheet{TableId: "\xfe"}}, err: true},

		// Enums protojson writes as numbers: left to it.
		{name: "unknown outcome", u: cell(&scoringv1.SheetCell{Outcome: 5})},
		{name: "negative outcome", u: cell(&scoringv1.SheetCell{Outcome: -1})},
		{name: "unknown game", u: settings(&lobbyv1.TableSettings{Game: 3})},
		{name: "unknown classic variant", u: settings(&lobbyv1.TableSettings{ClassicVariant: 3})},
		{name: "unknown khishti", u: settings(&lobbyv1.TableSettings{Khishti: 5})},
		{name: "unknown visibility", u: settings(&lobbyv1.TableSettings{Visibility: math.MaxInt32})},

		// Nil elements and members: left to protojson.
		{name: "nil player", u: &scoringv1.SheetUpdate{Sheet: &scoringv1.Sheet{Players: []*scoringv1.SheetPlayer{{Seat: 1}, nil}}}},
		{name: "nil pulka", u: &scoringv1.SheetUpdate{Sheet: &scoringv1.Sheet{Pulkas: []*scoringv1.SheetPulka{nil}}}},
		{name: "nil hand", u: &scoringv1.SheetUpdate{Sheet: &scoringv1.Sheet{Pulkas: []*scoringv1.SheetPulka{{Hands: []*scoringv1.SheetHand{nil}}}}}},
		{name: "nil cell", u: &scoringv1.SheetUpdate{Sheet: &scoringv1.Sheet{Pulkas: []*scoringv1.SheetPulka{{
			Hands: []*scoringv1.SheetHand{{Cells: []*scoringv1.SheetCell{{}, nil}}}}}}}},
		{name: "nil pulka seat", u: &scoringv1.SheetUpdate{Sheet: &scoringv1.Sheet{Pulkas: []*scoringv1.SheetPulka{{
			Totals: []*scoringv1.SheetPulkaSeat{nil}}}}}},
		{name: "nil total", u: &scoringv1.SheetUpdate{Sheet: &scoringv1.Sheet{Totals: []*scoringv1.SeatTotal{nil}}}},
		{name: "stake member holding nil", u: settings(&lobbyv1.TableSettings{Stake: &lobbyv1.Stake{Kind: &lobbyv1.Stake_Coins{}}})},
		{name: "free stake member holding nil", u: settings(&lobbyv1.TableSettings{Stake: &lobbyv1.Stake{Kind: &lobbyv1.Stake_Free{}}})},

		// Between services only: never written.
		{name: "trace never written", u: &scoringv1.SheetUpdate{Version: 3, Sheet: &scoringv1.Sheet{CurrentHand: 1},
			Trace: &commonv1.TraceContext{Traceparent: "00-abc-def-01", Tracestate: "x=1"}},
			fast: true, want: `{"version":"3","sheet":{"current_hand":1}}`},
		{name: "trace never written by protojson either", u: &scoringv1.SheetUpdate{Version: 3, Sheet: &scoringv1.Sheet{
			Totals: []*scoringv1.SeatTotal{nil}}, Trace: &commonv1.TraceContext{Traceparent: "00-abc-def-01"}}},
		{name: "invalid UTF-8 in the trace is fine", u: &scoringv1.SheetUpdate{Version: 3, Trace: &commonv1.TraceContext{Traceparent: "\xff"}},
			fast: true, want: `{"version":"3"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fast := checkSheet(t, tc.name, tc.u)
			if fast != tc.fast {
				t.Errorf("fast path took it: %v, want %v", fast, tc.fast)
			}
			_, err := Sheet("t1", "1-0", tc.u)
			if (err != nil) != tc.err {
				t.Errorf("Sheet error %v, want error: %v", err, tc.err)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "wire: encode sheet: ") {
				t.Errorf("Sheet error %q is not wrapped", err)
			}
			if got, ok := appendSheetJSON(nil, tc.u); ok && string(got) != tc.want {
				t.Errorf("fast body\n got %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestSheet_NilUpdate: a nil update is left to protojson, as before.
func TestSheet_NilUpdate(t *testing.T) {
	if _, ok := appendSheetJSON(nil, nil); ok {
		t.Fatal("fast path took a nil update")
	}
	got, err := Sheet("t1", "1-0", nil)
	want, werr := sheetBefore("t1", "1-0", nil)
	if err != nil || werr != nil {
		t.Fatalf("Sheet(nil): %v; before: %v", err, werr)
	}
	if g, w := decode(t, "frame", got), decode(t, "want frame", want); !reflect.DeepEqual(g, w) {
		t.Errorf("Sheet(nil) = %s, want %s", got, want)
	}
}

// TestSheet_FrameIsTheEnvelopeAroundProtoJSON checks the hand-written
// envelope against encoding/json's, ids with characters JSON must escape
// included, on the fast path and on protojson's.
func TestSheet_FrameIsTheEnvelopeAroundProtoJSON(t *testing.T) {
	fast := &scoringv1.SheetUpdate{Version: 2, Sheet: &scoringv1.Sheet{TableId: "t1", CurrentHand: 1}}
	slow := &scoringv1.SheetUpdate{Version: 2, Sheet: &scoringv1.Sheet{Totals: []*scoringv1.SeatTotal{nil}}}
	for _, tc := range []struct{ table, id string }{
		{"t1", "1700000000000-0"},
		{`odd "table" \ <&> é`, "1-0"},
		{"t\n2\u2028", "2-0\xff"},
	} {
		if !checkSheetFrame(t, tc.table, tc.table, tc.id, fast) {
			t.Errorf("%q: the fast path did not take the update", tc.table)
		}
		if checkSheetFrame(t, tc.table, tc.table, tc.id, slow) {
			t.Errorf("%q: the fast path took a nil total", tc.table)
		}
		frame, err := Sheet(tc.table, tc.id, fast)
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"type":"sheet","table":`; !strings.HasPrefix(string(frame), want) {
			t.Errorf("%q: frame %s does not start with %s", tc.table, frame, want)
		}
	}
}

// TestAppendProtoString_ByteForByteProtoJSON writes every ASCII
// character, and UTF-8 valid and not, both ways: the fast encoder writes
// protojson's very bytes, and fails exactly where protojson fails.
func TestAppendProtoString_ByteForByteProtoJSON(t *testing.T) {
	strs := []string{"", "ნინო", "Нина", "Şükrü", "🃏", "\u2028\u2029", "\ufffd", "\U0010ffff",
		"\xff", "a\x80", "\xed\xa0\x80", "\xed\xbf\xbf", "\xc0\x80", "\xf4\x90\x80\x80", "ნ"[:1], "ნ"[:2], "🃏"[:3], "x\xffy"}
	for c := range 0x80 {
		strs = append(strs, string(rune(c)), "a"+string(rune(c))+"ბ")
	}
	for _, s := range strs {
		want, werr := protoJSON.Marshal(&scoringv1.SheetPlayer{DisplayName: s})
		e := jsonEncoder{ok: true}
		e.beginRoot()
		e.string("display_name", s)
		e.endRoot()
		switch {
		case werr != nil && e.ok:
			t.Errorf("%q: protojson fails (%v) but the fast encoder wrote %s", s, werr, e.b)
		case werr == nil && !e.ok:
			t.Errorf("%q: the fast encoder fails, protojson wrote %s", s, want)
		case werr == nil && string(e.b) != string(want):
			t.Errorf("%q: got %s, want %s", s, e.b, want)
		}
	}
}

// TestSheetJSON_CoversEveryField fills every field of the update and of
// every message in it (and each stake kind in turn) and checks that the
// fast path takes it and writes all of it, so that a field added to the
// protos but not to sheetjson.go fails here.
func TestSheetJSON_CoversEveryField(t *testing.T) {
	kinds := (&lobbyv1.Stake{}).ProtoReflect().Descriptor().Oneofs().ByName("kind").Fields()
	for i := range kinds.Len() {
		fd := kinds.Get(i)
		u := &scoringv1.SheetUpdate{}
		populate(u.ProtoReflect())
		stake := u.GetSheet().GetSettings().GetStake().ProtoReflect()
		member := stake.NewField(fd)
		populate(member.Message())
		stake.Set(fd, member)
		if !checkSheet(t, string(fd.Name()), u) {
			t.Errorf("stake %s: the fast path did not take a full update", fd.Name())
		}
		if u.GetTrace() == nil {
			t.Fatal("populate left the trace out")
		}
	}
}

// FuzzSheetJSON decodes the input as a SheetUpdate and checks the fast
// encoder against protojson (checkSheet): equal when protojson succeeds,
// failing when protojson fails. proto.Unmarshal refuses invalid UTF-8, so
// the input is also tried as a player's name, whatever its bytes.
func FuzzSheetJSON(f *testing.F) {
	// A few sheets of each size, not every one: the fuzzer is faster on
	// small inputs, and a long sheet is only more of the same rows.
	for g := range uint64(3) {
		gameSheets(f, 200+g, func(u *scoringv1.SheetUpdate) {
			if v := u.GetVersion(); v == 1 || v == 3 || v == 9 || v%2 == 0 {
				if b, err := proto.Marshal(u); err == nil {
					f.Add(b)
				}
			}
		})
	}
	premiaSheets(f, 7, 0b0101, func(u *scoringv1.SheetUpdate) {
		if u.GetVersion()%2 == 0 {
			if b, err := proto.Marshal(u); err == nil {
				f.Add(b)
			}
		}
	})
	for _, u := range []*scoringv1.SheetUpdate{
		{Sheet: &scoringv1.Sheet{Settings: &lobbyv1.TableSettings{Game: 7, MoveTime: &durationpb.Duration{Seconds: -1, Nanos: 1},
			Stake: &lobbyv1.Stake{Kind: &lobbyv1.Stake_Coins{Coins: &lobbyv1.CoinStake{Amount: -5}}}}}},
		{Sheet: &scoringv1.Sheet{Players: []*scoringv1.SheetPlayer{{DisplayName: "ნინო \"\\\t"}},
			Pulkas: []*scoringv1.SheetPulka{{Hands: []*scoringv1.SheetHand{{Cells: []*scoringv1.SheetCell{{Bid: proto.Uint32(0), Outcome: 9}}}}}}}},
	} {
		if b, err := proto.Marshal(u); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("Şükrü\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkSheet(t, "fuzzed name", &scoringv1.SheetUpdate{Sheet: &scoringv1.Sheet{
			Players: []*scoringv1.SheetPlayer{{Seat: 1, DisplayName: string(data)}}}})
		u := &scoringv1.SheetUpdate{}
		if err := proto.Unmarshal(data, u); err != nil {
			t.Skip()
		}
		checkSheet(t, "fuzzed update", u)
	})
}

// benchSheet is the update the scoring service publishes after hands hands
// (1..24) of a standard classic game with four non-ASCII names, random
// hands and one seat on course for every premia (premiaSheets); at 24 the
// game is over and the version is the final one.
func benchSheet(tb testing.TB, hands int) *scoringv1.SheetUpdate {
	tb.Helper()
	want := 1 + 2*uint64(hands)
	if hands == 24 {
		want++
	}
	var found *scoringv1.SheetUpdate
	premiaSheets(tb, 1, 0b0010, func(u *scoringv1.SheetUpdate) {
		if found == nil && u.GetVersion() == want {
			found = u
		}
	})
	if found == nil {
		tb.Fatalf("no sheet after %d hands", hands)
	}
	return found
}

// BenchmarkSheet compares Sheet (the fast encoder) with Sheet as it was
// (protojson and json.Marshal of the envelope) on a classic sheet in the
// middle of the game (12 hands played) and at its end (24 hands and the
// final version), with the scorer's trace that protojson has to clone away.
func BenchmarkSheet(b *testing.B) {
	for _, bc := range []struct {
		name  string
		hands int
	}{{"mid-game", 12}, {"end-of-game", 24}} {
		u := benchSheet(b, bc.hands)
		b.Run(bc.name+"/fast", func(b *testing.B) {
			if _, ok := appendSheetJSON(nil, u); !ok {
				b.Fatal("the fast path does not take the sheet")
			}
			frame, _ := Sheet("0123456789abcdef", "1740830400125-0", u)
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Sheet("0123456789abcdef", "1740830400125-0", u); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/protojson", func(b *testing.B) {
			frame, _ := sheetBefore("0123456789abcdef", "1740830400125-0", u)
			b.SetBytes(int64(len(frame)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := sheetBefore("0123456789abcdef", "1740830400125-0", u); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
