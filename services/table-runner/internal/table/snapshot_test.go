package table

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	runnerv1 "github.com/pulka/pulka/pkg/gen/pulka/runner/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// TestSnapshot_EveryFieldOfTheFormatIsWrittenAndReadBack: over random
// games, the snapshot message read back from its bytes is the message
// written, and every field of every message of the format is set in some
// snapshot: a field added to the .proto and forgotten by the writer (or one
// the writer fills and nothing reads, which the round trip would show) fails
// here. The fields a table never writes are named.
func TestSnapshot_EveryFieldOfTheFormatIsWrittenAndReadBack(t *testing.T) {
	never := map[protoreflect.FullName]bool{
		// Local games deal from a seed; a table's games are live.
		"pulka.runner.v1.ClassicState.local_seed":  true,
		"pulka.runner.v1.JapaneseState.local_seed": true,
		// The lobby's, not the table's.
		"pulka.lobby.v1.TableSettings.visibility":   true,
		"pulka.lobby.v1.TableSettings.has_password": true,
		"pulka.lobby.v1.TableSettings.stake":        true,
	}
	seen := map[protoreflect.FullName]bool{}
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			seen[fd.FullName()] = true
			switch {
			case fd.IsList() && fd.Message() != nil:
				for i := range v.List().Len() {
					walk(v.List().Get(i).Message())
				}
			case fd.Message() != nil && !fd.IsMap():
				walk(v.Message())
			}
			return true
		})
	}
	check := func(tb *Table) {
		t.Helper()
		m := tb.snapshot()
		b := state(t, tb)
		var back runnerv1.TableSnapshot
		if err := readFramed(b[1:], &back); err != nil || !proto.Equal(&back, m) {
			t.Fatalf("the snapshot message does not read back: %v", err)
		}
		walk(m.ProtoReflect())
	}
	for g := range 40 {
		d := newDriver(t, uint64(5000+g))
		if g%5 == 0 {
			d.h.t.ahead, d.h.t.ownTimers = false, true
		}
		for i := 0; i < 3000 && !d.h.t.Over(); i++ {
			d.step()
			if d.rng.IntN(20) == 0 {
				check(d.h.t)
			}
		}
		check(d.h.t)
	}
	// Every field of the format's messages, and of the messages they hold.
	var missing []string
	done := map[protoreflect.FullName]bool{}
	var all func(md protoreflect.MessageDescriptor)
	all = func(md protoreflect.MessageDescriptor) {
		if done[md.FullName()] || strings.HasPrefix(string(md.FullName()), "google.protobuf.") {
			return
		}
		done[md.FullName()] = true
		for i := range md.Fields().Len() {
			fd := md.Fields().Get(i)
			if !seen[fd.FullName()] && !never[fd.FullName()] {
				missing = append(missing, string(fd.FullName()))
			}
			if fd.Message() != nil && !never[fd.FullName()] {
				all(fd.Message())
			}
		}
	}
	all((&runnerv1.TableSnapshot{}).ProtoReflect().Descriptor())
	if len(missing) > 0 {
		t.Fatalf("fields never written: %v", missing)
	}
}

