package main

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/tools/wsclient"
)

// The games played through the launcher's services.
const (
	// standardHands is how many hands a standard classic game has (its
	// four pulkas: 1..8 cards, 9×4, 8..1, 9×4).
	standardHands = 24
	// japaneseTarget is the shortest Japanese match.
	japaneseTarget = 11
	// gameTimeout bounds one game (each takes about a second here).
	gameTimeout = 2 * time.Minute
)

// playClassicWithBots: a guest creates a standard classic table, fills the
// other seats with bots (PULKA_RUNNER_BOT_DELAY=1ms) and plays its own seat
// by itself over the WebSocket, as pulkactl play --create classic --bots
// --auto does. The game must end as completed after its 24 hands and be
// scored whole (checkGame), and the player's client seed must have been
// taken for every hand: hand 0's in a seed frame, every later hand's,
// committed a hand ahead, riding on a move — whose acceptance reaches the
// player before the echo of that move, and which the player must not take
// for a new turn and answer with a second move (the table would refuse it:
// checkGame counts refusals).
func playClassicWithBots(t *testing.T, base string) {
	ctx, cancel := context.WithTimeout(context.Background(), gameTimeout)
	defer cancel()
	started := time.Now()
	host := newSeat(ctx, t, base)
	table, err := host.api.CreateTable(ctx, wsclient.CreateTable{Name: "pulka-local classic", Settings: wsclient.ClassicSettings(), SitDown: true}, wsclient.NewKey())
	if err != nil {
		t.Fatalf("create a classic table: %v", err)
	}
	if err := host.api.FillBots(ctx, table, wsclient.NewKey()); err != nil {
		t.Fatalf("fill table %s with bots: %v", table, err)
	}
	if err := host.play(ctx, table); err != nil {
		t.Fatal(err)
	}
	played := time.Since(started)
	end, sheet := checkGame(ctx, t, base, table, 4, host)
	if host.seedsTaken != standardHands {
		t.Errorf("%d of the player's client seeds taken, want %d (one per hand)", host.seedsTaken, standardHands)
	}
	if end.GetHandsPlayed() != standardHands {
		t.Errorf("%d hands played, want %d", end.GetHandsPlayed(), standardHands)
	}
	if n := len(sheet.GetPulkas()); n != 4 {
		t.Errorf("the sheet has %d pulkas, want 4", n)
	}
	for _, pu := range sheet.GetPulkas() {
		for _, h := range pu.GetHands() {
			for _, c := range h.GetCells() {
				if c.Bid == nil {
					t.Errorf("sheet: hand %d seat %d has no bid", h.GetHandIndex(), c.GetSeat())
				}
			}
		}
	}
	t.Logf("a standard classic game with three bots: played in %v (%d frames to the player), its final sheet in the history and on the WebSocket %v later",
		played.Round(time.Millisecond), host.frames, (time.Since(started) - played).Round(time.Millisecond))
}

// playJapaneseMatch: two guests play a Japanese match to 11 against each
// other, each seat by itself over its own WebSocket. The match must end as
// completed with the winner at the target and be scored whole (checkGame).
func playJapaneseMatch(t *testing.T, base string) {
	ctx, cancel := context.WithTimeout(context.Background(), gameTimeout)
	defer cancel()
	started := time.Now()
	host, guest := newSeat(ctx, t, base), newSeat(ctx, t, base)
	table, err := host.api.CreateTable(ctx, wsclient.CreateTable{Name: "pulka-local japanese", Settings: wsclient.JapaneseSettings(japaneseTarget), SitDown: true}, wsclient.NewKey())
	if err != nil {
		t.Fatalf("create a Japanese table: %v", err)
	}
	if err := guest.api.Sit(ctx, table, 1, "", wsclient.NewKey()); err != nil {
		t.Fatalf("sit at table %s: %v", table, err)
	}
	errc := make(chan error, 2)
	for _, s := range []*seat{host, guest} {
		go func() { errc <- s.play(ctx, table) }()
	}
	for range 2 {
		if err := <-errc; err != nil {
			cancel()
			t.Fatal(err)
		}
	}
	played := time.Since(started)
	end, _ := checkGame(ctx, t, base, table, 2, host, guest)
	if top := end.GetPlacings()[0]; top.GetPlace() != 1 || top.GetScore() < japaneseTarget {
		t.Errorf("the match ended with %v, want a winner at %d or more", end.GetPlacings(), japaneseTarget)
	}
	t.Logf("a Japanese match to %d of two players: played in %v (%d hands), its final sheet in the history and on the WebSocket %v later",
		japaneseTarget, played.Round(time.Millisecond), end.GetHandsPlayed(), (time.Since(started) - played).Round(time.Millisecond))
}

