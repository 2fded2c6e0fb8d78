package table

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	runnerv1 "github.com/pulka/pulka/pkg/gen/pulka/runner/v1"
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
	// Whatever Apply takes, the log must hold (a protobuf string is UTF-8).
	if !utf8.ValidString(in.PlayerID) {
		return e, fmt.Errorf("%w: a player id that is not UTF-8", ErrBadInput)
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

// inputVersion is the first byte of MarshalInput's output: version 3 is a
// protobuf pulka.runner.v1.Input (proto/pulka/runner/v1), framed by its
// length (appendFramed). Versions 1 and 2 are the hand-laid layouts of
// before (legacy.go), still read: version 2 added the entropy, and a version
// 1 input reads as an input without entropy.
const (
	inputVersion   = 3
	inputVersionV2 = 2
	inputVersionV1 = 1
)

// maxInputSize bounds what UnmarshalInput accepts: a command is a few dozen
// bytes.
const maxInputSize = 64 << 10

// MarshalInput encodes in for the runner's log (the event stream entry that
// records its effect), the command included, in deterministic protobuf.
func MarshalInput(in Input) ([]byte, error) {
	if _, err := in.validate(); err != nil {
		return nil, err
	}
	m := &runnerv1.Input{Kind: runnerv1.InputKind(in.Kind), At: timestamp(in.At.UnixNano()),
		EntryId: in.EntryID, PlayerId: in.PlayerID, Command: in.Command}
	if in.Entropy != (Entropy{}) {
		e := in.Entropy // a copy: slicing in itself would move all of in to the heap on every call
		m.Entropy = e[:]
	}
	b, err := appendFramed(nil, inputVersion, m)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	return b, nil
}

// UnmarshalInput reads what MarshalInput wrote, of any version still read,
// and validates it.
func UnmarshalInput(data []byte) (Input, error) {
	if len(data) > maxInputSize {
		return Input{}, fmt.Errorf("%w: %d bytes", ErrBadInput, len(data))
	}
	var (
		in  Input
		err error
	)
	switch {
	case len(data) == 0:
		return Input{}, fmt.Errorf("%w: empty", ErrBadInput)
	case data[0] == inputVersion:
		in, err = readInputProto(data[1:])
	case data[0] == inputVersionV2 || data[0] == inputVersionV1:
		in, err = readInputLegacy(data)
	default:
		return Input{}, fmt.Errorf("%w: unknown version %d", ErrBadInput, data[0])
	}
	if err != nil {
		return Input{}, err
	}
	if _, err := in.validate(); err != nil {
		return Input{}, err
	}
	return in, nil
}

// readInputProto reads a version 3 input after its version byte.
func readInputProto(data []byte) (Input, error) {
	var m runnerv1.Input
	if err := readFramed(data, &m); err != nil {
		return Input{}, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	k := m.GetKind()
	if k <= 0 || k > math.MaxUint8 {
		return Input{}, fmt.Errorf("%w: kind %d", ErrBadInput, k)
	}
	at, err := unixNano(m.GetAt())
	if err != nil {
		return Input{}, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	in := Input{Kind: InputKind(k), At: time.Unix(0, at), EntryID: m.GetEntryId(), PlayerID: m.GetPlayerId(), Command: m.GetCommand()}
	if in.Kind != InputCommand && in.Command != nil {
		return Input{}, fmt.Errorf("%w: %v with a command", ErrBadInput, in.Kind)
	}
	switch len(m.GetEntropy()) {
	case 0:
	case len(in.Entropy):
		copy(in.Entropy[:], m.GetEntropy())
		if in.Entropy == (Entropy{}) {
			return Input{}, fmt.Errorf("%w: zero entropy marked as set", ErrBadInput)
		}
	default:
		return Input{}, fmt.Errorf("%w: %d bytes of entropy", ErrBadInput, len(m.GetEntropy()))
	}
	return in, nil
}
