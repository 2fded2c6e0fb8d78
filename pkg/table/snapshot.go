package table

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/fairdeal"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// snapshotVersion is the first byte of MarshalBinary's output. Bump it when
// the layout changes.
//
// Version 5 says the table commits every hand a hand ahead (its seeds ride
// on the moves of the hand before, docs/fair-play.md) and adds the seeding
// of the hand committed ahead after the current hand's. A version 4 table
// seeds each hand when the hand before it ends, and keeps doing so to the
// end of its game, so that a log written before that change replays to the
// same events after it. Likewise version 4 says the table puts its move
// timers on the events they follow (Event.timer), and a version 3 table
// sends them as timer_started events to the end of its game. Versions 3 to 5
// have the layout of per-hand commit–reveal: the seed timeout in the
// settings and the current hand's seeding after the recent commands.
// Versions 1 and 2 (one seed per game, which the game id made public) are
// not read: their engines' states cannot continue with committed keys, and
// their games were not fair.
const (
	snapshotVersion          = 5
	snapshotVersionNotAhead  = 4
	snapshotVersionOwnTimers = 3
)

// maxStringLen bounds ids and names in a snapshot.
const maxStringLen = 1 << 10

// MarshalBinary encodes the whole table — hidden cards included: it is a
// server-side snapshot, never for a client. With the inputs applied after it,
// it rebuilds the table exactly (see UnmarshalBinary).
func (t *Table) MarshalBinary() ([]byte, error) {
	eng, err := t.eng.marshal()
	if err != nil {
		return nil, fmt.Errorf("table: engine state: %w", err)
	}
	s := &t.set
	b := make([]byte, 0, 256+len(eng)+t.recent.n*40)
	version := byte(snapshotVersion)
	switch {
	case t.ownTimers:
		version = snapshotVersionOwnTimers
	case !t.ahead:
		version = snapshotVersionNotAhead
	}
	b = append(b, version, byte(s.Game), byte(s.Classic.Variant), byte(s.Classic.Khishti),
		boolByte(s.Classic.Premia), boolByte(s.Classic.Moshla), boolByte(s.Classic.RestDocked), byte(s.JapaneseTarget))
	b = binary.LittleEndian.AppendUint64(b, uint64(s.MoveTimeout))
	b = binary.LittleEndian.AppendUint64(b, uint64(s.ReconnectGrace))
	b = binary.LittleEndian.AppendUint64(b, uint64(s.BotDelay))
	b = binary.LittleEndian.AppendUint64(b, uint64(s.SeedTimeout))
	b = appendString(b, t.id)
	b = appendString(b, t.gameID)
	b = appendString(b, string(eng))
	b = binary.LittleEndian.AppendUint64(b, t.seq)
	b = binary.LittleEndian.AppendUint64(b, uint64(t.actAt))
	b = binary.LittleEndian.AppendUint64(b, t.last.ms)
	b = binary.LittleEndian.AppendUint64(b, t.last.seq)
	b = append(b, byte(len(t.seats)))
	for i := range t.seats {
		st := &t.seats[i]
		b = appendString(b, st.player)
		b = appendString(b, st.name)
		b = append(b, byte(st.mode), boolByte(st.away))
		b = binary.LittleEndian.AppendUint64(b, uint64(st.grace))
	}
	b = binary.AppendUvarint(b, uint64(t.recent.n))
	for i := range t.recent.n {
		b = appendString(b, t.recent.ids[(t.recent.start+i)%recentCommands])
	}
	// The seeding: the server seed is a secret until its HandRevealed, like
	// the hidden cards (the commitment is recomputed from it).
	b = t.appendSeeding(b, &t.sd)
	if version == snapshotVersion {
		b = t.appendSeeding(b, &t.nx)
	}
	return b, nil
}

