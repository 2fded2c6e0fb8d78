package table

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/classic"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/pkg/wire"
)

func TestLeave_ClassicBotTakesTheSeatUntilThePlayerSitsAgain(t *testing.T) {
	for name, leave := range map[string]func() *tablev1.Command{"leave": leaveCmd, "resign": resignCmd} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 8, humans(4))
			mover := h.t.eng.toMove()
			evs := h.mustCmd(player(mover), leave())
			if got := kinds(evs); len(got) != 2 || got[0] != "player_left" || got[1] != "seat_taken_by_bot" ||
				evs[1].GetSeatTakenByBot().GetReason() != tablev1.BotReason_BOT_REASON_PLAYER_LEFT {
				t.Fatalf("leave: %v", got)
			}
			if got := h.t.HeldFor(mover); got != "" {
				t.Fatalf("HeldFor = %q after a leave: a bot plays the seat for good", got)
			}
			// It was their turn: the bot now moves after BotDelay, not after the timer.
			if d, _ := h.t.NextDeadline(); !d.Equal(h.now.Add(tablesettings.DefaultBotDelay)) {
				t.Fatalf("deadline %v after the leave at %v", d, h.now)
			}
			if _, err := h.cmd(player(mover), legalCommands(h.t, mover)[0]); !errors.Is(err, ErrNotSeated) {
				t.Fatalf("a move after leaving: %v", err)
			}
			if _, err := h.cmd(player(mover), leave()); !errors.Is(err, ErrNotSeated) {
				t.Fatalf("leaving twice: %v", err)
			}
			// Coming back online does not undo a leave; sitting does.
			if evs, _ := h.apply(Back(player(mover), h.now)); len(evs) != 0 {
				t.Fatalf("back after leaving: %v", kinds(evs))
			}
			if _, err := h.cmd(player(mover), sitCmd((mover+1)%4)); !errors.Is(err, ErrSeatUnavailable) {
				t.Fatalf("sitting in another's seat: %v", err)
			}
			evs = h.mustCmd(player(mover), sitCmd(mover))
			if got := kinds(evs); len(got) != 2 || got[0] != "player_seated" || wire.TimerOf(evs[0]).GetSeat() != uint32(mover) ||
				evs[1].GetLegalMoves().GetSeat() != uint32(mover) {
				t.Fatalf("sit: %v, want player_seated with the player's timer, then its legal moves", got)
			}
			if _, err := h.cmd(player(mover), sitCmd(mover)); !errors.Is(err, ErrSeatUnavailable) {
				t.Fatalf("sitting twice: %v", err)
			}
			h.mustCmd(player(mover), legalCommands(h.t, mover)[0])
		})
	}
}

// A seat changing hands never buys its turn time: a player who leaves on
// their turn and sits straight back gets what was left of the bot's delay,
// not a new move timer. Looping on leave and sit restarted the timer each
// round and froze the table for the other three.
func TestSit_TakingTheSeatBackKeepsTheTurnsDeadline(t *testing.T) {
	h := newHarness(t, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 8, humans(4))
	mover := h.t.eng.toMove()
	start := h.now
	botAt := start.Add(tablesettings.DefaultBotDelay)
	h.mustCmd(player(mover), leaveCmd())
	for i := range 3 { // the take-backs a game allows
		h.now = start.Add(time.Duration(100*(2*i+1)) * time.Millisecond)
		evs := h.mustCmd(player(mover), sitCmd(mover))
		if d := wire.TimerOf(evs[0]).GetDeadline().AsTime(); !d.Equal(botAt) {
			t.Fatalf("take-back %d: the timer runs to %v, want the bot's %v", i+1, d, botAt)
		}
		if d, _ := h.t.NextDeadline(); !d.Equal(botAt) {
			t.Fatalf("take-back %d: next deadline %v, want %v", i+1, d, botAt)
		}
		h.now = h.now.Add(100 * time.Millisecond)
		h.mustCmd(player(mover), leaveCmd())
		if d, _ := h.t.NextDeadline(); !d.Equal(botAt) {
			t.Fatalf("leave %d: next deadline %v, want %v", i+2, d, botAt)
		}
	}
	// The turn ends when it was due, moved for the seat.
	h.tick(botAt)
	if h.t.eng.toMove() == mover {
		t.Fatalf("seat %d is still to move after its deadline", mover)
	}
}

