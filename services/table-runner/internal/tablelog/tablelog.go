// Package tablelog is the layout of a table's durable history in Redis: the
// event stream as the log of the inputs that changed the table, the
// snapshot, and the restore that rebuilds a table from them.
//
// The event stream pulka:{t:<id>}:ev holds one entry per event, data = the
// pulka.table.v1.Event, as gateways read it — except that the LegalMoves
// event a table sends the seat to move after the public event carrying its
// timer shares that event's entry (field wire.FieldLegal; wire.Packs says
// which), so a move costs one entry, not two. The first entry of the events
// one step produced carries the step in a header field. Gateways receive it
// (XREAD returns whole entries) but drop it: they decode and forward only
// the data field. It holds the step's entropy, the source of the server
// seeds the step committed, so it must never be forwarded.
//
//   - "genesis": the table's snapshot right after table.New (the game's
//     creation), on the first entry of the stream (GameStarted);
//   - "input": table.MarshalInput of the input that step applied.
//
// The engine is deterministic and Apply changes the state if and only if it
// returns events, so the state after any entry is the genesis plus every
// logged input up to it — or, faster, the latest snapshot plus the inputs
// logged after the event ID it records.
package tablelog

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	runnerv1 "github.com/pulka/pulka/pkg/gen/pulka/runner/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/services/table-runner/internal/table"
)

// Header fields of event entries (see the package doc).
const (
	HeaderInput   = "input"
	HeaderGenesis = "genesis"
)

var (
	// ErrNotStarted means the table has neither a snapshot nor a log: its
	// game has not been created yet.
	ErrNotStarted = errors.New("tablelog: the table has no log yet")
	// ErrCorrupt means the log cannot be replayed: a missing genesis, an
	// undecodable entry, or a replay whose events differ from the logged
	// ones (a non-deterministic engine, or a change of engine between the
	// writer and the reader).
	ErrCorrupt = errors.New("tablelog: the log does not replay")
)

var deterministic = proto.MarshalOptions{Deterministic: true}

// Entries builds the event stream entries of one step: each event stamped
// with the writer's lease epoch, the first carrying the step (the encoded
// input, or the genesis snapshot for the game's creation). The entries
// take input and genesis as they are: the caller must not change them
// afterwards.
func Entries(tableID string, epoch int64, input, genesis []byte, evs []*tablev1.Event) ([]streams.Entry, error) {
	if len(evs) == 0 {
		return nil, nil
	}
	if (input == nil) == (genesis == nil) {
		return nil, errors.New("tablelog: a step is either an input or a genesis")
	}
	stream := streams.TableEvents(tableID)
	out := make([]streams.Entry, 0, len(evs))
	for i, ev := range evs {
		ev.Epoch = uint64(epoch)
		if i > 0 && wire.Packs(evs[i-1], ev) {
			// Only the moves: the rest of the event is its host's.
			lm, err := deterministic.Marshal(ev.GetLegalMoves())
			if err != nil {
				return nil, fmt.Errorf("tablelog: encode event %d: %w", ev.GetSeq(), err)
			}
			last := &out[len(out)-1]
			if last.Header == nil {
				last.Header = make(map[string]string, 2)
			}
			last.Header[wire.FieldLegal] = owned(lm)
			continue
		}
		data, err := deterministic.Marshal(ev)
		if err != nil {
			return nil, fmt.Errorf("tablelog: encode event %d: %w", ev.GetSeq(), err)
		}
		out = append(out, streams.Entry{Stream: stream, Data: data})
	}
	if out[0].Header == nil {
		out[0].Header = make(map[string]string, 1)
	}
	if input != nil {
		out[0].Header[HeaderInput] = owned(input)
	} else {
		out[0].Header[HeaderGenesis] = owned(genesis)
	}
	return out, nil
}

