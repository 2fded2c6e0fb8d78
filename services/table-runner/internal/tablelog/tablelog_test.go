package tablelog

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/fairdeal"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/table-runner/internal/table"
)

var t0 = time.Date(2025, 5, 1, 12, 0, 0, 0, time.UTC)

// writer logs a table of four bots the way a runner does, step by step.
type writer struct {
	t     *testing.T
	rdb   *redis.Client
	pub   *streams.Publisher
	lease streams.Lease
	tbl   *table.Table
	now   time.Time
	last  string
	n     int // steps applied, for their entropy
}

func newWriter(t *testing.T) *writer { return newWriterWith(t, 0) }

// newWriterWith is newWriter with the first humans seats played by people
// who never move: their timers run out and the table moves for them, so
// the table sends them their legal moves.
func newWriterWith(t *testing.T, humans int) *writer {
	t.Helper()
	rdb := redistest.Start(t).Client(t)
	ctx := context.Background()
	lease, err := streams.NewLeases(rdb, time.Minute).Acquire(ctx, streams.TableLease("t1"), "me")
	if err != nil {
		t.Fatal(err)
	}
	set := tablesettings.ClassicSettings(scoring.DefaultSettings())
	set.BotDelay = time.Second
	bots := make([]table.SeatInfo, 4)
	for i := range bots {
		bots[i] = table.SeatInfo{Name: "bot", Bot: true}
		if i < humans {
			bots[i] = table.SeatInfo{PlayerID: "p" + strconv.Itoa(i), Name: "person"}
		}
	}
	tbl, evs, err := table.New("t1", "g77", set, bots, t0, entropy(0))
	if err != nil {
		t.Fatal(err)
	}
	w := &writer{t: t, rdb: rdb, pub: streams.NewPublisher(rdb), lease: lease, tbl: tbl, now: t0}
	genesis, _ := tbl.MarshalBinary()
	w.append(nil, genesis, evs)
	return w
}

func (w *writer) append(input, genesis []byte, evs []*tablev1.Event) {
	w.t.Helper()
	entries, err := Entries("t1", w.lease.Epoch, input, genesis, evs)
	if err != nil {
		w.t.Fatal(err)
	}
	ids, err := w.pub.AppendFenced(context.Background(), w.lease, entries...)
	if err != nil {
		w.t.Fatal(err)
	}
	w.last = ids[len(ids)-1]
}

// tick advances to the next bot move and logs it.
func (w *writer) tick() {
	w.t.Helper()
	at, ok := w.tbl.NextDeadline()
	if !ok {
		w.t.Fatal("no deadline")
	}
	w.n++
	in := table.Tick(at)
	in.Entropy = entropy(w.n)
	evs, err := w.tbl.Apply(in)
	if err != nil || len(evs) == 0 {
		w.t.Fatalf("tick: %d events, %v", len(evs), err)
	}
	data, _ := table.MarshalInput(table.ForLog(in, evs))
	w.append(data, nil, evs)
}

func (w *writer) state() []byte {
	b, err := w.tbl.MarshalBinary()
	if err != nil {
		w.t.Fatal(err)
	}
	return b
}

func TestRestore_FromTheSnapshotOrFromTheGenesisGivesTheSameTable(t *testing.T) {
	ctx := context.Background()
	w := newWriter(t)
	for range 30 {
		w.tick()
	}
	if err := WriteSnapshot(ctx, w.rdb, w.lease, "t1", Snapshot{EventID: w.last, Table: w.state()}); err != nil {
		t.Fatal(err)
	}
	for range 25 {
		w.tick()
	}
	want := w.state()

	st, err := Restore(ctx, w.rdb, "t1")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := st.Table.MarshalBinary()
	if !bytes.Equal(got, want) || !st.FromSnapshot || st.Steps != 25 || st.EventID != w.last {
		t.Fatalf("from the snapshot: equal=%v snapshot=%v steps=%d event=%s (want 25 steps to %s)",
			bytes.Equal(got, want), st.FromSnapshot, st.Steps, st.EventID, w.last)
	}
	if err := w.rdb.Del(ctx, streams.TableSnapshot("t1")).Err(); err != nil {
		t.Fatal(err)
	}
	st, err = Restore(ctx, w.rdb, "t1")
	if err != nil {
		t.Fatal(err)
	}
	got, _ = st.Table.MarshalBinary()
	if !bytes.Equal(got, want) || st.FromSnapshot || st.Steps != 56 {
		t.Fatalf("from the genesis: equal=%v snapshot=%v steps=%d (want 56)", bytes.Equal(got, want), st.FromSnapshot, st.Steps)
	}
	if st.Replayed[0].GetGameStarted() == nil {
		t.Fatal("a replay from the genesis must include the start events (for re-publishing)")
	}
	steps, err := Read(ctx, w.rdb, "t1")
	if err != nil {
		t.Fatal(err)
	}
	final, err := Verify(steps)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := final.MarshalBinary(); !bytes.Equal(b, want) {
		t.Fatal("Verify's final table differs from the writer's")
	}
}

