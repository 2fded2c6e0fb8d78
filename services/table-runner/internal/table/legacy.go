package table

import (
	"encoding/binary"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/fairdeal"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// The hand-laid snapshot layouts of versions 3 to 5, which runners wrote
// before version 6 (a protobuf TableSnapshot). They are read, never written:
// a table logged before the upgrade — its genesis and its snapshot — must
// restore, and replay its logged inputs, exactly as it would have before.
// Each is, little-endian:
//
//	version, game, classic variant, khishti, premia, moshla, rest docked,
//	  Japanese target (a byte each)
//	move timeout, reconnect grace, bot delay, seed timeout (u64 ns each)
//	table id, game id, engine state (uvarint length + bytes each; the
//	  engine's own MarshalBinary, its version 2)
//	seq, move deadline (Unix ns, 0 for none), last entry id ms, seq (u64 each)
//	seats (a byte), then per seat: player id, name (uvarint length + bytes),
//	  mode, away (a byte each), grace deadline (u64 Unix ns)
//	recent command ids: a uvarint count, then each (uvarint length + bytes),
//	  oldest first
//	the current hand's seeding, and in version 5 the hand committed ahead:
//	  a flag byte; when 1, the hand index (u32), the server seed (32 bytes),
//	  a client seed per seat (32 bytes each, zero for none), the awaited and
//	  received seats (a byte each, one bit per seat), the seed deadline (u64
//	  Unix ns, 0 once dealt)
//
// Nothing may follow.
func readSnapshotLegacy(data []byte) (*Table, error) {
	r := reader{b: data}
	v := r.byte()
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
	t := &Table{set: s, ownTimers: v == snapshotVersionOwnTimers, ahead: v == snapshotVersionAhead}
	t.id = r.string()
	t.gameID = r.string()
	eng := r.bytes()
	t.seq = r.uint64()
	t.actAt = int64(r.uint64())
	t.last = entryID{ms: r.uint64(), seq: r.uint64()}
	nSeats := int(r.byte())
	if r.err != nil {
		return nil, badSnapshot("truncated")
	}
	if premia > 1 || moshla > 1 || rest > 1 {
		return nil, badSnapshot("bad flags")
	}
	if d, err := s.WithDefaults(); err != nil {
		return nil, badSnapshot("settings: %w", err)
	} else if d != s {
		return nil, badSnapshot("settings with a default left unfilled")
	}
	if nSeats != s.Game.Seats() {
		return nil, badSnapshot("%d seats for %v", nSeats, s.Game)
	}
	t.seats = make([]seat, nSeats)
	for i := range t.seats {
		st := &t.seats[i]
		st.player, st.name = r.string(), r.string()
		mode, away := r.byte(), r.byte()
		st.mode, st.away = seatMode(mode), away == 1
		st.grace = int64(r.uint64())
		if r.err != nil {
			return nil, badSnapshot("truncated")
		}
		if away > 1 {
			return nil, badSnapshot("seat %d: away flag %d", i, away)
		}
	}
	nRecent := r.uvarint()
	if nRecent > recentCommands {
		return nil, badSnapshot("%d recent commands", nRecent)
	}
	for range nRecent {
		if err := t.addRecent(r.string()); err != nil {
			return nil, err
		}
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
		return nil, badSnapshot("truncated or trailing bytes")
	}
	e, err := emptyEngine(s)
	if err != nil {
		return nil, err
	}
	if err := e.unmarshal(eng); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSnapshot, err)
	}
	t.eng = e
	return t, t.check()
}

// readInputLegacy reads an input of the hand-laid layouts of versions 1 and
// 2, which runners logged before version 3 (a protobuf Input). Each is:
//
//	version, kind (a byte each), At (u64 Unix ns, little-endian)
//	entry id, player id, command (uvarint length + bytes each; the command
//	  in deterministic protobuf, empty for other kinds)
//	version 2 only: the entropy, a flag byte, then 32 bytes when it is 1
//
// Nothing may follow. UnmarshalInput validates the result.
func readInputLegacy(data []byte) (Input, error) {
	var in Input
	r := reader{b: data}
	v := r.byte()
	in.Kind = InputKind(r.byte())
	in.At = time.Unix(0, int64(r.uint64()))
	in.EntryID = r.string()
	in.PlayerID = r.string()
	cmd := r.bytes()
	if v == inputVersionV2 {
		switch r.byte() {
		case 0:
		case 1:
			copy(in.Entropy[:], r.fixed(len(in.Entropy)))
			if in.Entropy == (Entropy{}) {
				return Input{}, fmt.Errorf("%w: zero entropy marked as set", ErrBadInput)
			}
		default:
			r.fail()
		}
	}
	if r.err != nil || len(r.b) != 0 {
		return Input{}, fmt.Errorf("%w: truncated or trailing bytes", ErrBadInput)
	}
	if in.Kind == InputCommand {
		in.Command = &tablev1.Command{}
		if err := proto.Unmarshal(cmd, in.Command); err != nil {
			return Input{}, fmt.Errorf("%w: command: %w", ErrBadInput, err)
		}
	} else if len(cmd) != 0 {
		return Input{}, fmt.Errorf("%w: %v with a command", ErrBadInput, in.Kind)
	}
	return in, nil
}

// readSeeding reads a seeding of the legacy layouts.
func readSeeding(r *reader, t *Table, sd *seeding) error {
	switch r.byte() {
	case 0:
		return nil
	case 1:
	default:
		return badSnapshot("seeding flag")
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
		return badSnapshot("truncated seeding")
	}
	return nil
}

// reader reads the legacy binary layouts of this package; the first error
// sticks and every later read returns zero.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail() {
	if r.err == nil {
		r.err = fmt.Errorf("truncated")
	}
	r.b = nil
}

func (r *reader) byte() byte {
	if len(r.b) < 1 {
		r.fail()
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *reader) uint64() uint64 {
	if len(r.b) < 8 {
		r.fail()
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b)
	r.b = r.b[8:]
	return v
}

func (r *reader) uint32() uint32 {
	if len(r.b) < 4 {
		r.fail()
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *reader) uvarint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail()
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) bytes() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) string() string { return string(r.bytes()) }

// fixed reads n bytes without a length prefix.
func (r *reader) fixed(n int) []byte {
	if len(r.b) < n {
		r.fail()
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}