// owned is b as a string without a copy, for bytes nothing writes once
// they are a header (a header is a string, and copying a step's input and
// legal moves into one was about 7 % of the bytes a runner allocated).
func owned(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// Snapshot is a table's state and the last event entry it includes.
type Snapshot struct {
	EventID string
	Table   []byte
}

// The first byte of a snapshot record. Version 2 is a protobuf
// pulka.runner.v1.SnapshotRecord (proto/pulka/runner/v1/snapshot.proto).
// Version 1, the hand-laid layout of before — the event id's length as a
// uvarint, the event id, then the table to the end — is still read, so that
// a table snapshotted before the upgrade restores after it.
const (
	snapshotVersion   = 2
	snapshotVersionV1 = 1
)

// MarshalBinary encodes the snapshot for the snapshot key.
func (s Snapshot) MarshalBinary() ([]byte, error) {
	rec := &runnerv1.SnapshotRecord{EventId: s.EventID, Table: s.Table}
	b := make([]byte, 1, 1+deterministic.Size(rec))
	b[0] = snapshotVersion
	return deterministic.MarshalAppend(b, rec)
}

// ParseSnapshot decodes what MarshalBinary wrote, of either version. The
// record's last field, the table, is never empty, so a record cut short is
// refused here or by the table's own framing (table.Restore).
func ParseSnapshot(b []byte) (Snapshot, error) {
	if len(b) < 2 {
		return Snapshot{}, fmt.Errorf("%w: snapshot record of %d bytes", ErrCorrupt, len(b))
	}
	switch b[0] {
	case snapshotVersion:
		var rec runnerv1.SnapshotRecord
		if err := proto.Unmarshal(b[1:], &rec); err != nil {
			return Snapshot{}, fmt.Errorf("%w: snapshot record: %w", ErrCorrupt, err)
		}
		if len(rec.GetTable()) == 0 {
			return Snapshot{}, fmt.Errorf("%w: snapshot record without a table", ErrCorrupt)
		}
		return Snapshot{EventID: rec.GetEventId(), Table: rec.GetTable()}, nil
	case snapshotVersionV1:
		n, k := binary.Uvarint(b[1:])
		if k <= 0 || n > uint64(len(b)-1-k) {
			return Snapshot{}, fmt.Errorf("%w: snapshot header", ErrCorrupt)
		}
		rest := b[1+k:]
		return Snapshot{EventID: string(rest[:n]), Table: rest[n:]}, nil
	}
	return Snapshot{}, fmt.Errorf("%w: snapshot version %d", ErrCorrupt, b[0])
}

// snapshotScript: KEYS[1]=lease KEYS[2]=snapshot KEYS[3]=command stream
// KEYS[4]=handled key; ARGV[1]=owner ARGV[2]=epoch ARGV[3]=value
// ARGV[4]=handled entry ID ("" for none) ARGV[5]=trim threshold (the ID
// after it). The same fence as streams' AppendFenced. With a handled entry
// it also trims the command stream through it and records it, as the
// runner's handled step does, so that a hand's end costs one round trip
// (the trim is issue 17's bounded retention; the snapshot was already
// there). Returns the entries trimmed.
var snapshotScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'owner', 'epoch')
if cur[1] ~= ARGV[1] or cur[2] ~= ARGV[2] then
  return redis.error_reply('STALEEPOCH lease is ' .. tostring(cur[2]) .. ':' .. tostring(cur[1]))
end
redis.call('SET', KEYS[2], ARGV[3])
local trimmed = 0
if ARGV[4] ~= '' then
  trimmed = redis.call('XTRIM', KEYS[3], 'MINID', ARGV[5])
  redis.call('SET', KEYS[4], ARGV[4])
