package table

import (
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// SeatInfo is who sits in a seat when the game starts.
type SeatInfo struct {
	// PlayerID is the player; empty for a bot seat.
	PlayerID string
	// Name is the name to show.
	Name string
	// Bot: the lobby filled the seat with a bot (classic only).
	Bot bool
}

// seatMode says who plays a seat now.
type seatMode uint8

const (
	seatHuman     seatMode = iota // its player
	seatBotFilled                 // a bot from the start; nobody can take it
	seatBotLeft                   // a bot, because the player left or resigned
	seatBotGrace                  // a bot, because the player's grace ran out
	seatModes
)

type seat struct {
	player string // the seat's owner, kept while a bot plays for them; "" for a filled bot
	name   string
	mode   seatMode
	away   bool
	grace  int64 // Unix ns when the grace runs out; 0 when none runs
	// retakes counts the seat's SitCommands that took it back from a bot
	// this game (maxRetakes).
	retakes uint32
}

// maxServerSteps bounds the server moves and grace expiries of one input: a
// whole 24-hand classic game of bots is about 800 moves.
const maxServerSteps = 10000

// Table is one game at one table. It is not safe for concurrent use: the
// runner gives each table one goroutine.
type Table struct {
	id     string
	gameID string
	set    tablesettings.Settings
	eng    engine
	seats  []seat
	seq    uint64 // seq of the last event
	actAt  int64  // Unix ns when the server moves for the seat to move (timer or bot); 0 when over
	last   entryID
	recent ring
	sd     seeding // the current hand's commit–reveal
	// nx is the next hand's, committed a hand ahead (docs/fair-play.md):
	// active from the deal of the hand in play until that hand ends.
	nx seeding
	// ownTimers: move timers are timer_started events of their own, as
	// before Event.timer (a table restored from a version 1 snapshot).
	ownTimers bool
	// ahead: hands are committed a hand ahead (docs/fair-play.md). A table
	// restored from a snapshot of before it (version 4 or older) seeds each
	// hand when the hand before it ends, to the end of its game, so that
	// its logged input replays to the events it had.
	ahead bool
	// legal: each player to move is sent its legal moves (a LegalMoves
	// event after the event carrying its timer). A table restored from a
	// snapshot of before them sends none, to the end of its game, so that
	// its logged input replays to the events it had.
	legal bool
	// seatRules: a turn's deadline is never put off when its seat changes
	// hands or a seed for the next hand arrives, take-backs are bounded
	// (maxRetakes), and a reconnecting player who left gets a watcher's
	// view. (A leave/sit loop on the seat's own turn restarted its move
	// timer each time, freezing the table, and wrote five events a round
	// without end.) A table restored from a snapshot of before them keeps
	// the old ways to the end of its game, so that its logged input
	// replays to the events it had.
	seatRules bool
}

// batch collects the events of one Apply and stamps them.
type batch struct {
	t        *Table
	at       int64
	causedBy string
	entry    string
	byServer bool
	entropy  Entropy // the step's randomness (Input.Entropy)
	seeds    int     // server seeds drawn from it so far
	evs      []*tablev1.Event
	err      error // an internal failure (never a rule): Apply returns it
	// stamp is at as the events' occurred_at, one for all of them: nothing
	// changes an event's time once it is made.
	stamp *timestamppb.Timestamp
}

func (b *batch) add(vis *tablev1.Visibility, e *tablev1.Event) {
	b.t.seq++
	e.Seq = b.t.seq
	e.TableId = b.t.id
	e.GameId = b.t.gameID
	if b.stamp == nil {
		b.stamp = timestamppb.New(time.Unix(0, b.at))
	}
	e.OccurredAt = b.stamp
	e.Visibility = vis
	e.CausedBy = b.causedBy
	e.CommandEntryId = b.entry
	b.evs = append(b.evs, e)
}

func (b *batch) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// New starts game gameID at table id. It returns the start events:
// GameStarted and hand 0's HandCommitted, whose server seed is entropy (32
// bytes the runner read from crypto/rand); when no seat is awaited (bots
// only, everybody away) the first deal and the first TimerStarted follow at
// once, else the deal waits for the client seeds or the seed deadline. Bots
// do not move in New, not even with BotDelay 0: the first Apply (a tick at
// now) plays them.
func New(id, gameID string, s tablesettings.Settings, seats []SeatInfo, now time.Time, entropy Entropy) (*Table, []*tablev1.Event, error) {
	set, err := s.WithDefaults()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrBadSettings, err)
	}
	// What New accepts, a snapshot must hold (snapshot.go's check).
	if !storable(id) || !storable(gameID) || id == "" || gameID == "" {
		return nil, nil, fmt.Errorf("%w: table id %q, game id %q", ErrBadSettings, id, gameID)
	}
	if now.Before(minAt) || now.After(maxAt) {
		return nil, nil, fmt.Errorf("%w: time %v out of range", ErrBadInput, now)
	}
	if len(seats) != set.Game.Seats() {
		return nil, nil, fmt.Errorf("%w: %d seats, %v has %d", ErrBadSeats, len(seats), set.Game, set.Game.Seats())
	}
	t := &Table{id: id, gameID: gameID, set: set, seats: make([]seat, len(seats)), ahead: true, legal: true, seatRules: true}
	for i, si := range seats {
		switch {
		case si.Bot && set.Game == tablesettings.Japanese:
			return nil, nil, fmt.Errorf("%w: Japanese joker has no bots (seat %d)", ErrBadSeats, i)
		case si.Bot && si.PlayerID != "":
			return nil, nil, fmt.Errorf("%w: bot seat %d has a player", ErrBadSeats, i)
		case !si.Bot && si.PlayerID == "":
			return nil, nil, fmt.Errorf("%w: seat %d has no player", ErrBadSeats, i)
		case !storable(si.PlayerID) || !storable(si.Name):
			return nil, nil, fmt.Errorf("%w: seat %d: a player id or name too long or not UTF-8", ErrBadSeats, i)
		case !si.Bot && t.seatOf(si.PlayerID) >= 0:
			return nil, nil, fmt.Errorf("%w: player %q holds two seats", ErrBadSeats, si.PlayerID)
		}
		t.seats[i] = seat{player: si.PlayerID, name: si.Name}
		if si.Bot {
			t.seats[i].mode = seatBotFilled
		}
	}
	if t.eng, err = newEngine(set); err != nil {
		return nil, nil, err
	}
	b := &batch{t: t, at: now.UnixNano(), entropy: entropy}
	players := make([]*tablev1.SeatPlayer, len(t.seats))
	for i := range t.seats {
		players[i] = t.seatPlayer(i)
	}
	b.add(public(), &tablev1.Event{Event: &tablev1.Event_GameStarted{GameStarted: &tablev1.GameStarted{
		Settings: set.Proto(), Seats: players}}})
	t.commitIfDue(b)
	t.schedule(b)
	if b.err != nil {
		return nil, nil, b.err
	}
	return t, b.evs, nil
}

