// Package golden holds recorded games: the events the table-runner's state
// machine (services/table-runner/internal/table) emitted for them, the
// scoring inputs it derived, and the sheets the scoring service's builder
// (services/scoring/internal/sheets) made of those. They are for the tests
// of code outside those two services that reads what they write — the
// WebSocket frames (pkg/wire), the Go client's model (tools/wsclient), game
// records (tools/record) — which may not import a service's internal
// packages to play a game themselves.
//
// The owners write the files and check them: each owner's TestGolden plays
// the games again and fails when what it gets differs from the files, so a
// change of the table's events or of the sheets cannot leave the fixtures
// stale silently. A deliberate change rewrites them (the table's first,
// since scoring reads the table's scoring inputs):
//
//	go test ./services/table-runner/internal/table -run TestGolden -update
//	go test ./services/scoring/internal/sheets -run TestGolden -update
//
// Each file, testdata/<set>/<game>.<kind>.binpb.gz, is a gzipped sequence of
// length-delimited protobuf messages of one contract type (the encoding of
// google.golang.org/protobuf/encoding/protodelim): pulka.table.v1.Event,
// pulka.scoring.v1.ScoringInput or pulka.scoring.v1.SheetUpdate, in the
// order the owner emitted them.
package golden

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/protobuf/encoding/protodelim"
	"google.golang.org/protobuf/proto"

	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

//go:embed testdata
var files embed.FS

// Kind is what a file holds.
type Kind string

// The kinds of file.
const (
	// KindEvents: every event the table emitted, in order
	// (pulka.table.v1.Event).
	KindEvents Kind = "events"
	// KindPublicEvents: only the public events, what a watcher receives
	// (pulka.table.v1.Event).
	KindPublicEvents Kind = "public"
	// KindScoring: the scoring inputs the table derived from its events
	// (pulka.scoring.v1.ScoringInput).
	KindScoring Kind = "scoring"
	// KindSheets: every sheet update the scoring service publishes for the
	// game (pulka.scoring.v1.SheetUpdate).
	KindSheets Kind = "sheets"
)

// The sets of games; each owner's golden test documents how it plays them.
const (
	// SetWire: random games (seeded settings and seats, plausible and
	// refused moves, timeouts, players away and back, leaves, resyncs),
	// for the frames' round trips. Events.
	SetWire = "wire"
	// SetWireNamed: the same games with display names in many scripts and
	// with characters JSON escapes, scoring rules varied; scoring inputs and
	// sheets.
	SetWireNamed = "wire-named"
	// SetPremia: classic sheets where some seats always make their bid, so
	// that premia, moshla and struck hands come up; sheets only.
	SetPremia = "premia"
	// SetRecord: whole games of bots and of players whose move timer plays
	// for them, client seeds sent and missing, Japanese resignations;
	// public events.
	SetRecord = "record"
	// SetModel: whole games whose every seat is a player choosing among the
	// engine's legal moves, no client seed sent; events.
	SetModel = "model"
)

// DisplayNames are the display names the named games give their players,
// as people choose them: mostly not ASCII, some with characters JSON
// escapes or that look like markup.
func DisplayNames() []string {
	return []string{
		"ნინო", "გიორგი ბერიძე", "Нина Петрова", "Şükrü Öztürk", "İlkay Ağaoğlu", "José 🃏",
		"👨‍👩‍👧 family", "日本語", "Player 1", `O'Brien "Ace"`, `back\slash`, "tab\tand\nnewline",
		"<b>&amp;</b>", "line\u2028sep", "del\x7f", "bell\x07", "\ufffdreplacement", "  ",
	}
}

// GameName is the name of the numbered game n of a set ("game-0007"): the
// seed its owner played it from.
func GameName(n uint64) string { return fmt.Sprintf("game-%04d", n) }

// Dir is the directory of the files, relative to this package's directory.
const Dir = "testdata"