// seat is one player of a game under test: its session and connection,
// and what it saw of the table.
type seat struct {
	api  *wsclient.API
	ses  wsclient.Session
	conn *wsclient.Conn
	m    *wsclient.Model

	table       string
	frames      int
	gameID      string
	gameStarted bool
	handsEnded  int
	refused     []string
	// outOfOrder counts events whose seq repeats or goes back (other seats'
	// private events are not sent to this player, so seqs may skip).
	lastSeq, outOfOrder uint64
	// otherTables counts event and sheet frames of another table.
	otherTables int
	// sheet is the highest version of the table's sheet received.
	sheet *scoringv1.SheetUpdate
	// seedsTaken counts the seat's client seeds the table took, sent alone
	// (client_seed_accepted) or riding on a move (seed_accepted).
	seedsTaken int
}

// newSeat starts a guest session and connects it to the gateway.
func newSeat(ctx context.Context, t *testing.T, base string) *seat {
	t.Helper()
	s := &seat{api: &wsclient.API{Server: base}}
	ses, err := s.api.Guest(ctx)
	if err != nil {
		t.Fatalf("guest session: %v", err)
	}
	s.ses, s.api.Token = ses, ses.Token
	if s.conn, err = wsclient.Dial(ctx, base, wsclient.Options{Token: ses.Token}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.conn.Close() })
	return s
}

// play plays the seat at table by itself until the game ends. The join
// (without a last event id) replays the table's history first, so every
// event of the game is seen however early it started.
func (s *seat) play(ctx context.Context, table string) error {
	s.table = table
	s.m = wsclient.NewModel(table, s.ses.Player.ID)
	p := &wsclient.Player{Conn: s.conn, Table: table, Model: s.m, OnFrame: s.see}
	if err := p.Run(ctx); err != nil {
		return fmt.Errorf("%s playing table %s: %w (after %d frames, %d hands ended, moves refused: %q)",
			s.ses.Player.ID, table, err, s.frames, s.handsEnded, s.refused)
	}
	return nil
}

// see records a frame.
func (s *seat) see(f wsclient.Frame) {
	s.frames++
	switch f.Type {
	case wire.TypeSheet:
		if f.Table != s.table {
			s.otherTables++
			return
		}
		if s.sheet == nil || f.Sheet.GetVersion() > s.sheet.GetVersion() {
			s.sheet = f.Sheet
		}
	case wire.TypeEvent:
		if f.Table != s.table {
			s.otherTables++
			return
		}
		ev := f.Event
		if ev.GetSeq() <= s.lastSeq {
			s.outOfOrder++
		}
		s.lastSeq = ev.GetSeq()
		if ev.GetGameId() != "" {
			s.gameID = ev.GetGameId()
		}
		switch {
		case ev.GetGameStarted() != nil:
			s.gameStarted = true
		case ev.GetHandEnded() != nil:
			s.handsEnded++
		case ev.GetClientSeedAccepted() != nil && int(ev.GetClientSeedAccepted().GetSeat()) == s.m.MySeat,
			ev.GetSeedAccepted() != nil && int(ev.GetSeedAccepted().GetSeat()) == s.m.MySeat:
			s.seedsTaken++
		case ev.GetMoveRejected() != nil:
			s.refused = append(s.refused, ev.GetMoveRejected().GetMessage())
		}
	}
}