// ID returns the table's id.
func (t *Table) ID() string { return t.id }

// GameID returns the game's id: random, drawn by the lobby (the key scoring
// dedupes hands by, and part of every hand's identity in the deal).
func (t *Table) GameID() string { return t.gameID }

// Settings returns the settings, defaults filled in.
func (t *Table) Settings() tablesettings.Settings { return t.set }

// Over reports whether the game has ended.
func (t *Table) Over() bool { return t.eng.over() }

// Seq returns the seq of the last event.
func (t *Table) Seq() uint64 { return t.seq }

// LastEntryID returns the command stream entry id of the last applied
// command: the runner resumes reading after it.
func (t *Table) LastEntryID() string { return t.last.String() }

func (t *Table) seatOf(player string) int {
	if player == "" {
		return -1
	}
	for i := range t.seats {
		if t.seats[i].player == player {
			return i
		}
	}
	return -1
}

// HeldFor is the player a bot plays seat s for until they come back (their
// reconnect grace ran out), or "" (a human plays it, or a bot for good).
func (t *Table) HeldFor(s int) string {
	if s < 0 || s >= len(t.seats) || t.seats[s].mode != seatBotGrace {
		return ""
	}
	return t.seats[s].player
}

// SeatOf returns the seat player holds (or owns while a bot plays it), or -1.
func (t *Table) SeatOf(player string) int { return t.seatOf(player) }

func (t *Table) seatPlayer(s int) *tablev1.SeatPlayer {
	st := &t.seats[s]
	p := &tablev1.SeatPlayer{Seat: uint32(s), DisplayName: st.name, Bot: st.mode != seatHuman}
	if st.mode == seatHuman {
		p.PlayerId = st.player
	}
	return p
}

// NextDeadline returns the earliest moment a tick would do something (a
// timer move, a bot move, a grace running out, a seed deadline); ok is false
// when nothing is pending (the game is over).
func (t *Table) NextDeadline() (at time.Time, ok bool) {
	if t.eng.over() {
		return time.Time{}, false
	}
	next := t.actAt
	if t.sd.waiting() && (next == 0 || t.sd.deadline < next) {
		next = t.sd.deadline
	}
	for i := range t.seats {
		if g := t.seats[i].grace; g != 0 && (next == 0 || g < next) {
			next = g
		}
	}
	if next == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, next), true
}

