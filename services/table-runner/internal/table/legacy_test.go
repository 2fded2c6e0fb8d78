package table

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"
)

// marshalLegacy is the snapshot writer of before version 6, kept here as the
// oracle of the legacy reader: a table read from a legacy snapshot must hold
// everything the snapshot held, so writing it again the old way gives the
// same bytes. (It is the writer of commit d765a98, unchanged; the baseline
// of BenchmarkSnapshot.)
func marshalLegacy(tb testing.TB, t *Table) []byte {
	eng, err := t.eng.marshal()
	if err != nil {
		tb.Fatal(err)
	}
	s := &t.set
	b := make([]byte, 0, 256+len(eng)+t.recent.n*40)
	version := byte(snapshotVersionAhead)
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
	b = appendSeedingLegacy(t, b, &t.sd)
	if version == snapshotVersionAhead {
		b = appendSeedingLegacy(t, b, &t.nx)
	}
	return b
}

func appendSeedingLegacy(t *Table, b []byte, sd *seeding) []byte {
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

// marshalInputLegacy is the input writer of before version 3 (version 2,
// commit d765a98's MarshalInput), the oracle of the legacy input reader and
// the baseline of BenchmarkInput.
func marshalInputLegacy(tb testing.TB, in Input) []byte {
	if _, err := in.validate(); err != nil {
		tb.Fatal(err)
	}
	var cmd []byte
	if in.Command != nil {
		var err error
		if cmd, err = (proto.MarshalOptions{Deterministic: true}).Marshal(in.Command); err != nil {
			tb.Fatal(err)
		}
	}
	b := make([]byte, 0, 16+len(in.EntryID)+len(in.PlayerID)+len(cmd)+8)
	b = append(b, inputVersionV2, byte(in.Kind))
	b = binary.LittleEndian.AppendUint64(b, uint64(in.At.UnixNano()))
	b = appendString(b, in.EntryID)
	b = appendString(b, in.PlayerID)
	b = appendString(b, string(cmd))
	if in.Entropy == (Entropy{}) {
		return append(b, 0)
	}
	b = append(b, 1)
	return append(b, in.Entropy[:]...)
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// legacyLog is a table's log as a runner of before the protobuf formats
// wrote it: testdata/log-*.json.gz, written by pkg/table of commit d765a98
// (its test driver, newDriver, with the seeds its comment names).
type legacyLog struct {
	Comment     string   `json:"comment"`
	Genesis     []byte   `json:"genesis"`
	StartEvents [][]byte `json:"startEvents"`
	Steps       []struct {
		Input  []byte   `json:"input"`
		Events [][]byte `json:"events"`
	} `json:"steps"`
	Snapshots []struct {
		AfterStep int    `json:"afterStep"`
		Table     []byte `json:"table"`
	} `json:"snapshots"`
	Final []byte `json:"final"`
}

func readLegacyLog(tb testing.TB, name string) legacyLog {
	tb.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	raw, err := io.ReadAll(z)
	if err != nil {
		tb.Fatal(err)
	}
	var l legacyLog
	if err := json.Unmarshal(raw, &l); err != nil {
		tb.Fatal(err)
	}
	return l
}

// TestLegacy_LoggedGamesRestoreAndReplayTheSame: logs written before the
// protobuf formats (snapshot versions 3, 4 and 5, input version 2) restore
// and replay after the upgrade to exactly the events they logged, from the
// genesis and from every snapshot in them; the tables read from them hold
// everything the old layout held (written the old way again, they are the
// same bytes). A table restored from an old snapshot and snapshotted anew
// (version 6) keeps its old ways — timers as events, hands seeded after the
// one before — and replays the same. Inputs logged without entropy also
// read as version 1, which had no entropy field.
func TestLegacy_LoggedGamesRestoreAndReplayTheSame(t *testing.T) {
	for _, c := range []struct {
		file    string
		version byte
	}{
		{"log-classic-v5.json.gz", snapshotVersionAhead},
		{"log-japanese-v5.json.gz", snapshotVersionAhead},
		{"log-classic-v4.json.gz", snapshotVersionNotAhead},
		{"log-classic-v3.json.gz", snapshotVersionOwnTimers},
	} {
		t.Run(c.file, func(t *testing.T) {
			l := readLegacyLog(t, c.file)
			if l.Genesis[0] != c.version || l.Final[0] != c.version || len(l.Snapshots) == 0 || len(l.Steps) < 100 {
				t.Fatalf("fixture: genesis version %d, final %d, %d snapshots, %d steps", l.Genesis[0], l.Final[0], len(l.Snapshots), len(l.Steps))
			}
			restore := func(data []byte) *Table {
				t.Helper()
				r, err := Restore(data)
				if err != nil {
					t.Fatalf("restore: %v", err)
				}
				if !bytes.Equal(marshalLegacy(t, r), data) {
					t.Fatal("the restored table does not hold what the old snapshot held")
				}
				return r
			}
			// Three tables replay the log side by side: the one from the
			// genesis, one from the latest snapshot passed, and one that
			// goes through the new format at every snapshot.
			main := restore(l.Genesis)
			var fromSnap, renewed *Table
			next := 0
			entropySteps, timerEvents, carried := 0, 0, 0
			for i, s := range l.Steps {
				if next < len(l.Snapshots) && l.Snapshots[next].AfterStep == i {
					fromSnap = restore(l.Snapshots[next].Table)
					if !bytes.Equal(state(t, fromSnap), state(t, main)) {
						t.Fatalf("step %d: the snapshot is not the table the genesis replays to", i)
					}
					var err error
					if renewed, err = Restore(state(t, main)); err != nil {
						t.Fatalf("step %d: a legacy table in the new format: %v", i, err)
					}
					if renewed.ahead != main.ahead || renewed.ownTimers != main.ownTimers {
						t.Fatalf("step %d: the new format lost the table's ways", i)
					}
					next++
				}
				in, err := UnmarshalInput(s.Input)
				if err != nil {
					t.Fatalf("step %d: %v", i, err)
				}
				if s.Input[0] != inputVersionV2 {
					t.Fatalf("step %d: input version %d", i, s.Input[0])
				}
				if in.Entropy != (Entropy{}) {
					entropySteps++
				} else {
					v1 := append([]byte{inputVersionV1}, s.Input[1:len(s.Input)-1]...)
					old, err := UnmarshalInput(v1)
					if err != nil || !sameInput(t, old, in) {
						t.Fatalf("step %d: as version 1: %v", i, err)
					}
				}
				for _, tb := range []*Table{main, fromSnap, renewed} {
					if tb == nil {
						continue
					}
					evs, err := tb.Apply(in)
					var rej *RejectError
					if err != nil && !errors.As(err, &rej) {
						t.Fatalf("step %d: %v", i, err)
					}
					got := marshalEvents(t, evs)
					if len(got) != len(s.Events) {
						t.Fatalf("step %d: %d events, logged %d", i, len(got), len(s.Events))
					}
					for k := range got {
						if !bytes.Equal(got[k], s.Events[k]) {
							t.Fatalf("step %d, event %d: replayed %v", i, k, evs[k])
						}
					}
					if tb == main {
						for _, e := range evs {
							if e.GetTimerStarted() != nil {
								timerEvents++
							}
							if e.GetTimer() != nil {
								carried++
							}
						}
					}
				}
			}
			if next != len(l.Snapshots) || entropySteps == 0 {
				t.Fatalf("%d of %d snapshots met, %d steps with entropy", next, len(l.Snapshots), entropySteps)
			}
			if own := c.version == snapshotVersionOwnTimers; timerEvents == 0 || own != (carried == 0) {
				t.Fatalf("%d timer_started events and %d carried timers in a version %d log", timerEvents, carried, c.version)
			}
			if !bytes.Equal(marshalLegacy(t, main), l.Final) {
				t.Fatal("the replay ends in another state than the old runner's")
			}
			for _, tb := range []*Table{fromSnap, renewed} {
				if !bytes.Equal(state(t, tb), state(t, main)) {
					t.Fatal("the tables of the replays differ at the end")
				}
			}
		})
	}
}

// sameInput compares two inputs by their encoding.
func sameInput(tb testing.TB, a, b Input) bool {
	tb.Helper()
	x, err1 := MarshalInput(a)
	y, err2 := MarshalInput(b)
	if err := errors.Join(err1, err2); err != nil {
		tb.Fatal(err)
	}
	return bytes.Equal(x, y)
}

// TestLegacy_RandomTablesReadTheSameFromEveryVersion: over random games,
// at random moments, a table written in the legacy layout of its kind
// (version 3, 4 or 5) and in version 6 restores to the same table, and
// every logged input written as version 2 reads as the same input as
// version 3.
func TestLegacy_RandomTablesReadTheSameFromEveryVersion(t *testing.T) {
	games := 60
	if testing.Short() {
		games = 10
	}
	versions := map[byte]int{}
	for g := range games {
		d := newDriver(t, uint64(3000+g))
		withoutBotLevel(d.h.t)  // the legacy layouts are of tables from before levels
		d.h.t.legal = false     // and from before legal moves
		d.h.t.seatRules = false // and the seat rules
		switch g % 4 {
		case 1:
			d.h.t.ahead = false
		case 2:
			d.h.t.ahead, d.h.t.ownTimers = false, true
		}
		for i := 0; i < 2000 && !d.h.t.Over(); i++ {
			d.step()
			if d.rng.IntN(40) != 0 && !d.h.t.Over() {
				continue
			}
			old := marshalLegacy(t, d.h.t)
			versions[old[0]]++
			r, err := Restore(old)
			if err != nil {
				t.Fatalf("game %d: restore version %d: %v", g, old[0], err)
			}
			now := state(t, d.h.t)
			if !bytes.Equal(state(t, r), now) || !bytes.Equal(marshalLegacy(t, r), old) {
				t.Fatalf("game %d: version %d and version 6 restore differently", g, old[0])
			}
		}
		for _, l := range d.h.log {
			in, err := UnmarshalInput(marshalInputLegacy(t, l.in))
			if err != nil || !sameInput(t, in, l.in) || !proto.Equal(in.Command, l.in.Command) {
				t.Fatalf("game %d: a version 2 input reads as another (%v)", g, err)
			}
		}
	}
	for _, v := range []byte{snapshotVersionOwnTimers, snapshotVersionNotAhead, snapshotVersionAhead} {
		if versions[v] < 10 {
			t.Fatalf("only %d tables of version %d", versions[v], v)
		}
	}
}
