package table

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/pulka/pulka/pkg/fairdeal"
	runnerv1 "github.com/pulka/pulka/pkg/gen/pulka/runner/v1"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// snapshotVersion is the first byte of MarshalBinary's output: version 6 is
// a protobuf pulka.runner.v1.TableSnapshot (proto/pulka/runner/v1), framed by
// its length (appendFramed). Its fields may grow by the rules of protobuf,
// under the same version; a change they cannot express is a new version.
//
// Versions 3 to 5 are the hand-laid layouts of before (legacy.go),
// still read, so that a table logged by an older runner restores — and
// replays — identically after an upgrade. Version 5 said the table commits
// every hand a hand ahead (its seeds ride on the moves of the hand before,
// docs/fair-play.md); a version 4 table seeds each hand when the hand before
// it ends, and a version 3 table also sends its move timers as timer_started
// events, each to the end of its game (TableSnapshot's legacy_ fields carry
// that on). Versions 1 and 2 (one seed per game, which the game id made
// public) are not read: their engines' states cannot continue with committed
// keys, and their games were not fair.
const (
	snapshotVersion          = 6
	snapshotVersionAhead     = 5
	snapshotVersionNotAhead  = 4
	snapshotVersionOwnTimers = 3
)

// maxStringLen bounds ids and names in a snapshot.
const maxStringLen = 1 << 10

// storable reports whether s may be an id or a name in a snapshot: at most
// maxStringLen bytes of UTF-8 (a protobuf string must be).
func storable(s string) bool { return len(s) <= maxStringLen && utf8.ValidString(s) }

// maxSnapshotSize bounds what Restore reads. A table's largest snapshot —
// every id and name maxStringLen long, a full ring of recent commands — is
// under 300 KB; real ones are a few KB. With maxObjects it bounds what a
// hostile snapshot can make the decoder allocate.
const maxSnapshotSize = 512 << 10

// deterministic encodes the durable formats: the same state, the same bytes
// (tests and tablelog.Verify compare them).
var deterministic = proto.MarshalOptions{Deterministic: true}

// MarshalBinary encodes the whole table — hidden cards included: it is a
// server-side snapshot, never for a client. With the inputs applied after it,
// it rebuilds the table exactly (see UnmarshalBinary).
func (t *Table) MarshalBinary() ([]byte, error) {
	return appendFramed(nil, snapshotVersion, t.snapshot())
}

// appendFramed appends the version byte, m's length as a uvarint and m. The
// length makes a value cut short an error: without it, a cut at a field
// boundary would read as a shorter valid message (a table without its
// legacy flags, an input without its entropy).
func appendFramed(b []byte, version byte, m proto.Message) ([]byte, error) {
	n := deterministic.Size(m)
	b = slices.Grow(b, 1+binary.MaxVarintLen64+n)
	b = append(b, version)
	b = binary.AppendUvarint(b, uint64(n))
	// The sizes were just computed: the marshal reuses them.
	b, err := proto.MarshalOptions{Deterministic: true, UseCachedSize: true}.MarshalAppend(b, m)
	if err != nil {
		return nil, fmt.Errorf("table: encode %s: %w", m.ProtoReflect().Descriptor().Name(), err)
	}
	return b, nil
}

// readFramed reads what appendFramed wrote after its version byte into m.
func readFramed(data []byte, m proto.Message) error {
	n, k := binary.Uvarint(data)
	if k <= 0 || n != uint64(len(data)-k) {
		return errors.New("length does not match the data")
	}
	budget := maxObjects
	if err := checkWire(data[k:], m.ProtoReflect().Descriptor(), true, &budget); err != nil {
		return err
	}
	return proto.Unmarshal(data[k:], m)
}

// maxObjects bounds the messages and list strings a durable value may hold:
// the largest table has about 400 (a full ring of 256 command ids, its
// seats, a Japanese record of 128 hands, their timestamps).
const maxObjects = 2048

