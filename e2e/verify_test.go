package e2e

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/cards"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/tools/record"
)

// finished is a verified game: its log, its record and the pure replay.
type finished struct {
	table  string
	gameID string
	log    []logEntry
	rec    *record.Record
	res    *record.Result
	hands  []handTruth
}

// verifyGame checks a finished table end to end:
//
//   - the log replays purely from its genesis, event for event;
//   - the record of the log's public events (record.FromEvents) replays legally to the end of the game, every hand
//     dealt from the key of its seeds, each server seed the one its
//     commitment named (checkFairDeals: every client saw the commitment
//     before the hand's cards, and no frame before a hand's reveal carries
//     or deals from its server seed or key);
//   - every client that saw the whole game builds the same record from
//     the frames it received, and it verifies (checkClientRecords);
//   - every frame each client received passes checkFrames;
//   - the final sheet the clients received, the sheet in each human's
//     history and the sheet in the scoring store equal the pure replay's
//     (record.Replay, i.e. scoring.Build of the replayed hands), cell by
//     cell, premia and moshla included;
//   - scoring published each sheet version once, in order, froze premia
//     and moshla once written, and wrote one FinalStandings for the game.
func verifyGame(t *testing.T, s *stack, tableID string, clients []*client) *finished {
	t.Helper()
	log := mustReadLog(t, s.Redis(), tableID)
	if _, err := replayLog(context.Background(), s.Redis(), tableID, false); err != nil {
		t.Fatalf("the log does not replay purely: %v", err)
	}
	rec, err := record.FromEvents(publicEvents(log))
	if err != nil {
		t.Fatalf("the record of the log's public events: %v", err)
	}
	checkClientRecords(t, rec, tableID, clients)
	res, err := record.Replay(rec)
	if err != nil {
		t.Fatalf("the record of the log does not replay: %v", err)
	}
	if !res.Over {
		t.Fatalf("the record of %d moves stops before the end of the game", len(rec.Moves))
	}
	hands, err := truth(rec)
	if err != nil {
		t.Fatal(err)
	}
	g := &finished{table: tableID, gameID: log[0].Ev.GetGameId(), log: log, rec: rec, res: res, hands: hands}
	checkFairDeals(t, rec, log, clients)
	framesChecked := 0
	for _, c := range clients {
		n, problems := checkFrames(c, tableID, log, hands)
		for i, p := range problems {
			if i == 10 {
				t.Errorf("… and %d more", len(problems)-i)
				break
			}
			t.Error(p)
		}
		if n == 0 {
			t.Errorf("%s received no event of the table", c.name)
		}
		framesChecked += n
	}
	t.Logf("table %s: %d log entries, %d moves, %d hands; %d event frames checked", tableID, len(log), len(rec.Moves), len(hands), framesChecked)

	want := flatReplay(res)
	played := len(want.Hands)
	finalVersion := uint64(1 + 2*played + 1)
	for _, c := range clients {
		if c.find(func(f *frame) bool { return f.ev != nil && f.Table == tableID && gameEnded(f.ev) }) == nil {
			continue // the client left before the end: it gets no final sheet
		}
		f := c.await(0, 20*time.Second, fmt.Sprintf("the final sheet (version %d)", finalVersion), func(f *frame) bool {
			return f.sheet != nil && f.Table == tableID && f.sheet.GetVersion() == finalVersion
		})
		if d := diffSheets(flatProto(f.sheet.GetSheet()), want); d != "" {
			t.Errorf("%s's final sheet differs from the pure replay: %s", c.name, d)
		}
		checkSheetFrames(t, c, tableID)
	}
	stored, version, err := storedSheet(context.Background(), s.Redis(), tableID, g.gameID)
	if err != nil || version != finalVersion {
		t.Fatalf("stored sheet: version %d, err %v; want version %d", version, err, finalVersion)
	}
	if d := diffSheets(flatProto(stored), want); d != "" {
		t.Errorf("the stored sheet differs from the pure replay: %s", d)
	}
	checkSheetStream(t, s, tableID, g.gameID, finalVersion)
	players := map[string]bool{}
	for _, sp := range log[0].Ev.GetGameStarted().GetSeats() {
		players[sp.GetPlayerId()] = sp.GetPlayerId() != ""
	}
	for _, c := range clients {
		if !players[c.ses.Player.ID] {
			continue // a watcher has no history of the game
		}
		h := s.gameInHistory(t, c.ses, g.gameID)
		if d := diffSheets(flatProto(h.Sheet), want); d != "" {
			t.Errorf("%s's history sheet differs from the pure replay: %s", c.name, d)
		}
		checkStandings(t, h.Standings, want.Totals, log)
	}
	return g
}

