package e2e

import (
	"fmt"
	"testing"
	"time"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// gameEnded accepts the GameEnded event.
func gameEnded(ev *tablev1.Event) bool { return ev.GetGameEnded() != nil }

// seatPlayers creates a table hosted by the first session, seats the others
// in order through the HTTP API, connects and joins every client, and
// returns the table id and the clients (in seat order). The game starts
// when the last seat is taken.
func seatPlayers(t *testing.T, s *stack, sp tableSpec, sessions []session, tableID *string) []*client {
	t.Helper()
	*tableID = s.createTable(t, sessions[0], sp)
	clients := make([]*client, len(sessions))
	for i, ses := range sessions {
		clients[i] = s.newClient(t, fmt.Sprintf("%s-seat%d", t.Name(), i), ses)
		clients[i].connect()
		// Joining before the game starts: the clients see it live.
		clients[i].join(*tableID, "")
		if i > 0 {
			s.sit(t, ses, *tableID, i, sp.password)
		}
	}
	return clients
}

// playToEnd turns auto-play on for every client and waits for each to see
// the game end.
func playToEnd(t *testing.T, clients []*client, tableID string, timeout time.Duration) {
	t.Helper()
	for _, c := range clients {
		c.autoPlay(tableID, true)
	}
	for _, c := range clients {
		c.awaitEvent(0, timeout, tableID, "the end of the game", gameEnded)
	}
}

// checkAllMovesByPlayers: every move of the game was made by a player's
// command (none by the timer: nothing a client sent was lost), every
// command a client sent was applied exactly once, and none was refused.
func checkAllMovesByPlayers(t *testing.T, log []logEntry, clients []*client) {
	t.Helper()
	if n := serverMoves(log); n != 0 {
		t.Errorf("%d moves were made by the server: a player's command went missing or came too late", n)
	}
	if r := rejections(log); len(r) != 0 {
		t.Errorf("%d commands were refused, the first: %s", len(r), describe(r[0].ID, r[0].Ev))
	}
	if r := refusalsReceived(clients, log[0].Ev.GetTableId()); len(r) != 0 {
		t.Errorf("%d commands were refused, the first: %s", len(r), r[0])
	}
	steps := commandSteps(log)
	sent := 0
	for _, c := range clients {
		for _, id := range c.commandsSent(log[0].Ev.GetTableId()) {
			sent++
			if steps[id] != 1 {
				t.Errorf("command %s of %s is in the log %d times, want once", id, c.name, steps[id])
			}
		}
	}
	if sent != len(steps) {
		t.Errorf("the clients sent %d commands, the log applied %d", sent, len(steps))
	}
}

// TestClassic_FourPlayersPlayAStandardGameToTheEnd: two registered players
// and two guests create a standard classic table through the HTTP API, sit,
// join over WebSockets and play all 24 hands with legal moves chosen from
// what each sees. The sheet the clients receive, the one in each player's
// history and the stored one equal the pure replay of the start's seed and
// the logged moves; no frame leaks a card.
func TestClassic_FourPlayersPlayAStandardGameToTheEnd(t *testing.T) {
	t.Parallel()
	playClassicGame(t, shared)
}

// playClassicGame is TestClassic_FourPlayersPlayAStandardGameToTheEnd on the stack s.
func playClassicGame(t *testing.T, s *stack) {
	var tableID string
	s.dumpOnFailure(t, &tableID)
	sessions := []session{s.register(t), s.guest(t), s.register(t), s.guest(t)}
	clients := seatPlayers(t, s, tableSpec{standard: true, moveTime: time.Minute, name: "e2e standard"}, sessions, &tableID)
	// One player also follows the lobby: its frames are checked too.
	from := clients[0].len()
	clients[0].send(map[string]any{"type": "lobby", "watch": true})
	clients[0].await(from, 10*time.Second, "the lobby view", func(f *frame) bool { return f.Type == "lobby_view" })
	started := time.Now()
	playToEnd(t, clients, tableID, 90*time.Second)
	t.Logf("a standard game of four WebSocket players: %v", time.Since(started).Round(time.Millisecond))
	g := verifyGame(t, s, tableID, clients)
	if len(g.res.Classic.HandResults()) != 24 {
		t.Errorf("%d hands played, want 24", len(g.res.Classic.HandResults()))
	}
	checkAllMovesByPlayers(t, g.log, clients)
	checkTheChecker(t, g, clients[1])
	// And the sheet comparison sees a changed cell or a changed premia.
	want := flatReplay(g.res)
	cell, premia := flatReplay(g.res), flatReplay(g.res)
	cell.Hands[5][2].Value++
	premia.Pulkas[3].Premia[1]++
	if diffSheets(cell, want) == "" || diffSheets(premia, want) == "" {
		t.Error("diffSheets misses a changed cell or premia")
	}
}

// TestJapanese_TwoPlayersPlayAWholeMatch: two players play a Japanese match
// to 21 over WebSockets; the final sheet equals the pure replay and no
// frame shows a face-down card or the opponent's hand.
func TestJapanese_TwoPlayersPlayAWholeMatch(t *testing.T) {
	t.Parallel()
	playJapaneseMatch(t, shared)
}

// playJapaneseMatch is TestJapanese_TwoPlayersPlayAWholeMatch on the stack s.
func playJapaneseMatch(t *testing.T, s *stack) {
	var tableID string
	s.dumpOnFailure(t, &tableID)
	sessions := []session{s.guest(t), s.register(t)}
	clients := seatPlayers(t, s, tableSpec{japanese: true, moveTime: time.Minute, name: "e2e japanese"}, sessions, &tableID)
	started := time.Now()
	playToEnd(t, clients, tableID, 90*time.Second)
	t.Logf("a Japanese match of two WebSocket players: %v", time.Since(started).Round(time.Millisecond))
	g := verifyGame(t, s, tableID, clients)
	if g.res.Winner < 0 || g.res.Scores[g.res.Winner] < 21 {
		t.Errorf("the match ended at %v without a winner at 21", g.res.Scores)
	}
	checkAllMovesByPlayers(t, g.log, clients)
	checkTheChecker(t, g, clients[0])
}