// TestSnapshot_SizeIsBounded: the largest table a runner can hold (every
// id and name as long as allowed, a full ring of long command ids) encodes
// well within maxSnapshotSize and restores; anything longer is refused
// before it is decoded.
func TestSnapshot_SizeIsBounded(t *testing.T) {
	long := func(c byte) string { return strings.Repeat(string(c), maxStringLen) }
	seats := humans(4)
	for i := range seats {
		seats[i].PlayerID, seats[i].Name = long('a'+byte(i)), long('A'+byte(i))
	}
	tb, _, err := New(long('t'), long('g'), classicSet(0, tablesettings.DefaultBotDelay), seats, t0, entropyOf(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	for i := range recentCommands {
		id := strings.Repeat("x", maxStringLen-8) + string(rune('0'+i/100)) + string(rune('0'+i/10%10)) + string(rune('0'+i%10))
		tb.recent.add(id)
	}
	b := state(t, tb)
	if len(b) > maxSnapshotSize*3/4 {
		t.Fatalf("the largest table takes %d bytes of %d", len(b), maxSnapshotSize)
	}
	if r, err := Restore(b); err != nil || !bytes.Equal(state(t, r), b) {
		t.Fatalf("the largest table does not restore: %v", err)
	}
	if _, err := Restore(make([]byte, maxSnapshotSize+1)); !errors.Is(err, ErrBadSnapshot) {
		t.Fatalf("an oversized snapshot: %v", err)
	}
}

// TestSnapshot_HostileDataAllocatesBoundedly: the worst a snapshot of the
// largest size can ask of the protobuf decoder — as many empty messages (or
// strings of a list) as fit, each a heap object of about a hundred bytes —
// is refused before it is decoded: decoding allocates no more than a few
// times the bytes it reads.
func TestSnapshot_HostileDataAllocatesBoundedly(t *testing.T) {
	// Empty entries of a list: the seats, the recent command ids, and the
	// classic state's seats (field 9 of the state, field 7).
	emptyEntries := func(field protowire.Number, size int) []byte {
		var b []byte
		for len(b)+2 <= size {
			b = protowire.AppendTag(b, field, protowire.BytesType)
			b = protowire.AppendVarint(b, 0)
		}
		return b
	}
	for _, c := range []struct{ field, nested protowire.Number }{{6, 0}, {12, 0}, {7, 9}} {
		body := emptyEntries(c.field, maxSnapshotSize-16)
		if c.nested != 0 {
			body = protowire.AppendTag(nil, c.field, protowire.BytesType)
			body = protowire.AppendBytes(body, emptyEntries(c.nested, maxSnapshotSize-16))
		}
		field := c.field
		data := protowire.AppendVarint([]byte{snapshotVersion}, uint64(len(body)))
		data = append(data, body...)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := Restore(data)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrBadSnapshot) {
			t.Fatalf("field %d: %v", field, err)
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("field %d: %d bytes of snapshot, %d allocated (%.0f×)", field, len(data), alloc, float64(alloc)/float64(len(data)))
		if alloc > 4*uint64(len(data)) {
			t.Fatalf("decoding %d bytes allocated %d", len(data), alloc)
		}
	}
}

// FuzzRestore: no bytes make the snapshot decoder panic; a refusal is
// ErrBadSnapshot; an accepted snapshot is a table that encodes, restores
// again to the same bytes, and plays on.
func FuzzRestore(f *testing.F) {
	for _, name := range []string{"full-ring.snapshot", "full-ring-v4.snapshot", "full-ring-v5.snapshot", "full-ring-v6.snapshot"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, name := range []string{"log-japanese-v5.json.gz", "log-classic-v3.json.gz"} {
		l := readLegacyLog(f, name)
		f.Add(l.Genesis)
		f.Add(l.Snapshots[0].Table)
	}
	for g := range 6 {
		d := newDriver(f, uint64(9000+g))
		d.run(150 * g)
		f.Add(state(f, d.h.t))
		f.Add(marshalLegacy(f, d.h.t))
	}
	f.Add([]byte{})
	f.Add([]byte{snapshotVersion, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Restore(data)
		if err != nil {
			if !errors.Is(err, ErrBadSnapshot) {
				t.Fatalf("error %v does not wrap ErrBadSnapshot", err)
			}
			return
		}
		b := state(t, r)
		again, err := Restore(b)
		if err != nil || !bytes.Equal(state(t, again), b) {
			t.Fatalf("an accepted snapshot does not round-trip: %v", err)
		}
		if at, ok := r.NextDeadline(); ok {
			if _, err := r.Apply(Tick(at)); err != nil && !errors.Is(err, ErrNoEntropy) {
				t.Fatalf("the restored table does not play on: %v", err)
			}
		}
	})
}

// TestSnapshot_RefusesWhatItCannotHoldExactly: a version 6 snapshot changed
// in one field, to something no runner writes, is refused — never narrowed,
// defaulted or dropped into a table that then plays differently.
func TestSnapshot_RefusesWhatItCannotHoldExactly(t *testing.T) {
	var classicTable, japaneseTable *Table
	for seed := uint64(1); classicTable == nil || japaneseTable == nil; seed++ {
		d := newDriver(t, seed)
		d.run(200)
		if d.h.t.Over() || d.h.t.eng.awaitingDeal() || !d.h.t.nx.active {
			continue
		}
		switch d.h.t.set.Game {
		case tablesettings.Classic:
			classicTable = d.h.t
		case tablesettings.Japanese:
			japaneseTable = d.h.t
		}
	}
	for name, c := range map[string]struct {
		t      *Table
		change func(m *runnerv1.TableSnapshot)
	}{
		"an unknown field": {classicTable, func(m *runnerv1.TableSnapshot) {
			m.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 1))
		}},
		"an unknown field of the engine": {japaneseTable, func(m *runnerv1.TableSnapshot) {
			m.GetJapanese().ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 1))
		}},
		"a stake":           {classicTable, func(m *runnerv1.TableSnapshot) { m.Settings.Stake = &lobbyv1.Stake{} }},
		"a Japanese target": {classicTable, func(m *runnerv1.TableSnapshot) { m.Settings.JapaneseTarget = 21 }},
		"no move time":      {classicTable, func(m *runnerv1.TableSnapshot) { m.Settings.MoveTime = nil }},
		"no bot delay":      {classicTable, func(m *runnerv1.TableSnapshot) { m.BotDelay = nil }},
		"the engine of another game": {classicTable, func(m *runnerv1.TableSnapshot) {
			m.Engine = &runnerv1.TableSnapshot_Japanese{Japanese: &runnerv1.JapaneseState{}}
		}},
		"a phase beyond a byte": {classicTable, func(m *runnerv1.TableSnapshot) { m.GetClassic().Phase += 256 }},
		"a hand beyond a byte":  {classicTable, func(m *runnerv1.TableSnapshot) { m.GetClassic().Hand += 256 }},
		"a card held twice": {classicTable, func(m *runnerv1.TableSnapshot) {
			s := m.GetClassic().Seats[0]
			s.Hand = append(s.Hand, s.Hand[0])
		}},
		"a Japanese end reason of classic": {japaneseTable, func(m *runnerv1.TableSnapshot) {
			m.GetJapanese().EndReason = tablev1.GameEndReason_GAME_END_REASON_ABORTED
		}},
		"six columns": {japaneseTable, func(m *runnerv1.TableSnapshot) {
			s := m.GetJapanese().Seats[0]
			s.Columns = append(s.Columns, &runnerv1.JapaneseColumn{})
		}},
		"a seat mode beyond the known": {classicTable, func(m *runnerv1.TableSnapshot) { m.Seats[0].Mode = 9 }},
		"an invalid grace deadline": {classicTable, func(m *runnerv1.TableSnapshot) {
			m.Seats[0].GraceDeadline = timestamp(1)
			m.Seats[0].GraceDeadline.Nanos = -1
		}},
		"a short client seed": {classicTable, func(m *runnerv1.TableSnapshot) {
			m.CurrentHand.Seats[0].ClientSeed = []byte{1, 2, 3}
		}},
		"a seeding of three seats": {classicTable, func(m *runnerv1.TableSnapshot) {
			m.NextHand.Seats = m.NextHand.Seats[:3]
		}},
		"a hand ahead at a table that seeds after the hand": {classicTable, func(m *runnerv1.TableSnapshot) {
			m.LegacySeedAfterHand = true
		}},
		"timers as events with hands committed ahead": {japaneseTable, func(m *runnerv1.TableSnapshot) {
			m.LegacyTimerEvents = true
		}},
		"a recent command twice": {classicTable, func(m *runnerv1.TableSnapshot) {
			m.RecentCommandIds = append(m.RecentCommandIds, m.RecentCommandIds[0])
		}},
		"a malformed entry id": {classicTable, func(m *runnerv1.TableSnapshot) { m.LastEntryId = "5" }},
	} {
		t.Run(name, func(t *testing.T) {
			m := c.t.snapshot()
			if _, err := Restore(state(t, c.t)); err != nil {
				t.Fatal(err)
			}
			c.change(m)
			data, err := appendFramed(nil, snapshotVersion, m)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := Restore(data); !errors.Is(err, ErrBadSnapshot) {
				t.Fatalf("accepted (%v)", err)
			}
		})
	}
}