// Ignored reports whether Apply would ignore in: ErrDuplicate for a command
// id applied already, ErrStale for a stream entry id not after the last
// applied one, nil otherwise. Apply returns no events and no error for such
// an input; the runner may call Ignored to log it. An input Apply refuses
// gives its ErrBadInput.
func (t *Table) Ignored(in Input) error {
	e, err := in.validate()
	if err != nil {
		return err
	}
	return t.ignored(in, e)
}

func (t *Table) ignored(in Input, e entryID) error {
	if in.Kind == InputCommand && in.Command.GetCommandId() != "" && t.recent.has(in.Command.GetCommandId()) {
		return ErrDuplicate
	}
	if !e.isZero() && !e.after(t.last) {
		return ErrStale
	}
	return nil
}

// Apply applies one input and returns the events it caused, in order, for
// the runner to publish.
//
// Whatever the input, Apply first fires what is due at in.At (timer moves,
// bot moves, expired graces, each as of in.At), then applies the input, then
// plays any bot whose move is due at once (BotDelay 0).
//
// Errors:
//   - a refused command returns a *RejectError whose Event is the
//     MoveRejected for its sender (seq 0: not part of the history). The
//     table is unchanged by the command; the events returned, if any, are
//     what fired as due before it, and must be logged with the input.
//   - ErrBadInput (and internal errors): nothing changed, no events.
//
// A duplicate or stale input returns no events and no error (see Ignored).
// Apply changes the state if and only if it returns events.
func (t *Table) Apply(in Input) ([]*tablev1.Event, error) {
	e, err := in.validate()
	if err != nil {
		return nil, err
	}
	if skip := t.ignored(in, e); skip != nil {
		return nil, nil //nolint:nilerr // an ignored input is not an error: see Ignored
	}
	b := &batch{t: t, at: in.At.UnixNano(), entropy: in.Entropy}
	t.runDue(b)
	switch in.Kind {
	case InputAway, InputBack:
		n := len(b.evs)
		b.entry = e.String()
		if in.Kind == InputAway {
			t.away(b, in.PlayerID)
		} else {
			t.back(b, t.seatOf(in.PlayerID))
		}
		b.entry = ""
		if len(b.evs) > n && !e.isZero() {
			t.last = e
		}
	case InputCommand:
		err = t.command(b, in.Command, e)
	}
	t.runDue(b)
	if b.err != nil {
		return b.evs, b.err
	}
	return b.evs, err
}

// runDue fires, in time order, everything due at b.at: expired graces (before
// a move or deal due at the same instant), seed deadlines and server moves.
func (t *Table) runDue(b *batch) {
	for range maxServerSteps {
		if t.eng.over() || b.err != nil {
			return
		}
		gs := -1
		var gAt int64
		for s := range t.seats {
			if g := t.seats[s].grace; g != 0 && g <= b.at && (gs < 0 || g < gAt) {
				gs, gAt = s, g
			}
		}
		moveDue := t.actAt != 0 && t.actAt <= b.at
		dealDue := t.sd.waiting() && t.sd.deadline <= b.at
		switch {
		case gs >= 0 && (!moveDue || gAt <= t.actAt) && (!dealDue || gAt <= t.sd.deadline):
			t.expireGrace(b, gs)
		case dealDue:
			t.deal(b)
			t.schedule(b)
		case moveDue:
			b.byServer = true
			if err := t.eng.serverMove(b, t.seats[t.eng.toMove()].mode != seatHuman); err != nil {
				b.fail(fmt.Errorf("table: server move: %w", err))
			}
			b.byServer = false
			t.commitIfDue(b)
			t.schedule(b)
		default:
			return
		}
	}
	b.fail(ErrRunaway)
}

// schedule sets the deadline of the seat to move after a move or a change of
// who plays it: a human gets MoveTimeout and a TimerStarted, a bot moves
// after BotDelay. A finished game has no deadlines at all.
func (t *Table) schedule(b *batch) { t.scheduleBy(b, 0) }

// notLater is deadline, or notAfter when that is set and earlier.
func notLater(deadline, notAfter int64) int64 {
	if notAfter > 0 && notAfter < deadline {
		return notAfter
	}
	return deadline
}

