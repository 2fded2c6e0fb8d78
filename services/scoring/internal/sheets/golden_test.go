package sheets_test

// The sheets of pkg/golden: what the scoring service publishes for the
// table-runner's golden games (from the scoring inputs the runner's
// TestGolden wrote) and for classic games made up here where some seats
// always make their bid. TestGolden checks the files on every run; -update
// rewrites them (see pkg/golden).

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/classic"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	"github.com/pulka/pulka/pkg/golden"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/services/scoring/internal/sheets"
)

var update = flag.Bool("update", false, "rewrite pkg/golden's sheets")

// goldenRoot is pkg/golden's directory from this package's.
const goldenRoot = "../../../../pkg/golden"

// goldenPremiaGames is how many premia games there are, besides the
// benchmark's (premiaBench).
const goldenPremiaGames = 16

// premiaBench is the game pkg/wire's sheet benchmark reads: seed 1, seat 1
// always making its bid.
const premiaBench = "bench"

// TestGolden makes the sheet updates of every golden game and checks them
// against the files: those of the table's games (pkg/golden.SetWireNamed,
// one file per file of scoring inputs) and of the premia games.
func TestGolden(t *testing.T) {
	check := func(set, name string, updates []*scoringv1.SheetUpdate) {
		t.Helper()
		diff, err := golden.Check(goldenRoot, *update, set, name, golden.KindSheets, updates,
			func() *scoringv1.SheetUpdate { return &scoringv1.SheetUpdate{} })
		if err != nil {
			t.Fatal(err)
		}
		if diff != "" {
			t.Errorf("golden %s/%s (sheets): %s\nIf the sheets are meant to change, rewrite them:\n"+
				"  go test ./services/scoring/internal/sheets -run TestGolden -update", set, name, diff)
		}
	}
	named := golden.Games(golden.SetWireNamed, golden.KindScoring)
	if len(named) == 0 {
		t.Fatal("pkg/golden has no scoring inputs: run the table-runner's TestGolden with -update first")
	}
	for _, name := range named {
		in, err := golden.ScoringInputs(golden.SetWireNamed, name)
		if err != nil {
			t.Fatal(err)
		}
		var seed uint64
		if _, err := fmt.Sscanf(name, "game-%d", &seed); err != nil || golden.GameName(seed) != name {
			t.Fatalf("game %s: not a numbered game (%v)", name, err)
		}
		check(golden.SetWireNamed, name, gameSheets(t, seed, in))
	}
	var premia []string
	for g := range goldenPremiaGames {
		name := golden.GameName(uint64(g))
		premia = append(premia, name)
		check(golden.SetPremia, name, premiaSheets(t, uint64(g), uint(g%16)))
	}
	check(golden.SetPremia, premiaBench, premiaSheets(t, 1, 0b0010))
	if !*update {
		if files := golden.Games(golden.SetWireNamed, golden.KindSheets); !slices.Equal(files, named) {
			t.Errorf("golden %s has the sheets of %v, the games with scoring inputs are %v", golden.SetWireNamed, files, named)
		}
		want := slices.Concat(premia, []string{premiaBench})
		slices.Sort(want)
		if files := golden.Games(golden.SetPremia, golden.KindSheets); !slices.Equal(files, want) {
			t.Errorf("golden %s has the sheets of %v, the games made here are %v", golden.SetPremia, files, want)
		}
	}
}

// scoredGame is what the scoring service stores of one game (sheets.Game),
// from the scoring inputs the runner derives from the table's events.
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

// gameSheets is every sheet update the scoring service publishes for a
// table's game from its scoring inputs: one when the game starts, one per
// hand and one at the end. The scoring rules (khishti, premia, moshla)
// vary with the seed, as tables choose them.
func gameSheets(tb testing.TB, seed uint64, inputs []*scoringv1.ScoringInput) []*scoringv1.SheetUpdate {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x7368656574))
	var g scoredGame
	var out []*scoringv1.SheetUpdate
	for _, in := range inputs {
		if gs := in.GetGameStarted(); gs != nil && gs.GetSettings().GetGame() == lobbyv1.Game_GAME_CLASSIC {
			gs.Settings = proto.CloneOf(gs.GetSettings())
			gs.Settings.Khishti = lobbyv1.KhishtiPenalty(1 + rng.IntN(4))
			gs.Settings.Premia, gs.Settings.Moshla, gs.Settings.RestDocked = rng.IntN(4) != 0, rng.IntN(4) != 0, rng.IntN(2) == 0
		}
		if g.add(in) {
			out = append(out, g.update(tb))
		}
	}
	return out
}

// premiaSheets are the sheet updates of a classic game whose hands are
// random but where the seats in premia (a bit mask) always make their bid,
// so that premia, moshla and struck hands come up, which they almost never
// do in random play.
func premiaSheets(tb testing.TB, seed uint64, premia uint) []*scoringv1.SheetUpdate {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x7072656d6961))
	rules := scoring.DefaultSettings()
	if seed%3 == 0 {
		rules.Variant = classic.Nines
	}
	rules.Khishti = scoring.Khishti(rng.IntN(4))
	rules.RestDocked = seed%2 == 0
	ts := tablesettings.ClassicSettings(rules).Proto()
	names := golden.DisplayNames()
	var players []*scoringv1.SheetPlayer
	for seat := range uint32(scoring.Seats) {
		players = append(players, &scoringv1.SheetPlayer{Seat: seat, PlayerId: "p" + strconv.Itoa(int(seat)),
			DisplayName: names[(int(seed)+int(seat))%len(names)]})
	}
	id := "tbl" + strconv.FormatUint(seed, 10)
	g := scoredGame{tableID: id, gameID: id + ".premia", start: &scoringv1.GameStarted{Settings: ts, Players: players}}
	out := []*scoringv1.SheetUpdate{g.update(tb)}
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
		out = append(out, g.update(tb))
	}
	g.end = &scoringv1.GameEnded{Completed: true, HandsPlayed: uint32(rules.Variant.Hands())}
	return append(out, g.update(tb))
}