// checkGame checks a game the seats played to the end at table, of
// nSeats seats (the ones no seat holds are bots'):
//   - every player saw it start and end as completed, the same game and
//     the same end, with a hand_ended for each hand played, no event out
//     of order and none of its moves refused;
//   - the final placings hold every seat, the players in theirs;
//   - scoring wrote the game to each player's history (GET
//     /api/v1/me/games) with a whole sheet — every pulka finished, as many
//     rows as hands played, each with a cell per seat, decided, and the
//     tricks of each row adding up to the cards dealt — whose totals and
//     the standings equal the table's final scores;
//   - the last sheet each player got over the WebSocket is that sheet.
//
// It returns the end and the sheet.
func checkGame(ctx context.Context, t *testing.T, base, table string, nSeats int, seats ...*seat) (*tablev1.GameEnded, *scoringv1.Sheet) {
	t.Helper()
	first := seats[0]
	end := first.m.End
	if !first.m.Over || end == nil {
		t.Fatal("the player stopped before the game ended")
	}
	if end.GetReason() != tablev1.GameEndReason_GAME_END_REASON_COMPLETED {
		t.Errorf("the game ended as %s, want completed", end.GetReason())
	}
	players := map[string]bool{}
	for _, s := range seats {
		who := s.ses.Player.ID
		players[who] = true
		switch {
		case !s.gameStarted || s.gameID == "":
			t.Errorf("%s: no game_started (game id %q) in the table's history", who, s.gameID)
		case s.gameID != first.gameID:
			t.Errorf("%s saw game %s, %s game %s", who, s.gameID, first.ses.Player.ID, first.gameID)
		}
		if !proto.Equal(s.m.End, end) {
			t.Errorf("%s saw the game end as %v, %s as %v", who, s.m.End, first.ses.Player.ID, end)
		}
		if s.handsEnded != int(end.GetHandsPlayed()) {
			t.Errorf("%s: %d hand_ended events, the game played %d hands", who, s.handsEnded, end.GetHandsPlayed())
		}
		if s.outOfOrder != 0 {
			t.Errorf("%s: %d events repeat or go back in seq", who, s.outOfOrder)
		}
		if len(s.refused) != 0 {
			t.Errorf("%s: %d moves refused, the first: %s", who, len(s.refused), s.refused[0])
		}
		if s.otherTables != 0 {
			t.Errorf("%s: %d frames of other tables", who, s.otherTables)
		}
	}
	if end.GetHandsPlayed() == 0 {
		t.Error("the game ended without a hand played")
	}
	scores := map[uint32]int64{}
	for _, pl := range end.GetPlacings() {
		scores[pl.GetSeat()] = pl.GetScore()
		if id := pl.GetPlayerId(); id != "" {
			if !players[id] {
				t.Errorf("seat %d placed for %q, who did not play", pl.GetSeat(), id)
			}
			delete(players, id)
		}
	}
	if len(end.GetPlacings()) != nSeats || len(scores) != nSeats || len(players) != 0 {
		t.Fatalf("placings %v: want %d seats, the players %v in theirs", end.GetPlacings(), nSeats, players)
	}

	var sheet *scoringv1.Sheet
	for _, s := range seats {
		g := awaitHistory(ctx, t, base, s.ses, first.gameID)
		if g.TableID != table {
			t.Errorf("history: game %s at table %q, want %s", first.gameID, g.TableID, table)
		}
		if sheet == nil {
			sheet = g.Sheet
			checkSheet(t, sheet, nSeats, int(end.GetHandsPlayed()), scores)
		} else if !proto.Equal(g.Sheet, sheet) {
			t.Errorf("the histories of %s and %s hold different sheets", first.ses.Player.ID, s.ses.Player.ID)
		}
		st := g.Standings.GetStandings()
		if len(st) != nSeats {
			t.Errorf("history: %d standings, want %d", len(st), nSeats)
		}
		for _, p := range st {
			if want, ok := scores[p.GetSeat()]; !ok || p.GetTotal() != want {
				t.Errorf("history: standing of seat %d is %d, the table's final score %d", p.GetSeat(), p.GetTotal(), want)
			}
		}
		s.awaitSheet(ctx, t, sheet)
	}
	return end, sheet
}