// checkSheetFrames: the sheet frames a client got never go back in version
// (a live update may come just before the latest on join; docs/protocol.md
// says to keep the highest, so a lower one right after a join is allowed).
func checkSheetFrames(t *testing.T, c *client, tableID string) {
	t.Helper()
	var last uint64
	lastConn := -1
	for _, f := range c.snapshot() {
		if f.sheet == nil || f.Table != tableID {
			continue
		}
		v := f.sheet.GetVersion()
		if f.Conn == lastConn && v < last && v+2 < last {
			t.Errorf("%s: sheet version %d after %d", c.name, v, last)
		}
		last, lastConn = max(v, last), f.Conn
	}
}

// checkSheetStream reads the table's sheet stream: each version once, in
// increasing order, ending with the final one; premia and moshla never
// change once written (they are written once per pulka, when it ends);
// and one FinalStandings for the game.
func checkSheetStream(t *testing.T, s *stack, tableID, gameID string, final uint64) {
	t.Helper()
	ctx := context.Background()
	msgs, err := streams.ReadAfter(ctx, s.Redis(), scoringclient.SheetStream(tableID), "0", 10_000)
	if err != nil {
		t.Fatal(err)
	}
	var last uint64
	written := map[string]int64{} // "pulka/seat/premia|moshla" → value once non-zero
	for _, m := range msgs {
		u, err := scoringclient.DecodeUpdate(m)
		if err != nil {
			t.Fatal(err)
		}
		if u.GetSheet().GetGameId() != gameID {
			continue
		}
		if u.GetVersion() <= last {
			t.Errorf("sheet stream: version %d after %d", u.GetVersion(), last)
		}
		last = u.GetVersion()
		for _, p := range u.GetSheet().GetPulkas() {
			for _, st := range p.GetTotals() {
				for what, v := range map[string]int64{"premia": st.GetPremia(), "moshla": st.GetMoshla()} {
					key := fmt.Sprintf("pulka %d seat %d %s", p.GetPulkaIndex(), st.GetSeat(), what)
					if old, ok := written[key]; ok && old != v {
						t.Errorf("sheet stream version %d: %s changed from %d to %d", u.GetVersion(), key, old, v)
					}
					if p.GetFinished() {
						written[key] = v
					}
				}
			}
		}
	}
	if last != final {
		t.Errorf("the sheet stream ends at version %d, want the final %d", last, final)
	}
	// The standings are published after the final sheet: wait for them,
	// then a moment more for a second one that must not come.
	n := 0
	count := func() bool {
		msgs, err := streams.ReadAfter(ctx, s.Redis(), scoringclient.StandingsStream, "0", 100_000)
		if err != nil {
			t.Fatal(err)
		}
		n = 0
		for _, m := range msgs {
			fs, err := scoringclient.DecodeStandings(m)
			if err != nil {
				t.Fatal(err)
			}
			if fs.GetGameId() == gameID {
				n++
			}
		}
		return n > 0
	}
	eventually(t, 10*time.Second, "the game's FinalStandings", count)
	time.Sleep(100 * time.Millisecond)
	count()
	if n != 1 {
		t.Errorf("%d FinalStandings for game %s, want exactly one", n, gameID)
	}
}

// checkStandings: places follow the totals (ties share a place), except a
// Japanese player who resigned or forfeited, who is last; the players are
// the ones the log says held the seats at the end.
func checkStandings(t *testing.T, fs *scoringv1.FinalStandings, totals []int64, log []logEntry) {
	t.Helper()
	st := fs.GetStandings()
	if len(st) != len(totals) {
		t.Fatalf("%d standings for %d seats", len(st), len(totals))
	}
	var end *tablev1.GameEnded
	for _, e := range log {
		if ge, ok := e.Ev.GetEvent().(*tablev1.Event_GameEnded); ok {
			end = ge.GameEnded
		}
	}
	loser := -1
	if end != nil && (end.GetReason() == tablev1.GameEndReason_GAME_END_REASON_RESIGNED ||
		end.GetReason() == tablev1.GameEndReason_GAME_END_REASON_FORFEITED) {
		for _, p := range end.GetPlacings() {
			if p.GetPlace() != 1 {
				loser = int(p.GetSeat())
			}
		}
	}
	order := make([]int, len(totals))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if (a == loser) != (b == loser) {
			return b == loser
		}
		return totals[a] > totals[b]
	})
	for i, s := range st {
		if int(s.GetSeat()) != order[i] && totals[s.GetSeat()] != totals[order[i]] {
			t.Errorf("standing %d is seat %d (total %d), want seat %d (total %d)", i, s.GetSeat(), s.GetTotal(), order[i], totals[order[i]])
		}
		if s.GetTotal() != totals[s.GetSeat()] {
			t.Errorf("seat %d stands with %d, the sheet's total is %d", s.GetSeat(), s.GetTotal(), totals[s.GetSeat()])
		}
	}
	if loser >= 0 && int(st[len(st)-1].GetSeat()) != loser {
		t.Errorf("the player who resigned or forfeited (seat %d) is not last: %v", loser, st)
	}
}