func (t *Table) appendSeeding(b []byte, sd *seeding) []byte {
	b = append(b, boolByte(sd.active))
	if sd.active {
		b = binary.LittleEndian.AppendUint32(b, sd.index)
		b = append(b, sd.server[:]...)
		for i := range t.seats {
			b = append(b, sd.clients[i][:]...)
		}
		b = append(b, sd.awaited, sd.got)
		b = binary.LittleEndian.AppendUint64(b, uint64(sd.deadline))
	}
	return b
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// UnmarshalBinary restores a table written by MarshalBinary. It validates
// the whole state and returns an error wrapping ErrBadSnapshot (t unchanged)
// for anything else.
func (t *Table) UnmarshalBinary(data []byte) error {
	n, err := readSnapshot(data)
	if err != nil {
		return err
	}
	*t = *n
	return nil
}

// Restore is UnmarshalBinary into a new Table.
func Restore(data []byte) (*Table, error) { return readSnapshot(data) }

func readSnapshot(data []byte) (*Table, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrBadSnapshot}, args...)...)
	}
	r := reader{b: data}
	v := r.byte()
	if v != snapshotVersion && v != snapshotVersionNotAhead && v != snapshotVersionOwnTimers {
		return nil, bad("unknown version %d", v)
	}
	var s tablesettings.Settings
	s.Game = tablesettings.Game(r.byte())
	s.Classic = scoring.Settings{Variant: classic.Variant(r.byte()), Khishti: scoring.Khishti(r.byte())}
	premia, moshla, rest := r.byte(), r.byte(), r.byte()
	s.Classic.Premia, s.Classic.Moshla, s.Classic.RestDocked = premia == 1, moshla == 1, rest == 1
	s.JapaneseTarget = int(r.byte())
	s.MoveTimeout = time.Duration(r.uint64())
	s.ReconnectGrace = time.Duration(r.uint64())
	s.BotDelay = time.Duration(r.uint64())
	s.SeedTimeout = time.Duration(r.uint64())
	t := &Table{set: s, ownTimers: v == snapshotVersionOwnTimers, ahead: v == snapshotVersion}
	t.id = r.string()
	t.gameID = r.string()
	eng := r.bytes()
	t.seq = r.uint64()
	t.actAt = int64(r.uint64())
	t.last = entryID{ms: r.uint64(), seq: r.uint64()}
	nSeats := int(r.byte())
	if r.err != nil {
		return nil, bad("truncated")
	}
	if premia > 1 || moshla > 1 || rest > 1 {
		return nil, bad("bad flags")
	}
	if d, err := s.WithDefaults(); err != nil {
		return nil, bad("settings: %w", err)
	} else if d != s {
		return nil, bad("settings with a default left unfilled")
	}
	if t.id == "" || len(t.id) > maxStringLen || len(t.gameID) > maxStringLen || t.gameID == "" {
		return nil, bad("ids")
	}
	if nSeats != s.Game.Seats() {
		return nil, bad("%d seats for %v", nSeats, s.Game)
	}
	t.seats = make([]seat, nSeats)
	for i := range t.seats {
		st := &t.seats[i]
		st.player, st.name = r.string(), r.string()
		st.mode, st.away = seatMode(r.byte()), r.byte() == 1
		st.grace = int64(r.uint64())
		if r.err != nil {
			return nil, bad("truncated")
		}
		switch {
		case st.mode >= seatModes, len(st.player) > maxStringLen, len(st.name) > maxStringLen:
			return nil, bad("seat %d", i)
		case (st.mode == seatBotFilled) != (st.player == ""):
			return nil, bad("seat %d: a filled bot and only it has no player", i)
		case st.mode != seatHuman && s.Game == tablesettings.Japanese:
			return nil, bad("seat %d: a bot at a Japanese table", i)
		case st.away != (st.grace != 0), st.away && st.mode != seatHuman, st.grace < 0:
			return nil, bad("seat %d: grace", i)
		case st.player != "" && indexOfPlayer(t.seats[:i], st.player) >= 0:
			return nil, bad("seat %d: player in two seats", i)
		}
	}
	nRecent := r.uvarint()
	if nRecent > recentCommands {
		return nil, bad("%d recent commands", nRecent)
	}
	for range nRecent {
		id := r.string()
		if id == "" || len(id) > maxStringLen || t.recent.has(id) {
			return nil, bad("recent command ids")
		}
		t.recent.add(id)
	}
	if err := readSeeding(&r, t, &t.sd); err != nil {
		return nil, err
	}
	if t.ahead {
		if err := readSeeding(&r, t, &t.nx); err != nil {
			return nil, err
		}
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, bad("truncated or trailing bytes")
	}
	e, err := emptyEngine(s)
	if err != nil {
		return nil, err
	}
	if err := e.unmarshal(eng); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSnapshot, err)
	}
	t.eng = e
	if (e.over() || e.awaitingDeal()) != (t.actAt == 0) || t.actAt < 0 {
		return nil, bad("deadline %d with the game over=%v", t.actAt, e.over())
	}
	sd := &t.sd
	switch {
	case e.over():
		if sd.active {
			return nil, bad("a hand seeded after the game")
		}
	case !sd.active || sd.index != e.handIndex() || sd.waiting() != e.awaitingDeal():
		return nil, bad("seeding of hand %d (active %v, waiting %v) at hand %d (awaiting the deal %v)",
			sd.index, sd.active, sd.waiting(), e.handIndex(), e.awaitingDeal())
	}
	nx := &t.nx
	if nx.active && (e.over() || e.lastHand() || sd.waiting() || nx.index != sd.index+1 || nx.deadline != 0) {
		return nil, bad("hand %d committed ahead of hand %d (waiting %v, last %v)", nx.index, sd.index, sd.waiting(), e.lastHand())
	}
	for _, sd := range []*seeding{sd, nx} {
		if sd.active {
			c, err := fairdeal.Commit(t.hand(sd.index), sd.server)
			if err != nil {
				return nil, bad("seeding: %w", err)
			}
			sd.commit = c
		}
	}
	if e.over() {
		for i := range t.seats {
			if t.seats[i].away {
				return nil, bad("grace after the game")
			}
		}
	}
	return t, nil
}