// scheduleBy sets the next move's deadline (and sends its timer, and its
// legal moves), never later than notAfter when that is set.
func (t *Table) scheduleBy(b *batch, notAfter int64) {
	if t.eng.over() {
		t.actAt = 0
		for i := range t.seats {
			t.seats[i].grace, t.seats[i].away = 0, false
		}
		return
	}
	s := t.eng.toMove()
	if s < 0 { // the hand waits for its deal: the seed deadline runs
		t.actAt = 0
		return
	}
	if t.seats[s].mode != seatHuman {
		t.actAt = notLater(b.at+int64(t.set.BotDelay), notAfter)
		return
	}
	t.actAt = notLater(b.at+int64(t.set.MoveTimeout), notAfter)
	timer := &tablev1.TimerStarted{Seat: uint32(s), Phase: t.eng.phase(), Deadline: timestamppb.New(time.Unix(0, t.actAt))}
	// The step's last event carries the timer when everybody sees it
	// (Event.timer): a move and the next timer as one event halve the
	// events of a game, which every gateway and client handle one by one.
	if n := len(b.evs); !t.ownTimers && n > 0 && b.evs[n-1].GetVisibility().GetAudience() == tablev1.Audience_AUDIENCE_PUBLIC && b.evs[n-1].Timer == nil {
		b.evs[n-1].Timer = timer
	} else {
		b.add(public(), &tablev1.Event{Event: &tablev1.Event_TimerStarted{TimerStarted: timer}})
	}
	// The player's moves follow its timer, to it alone: clients offer these
	// and re-implement no rule.
	if t.legal {
		b.add(toSeat(s), &tablev1.Event{Event: &tablev1.Event_LegalMoves{LegalMoves: t.eng.legal(s)}})
	}
}

// rescheduleIf reschedules when seat s is to move: who plays it changed.
// Under the seat rules the turn keeps its deadline or an earlier one (a bot
// taking over moves sooner; a player taking the seat back gets what is left
// of the turn), so that changing hands never buys time.
func (t *Table) rescheduleIf(b *batch, s int) {
	if t.eng.toMove() != s {
		return
	}
	var notAfter int64
	if t.seatRules {
		notAfter = t.actAt
	}
	t.scheduleBy(b, notAfter)
}

func (t *Table) expireGrace(b *batch, s int) {
	st := &t.seats[s]
	st.grace, st.away = 0, false
	if t.set.Game == tablesettings.Japanese {
		if err := t.eng.end(b, s, true); err != nil {
			b.fail(fmt.Errorf("table: forfeit: %w", err))
		}
		t.schedule(b)
		return
	}
	st.mode = seatBotGrace
	b.add(public(), &tablev1.Event{Event: &tablev1.Event_SeatTakenByBot{SeatTakenByBot: &tablev1.SeatTakenByBot{
		Seat: uint32(s), Reason: tablev1.BotReason_BOT_REASON_GRACE_EXPIRED}}})
	t.rescheduleIf(b, s)
}

// away starts the grace of a player whose connection dropped. Reports about
// watchers, bot-played seats, away players or a finished game change nothing.
func (t *Table) away(b *batch, player string) {
	s := t.seatOf(player)
	if s < 0 || t.eng.over() {
		return
	}
	st := &t.seats[s]
	if st.mode != seatHuman || st.away {
		return
	}
	st.away, st.grace = true, b.at+int64(t.set.ReconnectGrace)
	b.add(public(), &tablev1.Event{Event: &tablev1.Event_PlayerAway{PlayerAway: &tablev1.PlayerAway{
		Seat: uint32(s), PlayerId: player, GraceDeadline: timestamppb.New(time.Unix(0, st.grace))}}})
}

// back ends the grace of seat s's player, or gives them back the seat a bot
// took when their grace ran out. A player who left takes the seat back only
// with a SitCommand: leaving was their choice.
func (t *Table) back(b *batch, s int) {
	if s < 0 || t.eng.over() {
		return
	}
	st := &t.seats[s]
	switch {
	case st.mode == seatHuman && st.away:
		st.away, st.grace = false, 0
		b.add(public(), &tablev1.Event{Event: &tablev1.Event_PlayerBack{PlayerBack: &tablev1.PlayerBack{
			Seat: uint32(s), PlayerId: st.player}}})
	case st.mode == seatBotGrace:
		t.retake(b, s)
	}
}

// retake gives seat s back to its owner.
func (t *Table) retake(b *batch, s int) {
	st := &t.seats[s]
	st.mode, st.away, st.grace = seatHuman, false, 0
	b.add(public(), &tablev1.Event{Event: &tablev1.Event_PlayerSeated{PlayerSeated: &tablev1.PlayerSeated{
		Seat: t.seatPlayer(s)}}})
	t.rescheduleIf(b, s)
}