// commandSteps counts, per command id, the logged steps whose input is
// that command (each command must be applied at most once).
func commandSteps(log []logEntry) map[string]int {
	out := map[string]int{}
	for _, e := range log {
		if e.Input.GetCommand() != nil {
			out[e.Input.GetCommand().GetCommandId()]++
		}
	}
	return out
}

// refusalsReceived lists the refusals the clients received for table:
// refusals are not logged (docs/table-runner.md), so a test that requires
// none looks at what the clients got.
func refusalsReceived(clients []*client, table string) []*frame {
	var out []*frame
	for _, c := range clients {
		for _, f := range c.snapshot() {
			if f.ev != nil && f.Table == table && f.ev.GetMoveRejected() != nil {
				out = append(out, f)
			}
		}
	}
	return out
}

// rejections lists the MoveRejected events of the log (none since refusals
// are no longer logged; kept as a guard).
func rejections(log []logEntry) []logEntry {
	var out []logEntry
	for _, e := range log {
		if _, ok := e.Ev.GetEvent().(*tablev1.Event_MoveRejected); ok {
			out = append(out, e)
		}
	}
	return out
}

// serverMoves counts the moves the server made for humans (timer expiry)
// and bots (by_server).
func serverMoves(log []logEntry) int {
	n := 0
	for _, e := range log {
		switch ev := e.Ev.GetEvent().(type) {
		case *tablev1.Event_CardPlayed:
			if ev.CardPlayed.GetByServer() {
				n++
			}
		case *tablev1.Event_BidMade:
			if ev.BidMade.GetByServer() {
				n++
			}
		case *tablev1.Event_TrumpChosen:
			if ev.TrumpChosen.GetByServer() {
				n++
			}
		}
	}
	return n
}

// unusedCard is a card the player certainly does not hold: a card of the
// deck outside its own hand and face-up columns.
func unusedCard(m seen) cards.Card {
	for c := cards.Card(0); c < cards.DeckSize; c++ {
		if !m.hand.Has(c) && !m.faceUp.Has(c) && !c.IsJoker() {
			return c
		}
	}
	return cards.NoCard
}

// publicEvents is the events of the log any watcher receives.
func publicEvents(log []logEntry) []*tablev1.Event {
	var out []*tablev1.Event
	for _, e := range log {
		if e.Ev.GetVisibility().GetAudience() == tablev1.Audience_AUDIENCE_PUBLIC {
			out = append(out, e.Ev)
		}
	}
	return out
}

// checkClientRecords: every client that received the game from its
// GameStarted to its GameEnded builds, from its frames alone, a record
// with the log's moves and seeds, and record.Verify passes on it — the
// record any player or watcher can export (pulkactl play --record).
func checkClientRecords(t *testing.T, want *record.Record, tableID string, clients []*client) {
	t.Helper()
	built := 0
	for _, c := range clients {
		var evs []*tablev1.Event
		started, ended, trimmed := false, false, false
		for _, f := range c.snapshot() {
			trimmed = trimmed || (f.Table == tableID && f.HistoryTrimmed)
			if f.ev == nil || f.Table != tableID {
				continue
			}
			started = started || f.ev.GetGameStarted() != nil
			ended = ended || gameEnded(f.ev)
			evs = append(evs, f.ev)
		}
		if !started || !ended || trimmed {
			continue // joined late, left early or missed events: not the whole game
		}
		rec, err := record.FromEvents(evs)
		if err != nil {
			t.Errorf("%s: the record of its frames: %v", c.name, err)
			continue
		}
		if !slices.Equal(rec.Moves, want.Moves) || !reflect.DeepEqual(rec.Hands, want.Hands) {
			t.Errorf("%s: the record of its frames (%d moves, %d hands) is not the log's (%d moves, %d hands)",
				c.name, len(rec.Moves), len(rec.Hands), len(want.Moves), len(want.Hands))
			continue
		}
		if _, err := record.Verify(rec); err != nil {
			t.Errorf("%s: the record of its frames does not verify: %v", c.name, err)
		}
		built++
	}
	t.Logf("%d of %d clients built the game's record from their frames", built, len(clients))
}
