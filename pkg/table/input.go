package table

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// InputKind says what an Input carries.
type InputKind uint8

// The kinds of input. The zero value is invalid.
const (
	// InputCommand: a player's command read from the table's command stream.
	InputCommand InputKind = iota + 1
	// InputTick: the runner's clock; it fires whatever is due at At.
	InputTick
	// InputAway: a gateway saw PlayerID's last connection drop.
	InputAway
	// InputBack: a gateway saw PlayerID connect again.
	InputBack
)

var inputKindNames = [...]string{"", "command", "tick", "away", "back"}

func (k InputKind) String() string {
	if k != 0 && int(k) < len(inputKindNames) {
		return inputKindNames[k]
	}
	return fmt.Sprintf("InputKind(%d)", uint8(k))
}

// Input is one thing that happens to a table. Build it with CommandInput,
// Tick, Away or Back.
type Input struct {
	Kind InputKind
	// At is when it happens: the runner's clock when it read the input.
	// Deadlines set by this input count from it.
	At time.Time
	// Command is the command of an InputCommand.
	Command *tablev1.Command
	// EntryID is the Redis stream entry id ("<ms>-<seq>") the input was read
	// from. Required for commands that come from the stream; optional for
	// presence reports; empty for ticks. An input whose entry id is not after
	// the last applied one is ignored.
	EntryID string
	// PlayerID is the player of an InputAway or InputBack.
	PlayerID string
	// Entropy is 32 bytes the runner read from crypto/rand for this input:
	// a hand the step commits takes its server seed from it. A step that
	// commits no hand ignores it, so the runner logs it only when the
	// step's events hold a HandCommitted (ForLog).
	Entropy Entropy
}

// ForLog is in as the runner logs it after Apply returned evs: without its
// entropy when no hand was committed (the replay does not need it, and a
// seed that was never used need not be kept).
func ForLog(in Input, evs []*tablev1.Event) Input {
	for _, e := range evs {
		if e.GetHandCommitted() != nil {
			return in
		}
	}
	in.Entropy = Entropy{}
	return in
}

// CommandInput is cmd, read from command stream entry entryID at at.
func CommandInput(cmd *tablev1.Command, entryID string, at time.Time) Input {
	return Input{Kind: InputCommand, At: at, Command: cmd, EntryID: entryID}
}

// Tick is the clock at at.
func Tick(at time.Time) Input { return Input{Kind: InputTick, At: at} }

// Away reports that player's connection dropped at at.
func Away(player string, at time.Time) Input { return Input{Kind: InputAway, At: at, PlayerID: player} }

// Back reports that player is connected again at at.
func Back(player string, at time.Time) Input { return Input{Kind: InputBack, At: at, PlayerID: player} }

// Times are kept as Unix nanoseconds; this is the range an input may carry,
// with room for deadlines after it.
var (
	minAt = time.Unix(1, 0)
	maxAt = time.Unix(0, math.MaxInt64-int64(4*tablesettings.MaxDuration))
)

// validate checks the input's shape (not whether it is allowed now).
func (in *Input) validate() (entryID, error) {
	if in.At.Before(minAt) || in.At.After(maxAt) {
		return entryID{}, fmt.Errorf("%w: time %v out of range", ErrBadInput, in.At)
	}
	var e entryID
	if in.EntryID != "" {
		var err error
		if e, err = parseEntryID(in.EntryID); err != nil {
			return e, err
		}
	}
	switch in.Kind {
	case InputCommand:
		if in.Command == nil {
			return e, fmt.Errorf("%w: command input without a command", ErrBadInput)
		}
	case InputTick:
		if in.EntryID != "" {
			return e, fmt.Errorf("%w: a tick has no stream entry", ErrBadInput)
		}
	case InputAway, InputBack:
		if in.PlayerID == "" {
			return e, fmt.Errorf("%w: %v without a player", ErrBadInput, in.Kind)
		}
	default:
		return e, fmt.Errorf("%w: kind %d", ErrBadInput, uint8(in.Kind))
	}
	return e, nil
}

// entryID is a Redis stream entry id. The zero value is "none": XADD never
// makes 0-0.
type entryID struct{ ms, seq uint64 }

func parseEntryID(s string) (entryID, error) {
	a, b, ok := strings.Cut(s, "-")
	ms, err1 := strconv.ParseUint(a, 10, 64)
	seq, err2 := strconv.ParseUint(b, 10, 64)
	if !ok || err1 != nil || err2 != nil || (ms == 0 && seq == 0) {
		return entryID{}, fmt.Errorf("%w: stream entry id %q", ErrBadInput, s)
	}
	return entryID{ms, seq}, nil
}

func (e entryID) isZero() bool { return e == entryID{} }

func (e entryID) after(o entryID) bool {
	return e.ms > o.ms || (e.ms == o.ms && e.seq > o.seq)
}

func (e entryID) String() string {
	if e.isZero() {
		return ""
	}
	return strconv.FormatUint(e.ms, 10) + "-" + strconv.FormatUint(e.seq, 10)
}

// inputVersion is the first byte of MarshalInput's output. Version 2 adds
// the entropy (a flag byte, then 32 bytes when set); version 1 is read as
// an input without entropy.
const (
	inputVersion   = 2
	inputVersionV1 = 1
)

// maxInputSize bounds what UnmarshalInput accepts: a command is a few dozen
// bytes.
const maxInputSize = 64 << 10

// MarshalInput encodes in for the runner's log (the event stream entry that
// records its effect). The command is encoded with deterministic protobuf.
func MarshalInput(in Input) ([]byte, error) {
	if _, err := in.validate(); err != nil {
		return nil, err
	}
	var cmd []byte
	if in.Command != nil {
		var err error
		if cmd, err = (proto.MarshalOptions{Deterministic: true}).Marshal(in.Command); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
		}
	}
	b := make([]byte, 0, 16+len(in.EntryID)+len(in.PlayerID)+len(cmd)+8)
	b = append(b, inputVersion, byte(in.Kind))
	b = binary.LittleEndian.AppendUint64(b, uint64(in.At.UnixNano()))
	b = appendString(b, in.EntryID)
	b = appendString(b, in.PlayerID)
	b = appendString(b, string(cmd))
	if in.Entropy == (Entropy{}) {
		return append(b, 0), nil
	}
	b = append(b, 1)
	return append(b, in.Entropy[:]...), nil
}

// UnmarshalInput reads what MarshalInput wrote and validates it.
func UnmarshalInput(data []byte) (Input, error) {
	var in Input
	if len(data) > maxInputSize {
		return in, fmt.Errorf("%w: %d bytes", ErrBadInput, len(data))
	}
	r := reader{b: data}
	v := r.byte()
	if v != inputVersion && v != inputVersionV1 {
		return in, fmt.Errorf("%w: unknown version %d", ErrBadInput, v)
	}
	in.Kind = InputKind(r.byte())
	in.At = time.Unix(0, int64(r.uint64()))
	in.EntryID = r.string()
	in.PlayerID = r.string()
	cmd := r.string()
	if v == inputVersion {
		switch r.byte() {
		case 0:
		case 1:
			e := r.fixed(len(in.Entropy))
			copy(in.Entropy[:], e)
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
		if err := proto.Unmarshal([]byte(cmd), in.Command); err != nil {
			return Input{}, fmt.Errorf("%w: command: %w", ErrBadInput, err)
		}
	} else if cmd != "" {
		return Input{}, fmt.Errorf("%w: %v with a command", ErrBadInput, in.Kind)
	}
	if _, err := in.validate(); err != nil {
		return Input{}, err
	}
	return in, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// reader reads the little binary layouts of this package; the first error
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