// A player takes their seat back from a bot at most maxRetakes times a game:
// each round of leave and sit writes five events (and the lobby's seat
// changes, and at a coin table a forfeit the wallet keeps). Past it the bot
// plays the seat to the end, and a snapshot keeps the count.
func TestSit_ASeatIsTakenBackAtMostThreeTimesAGame(t *testing.T) {
	h := newHarness(t, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 8, humans(4))
	seat := (h.t.eng.toMove() + 1) % 4 // not to move: nothing is due meanwhile
	for range maxRetakes {
		h.mustCmd(player(seat), leaveCmd())
		h.mustCmd(player(seat), sitCmd(seat))
	}
	h.mustCmd(player(seat), leaveCmd())
	logged := len(h.log)
	mustReject(t, h, player(seat), sitCmd(seat), tablev1.RejectReason_REJECT_REASON_NOT_ALLOWED, ErrRetakesUsed)
	if len(h.log) != logged {
		t.Fatal("a refused take-back was logged")
	}
	r, err := Restore(state(t, h.t))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.seats[seat].retakes; got != maxRetakes {
		t.Fatalf("restored with %d take-backs, want %d", got, maxRetakes)
	}
	// Another seat has take-backs of its own.
	other := (seat + 1) % 4
	h.mustCmd(player(other), leaveCmd())
	h.mustCmd(player(other), sitCmd(other))
}

// A table of before the seat rules (restored from an older snapshot) keeps
// its old ways to the end of its game, so that its log replays to the
// events it had: a take-back restarts the move timer, and is not counted.
func TestSit_ATableOfBeforeTheSeatRulesKeepsItsWays(t *testing.T) {
	h := newHarness(t, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 8, humans(4))
	h.t.seatRules = false
	mover := h.t.eng.toMove()
	for range maxRetakes + 1 {
		h.mustCmd(player(mover), leaveCmd())
		evs := h.mustCmd(player(mover), sitCmd(mover))
		if d := wire.TimerOf(evs[0]).GetDeadline().AsTime(); !d.Equal(h.now.Add(h.t.set.MoveTimeout)) {
			t.Fatalf("the timer runs to %v, want a whole move time from %v", d, h.now)
		}
	}
	if h.t.seats[mover].retakes != 0 {
		t.Fatal("take-backs counted without the seat rules")
	}
}

func TestLeaveOrResign_JapaneseOpponentWins(t *testing.T) {
	for name, tc := range map[string]struct {
		cmd  func() *tablev1.Command
		want []string
	}{
		// The hand ends with the game: its seeds, and those of the hand
		// committed ahead, are revealed before the end.
		"leave":  {leaveCmd, []string{"player_left", "hand_revealed", "hand_revealed", "game_ended"}},
		"resign": {resignCmd, []string{"hand_revealed", "hand_revealed", "game_ended"}},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, japaneseSet(21), 8, humans(2))
			evs := h.mustCmd("p0", tc.cmd())
			got := kinds(evs)
			if len(got) != len(tc.want) || got[len(got)-1] != "game_ended" || got[0] != tc.want[0] {
				t.Fatalf("%s: %v, want %v", name, got, tc.want)
			}
			var revealed []uint32
			for _, e := range evs {
				if r := e.GetHandRevealed(); r != nil {
					revealed = append(revealed, r.GetHandIndex())
				}
			}
			if len(revealed) != 2 || revealed[0] != 0 || revealed[1] != 1 {
				t.Fatalf("%s: hands %v revealed, want 0 (in play) then 1 (committed ahead)", name, revealed)
			}
			ended := evs[len(evs)-1].GetGameEnded()
			if ended.GetReason() != tablev1.GameEndReason_GAME_END_REASON_RESIGNED ||
				ended.GetPlacings()[0].GetSeat() != 1 || ended.GetPlacings()[0].GetPlayerId() != "p1" ||
				ended.GetHandsPlayed() != 0 {
				t.Fatalf("game ended %v", ended)
			}
			if !h.t.Over() {
				t.Fatal("the match goes on")
			}
		})
	}
}

func TestSit_JapaneseHasNoSeatToTakeBack(t *testing.T) {
	h := newHarness(t, japaneseSet(21), 8, humans(2))
	if _, err := h.cmd("p0", sitCmd(0)); !errors.Is(err, ErrSeatUnavailable) {
		t.Fatalf("sit: %v", err)
	}
	if _, err := h.cmd("p9", sitCmd(1)); !errors.Is(err, ErrSeatUnavailable) {
		t.Fatalf("a stranger sitting: %v", err)
	}
}