// commandName is the message a durable value passes through as it came: a
// player's command, which may hold fields of a newer gateway.
const commandName protoreflect.FullName = "pulka.table.v1.Command"

// checkWire walks b, a message md on the wire, before protobuf decodes it:
//
//   - it counts the heap objects decoding makes of it — each message, each
//     string or bytes of a list — against *budget. An empty message is two
//     bytes on the wire and about a hundred in memory: without the count, a
//     value of maxSnapshotSize bytes could ask for some 40 MB; with it,
//     decoding allocates about what it reads;
//   - when strict, it refuses a field md does not know. Protobuf would keep
//     it aside and the table would go on without it: a field a newer runner
//     wrote (a rollback) means something the table must not drop silently.
//     Only a command (commandName) passes through as it came.
func checkWire(b []byte, md protoreflect.MessageDescriptor, strict bool, budget *int) error {
	fields := md.Fields()
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		fd := fields.ByNumber(num)
		switch {
		case strict && (fd == nil || !wireTypeOf(fd, typ)):
			// Protobuf also sets aside a known field of another wire type.
			return fmt.Errorf("field %d of %s is unknown (written by a newer runner?)", num, md.FullName())
		case fd != nil && typ == protowire.BytesType && fd.Message() != nil:
			*budget--
			v, _ := protowire.ConsumeBytes(b)
			if err := checkWire(v, fd.Message(), strict && fd.Message().FullName() != commandName, budget); err != nil {
				return err
			}
		case fd != nil && typ == protowire.BytesType && fd.IsList():
			*budget--
		}
		if *budget < 0 {
			return fmt.Errorf("more than %d objects", maxObjects)
		}
		b = b[n:]
	}
	return nil
}

// snapshot is the table as its durable message.
func (t *Table) snapshot() *runnerv1.TableSnapshot {
	m := &runnerv1.TableSnapshot{
		TableId: t.id, GameId: t.gameID, Settings: t.set.Proto(),
		BotDelay: durationpb.New(t.set.BotDelay), SeedTimeout: durationpb.New(t.set.SeedTimeout),
		Seats: make([]*runnerv1.Seat, len(t.seats)), Seq: t.seq, MoveDeadline: timestamp(t.actAt),
		LastEntryId: t.last.String(), RecentCommandIds: make([]string, t.recent.n),
		CurrentHand: t.seedingProto(&t.sd), NextHand: t.seedingProto(&t.nx),
		LegacyTimerEvents: t.ownTimers, LegacySeedAfterHand: !t.ahead, LegalMoves: t.legal,
		SeatRules: t.seatRules,
	}
	for i := range t.seats {
		st := &t.seats[i]
		m.Seats[i] = &runnerv1.Seat{PlayerId: st.player, DisplayName: st.name,
			Mode: runnerv1.SeatMode(st.mode + 1), GraceDeadline: timestamp(st.grace), Retakes: st.retakes}
	}
	for i := range t.recent.n {
		m.RecentCommandIds[i] = t.recent.ids[(t.recent.start+i)%recentCommands]
	}
	t.eng.snapshot(m)
	return m
}

// seedingProto is sd as its message; nil when no hand is seeded. The server
// seed is a secret until its HandRevealed, like the hidden cards (the
// commitment is recomputed from it).
func (t *Table) seedingProto(sd *seeding) *runnerv1.HandSeeding {
	if !sd.active {
		return nil
	}
	m := &runnerv1.HandSeeding{HandIndex: sd.index, ServerSeed: slices.Clone(sd.server[:]),
		Seats: make([]*runnerv1.SeatSeed, len(t.seats)), SeedDeadline: timestamp(sd.deadline)}
	for i := range t.seats {
		ss := &runnerv1.SeatSeed{Awaited: sd.awaited&(1<<i) != 0}
		if sd.got&(1<<i) != 0 {
			ss.ClientSeed = slices.Clone(sd.clients[i][:])
		}
		m.Seats[i] = ss
	}
	return m
}