// File is the path of a game's file of one kind, relative to Dir.
func File(set, game string, kind Kind) string {
	return path.Join(set, game+"."+string(kind)+".binpb.gz")
}

// ErrNoGame says a set has no such game (or no file of that kind for it).
var ErrNoGame = errors.New("golden: no such game")

// Games lists the games of a set that have a file of kind, sorted by name.
func Games(set string, kind Kind) []string {
	entries, err := fs.ReadDir(files, path.Join(Dir, set))
	if err != nil {
		return nil
	}
	suffix := "." + string(kind) + ".binpb.gz"
	var out []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), suffix); ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Events reads a game's events of kind KindEvents or KindPublicEvents.
func Events(set, game string, kind Kind) ([]*tablev1.Event, error) {
	return read(set, game, kind, func() *tablev1.Event { return &tablev1.Event{} })
}

// ScoringInputs reads a game's scoring inputs.
func ScoringInputs(set, game string) ([]*scoringv1.ScoringInput, error) {
	return read(set, game, KindScoring, func() *scoringv1.ScoringInput { return &scoringv1.ScoringInput{} })
}

// Sheets reads a game's sheet updates.
func Sheets(set, game string) ([]*scoringv1.SheetUpdate, error) {
	return read(set, game, KindSheets, func() *scoringv1.SheetUpdate { return &scoringv1.SheetUpdate{} })
}

func read[M proto.Message](set, game string, kind Kind, newM func() M) ([]M, error) {
	data, err := files.ReadFile(path.Join(Dir, File(set, game, kind)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNoGame, File(set, game, kind))
	}
	if err != nil {
		return nil, err
	}
	return Decode(data, newM)
}

// Encode is the file of msgs: deterministic protobuf, length-delimited,
// gzipped.
func Encode[M proto.Message](msgs []M) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	o := protodelim.MarshalOptions{MarshalOptions: proto.MarshalOptions{Deterministic: true}}
	for i, m := range msgs {
		if _, err := o.MarshalTo(zw, m); err != nil {
			return nil, fmt.Errorf("golden: message %d: %w", i, err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Decode reads what Encode wrote.
func Decode[M proto.Message](data []byte, newM func() M) ([]M, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("golden: %w", err)
	}
	r := bufio.NewReader(zr)
	var out []M
	for {
		m := newM()
		err := protodelim.UnmarshalFrom(r, m)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("golden: message %d: %w", len(out), err)
		}
		out = append(out, m)
	}
}

// Diff compares what an owner's test made of a game with its file's
// messages: "" when they are the same messages, otherwise the first
// difference.
func Diff[M proto.Message](got, file []M) string {
	for i := range min(len(got), len(file)) {
		if !proto.Equal(got[i], file[i]) {
			return fmt.Sprintf("message %d: made %v, the file has %v", i, got[i], file[i])
		}
	}
	if len(got) != len(file) {
		return fmt.Sprintf("made %d messages, the file has %d", len(got), len(file))
	}
	return ""
}

// Check compares msgs, what an owner's golden test made of a game, with the
// game's file and returns the first difference ("" when none). With update
// it writes the file instead (when it changed), below root: this package's
// directory as the test finds it ("../../../../pkg/golden" from a
// service's internal package). A file written is read only by the next
// build of the test: the files are embedded.
func Check[M proto.Message](root string, update bool, set, game string, kind Kind, msgs []M, newM func() M) (string, error) {
	file, err := read(set, game, kind, newM)
	if err != nil && !errors.Is(err, ErrNoGame) {
		return "", err
	}
	diff := Diff(msgs, file)
	if errors.Is(err, ErrNoGame) {
		diff = "no file " + File(set, game, kind)
	}
	if !update || diff == "" {
		return diff, nil
	}
	data, err := Encode(msgs)
	if err != nil {
		return "", err
	}
	name := filepath.Join(root, Dir, filepath.FromSlash(File(set, game, kind)))
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return "", err
	}
	return "", os.WriteFile(name, data, 0o644)
}