func TestDuplicateCommandID_IsIgnored(t *testing.T) {
	h := newHarness(t, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 1, humans(4))
	seat := h.t.eng.toMove()
	cmd := legalCommands(h.t, seat)[0]
	cmd.CommandId, cmd.PlayerId = "same", player(seat)
	if evs, err := h.t.Apply(CommandInput(cmd, h.entry(), t0)); err != nil || len(evs) == 0 {
		t.Fatalf("first: %v %v", kinds(evs), err)
	}
	before := state(t, h.t)
	again := CommandInput(cmd, h.entry(), t0.Add(time.Second))
	if err := h.t.Ignored(again); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("Ignored: %v", err)
	}
	if evs, err := h.t.Apply(again); err != nil || len(evs) != 0 {
		t.Fatalf("duplicate: %v %v", kinds(evs), err)
	}
	if !bytes.Equal(before, state(t, h.t)) {
		t.Fatal("a duplicate changed the table")
	}
}

func TestStaleEntryID_IsIgnored(t *testing.T) {
	h := newHarness(t, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 1, humans(4))
	seat := h.t.eng.toMove()
	h.mustCmd(player(seat), legalCommands(h.t, seat)[0])
	last := h.t.LastEntryID()
	before := state(t, h.t)
	next := h.t.eng.toMove()
	for _, entry := range []string{last, "1-1"} {
		cmd := legalCommands(h.t, next)[0]
		cmd.CommandId, cmd.PlayerId = "fresh-"+entry, player(next)
		in := CommandInput(cmd, entry, h.now)
		if err := h.t.Ignored(in); !errors.Is(err, ErrStale) {
			t.Fatalf("Ignored(%s): %v", entry, err)
		}
		if evs, err := h.t.Apply(in); err != nil || len(evs) != 0 {
			t.Fatalf("stale %s: %v %v", entry, kinds(evs), err)
		}
	}
	if !bytes.Equal(before, state(t, h.t)) {
		t.Fatal("a stale entry changed the table")
	}
}

// mustReject checks that a command is refused with want, that it yields no
// event, that the answer in the *RejectError is a MoveRejected to its
// sender outside the history (seq 0), and that the table did not change at
// all (game, seq, recent ids and read position: a refusal is not logged).
func mustReject(t *testing.T, h *harness, from string, c *tablev1.Command, want tablev1.RejectReason, rule error) {
	t.Helper()
	before := gameState(t, h.t)
	seq, last := h.t.Seq(), h.t.LastEntryID()
	snap := state(t, h.t)
	evs, err := h.cmd(from, c)
	if got := rejectOf(err); got != want {
		t.Fatalf("reason %v (%v), want %v", got, err, want)
	}
	if rule != nil && !errors.Is(err, rule) {
		t.Fatalf("error %v is not %v", err, rule)
	}
	if len(evs) != 0 {
		t.Fatalf("events %v, want none", kinds(evs))
	}
	var re *RejectError
	errors.As(err, &re)
	rej := re.Event
	if rej.GetMoveRejected() == nil || rej.GetSeq() != 0 || rej.GetTableId() != h.t.ID() || rej.GetGameId() != h.t.GameID() {
		t.Fatalf("rejection %v", rej)
	}
	if rej.GetVisibility().GetAudience() != tablev1.Audience_AUDIENCE_PLAYER || rej.GetVisibility().GetPlayerId() != from ||
		rej.GetCausedBy() != c.GetCommandId() || rej.GetCommandEntryId() == "" {
		t.Fatalf("rejection %v", rej)
	}
	if rule != nil && rej.GetMoveRejected().GetMessage() != rule.Error() {
		t.Fatalf("message %q, want the rule's %q", rej.GetMoveRejected().GetMessage(), rule.Error())
	}
	if gameState(t, h.t) != before {
		t.Fatal("a rejected command changed the game")
	}
	if h.t.Seq() != seq || h.t.LastEntryID() != last || !bytes.Equal(state(t, h.t), snap) {
		t.Fatal("a rejected command changed the table")
	}
}

func TestWrongPlayer_RejectedAndNothingChanges(t *testing.T) {
	h := newHarness(t, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 2, humans(4))
	seat := h.t.eng.toMove()
	other := (seat + 1) % 4
	// Another seated player sends the mover's move: it acts for their own
	// seat, whose turn it is not.
	mustReject(t, h, player(other), legalCommands(h.t, seat)[0], tablev1.RejectReason_REJECT_REASON_NOT_YOUR_TURN, classic.ErrNotYourTurn)
	mustReject(t, h, "stranger", legalCommands(h.t, seat)[0], tablev1.RejectReason_REJECT_REASON_NOT_SEATED, ErrNotSeated)
	c := legalCommands(h.t, seat)[0]
	c.TableId = "another-table"
	c.CommandId, c.PlayerId = "x1", player(seat)
	evs, err := h.t.Apply(CommandInput(c, h.entry(), h.now))
	if rejectOf(err) != tablev1.RejectReason_REJECT_REASON_MALFORMED || len(evs) != 0 {
		t.Fatalf("command for another table: %v %v", kinds(evs), err)
	}
}

