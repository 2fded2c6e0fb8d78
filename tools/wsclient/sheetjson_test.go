package wsclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/pulka/pulka/pkg/classic"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/sheets"
	"github.com/pulka/pulka/pkg/table"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/pkg/wire"
)

// gatewaySheet is u's body in protojson's compact layout (what the gateway
// means to write, whoever's encoder writes it): without the trace, proto
// names, compact.
func gatewaySheet(tb testing.TB, u *scoringv1.SheetUpdate) []byte {
	tb.Helper()
	out := u
	if u.GetTrace() != nil {
		out = proto.CloneOf(u)
		out.Trace = nil
	}
	b, err := protojson.MarshalOptions{UseProtoNames: true}.Marshal(out)
	if err != nil {
		tb.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// sheetNames are display names as players choose them: Georgian, Russian,
// Turkish, accents, a four-byte emoji, plain ASCII.
var sheetNames = [][]string{
	{"ნიკოლოზ ბერიძე", "Сергей Иванов", "Çağrı Şahin", "Ana"},
	{"თამარ", "Zoë 🃏", "Öykü Işık", "Дмитрий"},
	{"Player 0", "ლაშა", "Gülşen Yılmaz", "Ёжик"},
}

// sheetUpdates returns every sheet update the scoring service publishes for
// the game played at t (evs): one after each of the game's scoring inputs
// (t.ScoringInputs), built by sheets.Build as the scoring service builds
// them.
func sheetUpdates(tb testing.TB, t *table.Table, evs []*tablev1.Event) []*scoringv1.SheetUpdate {
	tb.Helper()
	game := sheets.Game{Hands: map[uint32]*scoringv1.HandResult{}}
	var out []*scoringv1.SheetUpdate
	for _, in := range t.ScoringInputs(evs) {
		switch x := in.GetInput().(type) {
		case *scoringv1.ScoringInput_GameStarted:
			game.TableID, game.GameID, game.Start = in.GetTableId(), in.GetGameId(), x.GameStarted
		case *scoringv1.ScoringInput_HandResult:
			if int(x.HandResult.GetHandIndex()) != len(game.Hands) {
				tb.Fatalf("hand %d after %d hands", x.HandResult.GetHandIndex(), len(game.Hands))
			}
			game.Hands[x.HandResult.GetHandIndex()] = x.HandResult
		case *scoringv1.ScoringInput_GameEnded:
			game.End = x.GameEnded
		}
		if game.Start == nil {
			tb.Fatalf("scoring input %v before the game started", in)
		}
		res, err := sheets.Build(game)
		if err != nil || res.Refused != nil || res.Waiting != 0 {
			tb.Fatalf("game %s: %v (refused %v, waiting %d)", game.GameID, err, res.Refused, res.Waiting)
		}
		out = append(out, &scoringv1.SheetUpdate{Version: res.Version, Sheet: res.Sheet})
	}
	return out
}

// randomSheets returns the sheet updates of the random game seed, its
// players named from sheetNames.
func randomSheets(tb testing.TB, seed uint64) []*scoringv1.SheetUpdate {
	tb.Helper()
	t, evs := playRandomTable(tb, seed, sheetNames[seed%uint64(len(sheetNames))])
	return sheetUpdates(tb, t, evs)
}

// sheetBodyOf cuts the update's body out of a sheet frame.
func sheetBodyOf(frame []byte) []byte {
	i := bytes.Index(frame, []byte(`,"update":`))
	if i < 0 || len(frame) == 0 {
		return nil
	}
	return frame[i+len(`,"update":`) : len(frame)-1]
}

func sameSheetFrame(a, b Frame) bool {
	return a.Type == b.Type && a.Ref == b.Ref && a.Table == b.Table && a.ID == b.ID && a.Cmd == b.Cmd &&
		a.Event == nil && b.Event == nil && a.Sheet != nil && b.Sheet != nil && proto.Equal(a.Sheet, b.Sheet) &&
		a.Err == nil && b.Err == nil && a.At.Equal(b.At)
}

// TestDecodeSheetJSON_RealSheetsDecodeAsWithProtojson: every sheet update
// the scoring service would publish for many random games (classic and
// Japanese, players with non-ASCII names), in both layouts protojson
// writes, takes the fast path and decodes exactly as protojson decodes it;
// and so do the frames wire.Sheet writes of them.
func TestDecodeSheetJSON_RealSheetsDecodeAsWithProtojson(t *testing.T) {
	games := 30
	if testing.Short() {
		games = 6
	}
	at := time.Unix(1, 0)
	hits, wireHits := 0, 0
	features := map[string]int{}
	for seed := uint64(1); seed <= uint64(games); seed++ {
		for i, u := range randomSheets(t, seed) {
			compact := gatewaySheet(t, u)
			for _, body := range [][]byte{compact, spaced(compact)} {
				want := &scoringv1.SheetUpdate{}
				if err := protoIn.Unmarshal(body, want); err != nil {
					t.Fatalf("seed %d: protojson refuses its own output (%v): %s", seed, err, body)
				}
				if !proto.Equal(want, u) {
					t.Fatalf("seed %d: protojson does not round-trip the sheet: %s", seed, body)
				}
				got, ok := decodeSheetJSON(body)
				if !ok {
					t.Fatalf("seed %d: the fast path refused sheet %d: %s", seed, i, body)
				}
				if !proto.Equal(got, want) {
					t.Fatalf("seed %d: %s\nby hand   %v\nprotojson %v", seed, body, got, want)
				}
				hits++
			}
			// The frame the gateway's encoder writes, whichever it is now:
			// it must take the fast paths, or the load generator would
			// silently pay for the generic passes again.
			frame, err := wire.Sheet("t1", fmt.Sprintf("1740830400000-%d", i), u)
			if err != nil {
				t.Fatal(err)
			}
			f, ok := decodeSheetFrame(frame, at)
			full, err := decodeFrame(frame, at)
			if !ok || err != nil || !sameSheetFrame(f, full) {
				t.Fatalf("seed %d: frame %s: fast %v (%v), full %v (%v)", seed, frame, f, ok, full, err)
			}
			if _, ok := decodeSheetJSON(sheetBodyOf(frame)); !ok {
				t.Fatalf("seed %d: wire.Sheet's frame missed the fast path (its layout is not protojson's compact one?): %s", seed, frame)
			}
			wireHits++
			countSheetFeatures(u, features)
		}
	}
	for _, f := range []string{"a pass (bid 0)", "a khishti", "a premia", "a moshla", "a struck cell", "a finished pulka",
		"a player on course", "a player off course", "a cell without a bid (Japanese)", "a non-ASCII name",
		"a four-byte character", "a final sheet", "an empty sheet", "a negative total"} {
		if features[f] == 0 {
			t.Errorf("no sheet with %s in %d games", f, games)
		}
	}
	if hits == 0 || wireHits == 0 {
		t.Fatal("no sheet took the fast path")
	}
	t.Logf("%d bodies and %d wire.Sheet frames took the fast path; %v", hits, wireHits, features)
}

// countSheetFeatures counts what the real-game test must have seen.
func countSheetFeatures(u *scoringv1.SheetUpdate, features map[string]int) {
	s := u.GetSheet()
	if len(s.GetPulkas()) == 0 {
		features["an empty sheet"]++
	}
	if u.GetVersion()%2 == 0 {
		features["a final sheet"]++
	}
	for _, p := range s.GetPlayers() {
		if !isASCII(p.GetDisplayName()) {
			features["a non-ASCII name"]++
		}
		for _, r := range p.GetDisplayName() {
			if utf8.RuneLen(r) == 4 {
				features["a four-byte character"]++
			}
		}
	}
	for _, p := range s.GetPulkas() {
		if p.GetFinished() {
			features["a finished pulka"]++
		}
		for _, h := range p.GetHands() {
			for _, c := range h.GetCells() {
				switch {
				case c.Bid == nil:
					features["a cell without a bid (Japanese)"]++
				case *c.Bid == 0:
					features["a pass (bid 0)"]++
				}
				if c.GetPenalty() < 0 {
					features["a khishti"]++
				}
				if c.GetStruck() {
					features["a struck cell"]++
				}
			}
		}
		for _, t := range p.GetTotals() {
			if t.GetPremia() > 0 {
				features["a premia"]++
			}
			if t.GetMoshla() < 0 {
				features["a moshla"]++
			}
		}
	}
	for _, t := range s.GetTotals() {
		if t.GetOnCourse() {
			features["a player on course"]++
		} else {
			features["a player off course"]++
		}
		if t.GetTotal() < 0 {
			features["a negative total"]++
		}
	}
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// baseSheet is a sheet update as the gateway writes it
// (TestDecodeSheetJSON_BaseSheetIsTheGatewaysLayout); the table cases edit
// it.
const baseSheet = `{"version":"7","sheet":{"table_id":"t1","game_id":"t1-7",` +
	`"settings":{"game":"GAME_CLASSIC","classic_variant":"CLASSIC_VARIANT_STANDARD","khishti":"KHISHTI_PENALTY_200","premia":true,"moshla":true,"rest_docked":true,"visibility":"TABLE_VISIBILITY_PUBLIC","stake":{"coins":{"amount":"50"}},"move_time":"20s","reconnect_grace":"60s"},` +
	`"players":[{"player_id":"p0","display_name":"ნიკა"},{"seat":1,"player_id":"p1","display_name":"Сергей"},{"seat":2,"display_name":"Bot 2"},{"seat":3,"player_id":"p3","display_name":"Çağrı 🃏"}],` +
	`"pulkas":[{"hands":[` +
	`{"cards":1,"cells":[{"bid":0,"points":"50","outcome":"HAND_OUTCOME_MADE"},{"seat":1,"bid":1,"penalty":"-200","outcome":"HAND_OUTCOME_KHISHTI","struck":true},{"seat":2,"bid":0,"tricks":1,"points":"10","outcome":"HAND_OUTCOME_MISSED"},{"seat":3,"outcome":"HAND_OUTCOME_IN_PROGRESS"}]}],` +
	`"totals":[{"total":"50"},{"seat":1,"moshla":"-100","total":"-300"},{"seat":2,"premia":"100","total":"110"},{"seat":3}]}],` +
	`"totals":[{"total":"50","on_course":true},{"seat":1,"total":"-300"},{"seat":2,"total":"110"},{"seat":3}],"current_hand":1}}`

func TestDecodeSheetJSON_BaseSheetIsTheGatewaysLayout(t *testing.T) {
	bid := proto.Uint32
	u := &scoringv1.SheetUpdate{Version: 7, Sheet: &scoringv1.Sheet{
		TableId: "t1", GameId: "t1-7",
		Settings: &lobbyv1.TableSettings{Game: lobbyv1.Game_GAME_CLASSIC, ClassicVariant: lobbyv1.ClassicVariant_CLASSIC_VARIANT_STANDARD,
			Khishti: lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_200, Premia: true, Moshla: true, RestDocked: true,
			Visibility: lobbyv1.TableVisibility_TABLE_VISIBILITY_PUBLIC,
			Stake:      &lobbyv1.Stake{Kind: &lobbyv1.Stake_Coins{Coins: &lobbyv1.CoinStake{Amount: 50}}},
			MoveTime:   durationpb.New(20 * time.Second), ReconnectGrace: durationpb.New(time.Minute)},
		Players: []*scoringv1.SheetPlayer{{Seat: 0, PlayerId: "p0", DisplayName: "ნიკა"}, {Seat: 1, PlayerId: "p1", DisplayName: "Сергей"},
			{Seat: 2, DisplayName: "Bot 2"}, {Seat: 3, PlayerId: "p3", DisplayName: "Çağrı 🃏"}},
		Pulkas: []*scoringv1.SheetPulka{{Hands: []*scoringv1.SheetHand{{Cards: 1, Cells: []*scoringv1.SheetCell{
			{Seat: 0, Bid: bid(0), Points: 50, Outcome: scoringv1.HandOutcome_HAND_OUTCOME_MADE},
			{Seat: 1, Bid: bid(1), Penalty: -200, Outcome: scoringv1.HandOutcome_HAND_OUTCOME_KHISHTI, Struck: true},
			{Seat: 2, Bid: bid(0), Tricks: 1, Points: 10, Outcome: scoringv1.HandOutcome_HAND_OUTCOME_MISSED},
			{Seat: 3, Outcome: scoringv1.HandOutcome_HAND_OUTCOME_IN_PROGRESS},
		}}}, Totals: []*scoringv1.SheetPulkaSeat{{Seat: 0, Total: 50}, {Seat: 1, Moshla: -100, Total: -300},
			{Seat: 2, Premia: 100, Total: 110}, {Seat: 3}}}},
		Totals:      []*scoringv1.SeatTotal{{Seat: 0, Total: 50, OnCourse: true}, {Seat: 1, Total: -300}, {Seat: 2, Total: 110}, {Seat: 3}},
		CurrentHand: 1,
	}}
	if got := gatewaySheet(t, u); string(got) != baseSheet {
		t.Fatalf("the gateway writes\n%s\nnot\n%s", got, baseSheet)
	}
}

// withSheet is baseSheet with old replaced by new (exactly once).
func withSheet(tb testing.TB, old, new string) string {
	tb.Helper()
	if strings.Count(baseSheet, old) != 1 {
		tb.Fatalf("%q is not in the base sheet once", old)
	}
	return strings.Replace(baseSheet, old, new, 1)
}

// baseSettings is the settings object of baseSheet.
const baseSettings = `{"game":"GAME_CLASSIC","classic_variant":"CLASSIC_VARIANT_STANDARD","khishti":"KHISHTI_PENALTY_200","premia":true,"moshla":true,"rest_docked":true,"visibility":"TABLE_VISIBILITY_PUBLIC","stake":{"coins":{"amount":"50"}},"move_time":"20s","reconnect_grace":"60s"}`

// withSettings is baseSheet with other settings.
func withSettings(tb testing.TB, settings string) string {
	tb.Helper()
	return withSheet(tb, baseSettings, settings)
}

// withName is baseSheet with seat 1 named name (raw bytes between the
// quotes).
func withName(tb testing.TB, name string) string {
	tb.Helper()
	return withSheet(tb, `"display_name":"Сергей"`, `"display_name":"`+name+`"`)
}

// withCell is baseSheet with another first cell.
func withCell(tb testing.TB, cell string) string {
	tb.Helper()
	return withSheet(tb, `{"bid":0,"points":"50","outcome":"HAND_OUTCOME_MADE"}`, cell)
}

// TestDecodeSheetJSON_Rules: each rule of the layout, and what falls back.
// fast says whether the hand decoder takes the body, valid whether
// protojson does; either way unmarshalSheet decodes it as protojson does.
func TestDecodeSheetJSON_Rules(t *testing.T) {
	cell := func(check func(*scoringv1.SheetCell) bool) func(*scoringv1.SheetUpdate) bool {
		return func(u *scoringv1.SheetUpdate) bool {
			return check(u.GetSheet().GetPulkas()[0].GetHands()[0].GetCells()[0])
		}
	}
	name := func(want string) func(*scoringv1.SheetUpdate) bool {
		return func(u *scoringv1.SheetUpdate) bool { return u.GetSheet().GetPlayers()[1].GetDisplayName() == want }
	}
	settings := func(check func(*lobbyv1.TableSettings) bool) func(*scoringv1.SheetUpdate) bool {
		return func(u *scoringv1.SheetUpdate) bool { return check(u.GetSheet().GetSettings()) }
	}
	for _, c := range []struct {
		name        string
		body        string
		fast, valid bool
		check       func(*scoringv1.SheetUpdate) bool
	}{
		{name: "the base sheet", body: baseSheet, fast: true, valid: true},
		{name: "protojson's other layout: a space after each comma", body: string(spaced([]byte(baseSheet))), fast: true, valid: true},
		{name: "an empty update", body: `{}`, fast: true, valid: true},
		{name: "an empty sheet", body: `{"version":"1","sheet":{}}`, fast: true, valid: true,
			check: func(u *scoringv1.SheetUpdate) bool { return u.GetSheet() != nil }},
		{name: "empty messages in lists", body: `{"sheet":{"players":[{}],"pulkas":[{"hands":[{"cells":[{}]}],"totals":[{}]}],"totals":[{}]}}`, fast: true, valid: true},
		{name: "empty settings", body: withSettings(t, `{}`), fast: true, valid: true,
			check: settings(func(s *lobbyv1.TableSettings) bool { return s != nil })},

		// Presence and zero values.
		{name: "optional bid 0 is present", body: baseSheet, fast: true, valid: true,
			check: cell(func(c *scoringv1.SheetCell) bool { return c.Bid != nil && *c.Bid == 0 })},
		{name: "optional bid absent", body: withCell(t, `{"seat":0,"points":"50"}`), fast: true, valid: true,
			check: cell(func(c *scoringv1.SheetCell) bool { return c.Bid == nil })},
		{name: "optional bid 9", body: withCell(t, `{"seat":0,"bid":9}`), fast: true, valid: true,
			check: cell(func(c *scoringv1.SheetCell) bool { return c.Bid != nil && *c.Bid == 9 })},
		{name: "zeros written out", body: withCell(t, `{"seat":0,"tricks":0,"points":"0","penalty":"0","outcome":"HAND_OUTCOME_UNSPECIFIED","struck":false}`), fast: true, valid: true},
		{name: "zeros written out in the head", body: `{"version":"0","sheet":{"table_id":"","game_id":"","current_hand":0}}`, fast: true, valid: true},
		{name: "empty lists", body: `{"sheet":{"players":[],"pulkas":[{"hands":[{"cells":[]}],"totals":[]}],"totals":[]}}`, fast: true, valid: true},
		{name: "a null list", body: withSheet(t, `"players":[`, `"players":null,"x":[`), valid: true},
		{name: "a null sheet", body: `{"version":"1","sheet":null}`, valid: true},
		{name: "null settings", body: withSettings(t, `null`), valid: true},

		// 64-bit integers.
		{name: "negative int64 strings", body: baseSheet, fast: true, valid: true,
			check: func(u *scoringv1.SheetUpdate) bool {
				p := u.GetSheet().GetPulkas()[0]
				return p.GetHands()[0].GetCells()[1].GetPenalty() == -200 && p.GetTotals()[1].GetMoshla() == -100 && u.GetSheet().GetTotals()[1].GetTotal() == -300
			}},
		{name: "int64 extremes", body: withCell(t, `{"points":"9223372036854775807","penalty":"-9223372036854775808"}`), fast: true, valid: true},
		{name: "int64 over the top", body: withCell(t, `{"points":"9223372036854775808"}`)},
		{name: "int64 below the bottom", body: withCell(t, `{"penalty":"-9223372036854775809"}`)},
		{name: "int64 -0", body: withCell(t, `{"penalty":"-0"}`), valid: true},
		{name: "int64 as a bare number", body: withCell(t, `{"points":50}`), valid: true},
		{name: "int64 with a leading zero", body: withCell(t, `{"points":"050"}`)},
		{name: "int64 with a plus", body: withCell(t, `{"points":"+50"}`)},
		{name: "uint64 version max", body: withSheet(t, `"version":"7"`, `"version":"18446744073709551615"`), fast: true, valid: true},
		{name: "uint64 version overflow", body: withSheet(t, `"version":"7"`, `"version":"18446744073709551616"`)},
		{name: "uint64 version as a bare number", body: withSheet(t, `"version":"7"`, `"version":7`), valid: true},

		// uint32.
		{name: "uint32 max", body: withSheet(t, `"current_hand":1`, `"current_hand":4294967295`), fast: true, valid: true},
		{name: "uint32 overflow", body: withSheet(t, `"current_hand":1`, `"current_hand":4294967296`)},
		{name: "uint32 negative", body: withCell(t, `{"bid":-1}`)},
		{name: "uint32 as a string", body: withCell(t, `{"bid":"1"}`), valid: true},
		{name: "uint32 with an exponent", body: withCell(t, `{"bid":1e0}`), valid: true},
		{name: "uint32 leading zero", body: withCell(t, `{"bid":01}`)},

		// Enums and bools.
		{name: "every outcome by name", body: `{"sheet":{"pulkas":[{"hands":[{"cells":[{"outcome":"HAND_OUTCOME_UNSPECIFIED"},{"outcome":"HAND_OUTCOME_IN_PROGRESS"},{"outcome":"HAND_OUTCOME_MADE"},{"outcome":"HAND_OUTCOME_MISSED"},{"outcome":"HAND_OUTCOME_KHISHTI"}]}]}]}}`, fast: true, valid: true},
		{name: "unknown enum name", body: withCell(t, `{"outcome":"HAND_OUTCOME_DOUBLED"}`), valid: true},
		{name: "enum given as a number", body: withCell(t, `{"outcome":2}`), valid: true,
			check: cell(func(c *scoringv1.SheetCell) bool { return c.Outcome == scoringv1.HandOutcome_HAND_OUTCOME_MADE })},
		{name: "unknown enum number", body: withCell(t, `{"outcome":99}`), valid: true},
		{name: "enum name in lower case", body: withCell(t, `{"outcome":"hand_outcome_made"}`), valid: true},
		{name: "bool as a string", body: withCell(t, `{"struck":"true"}`)},
		{name: "bool misspelt", body: withCell(t, `{"struck":tru}`)},

		// Spacing, order, repetition, unknown keys.
		{name: "a space after a colon", body: withSheet(t, `"version":"7"`, `"version": "7"`), valid: true},
		{name: "a space before a comma", body: withSheet(t, `"version":"7",`, `"version":"7" ,`), valid: true},
		{name: "two spaces after a comma", body: withSheet(t, `"version":"7",`, `"version":"7",  `), valid: true},
		{name: "a tab after a comma", body: withSheet(t, `"version":"7",`, "\"version\":\"7\",\t"), valid: true},
		{name: "a newline in a list", body: withSheet(t, `[{"player_id":"p0"`, "[\n{\"player_id\":\"p0\""), valid: true},
		{name: "indented", body: indented(t, baseSheet), valid: true},
		{name: "a leading space", body: " " + baseSheet, valid: true},
		{name: "a trailing space", body: baseSheet + " ", valid: true},
		{name: "whitespace inside the settings", body: withSettings(t, "{ \"game\" : \"GAME_CLASSIC\" ,\n\t\"premia\":true }"), fast: true, valid: true,
			check: settings(func(s *lobbyv1.TableSettings) bool { return s.GetGame() == lobbyv1.Game_GAME_CLASSIC && s.GetPremia() })},
		{name: "reordered update keys", body: `{"sheet":{},"version":"1"}`, valid: true},
		{name: "reordered sheet keys", body: withSheet(t, `"table_id":"t1","game_id":"t1-7"`, `"game_id":"t1-7","table_id":"t1"`), valid: true},
		{name: "reordered cell keys", body: withCell(t, `{"bid":0,"seat":0}`), valid: true},
		{name: "reordered settings keys", body: withSettings(t, `{"premia":true,"game":"GAME_CLASSIC"}`), fast: true, valid: true},
		{name: "duplicate key", body: withSheet(t, `"version":"7"`, `"version":"7","version":"8"`)},
		{name: "duplicate list", body: withSheet(t, `"current_hand":1`, `"current_hand":1,"current_hand":2`)},
		{name: "duplicate key in a cell", body: withCell(t, `{"seat":0,"seat":1}`)},
		{name: "duplicate key in the settings", body: withSettings(t, `{"game":"GAME_CLASSIC","game":"GAME_JAPANESE"}`)},
		{name: "duplicate settings", body: withSheet(t, `"players":[`, `"settings":{},"players":[`)},
		{name: "unknown key", body: withSheet(t, `"current_hand":1`, `"current_hand":1,"extra":{"a":[1,2]}`), valid: true},
		{name: "unknown key in a cell", body: withCell(t, `{"seat":0,"extra":1}`), valid: true},
		{name: "unknown key in the settings", body: withSettings(t, `{"game":"GAME_CLASSIC","future":{"a":[1,{"b":"}"}]}}`), fast: true, valid: true},
		{name: "unknown enum name in the settings", body: withSettings(t, `{"game":"GAME_POKER","premia":true}`), fast: true, valid: true},
		{name: "JSON names", body: withSheet(t, `"table_id"`, `"tableId"`), valid: true},
		{name: "a trace (never sent by the gateway)", body: withSheet(t, `"current_hand":1}`, `"current_hand":1},"trace":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}`), valid: true,
			check: func(u *scoringv1.SheetUpdate) bool { return u.GetTrace().GetTraceparent() != "" }},
		{name: "an empty trace", body: `{"version":"1","trace":{}}`, valid: true},
		{name: "a null trace", body: `{"version":"1","trace":null}`, valid: true},
		{name: "a comma first", body: withSheet(t, `{"version"`, `{,"version"`)},
		{name: "a missing comma", body: withSheet(t, `"version":"7",`, `"version":"7"`)},
		{name: "a trailing comma", body: withCell(t, `{"seat":0,}`)},
		{name: "a trailing comma in a list", body: withSheet(t, `{"seat":3}],"current_hand"`, `{"seat":3},],"current_hand"`)},
		{name: "something after the body", body: baseSheet + "x"},
		{name: "a second body", body: baseSheet + "{}"},
		{name: "cut short", body: baseSheet[:len(baseSheet)-1]},
		{name: "cut in the settings", body: strings.SplitAfter(baseSheet, `"stake":`)[0]},
		{name: "nothing", body: ``},

		// Strings: raw UTF-8 takes the fast path, escapes fall back,
		// invalid UTF-8 and control characters are refused.
		{name: "Georgian, Russian, Turkish and an emoji", body: baseSheet, fast: true, valid: true,
			check: func(u *scoringv1.SheetUpdate) bool {
				p := u.GetSheet().GetPlayers()
				return p[0].GetDisplayName() == "ნიკა" && p[1].GetDisplayName() == "Сергей" && p[3].GetDisplayName() == "Çağrı 🃏"
			}},
		{name: "U+FFFD itself", body: withName(t, "a\uFFFDb"), fast: true, valid: true, check: name("a\uFFFDb")},
		{name: "the last code point", body: withName(t, "\U0010FFFF"), fast: true, valid: true},
		{name: "DEL", body: withName(t, "a\x7fb"), fast: true, valid: true, check: name("a\x7fb")},
		{name: "HTML characters, raw as protojson writes them", body: withName(t, "Tom & Jerry <b>"), fast: true, valid: true, check: name("Tom & Jerry <b>")},
		{name: "HTML characters escaped as encoding/json writes them", body: withName(t, `Tom \u0026 Jerry`), valid: true, check: name("Tom & Jerry")},
		{name: "U+2028, raw", body: withName(t, "a\u2028b"), fast: true, valid: true, check: name("a\u2028b")},
		{name: "non-ASCII in an id", body: withSheet(t, `"table_id":"t1"`, `"table_id":"მაგიდა"`), fast: true, valid: true},
		{name: "an empty name", body: withName(t, ""), fast: true, valid: true, check: name("")},
		{name: "an escape in a name", body: withName(t, `\u10e1`), valid: true, check: name("ს")},
		{name: "an escaped quote in a name", body: withName(t, `a\"b`), valid: true, check: name(`a"b`)},
		{name: "an escaped backslash ending a name", body: withName(t, `a\\`), valid: true, check: name(`a\`)},
		{name: "an escaped surrogate pair", body: withName(t, `\ud83c\udccf`), valid: true, check: name("🃏")},
		{name: "a lone escaped surrogate", body: withName(t, `\ud83c`)},
		{name: "an escape in a key", body: withSheet(t, `"display_name":"Сергей"`, `"display\u005fname":"Сергей"`), valid: true},
		{name: "an escape in an enum name", body: withCell(t, `{"outcome":"HAND_OUTCOME\u005fMADE"}`), valid: true},
		{name: "a bad escape", body: withName(t, `a\x`)},
		{name: "invalid UTF-8: a stray byte", body: withName(t, "a\xffb")},
		{name: "invalid UTF-8: a stray continuation byte", body: withName(t, "a\x80")},
		{name: "invalid UTF-8: a cut sequence", body: withName(t, "\xe1\x83")},
		{name: "invalid UTF-8: a cut sequence before the quote", body: withName(t, "Сергей\xd0")},
		{name: "invalid UTF-8: overlong", body: withName(t, "\xc0\xaf")},
		{name: "invalid UTF-8: an encoded surrogate", body: withName(t, "\xed\xa0\x80")},
		{name: "invalid UTF-8: beyond U+10FFFF", body: withName(t, "\xf4\x90\x80\x80")},
		{name: "invalid UTF-8 in an id", body: withSheet(t, `"game_id":"t1-7"`, "\"game_id\":\"t1-\xff\"")},
		{name: "invalid UTF-8 in the settings", body: withSettings(t, "{\"future\":\"\xff\"}")},
		{name: "a control character", body: withName(t, "a\x01b")},
		{name: "a raw newline", body: withName(t, "a\nb")},
		{name: "a raw tab", body: withName(t, "a\tb")},
		{name: "an unterminated name", body: `{"sheet":{"players":[{"display_name":"ab`},
		{name: "a number for a string", body: withSheet(t, `"display_name":"Сергей"`, `"display_name":1`)},

		// Settings: protojson reads the slice the skipper finds.
		{name: "settings with an escape in an enum name", body: withSettings(t, `{"game":"GAME_\u0043LASSIC","premia":true}`), fast: true, valid: true,
			check: settings(func(s *lobbyv1.TableSettings) bool { return s.GetGame() == lobbyv1.Game_GAME_CLASSIC && s.GetPremia() })},
		{name: "settings with an escaped quote and braces in a string", body: withSettings(t, `{"future":"}\"{]","premia":true}`), fast: true, valid: true,
			check: settings(func(s *lobbyv1.TableSettings) bool { return s.GetPremia() })},
		{name: "settings with an escaped backslash before a quote", body: withSettings(t, `{"future":"a\\","premia":true}`), fast: true, valid: true,
			check: settings(func(s *lobbyv1.TableSettings) bool { return s.GetPremia() })},
		{name: "settings with a brace in an escaped key", body: withSettings(t, `{"fu\"}ture":1,"premia":true}`), fast: true, valid: true},
		{name: "settings with nested arrays", body: withSettings(t, `{"future":[[{"a":"]"}],[]],"premia":true}`), fast: true, valid: true},
		{name: "settings with fractional durations", body: withSettings(t, `{"move_time":"1.500s","reconnect_grace":"-0.000000001s"}`), fast: true, valid: true,
			check: settings(func(s *lobbyv1.TableSettings) bool {
				return s.GetMoveTime().AsDuration() == 1500*time.Millisecond && s.GetReconnectGrace().AsDuration() == -1
			})},
		{name: "settings with a bad duration", body: withSettings(t, `{"move_time":"20"}`)},
		{name: "settings with an exponent", body: withSettings(t, `{"future":[1e5,0E-1],"premia":true}`), fast: true, valid: true},
		// protojson takes it, encoding/json does not: the fast path leaves
		// it to protojson, and the frame to decodeFrame (asInFull).
		{name: "settings with an empty exponent", body: withSettings(t, `{"future":1e,"premia":true}`), valid: true},
		{name: "settings with a free stake", body: withSettings(t, `{"stake":{"free":{}}}`), fast: true, valid: true,
			check: settings(func(s *lobbyv1.TableSettings) bool { return s.GetStake().GetFree() != nil })},
		{name: "settings with a bad escape", body: withSettings(t, `{"future":"\q"}`)},
		{name: "settings with mismatched brackets", body: withSettings(t, `{"future":[1}]`)},
		{name: "settings as a string", body: withSettings(t, `"classic"`)},
		{name: "settings as an array", body: withSettings(t, `[]`)},
		{name: "settings with an unterminated string", body: `{"sheet":{"settings":{"game":"GAME_CLASSIC}}}`},
		{name: "settings with a trailing backslash", body: `{"sheet":{"settings":{"game":"\`},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := []byte(c.body)
			want := &scoringv1.SheetUpdate{}
			wantErr := protoIn.Unmarshal(body, want)
			if (wantErr == nil) != c.valid {
				t.Fatalf("protojson: %v, expected valid=%v: %s", wantErr, c.valid, body)
			}
			got, ok := decodeSheetJSON(body)
			if ok != c.fast {
				t.Fatalf("the fast path took it: %v, expected %v: %s", ok, c.fast, body)
			}
			if ok && (wantErr != nil || !proto.Equal(got, want)) {
				t.Fatalf("by hand %v, protojson %v (%v)", got, want, wantErr)
			}
			u, _, err := unmarshalSheet(body)
			if (err == nil) != (wantErr == nil) || (err == nil && !proto.Equal(u, want)) {
				t.Fatalf("unmarshalSheet: %v (%v), protojson %v (%v)", u, err, want, wantErr)
			}
			if c.check != nil && (err != nil || !c.check(u)) {
				t.Fatalf("decoded %v", u)
			}
		})
	}
}

// indented is body as json.Indent writes it.
func indented(tb testing.TB, body string) string {
	tb.Helper()
	var buf bytes.Buffer
	if err := json.Indent(&buf, []byte(body), "", "  "); err != nil {
		tb.Fatal(err)
	}
	return buf.String()
}

// sheetFrame is a sheet frame of body as wire.Sheet lays it out.
func sheetFrame(body string) []byte {
	return []byte(`{"type":"sheet","table":"t1","id":"1740830400000-3","update":` + body + `}`)
}

func TestDecodeSheetFrame_TakesTheGatewaysFramesAndDecodesThemAsInFull(t *testing.T) {
	at := time.Unix(1, 0)
	var u scoringv1.SheetUpdate
	if err := protoIn.Unmarshal([]byte(baseSheet), &u); err != nil {
		t.Fatal(err)
	}
	data, err := wire.Sheet("t1", "1740830400000-3", &u)
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range [][]byte{data, sheetFrame(baseSheet), sheetFrame(string(spaced([]byte(baseSheet))))} {
		fast, ok := decodeSheetFrame(data, at)
		if !ok {
			t.Fatalf("the fast path refused a gateway frame: %s", data)
		}
		full, err := decodeFrame(data, at)
		if err != nil || !sameSheetFrame(fast, full) || fast.Table != "t1" || fast.ID != "1740830400000-3" {
			t.Fatalf("fast %+v, full %+v (%v)", fast, full, err)
		}
		if f, err := DecodeFrame(data, at); err != nil || !sameSheetFrame(f, full) {
			t.Fatalf("DecodeFrame %+v (%v), full %+v", f, err, full)
		}
	}
	// DecodeFrame goes the fast way, which allocates a fraction of what
	// the generic passes do (not exactly the fast path's count: the race
	// detector adds one).
	allocs := func(decode func() bool) float64 {
		return testing.AllocsPerRun(20, func() {
			if !decode() {
				t.Fatal("not decoded")
			}
		})
	}
	viaDecodeFrame := allocs(func() bool { _, err := DecodeFrame(data, at); return err == nil })
	viaFastPath := allocs(func() bool { _, ok := decodeSheetFrame(data, at); return ok })
	generic := allocs(func() bool { _, err := decodeFrame(data, at); return err == nil })
	if viaDecodeFrame >= generic/2 || viaFastPath >= generic/2 {
		t.Errorf("allocations: DecodeFrame %v, the fast path %v, the generic passes %v", viaDecodeFrame, viaFastPath, generic)
	}
	t.Logf("allocations: DecodeFrame %v, the fast path %v, the generic passes %v", viaDecodeFrame, viaFastPath, generic)
	// Frames laid out otherwise go the long way, and still decode; so do
	// updates the hand decoder leaves to protojson.
	frame := string(sheetFrame(baseSheet))
	for name, other := range map[string]string{
		"reordered":          strings.Replace(frame, `{"type":"sheet","table":"t1",`, `{"table":"t1","type":"sheet",`, 1),
		"escaped table":      strings.Replace(frame, `"table":"t1"`, `"table":"t\u0031"`, 1),
		"non-ASCII table":    strings.Replace(frame, `"table":"t1"`, `"table":"tü"`, 1),
		"spaces":             strings.Replace(frame, `,"id":`, `, "id":`, 1),
		"a space at the end": frame + " ",
		"a field after it":   strings.TrimSuffix(frame, "}") + `,"extra":1}`,
		"without an id":      strings.Replace(frame, `"id":"1740830400000-3",`, ``, 1),
	} {
		if _, ok := decodeSheetFrame([]byte(other), at); ok {
			t.Errorf("%s: the fast path took it", name)
		}
		f, err := DecodeFrame([]byte(other), at)
		if err != nil || f.Type != wire.TypeSheet || f.Sheet.GetVersion() != 7 {
			t.Errorf("%s: %+v %v", name, f, err)
		}
	}
	for name, other := range map[string]string{
		"a trace":       withSheet(t, `"current_hand":1}`, `"current_hand":1},"trace":{"traceparent":"x"}`),
		"an escape":     withName(t, `\u10e1`),
		"reordered":     withSheet(t, `"table_id":"t1","game_id":"t1-7"`, `"game_id":"t1-7","table_id":"t1"`),
		"trailing junk": baseSheet + " ",
	} {
		data := sheetFrame(other)
		fast, ok := decodeSheetFrame(data, at)
		full, err := decodeFrame(data, at)
		if !ok || err != nil || !sameSheetFrame(fast, full) {
			t.Errorf("%s: fast %+v (%v), full %+v (%v)", name, fast, ok, full, err)
		}
	}
	// A bad update is an error, as it was; so is one that only protojson
	// takes (asInFull), in the settings or outside them.
	for _, bad := range []string{withName(t, "\xff"), `{"version":"x"}`, `[]`, ``,
		withSettings(t, `{"future":1e}`), `{"version":"1","future":0E+}`} {
		if _, ok := decodeSheetFrame(sheetFrame(bad), at); ok {
			t.Errorf("the fast path took %q", bad)
		}
		if _, err := DecodeFrame(sheetFrame(bad), at); err == nil {
			t.Errorf("DecodeFrame took %q", bad)
		}
	}
}

// FuzzDecodeSheetJSON: whatever protojson decodes, unmarshalSheet decodes
// the same; whatever it refuses, unmarshalSheet refuses; and what the fast
// path takes, protojson takes and decodes the same, and it is JSON as
// encoding/json reads it (asInFull).
func FuzzDecodeSheetJSON(f *testing.F) {
	for seed := uint64(1); seed <= 3; seed++ {
		// The first sheets of each game only: a whole game's sheet is tens
		// of kilobytes, which the fuzzer mutates and minimises slowly (the
		// base sheet has what comes later: struck cells, premia, moshla).
		us := randomSheets(f, seed)
		for _, u := range us[:min(3, len(us))] {
			body := gatewaySheet(f, u)
			f.Add(body)
			f.Add(spaced(body))
		}
	}
	f.Add([]byte(baseSheet))
	f.Add([]byte(withSettings(f, `{"future":"}\"{]","move_time":"1.5s"}`)))
	f.Add([]byte(withCell(f, `{"seat":1,"bid":0,"points":"-9223372036854775808","outcome":"HAND_OUTCOME_KHISHTI","struck":true}`)))
	f.Add([]byte(`{"version":"1","sheet":{"players":[{"display_name":"ნიკა \u10e1"}]},"trace":{}}`))
	f.Add([]byte(`{"version":"1","sheet":{"settings":{"future":[1e5,0E-1]}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		checkDecodesAsProtojson(t, body, decodeSheetJSON, unmarshalSheet)
	})
}

// BenchmarkDecodeSheet: the sheet frame of a classic game after 12 hands
// and at its end, players with non-ASCII names, through DecodeFrame's fast
// path and through the generic passes it had before.
func BenchmarkDecodeSheet(b *testing.B) {
	var mid, end *scoringv1.SheetUpdate
	for seed := uint64(1); end == nil; seed++ {
		if seed%3 == 0 {
			continue // Japanese
		}
		t, evs := playRandomTable(b, seed, sheetNames[0])
		if t.Settings().Game != tablesettings.Classic || t.Settings().Classic.Variant != classic.Standard {
			continue
		}
		us := sheetUpdates(b, t, evs)
		last := us[len(us)-1]
		if len(last.GetSheet().GetPulkas()) != 4 || !last.GetSheet().GetPulkas()[3].GetFinished() {
			continue // not played to the end
		}
		mid, end = us[12], last // us[0] is the game's start, us[n] after n hands
	}
	at := time.Unix(1, 0)
	for _, c := range []struct {
		name string
		u    *scoringv1.SheetUpdate
	}{{"mid-game", mid}, {"end", end}} {
		data, err := wire.Sheet("t1", "1740830400000-3", c.u)
		if err != nil {
			b.Fatal(err)
		}
		if _, ok := decodeSheetJSON(sheetBodyOf(data)); !ok {
			b.Fatalf("the fast path refuses %s", data)
		}
		b.Logf("%s: %d bytes, %d hands", c.name, len(data), (c.u.GetVersion()-1)/2)
		b.Run(c.name+"/fast", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := DecodeFrame(data, at); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/generic", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decodeFrame(data, at); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