// TestInput_ACommandPassesThroughAsItCame: the command of a logged input
// keeps fields this runner does not know (a newer gateway's), so that the
// step replays as it was applied; a field of the input itself that it does
// not know is refused.
func TestInput_ACommandPassesThroughAsItCame(t *testing.T) {
	cmd := bidCmd(2)
	cmd.CommandId, cmd.PlayerId, cmd.TableId = "c1", "p1", "t1"
	cmd.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 7))
	b, err := MarshalInput(CommandInput(cmd, "17-3", t0))
	if err != nil {
		t.Fatal(err)
	}
	in, err := UnmarshalInput(b)
	if err != nil || !proto.Equal(in.Command, cmd) || len(in.Command.ProtoReflect().GetUnknown()) == 0 {
		t.Fatalf("the command came back as %v (%v)", in.Command, err)
	}
	m := &runnerv1.Input{Kind: runnerv1.InputKind_INPUT_KIND_TICK, At: timestamp(t0.UnixNano())}
	m.ProtoReflect().SetUnknown(protowire.AppendVarint(protowire.AppendTag(nil, 99, protowire.VarintType), 7))
	b, err = appendFramed(nil, inputVersion, m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := UnmarshalInput(b); !errors.Is(err, ErrBadInput) {
		t.Fatalf("an input with a field of a newer runner: %v", err)
	}
}