func TestIllegalMove_RejectedWithTheEngineReasonAndNothingChanges(t *testing.T) {
	h := newHarness(t, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 2, humans(4))
	first := h.t.eng.toMove()
	mustReject(t, h, player(first), bidCmd(2), tablev1.RejectReason_REJECT_REASON_INVALID_BID, classic.ErrBadBid)
	mustReject(t, h, player(first), bidCmd(200), tablev1.RejectReason_REJECT_REASON_INVALID_BID, classic.ErrBadBid)
	mustReject(t, h, player(first), trumpCmd(cards.Hearts), tablev1.RejectReason_REJECT_REASON_WRONG_PHASE, classic.ErrWrongPhase)
	mustReject(t, h, player(first), &tablev1.Command{}, tablev1.RejectReason_REJECT_REASON_MALFORMED, ErrMalformed)
	// Hand 1 has one card: three passes, then the dealer may not bid 1.
	for range 3 {
		s := h.t.eng.toMove()
		h.mustCmd(player(s), bidCmd(0))
	}
	dealer := h.t.eng.toMove()
	mustReject(t, h, player(dealer), bidCmd(1), tablev1.RejectReason_REJECT_REASON_DEALER_BID_FORBIDDEN, classic.ErrDealerBid)
	h.mustCmd(player(dealer), bidCmd(0))
	leader := h.t.eng.toMove()
	held := h.t.eng.(*classicEngine).g.Hand(leader)
	notHeld := (cards.FullDeck &^ held &^ cards.Jokers).Lowest()
	mustReject(t, h, player(leader), playCmd(notHeld), tablev1.RejectReason_REJECT_REASON_CARD_NOT_AVAILABLE, classic.ErrNotInHand)
	if c := held.Lowest(); c.IsJoker() {
		mustReject(t, h, player(leader), playCmd(c), tablev1.RejectReason_REJECT_REASON_INVALID_DECLARATION, classic.ErrBadJokerDeclaration)
	}
}

// A player who left is still their seat's player in the table's books, but
// the seat a bot now plays is nobody's: their reconnect is a watcher's, or
// they could pass the bot's hand to a friend still at the table.
func TestReconnect_AfterLeavingSyncsAWatchersView(t *testing.T) {
	for name, leave := range map[string]func() *tablev1.Command{"leave": leaveCmd, "resign": resignCmd} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 4, humans(4))
			h.mustCmd("p2", leave())
			evs := h.mustCmd("p2", reconnectCmd())
			if got := kinds(evs); len(got) != 1 || got[0] != "view_synced" {
				t.Fatalf("reconnect: %v", got)
			}
			if v := evs[0].GetViewSynced().GetView(); v.YourSeat != nil || len(v.GetYourHand()) != 0 || v.Legal != nil {
				t.Fatalf("the leaver's view: seat %v, hand %v, legal %v", v.YourSeat, v.GetYourHand(), v.Legal)
			}
			if v := h.t.ViewFor("p2"); v.YourSeat != nil || len(v.GetYourHand()) != 0 {
				t.Fatalf("ViewFor the leaver: seat %v, hand %v", v.YourSeat, v.GetYourHand())
			}
		})
	}
}

func TestReconnect_SyncsTheSendersViewAndEndsTheirGrace(t *testing.T) {
	h := newHarness(t, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 4, humans(4))
	if _, err := h.apply(Away("p2", t0)); err != nil {
		t.Fatal(err)
	}
	evs := h.mustCmd("p2", reconnectCmd())
	if got := kinds(evs); len(got) != 2 || got[0] != "player_back" || got[1] != "view_synced" {
		t.Fatalf("reconnect: %v", got)
	}
	vs := evs[1]
	if vs.GetVisibility().GetAudience() != tablev1.Audience_AUDIENCE_PLAYER || vs.GetVisibility().GetPlayerId() != "p2" {
		t.Fatalf("view visibility %v", vs.GetVisibility())
	}
	v := vs.GetViewSynced().GetView()
	if v.YourSeat == nil || v.GetYourSeat() != 2 || len(v.GetYourHand()) != 1 || v.GetSeats()[2].GetAway() {
		t.Fatalf("view %v", v)
	}
	// A watcher may reconnect too and sees no cards.
	evs = h.mustCmd("watcher", reconnectCmd())
	if v := evs[0].GetViewSynced().GetView(); v.YourSeat != nil || len(v.GetYourHand()) != 0 {
		t.Fatalf("watcher view %v", v)
	}
}