end
return trimmed
`)

// Handled is a command stream position to record with a snapshot: the
// entry handled last (ID), and TrimFrom, the ID right after it, below
// which the handled commands are trimmed. The zero value records nothing.
type Handled struct{ ID, TrimFrom string }

// WriteSnapshot stores s as tableID's snapshot if lease is still current;
// otherwise the error wraps streams.ErrStaleEpoch and nothing is written.
func WriteSnapshot(ctx context.Context, rdb redis.Scripter, lease streams.Lease, tableID string, s Snapshot) error {
	_, err := WriteSnapshotHandled(ctx, rdb, lease, tableID, s, Handled{})
	return err
}

// WriteSnapshotHandled is WriteSnapshot that also, in the same step, trims
// the table's command stream through h.ID and records h.ID as handled
// (when h.ID is set). It returns the entries trimmed.
func WriteSnapshotHandled(ctx context.Context, rdb redis.Scripter, lease streams.Lease, tableID string, s Snapshot, h Handled) (int64, error) {
	v, err := s.MarshalBinary()
	if err != nil {
		return 0, fmt.Errorf("tablelog: snapshot of %s: %w", tableID, err)
	}
	keys := []string{lease.Key, streams.TableSnapshot(tableID), streams.TableCommands(tableID), HandledKey(tableID)}
	trimmed, err := snapshotScript.Run(ctx, rdb, keys, lease.Owner, lease.Epoch, v, h.ID, h.TrimFrom).Int64()
	if err != nil {
		if redis.HasErrorPrefix(err, "STALEEPOCH") {
			return 0, fmt.Errorf("tablelog: snapshot of %s: %w: %w", tableID, streams.ErrStaleEpoch, err)
		}
		return 0, fmt.Errorf("tablelog: snapshot of %s: %w", tableID, err)
	}
	return trimmed, nil
}

// Step is one logged step: a genesis or an input, with the events it
// produced and their entry IDs (a packed event has its host's).
type Step struct {
	Genesis []byte
	Input   *table.Input
	Events  []*tablev1.Event
	IDs     []string
}

// LastID is the entry ID of the step's last event.
func (s *Step) LastID() string { return s.IDs[len(s.IDs)-1] }

// readAll returns every entry of stream after `after`, in pages.
func readAll(ctx context.Context, rdb redis.UniversalClient, stream, after string, page int64) ([]streams.Message, error) {
	var out []streams.Message
	for {
		msgs, err := streams.ReadAfter(ctx, rdb, stream, after, page)
		if err != nil {
			if errors.Is(err, streams.ErrTrimmed) {
				return nil, fmt.Errorf("%w: %w", ErrCorrupt, err)
			}
			return nil, err
		}
		out = append(out, msgs...)
		if int64(len(msgs)) < page {
			return out, nil
		}
		after = msgs[len(msgs)-1].ID
	}
}

// decodeSteps groups event entries into steps; msgs must start at a step
// boundary (every snapshot's event ID is one).
func decodeSteps(msgs []streams.Message) ([]Step, error) {
	var steps []Step
	for _, m := range msgs {
		ev, packed, err := wire.DecodeEventEntry(m.Data, m.Header)
		if err != nil {
			return nil, fmt.Errorf("%w: entry %s: %w", ErrCorrupt, m.ID, err)
		}
		g, isGenesis := m.Header[HeaderGenesis]
		in, isInput := m.Header[HeaderInput]
		switch {
		case isGenesis:
			steps = append(steps, Step{Genesis: []byte(g)})
		case isInput:
			input, err := table.UnmarshalInput([]byte(in))
			if err != nil {
				return nil, fmt.Errorf("%w: input at %s: %w", ErrCorrupt, m.ID, err)
			}
			steps = append(steps, Step{Input: &input})
		case len(steps) == 0:
			return nil, fmt.Errorf("%w: event %s starts no step", ErrCorrupt, m.ID)
		}
		s := &steps[len(steps)-1]
		s.Events = append(s.Events, ev)
		s.IDs = append(s.IDs, m.ID)
		if packed != nil {
			s.Events = append(s.Events, packed)
			s.IDs = append(s.IDs, m.ID)
		}
	}
	return steps, nil
}

// Read returns the whole log of tableID (for verification and tools: a
// runner restores from the snapshot instead).
func Read(ctx context.Context, rdb redis.UniversalClient, tableID string) ([]Step, error) {
	msgs, err := readAll(ctx, rdb, streams.TableEvents(tableID), "0", 1000)
	if err != nil {
		return nil, err
	}
	return decodeSteps(msgs)
}

// State is a restored table.
type State struct {
	Table *table.Table
	// EventID is the last event entry the state includes ("" for none).
	EventID string
	// Replayed are the events of the steps re-applied after the snapshot
	// (or from the genesis), for re-publishing their side effects.
	Replayed []*tablev1.Event
	// Steps is how many logged steps were re-applied.
	Steps int
	// FromSnapshot is true when the snapshot key was the starting point.
	FromSnapshot bool
}

// Restore rebuilds tableID from its snapshot (or its genesis) and the steps
// logged after it. It returns ErrNotStarted when there is nothing to
// restore, and ErrCorrupt when the log cannot be replayed exactly (the
// replayed events must have the logged seqs and kinds).
func Restore(ctx context.Context, rdb redis.UniversalClient, tableID string) (State, error) {
	var st State
	after := "0"
	raw, err := rdb.Get(ctx, streams.TableSnapshot(tableID)).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
	case err != nil:
		return st, fmt.Errorf("tablelog: read snapshot of %s: %w", tableID, err)
	default:
		snap, err := ParseSnapshot(raw)
		if err != nil {
			return st, err
		}
		if st.Table, err = table.Restore(snap.Table); err != nil {
			return st, fmt.Errorf("%w: snapshot: %w", ErrCorrupt, err)
		}
		st.EventID, st.FromSnapshot = snap.EventID, true
		if snap.EventID != "" {
			after = snap.EventID
		}
	}
	msgs, err := readAll(ctx, rdb, streams.TableEvents(tableID), after, 512)
	if err != nil {
		return st, err
	}
	steps, err := decodeSteps(msgs)
	if err != nil {
		return st, err
	}
	for i := range steps {
		s := &steps[i]
		switch {
		case s.Genesis != nil:
			if st.Table != nil {
				return st, fmt.Errorf("%w: a second genesis at %s", ErrCorrupt, s.IDs[0])
			}
			if st.Table, err = table.Restore(s.Genesis); err != nil {
				return st, fmt.Errorf("%w: genesis: %w", ErrCorrupt, err)
			}
			st.Replayed = append(st.Replayed, s.Events...)
		case st.Table == nil:
			return st, fmt.Errorf("%w: input at %s before any genesis", ErrCorrupt, s.IDs[0])
		default:
			evs, err := st.Table.Apply(*s.Input)
			var rej *table.RejectError
			if err != nil && !errors.As(err, &rej) {
				return st, fmt.Errorf("%w: re-applying %s: %w", ErrCorrupt, s.IDs[0], err)
			}
			if err := sameShape(evs, s.Events); err != nil {
				return st, fmt.Errorf("%w: step at %s: %w", ErrCorrupt, s.IDs[0], err)
			}
			st.Replayed = append(st.Replayed, evs...)
		}
		st.EventID = s.LastID()
		st.Steps++
	}
	if st.Table == nil {
		if len(msgs) > 0 {
			return st, fmt.Errorf("%w: events without a genesis", ErrCorrupt)
		}
		return st, ErrNotStarted
	}
	return st, nil
}

// sameShape checks that a replay produced the logged events' seqs and
// kinds (Verify compares every byte).
func sameShape(got, logged []*tablev1.Event) error {
	if len(got) != len(logged) {
		return fmt.Errorf("%d events, logged %d", len(got), len(logged))
	}
	for i := range got {
		if got[i].GetSeq() != logged[i].GetSeq() || kind(got[i]) != kind(logged[i]) || (got[i].GetTimer() == nil) != (logged[i].GetTimer() == nil) {
			return fmt.Errorf("event %d is %s #%d (timer %t), logged %s #%d (timer %t)", i, kind(got[i]), got[i].GetSeq(), got[i].GetTimer() != nil,
				kind(logged[i]), logged[i].GetSeq(), logged[i].GetTimer() != nil)
		}
	}
	return nil
}

func kind(e *tablev1.Event) string {
	f := e.ProtoReflect().WhichOneof(e.ProtoReflect().Descriptor().Oneofs().ByName("event"))
	if f == nil {
		return "none"
	}
	return string(f.Name())
}

// Verify replays a whole log purely — the genesis and then every input —
// and checks that each step yields byte for byte the logged events (the
// lease epoch aside, which the writer stamps). It returns the final table.
func Verify(steps []Step) (*table.Table, error) {
	if len(steps) == 0 || steps[0].Genesis == nil {
		return nil, fmt.Errorf("%w: the log does not start with a genesis", ErrCorrupt)
	}
	t, err := table.Restore(steps[0].Genesis)
	if err != nil {
		return nil, fmt.Errorf("%w: genesis: %w", ErrCorrupt, err)
	}
	for i := 1; i < len(steps); i++ {
		s := &steps[i]
		if s.Input == nil {
			return nil, fmt.Errorf("%w: a second genesis at %s", ErrCorrupt, s.IDs[0])
		}
		evs, err := t.Apply(*s.Input)
		var rej *table.RejectError
		if err != nil && !errors.As(err, &rej) {
			return nil, fmt.Errorf("%w: step %d at %s: %w", ErrCorrupt, i, s.IDs[0], err)
		}
		if len(evs) != len(s.Events) {
			return nil, fmt.Errorf("%w: step %d at %s made %d events, logged %d", ErrCorrupt, i, s.IDs[0], len(evs), len(s.Events))
		}
		for j := range evs {
			if err := sameBytes(evs[j], s.Events[j]); err != nil {
				return nil, fmt.Errorf("%w: step %d at %s, event %d: %w", ErrCorrupt, i, s.IDs[0], j, err)
			}
		}
	}
	return t, nil
}

func sameBytes(got, logged *tablev1.Event) error {
	l := proto.Clone(logged).(*tablev1.Event)
	l.Epoch = 0
	g := proto.Clone(got).(*tablev1.Event)
	g.Epoch = 0
	a, err1 := deterministic.Marshal(g)
	b, err2 := deterministic.Marshal(l)
	if err := errors.Join(err1, err2); err != nil {
		return err
	}
	if string(a) != string(b) {
		return fmt.Errorf("replayed %v, logged %v", g, l)
	}
	return nil
}

// HandledKey is where the owner of tableID records the last command stream
// entry it has handled and trimmed away (refused, ignored, or logged): a
// string in the table's slot. The next owner resumes reading after it, and a
// command stream whose head is gone up to there has no gap (docs/table-runner.md,
// Refusals and retention).
func HandledKey(tableID string) string { return streams.TableCommands(tableID) + ":handled" }