func indexOfPlayer(ss []seat, p string) int {
	for i := range ss {
		if ss[i].player == p {
			return i
		}
	}
	return -1
}

// readSeeding reads a seeding MarshalBinary wrote after the recent
// commands and checks what it can without the engine.
func readSeeding(r *reader, t *Table, sd *seeding) error {
	switch r.byte() {
	case 0:
		return nil
	case 1:
	default:
		return fmt.Errorf("%w: seeding flag", ErrBadSnapshot)
	}
	sd.active = true
	sd.index = r.uint32()
	copy(sd.server[:], r.fixed(fairdeal.SeedSize))
	for i := range t.seats {
		copy(sd.clients[i][:], r.fixed(fairdeal.SeedSize))
	}
	sd.awaited, sd.got = r.byte(), r.byte()
	sd.deadline = int64(r.uint64())
	if r.err != nil {
		return fmt.Errorf("%w: truncated seeding", ErrBadSnapshot)
	}
	all := uint8(1)<<len(t.seats) - 1
	if sd.awaited&^all != 0 || sd.got&^sd.awaited != 0 || sd.deadline < 0 {
		return fmt.Errorf("%w: seeding seats", ErrBadSnapshot)
	}
	if sd.deadline != 0 && sd.got == sd.awaited {
		return fmt.Errorf("%w: every awaited seed arrived and the hand is not dealt", ErrBadSnapshot)
	}
	for i := range t.seats {
		if sd.got&(1<<i) == 0 && sd.clients[i] != fairdeal.NoClientSeed {
			return fmt.Errorf("%w: a client seed of seat %d that did not send one", ErrBadSnapshot, i)
		}
	}
	return nil
}