func TestRestore_RefusesALogThatReplaysDifferently(t *testing.T) {
	ctx := context.Background()
	w := newWriter(t)
	w.tick()
	// A step whose events the input does not produce: a tick at the same
	// instant changes nothing, so replaying it yields no events.
	at, _ := w.tbl.NextDeadline()
	in := table.Tick(at.Add(-time.Millisecond))
	data, _ := table.MarshalInput(in)
	tick := table.Tick(at)
	tick.Entropy = entropy(1)
	evs, _ := w.tbl.Apply(tick)
	w.append(data, nil, evs)
	if _, err := Restore(ctx, w.rdb, "t1"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Restore = %v, want ErrCorrupt", err)
	}
	steps, _ := Read(ctx, w.rdb, "t1")
	if _, err := Verify(steps); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Verify = %v, want ErrCorrupt", err)
	}
}

func TestRestore_NothingLoggedIsNotStarted(t *testing.T) {
	rdb := redistest.Start(t).Client(t)
	if _, err := Restore(context.Background(), rdb, "t1"); !errors.Is(err, ErrNotStarted) {
		t.Fatalf("Restore = %v, want ErrNotStarted", err)
	}
}

func TestRestore_EventsWithoutAGenesisAreCorrupt(t *testing.T) {
	w := newWriter(t)
	w.tick()
	ctx := context.Background()
	first, err := w.rdb.XRangeN(ctx, streams.TableEvents("t1"), "-", "+", 1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.rdb.XDel(ctx, streams.TableEvents("t1"), first[0].ID).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(ctx, w.rdb, "t1"); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Restore = %v, want ErrCorrupt", err)
	}
}

func TestWriteSnapshot_IsFencedByTheLease(t *testing.T) {
	ctx := context.Background()
	w := newWriter(t)
	if _, err := streams.NewLeases(w.rdb, time.Minute).Takeover(ctx, streams.TableLease("t1"), "other"); err != nil {
		t.Fatal(err)
	}
	err := WriteSnapshot(ctx, w.rdb, w.lease, "t1", Snapshot{EventID: w.last, Table: w.state()})
	if !errors.Is(err, streams.ErrStaleEpoch) {
		t.Fatalf("WriteSnapshot by a stale owner = %v, want ErrStaleEpoch", err)
	}
	if n, _ := w.rdb.Exists(ctx, streams.TableSnapshot("t1")).Result(); n != 0 {
		t.Fatal("a stale owner wrote the snapshot")
	}
}