// timestamp is Unix nanoseconds ns as a Timestamp; nil for 0 (none).
func timestamp(ns int64) *timestamppb.Timestamp {
	if ns == 0 {
		return nil
	}
	return &timestamppb.Timestamp{Seconds: ns / 1e9, Nanos: int32(ns % 1e9)}
}

// unixNano reads a Timestamp timestamp wrote: nil is 0, and anything else
// must be a valid moment after 1970 that fits Unix nanoseconds.
func unixNano(ts *timestamppb.Timestamp) (int64, error) {
	if ts == nil {
		return 0, nil
	}
	if err := ts.CheckValid(); err != nil || ts.Seconds < 0 || ts.Seconds >= math.MaxInt64/int64(time.Second) || (ts.Seconds == 0 && ts.Nanos == 0) {
		return 0, fmt.Errorf("time %v out of range", ts)
	}
	return ts.Seconds*1e9 + int64(ts.Nanos), nil
}

// wireTypeOf reports whether typ is a wire type of field fd: its own, or
// for a list of numbers, the packed form.
func wireTypeOf(fd protoreflect.FieldDescriptor, typ protowire.Type) bool {
	var want protowire.Type
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.StringKind, protoreflect.BytesKind:
		return typ == protowire.BytesType
	case protoreflect.GroupKind:
		return typ == protowire.StartGroupType
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		want = protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		want = protowire.Fixed64Type
	default:
		want = protowire.VarintType
	}
	return typ == want || (fd.IsList() && typ == protowire.BytesType)
}

// UnmarshalBinary restores a table written by MarshalBinary, of any version
// still read. It validates the whole state and returns an error wrapping
// ErrBadSnapshot (t unchanged) for anything else.
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

func badSnapshot(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadSnapshot}, args...)...)
}

func readSnapshot(data []byte) (*Table, error) {
	if len(data) > maxSnapshotSize {
		return nil, badSnapshot("%d bytes, more than %d", len(data), maxSnapshotSize)
	}
	if len(data) == 0 {
		return nil, badSnapshot("empty")
	}
	switch v := data[0]; v {
	case snapshotVersion:
		return readSnapshotProto(data[1:])
	case snapshotVersionAhead, snapshotVersionNotAhead, snapshotVersionOwnTimers:
		return readSnapshotLegacy(data)
	default:
		return nil, badSnapshot("unknown version %d", v)
	}
}

// readSnapshotProto reads a version 6 snapshot after its version byte.
func readSnapshotProto(data []byte) (*Table, error) {
	m := &runnerv1.TableSnapshot{}
	if err := readFramed(data, m); err != nil {
		return nil, badSnapshot("%w", err)
	}
	s, err := snapshotSettings(m)
	if err != nil {
		return nil, err
	}
	if m.GetLegacyTimerEvents() && !m.GetLegacySeedAfterHand() {
		return nil, badSnapshot("timers as events of their own with hands committed ahead")
	}
	t := &Table{id: m.GetTableId(), gameID: m.GetGameId(), set: s, seq: m.GetSeq(),
		ownTimers: m.GetLegacyTimerEvents(), ahead: !m.GetLegacySeedAfterHand(), legal: m.GetLegalMoves(), seatRules: m.GetSeatRules()}
	if t.actAt, err = unixNano(m.GetMoveDeadline()); err != nil {
		return nil, badSnapshot("move deadline: %w", err)
	}
	if e := m.GetLastEntryId(); e != "" {
		if t.last, err = parseEntryID(e); err != nil {
			return nil, badSnapshot("%w", err)
		}
	}
	if len(m.GetSeats()) != s.Game.Seats() {
		return nil, badSnapshot("%d seats for %v", len(m.GetSeats()), s.Game)
	}
	t.seats = make([]seat, len(m.GetSeats()))
	for i, ms := range m.GetSeats() {
		st := &t.seats[i]
		st.player, st.name = ms.GetPlayerId(), ms.GetDisplayName()
		if ms.GetMode() < runnerv1.SeatMode_SEAT_MODE_HUMAN || ms.GetMode() > runnerv1.SeatMode(seatModes) {
			return nil, badSnapshot("seat %d: mode %v", i, ms.GetMode())
		}
		st.mode = seatMode(ms.GetMode() - 1)
		if st.grace, err = unixNano(ms.GetGraceDeadline()); err != nil {
			return nil, badSnapshot("seat %d: grace: %w", i, err)
		}
		st.away = st.grace != 0
		st.retakes = ms.GetRetakes()
	}
	if len(m.GetRecentCommandIds()) > recentCommands {
		return nil, badSnapshot("%d recent commands", len(m.GetRecentCommandIds()))
	}
	for _, id := range m.GetRecentCommandIds() {
		if err := t.addRecent(id); err != nil {
			return nil, err
		}
	}
	if err := t.seedingFromProto(&t.sd, m.GetCurrentHand()); err != nil {
		return nil, err
	}
	if err := t.seedingFromProto(&t.nx, m.GetNextHand()); err != nil {
		return nil, err
	}
	if t.eng, err = emptyEngine(s); err != nil {
		return nil, err
	}
	if err := t.eng.restore(m); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSnapshot, err)
	}
	return t, t.check()
}