// checkSheet: a finished sheet of nSeats players and hands rows, whose
// grand totals are the table's final scores.
func checkSheet(t *testing.T, sh *scoringv1.Sheet, nSeats, hands int, scores map[uint32]int64) {
	t.Helper()
	if n := len(sh.GetPlayers()); n != nSeats {
		t.Errorf("sheet: %d players, want %d", n, nSeats)
	}
	rows := 0
	for _, pu := range sh.GetPulkas() {
		if !pu.GetFinished() {
			t.Errorf("sheet: pulka %d not finished", pu.GetPulkaIndex())
		}
		for _, h := range pu.GetHands() {
			rows++
			if len(h.GetCells()) != nSeats {
				t.Errorf("sheet: hand %d has %d cells, want %d", h.GetHandIndex(), len(h.GetCells()), nSeats)
			}
			tricks := uint32(0)
			for _, c := range h.GetCells() {
				tricks += c.GetTricks()
				if o := c.GetOutcome(); o == scoringv1.HandOutcome_HAND_OUTCOME_UNSPECIFIED || o == scoringv1.HandOutcome_HAND_OUTCOME_IN_PROGRESS {
					t.Errorf("sheet: hand %d seat %d is not decided: %v", h.GetHandIndex(), c.GetSeat(), c)
				}
			}
			if tricks != h.GetCards() {
				t.Errorf("sheet: hand %d: %d tricks taken of %d cards", h.GetHandIndex(), tricks, h.GetCards())
			}
		}
	}
	if rows != hands {
		t.Errorf("sheet: %d hands, want %d", rows, hands)
	}
	if len(sh.GetTotals()) != nSeats {
		t.Errorf("sheet: %d totals, want %d", len(sh.GetTotals()), nSeats)
	}
	for _, tot := range sh.GetTotals() {
		if want, ok := scores[tot.GetSeat()]; !ok || tot.GetTotal() != want {
			t.Errorf("sheet: total of seat %d is %d, the table's final score %d", tot.GetSeat(), tot.GetTotal(), want)
		}
	}
}

// awaitSheet waits until the last sheet the seat got over the WebSocket is
// want: the gateway follows scoring's sheet stream, so the final one may
// still be on its way after the game ended.
func (s *seat) awaitSheet(ctx context.Context, t *testing.T, want *scoringv1.Sheet) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for s.sheet == nil || !proto.Equal(s.sheet.GetSheet(), want) {
		f, err := s.conn.Next(ctx)
		if err != nil {
			t.Errorf("%s: the final sheet did not come over the WebSocket (the last was version %d): %v", s.ses.Player.ID, s.sheet.GetVersion(), err)
			return
		}
		s.see(f)
	}
}

// awaitHistory waits until the player's history holds gameID: scoring
// writes it once it has scored the last hand, which may be a little after
// the table's game_ended.
func awaitHistory(ctx context.Context, t *testing.T, base string, ses wsclient.Session, gameID string) wsclient.FinishedGame {
	t.Helper()
	api := &wsclient.API{Server: base, Token: ses.Token}
	deadline := time.Now().Add(20 * time.Second)
	for {
		games, err := api.FinishedGames(ctx, 100)
		if err != nil {
			t.Fatalf("history of %s: %v", ses.Player.ID, err)
		}
		for _, g := range games {
			if g.GameID == gameID {
				return g
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("game %s is not in the history of %s within 20 s (it has %d games)", gameID, ses.Player.ID, len(games))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
