package record_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/golden"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/tools/record"
)

// playedTable is a game played by the runner's table: the public events,
// as any watcher receives them, and its final placings.
type playedTable struct {
	public   []*tablev1.Event
	game     tablesettings.Game
	placings []*tablev1.Placing
}

// recordedTable reads game name of pkg/golden's golden.SetRecord: a whole
// game at a table of bots (classic) and humans who never move themselves
// (the move timer plays for them, a server move), who send their client
// seed or not (the seed deadline deals without it) and who, in a Japanese
// match, may resign.
func recordedTable(tb testing.TB, name string) playedTable {
	tb.Helper()
	evs, err := golden.Events(golden.SetRecord, name, golden.KindPublicEvents)
	if err != nil {
		tb.Fatal(err)
	}
	p := playedTable{public: evs, game: tablesettings.Classic}
	for _, e := range evs {
		if gs := e.GetGameStarted(); gs != nil && gs.GetSettings().GetGame() == lobbyv1.Game_GAME_JAPANESE {
			p.game = tablesettings.Japanese
		}
		if g := e.GetGameEnded(); g != nil {
			p.placings = g.GetPlacings()
		}
	}
	if len(p.placings) == 0 {
		tb.Fatalf("game %s did not end", name)
	}
	return p
}

// TestFromEvents_ATablesPublicEventsReplayAndVerify: for many games played
// by the runner's table (bots, server moves, client seeds sent and missing,
// resignations), the record FromEvents builds from the public events alone
// verifies hand by hand (every commitment, every re-deal), replays to the
// end, and its final scores are the table's; a tampered event (a server
// seed, a client seed, a card) fails.
func TestFromEvents_ATablesPublicEventsReplayAndVerify(t *testing.T) {
	names := golden.Games(golden.SetRecord, golden.KindPublicEvents)
	if len(names) < 60 {
		t.Fatalf("pkg/golden has %d record games, want 60", len(names))
	}
	hands, japaneseGames := 0, 0
	for g, name := range names {
		p := recordedTable(t, name)
		if p.game == tablesettings.Japanese {
			japaneseGames++
		}
		rec, err := record.FromEvents(p.public)
		if err != nil {
			t.Fatalf("game %s: %v", name, err)
		}
		reps, err := record.Verify(rec)
		if err != nil || len(reps) == 0 || len(reps) != len(rec.Hands) {
			t.Fatalf("game %s: verify: %d hands of %d: %v", name, len(reps), len(rec.Hands), err)
		}
		hands += len(reps)
		res, err := record.Replay(rec)
		if err != nil || !res.Over {
			t.Fatalf("game %s: replay (over %v): %v", name, res != nil && res.Over, err)
		}
		for _, pl := range p.placings {
			var got int64
			if p.game == tablesettings.Classic {
				got = int64(res.Sheet.Total[pl.GetSeat()])
			} else {
				got = int64(res.Scores[pl.GetSeat()])
			}
			if got != pl.GetScore() {
				t.Fatalf("game %s: seat %d: the record replays to %d, the table ended on %d", name, pl.GetSeat(), got, pl.GetScore())
			}
		}
		if g < 8 {
			checkTampering(t, g, p.public)
		}
	}
	if japaneseGames == 0 || japaneseGames == len(names) {
		t.Errorf("%d of %d games Japanese: the games do not test both", japaneseGames, len(names))
	}
	t.Logf("%d games, %d hands verified from their public events", len(names), hands)
}

// checkTampering changes one event of a copy of the game's events at a
// time and checks the record no longer verifies.
func checkTampering(t *testing.T, g int, public []*tablev1.Event) {
	t.Helper()
	tamper := map[string]func(e *tablev1.Event) bool{
		"a revealed server seed": func(e *tablev1.Event) bool {
			if r := e.GetHandRevealed(); r != nil {
				r.ServerSeed[0] ^= 1
				return true
			}
			return false
		},
		"a revealed client seed": func(e *tablev1.Event) bool {
			if r := e.GetHandRevealed(); r != nil {
				r.ClientSeeds[len(r.ClientSeeds)-1][5] ^= 0x80
				return true
			}
			return false
		},
		"a card played": func(e *tablev1.Event) bool {
			if c := e.GetCardPlayed(); c != nil {
				c.Card = c.GetCard()%36 + 1 // the next card (the wire enum is 1…36)
				return true
			}
			return false
		},
	}
	for what, f := range tamper {
		evs := make([]*tablev1.Event, len(public))
		done := false
		for i, e := range public {
			evs[i] = e
			if !done && i > len(public)/3 {
				c := proto.Clone(e).(*tablev1.Event)
				if f(c) {
					evs[i], done = c, true
				}
			}
		}
		if !done {
			t.Fatalf("game %d: nothing to tamper with for %s", g, what)
		}
		rec, err := record.FromEvents(evs)
		if err != nil {
			continue // refused already (a reveal not as committed)
		}
		if _, err := record.Verify(rec); err == nil {
			t.Fatalf("game %d: the record verifies with %s changed", g, what)
		}
	}
}