// snapshotSettings reads a snapshot's settings, which must be complete and
// canonical: exactly what tablesettings.Settings.Proto writes, nothing left
// to a default, nothing of the lobby's.
func snapshotSettings(m *runnerv1.TableSnapshot) (tablesettings.Settings, error) {
	ts := m.GetSettings()
	for _, d := range []*durationpb.Duration{m.GetBotDelay(), m.GetSeedTimeout()} {
		if d == nil || d.CheckValid() != nil {
			return tablesettings.Settings{}, badSnapshot("settings: bot delay or seed timeout missing or invalid")
		}
	}
	s, err := tablesettings.FromProto(ts)
	if err != nil {
		return s, badSnapshot("settings: %w", err)
	}
	s.BotDelay, s.SeedTimeout = m.GetBotDelay().AsDuration(), m.GetSeedTimeout().AsDuration()
	if d, err := s.WithDefaults(); err != nil {
		return s, badSnapshot("settings: %w", err)
	} else if d != s || !proto.Equal(s.Proto(), ts) {
		return s, badSnapshot("settings %v are not complete, or not the table's alone", ts)
	}
	return s, nil
}

// seedingFromProto reads a seeding written by seedingProto into sd.
func (t *Table) seedingFromProto(sd *seeding, m *runnerv1.HandSeeding) error {
	if m == nil {
		return nil
	}
	if len(m.GetServerSeed()) != fairdeal.SeedSize || len(m.GetSeats()) != len(t.seats) {
		return badSnapshot("seeding of hand %d: server seed or seats", m.GetHandIndex())
	}
	sd.active, sd.index = true, m.GetHandIndex()
	copy(sd.server[:], m.GetServerSeed())
	for i, ss := range m.GetSeats() {
		if ss.GetAwaited() {
			sd.awaited |= 1 << i
		}
		switch len(ss.GetClientSeed()) {
		case 0:
		case fairdeal.SeedSize:
			sd.got |= 1 << i
			copy(sd.clients[i][:], ss.GetClientSeed())
		default:
			return badSnapshot("seeding of hand %d: seat %d's client seed", sd.index, i)
		}
	}
	var err error
	if sd.deadline, err = unixNano(m.GetSeedDeadline()); err != nil {
		return badSnapshot("seeding of hand %d: deadline: %w", sd.index, err)
	}
	return nil
}

// addRecent adds a recent command id read from a snapshot.
func (t *Table) addRecent(id string) error {
	if id == "" || !storable(id) || t.recent.has(id) {
		return badSnapshot("recent command ids")
	}
	t.recent.add(id)
	return nil
}

