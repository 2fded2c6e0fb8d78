package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/scoring"
)

// Format is the value of a record's "format" field.
const Format = "pulka-game-record/1"

// MaxRecordSize bounds what Parse reads: a 24-hand classic game is about 150
// moves (a few KB), so a megabyte is generous and stops a runaway input.
const MaxRecordSize = 1 << 20

// Game names which game a record holds.
type Game string

// The games.
const (
	Classic  Game = "classic"
	Japanese Game = "japanese"
)

// Errors returned by Parse, wrapped with details.
var (
	ErrFormat   = errors.New("record: not a pulka game record")
	ErrSettings = errors.New("record: bad settings")
	ErrTooLarge = errors.New("record: too large")
)

// Seed is a game seed. It is written as a decimal string in JSON, because a
// uint64 does not survive a JavaScript number; a bare JSON number is accepted
// on input too, for hand-written records.
type Seed uint64

// MarshalJSON writes the seed as a decimal string.
func (s Seed) MarshalJSON() ([]byte, error) {
	return []byte(`"` + strconv.FormatUint(uint64(s), 10) + `"`), nil
}

// UnmarshalJSON reads a decimal string or a number.
func (s *Seed) UnmarshalJSON(b []byte) error {
	b = bytes.Trim(b, `"`)
	v, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil {
		return fmt.Errorf("%w: seed %s is not a whole number 0..2^64-1", ErrFormat, b)
	}
	*s = Seed(v)
	return nil
}

// Record is one whole (or partial) game.
type Record struct {
	Format string `json:"format"`
	Game   Game   `json:"game"`
	Seed   Seed   `json:"seed"`
	// Classic holds the classic game's settings: the variant and the scoring
	// settings (khishti, premia, moshla, restDocked). Nil for Japanese.
	Classic *scoring.Settings `json:"classic,omitempty"`
	// Japanese holds the Japanese match's settings. Nil for classic.
	Japanese *japanese.Settings `json:"japanese,omitempty"`
	// Players optionally names the seats, in seat order.
	Players []string `json:"players,omitempty"`
	// Moves in play order, each in its engine's text form ("2 bid 1",
	// "0 play JK1 take", "1 trump NT", ...).
	Moves []string `json:"moves"`
}

// Parse reads one record strictly: unknown fields, trailing data, a missing or
// foreign format, settings for the wrong game and unknown games are errors.
// Moves are only checked for legality by Replay.
func Parse(r io.Reader) (*Record, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxRecordSize+1))
	if err != nil {
		return nil, fmt.Errorf("record: read: %w", err)
	}
	if len(data) > MaxRecordSize {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, MaxRecordSize)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var rec Record
	if err := dec.Decode(&rec); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFormat, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the record", ErrFormat)
	}
	if err := rec.Validate(); err != nil {
		return nil, err
	}
	return &rec, nil
}

// Validate checks everything but the moves' legality.
func (r *Record) Validate() error {
	if r.Format != Format {
		return fmt.Errorf("%w: format %q, want %q", ErrFormat, r.Format, Format)
	}
	switch r.Game {
	case Classic:
		if r.Japanese != nil {
			return fmt.Errorf("%w: a classic record has no japanese settings", ErrSettings)
		}
		if r.Classic == nil {
			return fmt.Errorf("%w: a classic record needs classic settings", ErrSettings)
		}
		if err := r.Classic.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrSettings, err)
		}
	case Japanese:
		if r.Classic != nil {
			return fmt.Errorf("%w: a japanese record has no classic settings", ErrSettings)
		}
		if r.Japanese == nil {
			r.Japanese = &japanese.Settings{}
		}
		if err := r.Japanese.Validate(); err != nil {
			return fmt.Errorf("%w: %w", ErrSettings, err)
		}
	default:
		return fmt.Errorf("%w: game %q (want classic or japanese)", ErrFormat, r.Game)
	}
	if n := len(r.Players); n != 0 && n != r.seats() {
		return fmt.Errorf("%w: %d player names for %d seats", ErrFormat, n, r.seats())
	}
	return nil
}

func (r *Record) seats() int {
	if r.Game == Japanese {
		return japanese.Seats
	}
	return classic.Seats
}

// Write encodes the record as indented JSON.
func (r *Record) Write(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("record: write: %w", err)
	}
	return nil
}
