package table

import (
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// command applies cmd. A refused command changes nothing: no seq, no entry
// in the recent command ids, no move of the read position. Its answer, a
// MoveRejected for the sender that is not part of the table's history (seq
// 0), travels inside the *RejectError: a refusal is not logged, so a
// spammer of illegal commands cannot grow the log or the replay of every
// restore. An accepted command's id and stream entry count as applied, so a
// redelivery changes nothing.
func (t *Table) command(b *batch, cmd *tablev1.Command, e entryID) error {
	b.causedBy, b.entry = cmd.GetCommandId(), e.String()
	defer func() { b.causedBy, b.entry = "", "" }()
	if err := t.doCommand(b, cmd); err != nil {
		reason, msg := rejectReason(err)
		return &RejectError{Reason: reason, PlayerID: cmd.GetPlayerId(), CommandID: cmd.GetCommandId(), Err: err,
			Event: &tablev1.Event{
				TableId: t.id, GameId: t.gameID, OccurredAt: timestamppb.New(time.Unix(0, b.at)),
				Visibility: toPlayer(cmd.GetPlayerId()), CausedBy: b.causedBy, CommandEntryId: b.entry,
				Event: &tablev1.Event_MoveRejected{MoveRejected: &tablev1.MoveRejected{Reason: reason, Message: msg}},
			}}
	}
	if id := cmd.GetCommandId(); id != "" {
		t.recent.add(id)
	}
	if !e.isZero() {
		t.last = e
	}
	return nil
}

func (t *Table) doCommand(b *batch, cmd *tablev1.Command) error {
	if cmd.GetCommandId() == "" || cmd.GetPlayerId() == "" || (cmd.GetTableId() != "" && cmd.GetTableId() != t.id) {
		return ErrMalformed
	}
	player := cmd.GetPlayerId()
	s := t.seatOf(player)
	switch c := cmd.GetCommand().(type) {
	case nil:
		return ErrMalformed
	case *tablev1.Command_Reconnect:
		t.back(b, s)
		view := t.View(s) // a table of before the seat rules: as it was
		if t.seatRules {
			view = t.ViewFor(player)
		}
		b.add(toPlayer(player), &tablev1.Event{Event: &tablev1.Event_ViewSynced{ViewSynced: &tablev1.ViewSynced{
			View: view}}})
		return nil
	case *tablev1.Command_Sit:
		if t.eng.over() {
			return ErrGameOver
		}
		return t.sit(b, s, c.Sit.GetSeat())
	case *tablev1.Command_Leave, *tablev1.Command_Resign:
		if t.eng.over() {
			return ErrGameOver
		}
		_, resign := c.(*tablev1.Command_Resign)
		return t.leave(b, s, resign)
	case *tablev1.Command_ClientSeed:
		if t.eng.over() {
			return ErrGameOver
		}
		dealing := t.eng.toMove() < 0 // the hand waits for its deal
		if err := t.clientSeed(b, s, c.ClientSeed); err != nil {
			return err
		}
		// The seed that deals the hand starts its first timer. One for the
		// hand committed ahead, sent while a hand is played, leaves the
		// turn alone: rescheduling gave the player to move a whole new
		// move time (and wrote a timer and legal moves) for any seated
		// player's seed (a table of before the seat rules still does).
		if dealing || !t.seatRules {
			t.schedule(b)
		}
		return nil
	}
	if s < 0 || t.seats[s].mode != seatHuman {
		return ErrNotSeated
	}
	if t.eng.over() {
		return ErrGameOver
	}
	if err := checkAttached(cmd.GetAttachedSeed()); err != nil {
		return err
	}
	mark := len(b.evs)
	if err := t.eng.command(b, s, cmd); err != nil {
		return err
	}
	// Before commitIfDue: when the move ends the hand, the seed it carried
	// may be the one the next deal waits for.
	t.attachedSeed(b, s, cmd.GetAttachedSeed(), mark)
	t.commitIfDue(b)
	t.schedule(b)
	return nil
}

// sit gives a seat back to its owner while a bot plays it. Seating new
// players is the lobby's job before the game, so nobody takes another's seat.
func (t *Table) sit(b *batch, s int, want uint32) error {
	if s < 0 || uint32(s) != want {
		return ErrSeatUnavailable
	}
	st := &t.seats[s]
	if st.mode == seatHuman {
		return ErrSeatUnavailable // already theirs
	}
	if t.seatRules {
		if st.retakes >= maxRetakes {
			return ErrRetakesUsed
		}
		st.retakes++
	}
	t.retake(b, s)
	return nil
}

// maxRetakes bounds how often a player takes their seat back from a bot
// (SitCommand) in one game. Each leave and take-back writes five events
// (and the lobby's seat changes, and at a coin table a forfeit the wallet
// keeps): a player looping on them grew the table's log, the lobby's and
// the wallet's without end. A person who leaves a game and comes back does
// so once or twice.
const maxRetakes = 3

// leave: in classic a bot plays the seat from now on (resigning is the same);
// in Japanese the opponent wins.
func (t *Table) leave(b *batch, s int, resign bool) error {
	if s < 0 {
		return ErrNotSeated
	}
	st := &t.seats[s]
	if t.set.Game == tablesettings.Japanese {
		if !resign {
			b.add(public(), &tablev1.Event{Event: &tablev1.Event_PlayerLeft{PlayerLeft: &tablev1.PlayerLeft{
				Seat: uint32(s), PlayerId: st.player}}})
		}
		if err := t.eng.end(b, s, false); err != nil {
			return err
		}
		t.schedule(b)
		return nil
	}
	if st.mode == seatBotLeft {
		return ErrNotSeated // left already
	}
	wasHuman := st.mode == seatHuman
	st.mode, st.away, st.grace = seatBotLeft, false, 0
	b.add(public(), &tablev1.Event{Event: &tablev1.Event_PlayerLeft{PlayerLeft: &tablev1.PlayerLeft{
		Seat: uint32(s), PlayerId: st.player}}})
	if wasHuman {
		b.add(public(), &tablev1.Event{Event: &tablev1.Event_SeatTakenByBot{SeatTakenByBot: &tablev1.SeatTakenByBot{
			Seat: uint32(s), Reason: tablev1.BotReason_BOT_REASON_PLAYER_LEFT}}})
		t.rescheduleIf(b, s)
	}
	return nil
}