// TestWriteSnapshotHandled_TrimsAndRecordsInTheSameStep: a hand's end
// writes the snapshot, trims the command stream through the handled entry
// and records it, in one fenced script; a stale owner does none of it.
func TestWriteSnapshotHandled_TrimsAndRecordsInTheSameStep(t *testing.T) {
	ctx := context.Background()
	w := newWriter(t)
	cmds := streams.TableCommands("t1")
	var ids []string
	for i := range 5 {
		id, err := w.rdb.XAdd(ctx, &redis.XAddArgs{Stream: cmds, Values: []any{"n", i}}).Result()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	// Through the third command: the two after it stay.
	ms, seq, _ := strings.Cut(ids[2], "-")
	n, _ := strconv.ParseUint(seq, 10, 64)
	next := ms + "-" + strconv.FormatUint(n+1, 10)
	trimmed, err := WriteSnapshotHandled(ctx, w.rdb, w.lease, "t1", Snapshot{EventID: w.last, Table: w.state()}, Handled{ID: ids[2], TrimFrom: next})
	if err != nil || trimmed != 3 {
		t.Fatalf("WriteSnapshotHandled = %d, %v; want 3 trimmed", trimmed, err)
	}
	left, _ := w.rdb.XRange(ctx, cmds, "-", "+").Result()
	if len(left) != 2 || left[0].ID != ids[3] {
		t.Fatalf("commands left %v; want the last two", left)
	}
	if got, _ := w.rdb.Get(ctx, HandledKey("t1")).Result(); got != ids[2] {
		t.Fatalf("handled = %q, want %q", got, ids[2])
	}
	if st, err := Restore(ctx, w.rdb, "t1"); err != nil || !st.FromSnapshot || st.EventID != w.last {
		t.Fatalf("Restore after the step: from snapshot %t at %q, %v; want the snapshot at %q", st.FromSnapshot, st.EventID, err, w.last)
	}
	// No handled entry: the snapshot alone, nothing trimmed.
	if trimmed, err := WriteSnapshotHandled(ctx, w.rdb, w.lease, "t1", Snapshot{EventID: w.last, Table: w.state()}, Handled{}); err != nil || trimmed != 0 {
		t.Fatalf("WriteSnapshotHandled without a position = %d, %v", trimmed, err)
	}
	if n, _ := w.rdb.XLen(ctx, cmds).Result(); n != 2 {
		t.Fatalf("%d commands left; a snapshot alone trimmed", n)
	}
	if _, err := streams.NewLeases(w.rdb, time.Minute).Takeover(ctx, streams.TableLease("t1"), "other"); err != nil {
		t.Fatal(err)
	}
	_, err = WriteSnapshotHandled(ctx, w.rdb, w.lease, "t1", Snapshot{EventID: "9-9", Table: w.state()}, Handled{ID: ids[4], TrimFrom: ids[4] + "1"})
	if !errors.Is(err, streams.ErrStaleEpoch) {
		t.Fatalf("a stale owner's step = %v, want ErrStaleEpoch", err)
	}
	if n, _ := w.rdb.XLen(ctx, cmds).Result(); n != 2 {
		t.Fatalf("a stale owner trimmed: %d commands left", n)
	}
	if got, _ := w.rdb.Get(ctx, HandledKey("t1")).Result(); got != ids[2] {
		t.Fatalf("a stale owner recorded handled %q", got)
	}
}

func TestSnapshot_RoundTripAndGarbage(t *testing.T) {
	s := Snapshot{EventID: "1714564800000-3", Table: []byte{1, 2, 3}}
	b, _ := s.MarshalBinary()
	got, err := ParseSnapshot(b)
	if err != nil || got.EventID != s.EventID || !bytes.Equal(got.Table, s.Table) {
		t.Fatalf("round trip = %+v, %v", got, err)
	}
	for _, bad := range [][]byte{nil, {2, 0}, {1, 200, 1}, {1}} {
		if _, err := ParseSnapshot(bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("ParseSnapshot(%v) = %v, want ErrCorrupt", bad, err)
		}
	}
}

// TestRestore_ALogWithPackedLegalMovesRestoresAndVerifies: the legal moves
// of a person's turns share the entry of the event carrying the timer, and
// the log still restores and verifies byte for byte (the events read back
// are the table's, seqs and order included).
func TestRestore_ALogWithPackedLegalMovesRestoresAndVerifies(t *testing.T) {
	ctx := context.Background()
	w := newWriterWith(t, 2)
	for range 60 {
		w.tick()
	}
	want := w.state()
	msgs, err := readAll(ctx, w.rdb, streams.TableEvents("t1"), "0", 1000)
	if err != nil {
		t.Fatal(err)
	}
	packed := 0
	for _, m := range msgs {
		if _, ok := m.Header[wire.FieldLegal]; ok {
			packed++
		}
	}
	if packed < 5 {
		t.Fatalf("%d entries of %d pack legal moves; two people's turns should give more", packed, len(msgs))
	}
	st, err := Restore(ctx, w.rdb, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := st.Table.MarshalBinary(); !bytes.Equal(got, want) || st.EventID != w.last {
		t.Fatalf("restored: equal=%v event=%s (want %s)", bytes.Equal(got, want), st.EventID, w.last)
	}
	steps, err := Read(ctx, w.rdb, "t1")
	if err != nil {
		t.Fatal(err)
	}
	legal := 0
	for _, s := range steps {
		for i, ev := range s.Events {
			if ev.GetLegalMoves() != nil {
				legal++
				if i == 0 || s.IDs[i] != s.IDs[i-1] {
					t.Fatalf("legal moves #%d have an entry of their own (%s)", ev.GetSeq(), s.IDs[i])
				}
			}
		}
	}
	if legal != packed {
		t.Fatalf("%d legal moves events read back from %d packed entries", legal, packed)
	}
	if _, err := Verify(steps); err != nil {
		t.Fatal(err)
	}
}

func TestEntries_OnlyTheFirstEventCarriesTheStep(t *testing.T) {
	w := newWriter(t)
	at, _ := w.tbl.NextDeadline()
	in := table.Tick(at)
	in.Entropy = entropy(1)
	evs, _ := w.tbl.Apply(in)
	data, _ := table.MarshalInput(table.ForLog(in, evs))
	es, err := Entries("t1", 9, data, nil, evs)
	if err != nil {
		t.Fatal(err)
	}
	if es[0].Header[HeaderInput] != string(data) {
		t.Fatal("the first entry must carry the input")
	}
	for i, e := range es[1:] {
		if _, ok := e.Header[HeaderInput]; ok {
			t.Fatalf("entry %d carries the input too", i+1)
		}
		if _, ok := e.Header[HeaderGenesis]; ok {
			t.Fatalf("entry %d carries a genesis", i+1)
		}
	}
	for _, ev := range evs {
		if ev.GetEpoch() != 9 {
			t.Fatalf("event %d has epoch %d, want the writer's 9", ev.GetSeq(), ev.GetEpoch())
		}
	}
	if _, err := Entries("t1", 9, data, []byte("g"), evs); err == nil {
		t.Fatal("a step cannot be both an input and a genesis")
	}
}

// entropy is the test's stand-in for the runner's crypto/rand: the n-th
// step's.
func entropy(n int) table.Entropy {
	return table.Entropy(fairdeal.LocalKey(77, uint32(n)))
}

// legacyLog is internal/table's testdata/log-*.json.gz: a table's log as a
// runner of before the protobuf formats wrote it (snapshot versions 3 to 5,
// input version 2), with the events it logged.
type legacyLog struct {
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

// TestRestore_ALogOfTheOldFormatsRestoresAfterTheUpgrade: a table logged
// and snapshotted by a runner of before the protobuf formats — its genesis
// and snapshot in the hand-laid layouts, the snapshot record in version 1 —
// restores after the upgrade, from the snapshot and from the genesis, to the
// table the old runner had, and its whole log verifies byte for byte. A
// snapshot record written now (version 2) restores the same.
func TestRestore_ALogOfTheOldFormatsRestoresAfterTheUpgrade(t *testing.T) {
	for _, name := range []string{"log-classic-v5.json.gz", "log-japanese-v5.json.gz", "log-classic-v3.json.gz"} {
		t.Run(name, func(t *testing.T) {
			l := readLegacyLog(t, name)
			rdb := redistest.Start(t).Client(t)
			ctx := context.Background()
			lease, err := streams.NewLeases(rdb, time.Minute).Acquire(ctx, streams.TableLease("t1"), "old")
			if err != nil {
				t.Fatal(err)
			}
			pub := streams.NewPublisher(rdb)
			appendStep := func(input, genesis []byte, raw [][]byte) string {
				t.Helper()
				evs := make([]*tablev1.Event, len(raw))
				for i, b := range raw {
					evs[i] = &tablev1.Event{}
					if err := proto.Unmarshal(b, evs[i]); err != nil {
						t.Fatal(err)
					}
				}
				entries, err := Entries("t1", lease.Epoch, input, genesis, evs)
				if err != nil {
					t.Fatal(err)
				}
				ids, err := pub.AppendFenced(ctx, lease, entries...)
				if err != nil {
					t.Fatal(err)
				}
				return ids[len(ids)-1]
			}
			last := appendStep(nil, l.Genesis, l.StartEvents)
			snap := l.Snapshots[len(l.Snapshots)-1]
			var snapAt string
			for i, s := range l.Steps {
				if i == snap.AfterStep {
					snapAt = last
				}
				last = appendStep(s.Input, nil, s.Events)
			}
			// The record as the old runner wrote it: version 1, the event
			// id's length and the event id, then the table.
			rec := binary.AppendUvarint([]byte{1}, uint64(len(snapAt)))
			rec = append(append(rec, snapAt...), snap.Table...)
			if err := rdb.Set(ctx, streams.TableSnapshot("t1"), rec, 0).Err(); err != nil {
				t.Fatal(err)
			}
			final, err := table.Restore(l.Final)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := final.MarshalBinary()
			check := func(how string, fromSnapshot bool, steps int) {
				t.Helper()
				st, err := Restore(ctx, rdb, "t1")
				if err != nil {
					t.Fatalf("%s: %v", how, err)
				}
				got, _ := st.Table.MarshalBinary()
				if !bytes.Equal(got, want) || st.FromSnapshot != fromSnapshot || st.Steps != steps || st.EventID != last {
					t.Fatalf("%s: the old runner's table %v, from the snapshot %v, %d steps (want %d), at %s (want %s)",
						how, bytes.Equal(got, want), st.FromSnapshot, st.Steps, steps, st.EventID, last)
				}
			}
			check("from the version 1 record", true, len(l.Steps)-snap.AfterStep)
			// The same snapshot in a record of today.
			old, err := table.Restore(snap.Table)
			if err != nil {
				t.Fatal(err)
			}
			now, _ := old.MarshalBinary()
			if err := WriteSnapshot(ctx, rdb, lease, "t1", Snapshot{EventID: snapAt, Table: now}); err != nil {
				t.Fatal(err)
			}
			check("from the version 2 record", true, len(l.Steps)-snap.AfterStep)
			if err := rdb.Del(ctx, streams.TableSnapshot("t1")).Err(); err != nil {
				t.Fatal(err)
			}
			check("from the genesis", false, len(l.Steps)+1)
			steps, err := Read(ctx, rdb, "t1")
			if err != nil {
				t.Fatal(err)
			}
			v, err := Verify(steps)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := v.MarshalBinary(); !bytes.Equal(got, want) {
				t.Fatal("Verify's final table is not the old runner's")
			}
		})
	}
}

// readLegacyLog reads a fixture of internal/table (the table's tests write and
// explain them).
func readLegacyLog(tb testing.TB, name string) legacyLog {
	tb.Helper()
	f, err := os.Open(filepath.Join("..", "table", "testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	var l legacyLog
	if err := json.NewDecoder(z).Decode(&l); err != nil {
		tb.Fatal(err)
	}
	return l
}

// FuzzParseSnapshot: no bytes make the snapshot record decoder panic; a
// refusal is ErrCorrupt; an accepted record re-encodes (as version 2) to a
// record that reads the same.
func FuzzParseSnapshot(f *testing.F) {
	b, _ := Snapshot{EventID: "1714564800000-3", Table: []byte{6, 1, 0}}.MarshalBinary()
	f.Add(b)
	f.Add([]byte{1, 3, '1', '-', '1', 6, 0})
	f.Add([]byte{2})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSnapshot(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		if len(s.Table) == 0 || !utf8.ValidString(s.EventID) {
			return // a version 1 record may hold either, version 2 neither: table.Restore refuses an empty table, and stream ids are ASCII
		}
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseSnapshot(b)
		if err != nil || again.EventID != s.EventID || !bytes.Equal(again.Table, s.Table) {
			t.Fatalf("%+v re-encodes to %+v (%v)", s, again, err)
		}
	})
}

// BenchmarkEntries is the runner's building of one move's entries: the
// first bid of a table of four people (the bid, the next bidder's legal
// moves riding on the event that starts its timer) and its input.
func BenchmarkEntries(b *testing.B) {
	set := tablesettings.ClassicSettings(scoring.DefaultSettings())
	people := make([]table.SeatInfo, 4)
	for i := range people {
		people[i] = table.SeatInfo{PlayerID: "p" + strconv.Itoa(i), Name: "person"}
	}
	tbl, _, err := table.New("t1", "g77", set, people, t0, entropy(0))
	if err != nil {
		b.Fatal(err)
	}
	at, _ := tbl.NextDeadline()
	deal := table.Tick(at)
	deal.Entropy = entropy(1)
	evs, err := tbl.Apply(deal)
	if err != nil {
		b.Fatal(err)
	}
	var lm *tablev1.LegalMoves
	for _, ev := range evs {
		if ev.GetLegalMoves() != nil {
			lm = ev.GetLegalMoves()
		}
	}
	if len(lm.GetBids()) == 0 {
		b.Fatalf("no bid to make after the deal: %v", lm)
	}
	bid := &tablev1.Command{CommandId: "c1", TableId: "t1", PlayerId: "p" + strconv.Itoa(int(lm.GetSeat())),
		Command: &tablev1.Command_Bid{Bid: &tablev1.BidCommand{Tricks: lm.GetBids()[0]}}}
	in := table.CommandInput(bid, "1796645863000-0", at.Add(time.Second))
	in.Entropy = entropy(2)
	if evs, err = tbl.Apply(in); err != nil {
		b.Fatal(err)
	}
	input, err := table.MarshalInput(table.ForLog(in, evs))
	if err != nil {
		b.Fatal(err)
	}
	es, err := Entries("t1", 9, input, nil, evs)
	if err != nil || len(es) >= len(evs) {
		b.Fatalf("%d entries of %d events (%v): the bench wants packed legal moves", len(es), len(evs), err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Entries("t1", 9, input, nil, evs); err != nil {
			b.Fatal(err)
		}
	}
}