// check validates a table read from a snapshot of any version: everything
// that makes it a table the rules and the commit–reveal can continue.
func (t *Table) check() error {
	s := &t.set
	if t.id == "" || t.gameID == "" || !storable(t.id) || !storable(t.gameID) {
		return badSnapshot("ids")
	}
	if len(t.seats) != s.Game.Seats() {
		return badSnapshot("%d seats for %v", len(t.seats), s.Game)
	}
	for i := range t.seats {
		st := &t.seats[i]
		switch {
		case st.mode >= seatModes, !storable(st.player), !storable(st.name):
			return badSnapshot("seat %d", i)
		case (st.mode == seatBotFilled) != (st.player == ""):
			return badSnapshot("seat %d: a filled bot and only it has no player", i)
		case st.mode != seatHuman && s.Game == tablesettings.Japanese:
			return badSnapshot("seat %d: a bot at a Japanese table", i)
		case st.away != (st.grace != 0), st.away && st.mode != seatHuman, st.grace < 0:
			return badSnapshot("seat %d: grace", i)
		case st.retakes > maxRetakes, st.retakes > 0 && (st.player == "" || !t.seatRules || s.Game == tablesettings.Japanese):
			return badSnapshot("seat %d: %d take-backs", i, st.retakes)
		case st.player != "" && indexOfPlayer(t.seats[:i], st.player) >= 0:
			return badSnapshot("seat %d: player in two seats", i)
		}
	}
	for _, sd := range []*seeding{&t.sd, &t.nx} {
		if err := t.checkSeeding(sd); err != nil {
			return err
		}
	}
	e := t.eng
	if (e.over() || e.awaitingDeal()) != (t.actAt == 0) || t.actAt < 0 {
		return badSnapshot("deadline %d with the game over=%v", t.actAt, e.over())
	}
	sd := &t.sd
	switch {
	case e.over():
		if sd.active {
			return badSnapshot("a hand seeded after the game")
		}
	case !sd.active || sd.index != e.handIndex() || sd.waiting() != e.awaitingDeal():
		return badSnapshot("seeding of hand %d (active %v, waiting %v) at hand %d (awaiting the deal %v)",
			sd.index, sd.active, sd.waiting(), e.handIndex(), e.awaitingDeal())
	}
	nx := &t.nx
	if nx.active && (!t.ahead || e.over() || e.lastHand() || sd.waiting() || nx.index != sd.index+1 || nx.deadline != 0) {
		return badSnapshot("hand %d committed ahead of hand %d (waiting %v, last %v)", nx.index, sd.index, sd.waiting(), e.lastHand())
	}
	for _, sd := range []*seeding{sd, nx} {
		if sd.active {
			c, err := fairdeal.Commit(t.hand(sd.index), sd.server)
			if err != nil {
				return badSnapshot("seeding: %w", err)
			}
			sd.commit = c
		}
	}
	if e.over() {
		for i := range t.seats {
			if t.seats[i].away {
				return badSnapshot("grace after the game")
			}
		}
	}
	return nil
}

func indexOfPlayer(ss []seat, p string) int {
	for i := range ss {
		if ss[i].player == p {
			return i
		}
	}
	return -1
}

// checkSeeding checks what it can of a seeding without the engine.
func (t *Table) checkSeeding(sd *seeding) error {
	if !sd.active {
		if *sd != (seeding{}) {
			return badSnapshot("an inactive seeding with data")
		}
		return nil
	}
	all := uint8(1)<<len(t.seats) - 1
	if sd.awaited&^all != 0 || sd.got&^sd.awaited != 0 || sd.deadline < 0 {
		return badSnapshot("seeding seats")
	}
	if sd.deadline != 0 && sd.got == sd.awaited {
		return badSnapshot("every awaited seed arrived and the hand is not dealt")
	}
	for i := range t.seats {
		if sd.got&(1<<i) == 0 && sd.clients[i] != fairdeal.NoClientSeed {
			return badSnapshot("a client seed of seat %d that did not send one", i)
		}
	}
	return nil
}