// TestSnapshot_RefusesAKnownFieldOfAnotherWireType: protobuf would set such
// a field aside as unknown, and the table would go on without it.
func TestSnapshot_RefusesAKnownFieldOfAnotherWireType(t *testing.T) {
	d := newDriver(t, 2)
	d.run(50)
	good := state(t, d.h.t)
	if _, err := Restore(good); err != nil {
		t.Fatal(err)
	}
	_, k := protowire.ConsumeVarint(good[1:])
	// Field 9, the seq, as a fixed64 instead of a varint.
	body := protowire.AppendFixed64(protowire.AppendTag(bytes.Clone(good[1+k:]), 9, protowire.Fixed64Type), 5)
	data := append(protowire.AppendVarint([]byte{snapshotVersion}, uint64(len(body))), body...)
	if _, err := Restore(data); !errors.Is(err, ErrBadSnapshot) {
		t.Fatalf("accepted (%v)", err)
	}
}

// TestNew_TakesOnlyWhatASnapshotHolds: whatever New and Apply accept can be
// written to the log and read back, so ids and names too long or not UTF-8
// (a protobuf string must be) are refused up front, not when the genesis or
// the step's input is written.
func TestNew_TakesOnlyWhatASnapshotHolds(t *testing.T) {
	bad := []string{"\xff", strings.Repeat("n", maxStringLen+1)}
	for _, s := range bad {
		if _, _, err := New(s, "g", japaneseSet(11), humans(2), t0, entropyOf(1, 0)); !errors.Is(err, ErrBadSettings) {
			t.Errorf("table id %q: %v", s[:1], err)
		}
		seats := humans(2)
		seats[1].Name = s
		if _, _, err := New("t", "g", japaneseSet(11), seats, t0, entropyOf(1, 0)); !errors.Is(err, ErrBadSeats) {
			t.Errorf("name %q: %v", s[:1], err)
		}
	}
	h := newHarness(t, japaneseSet(11), 1, humans(2))
	if evs, err := h.t.Apply(Away("p1\xff", t0)); !errors.Is(err, ErrBadInput) || len(evs) != 0 {
		t.Fatalf("a player id that is not UTF-8: %v", err)
	}
}
