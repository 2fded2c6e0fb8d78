package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/fairdeal"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/scoring"
)

// Format is the value of a record's "format" field. Version 2 deals each
// hand from its own key: a local game's from its seed, a table's from the
// hand's commit–reveal seeds (Hands). Version 1 records, whose deals came
// from one seed through a shuffle no longer used, are refused.
const Format = "pulka-game-record/2"

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
	// ErrDeal: a hand's seeds do not hold (a server seed that is not the
	// committed one, a seed that is not 64 hex digits, a hand missing).
	ErrDeal     = errors.New("record: bad deal")
	ErrTooLarge = errors.New("record: too large")
)

// Seed is a local game's seed. It is written as a decimal string in JSON, because a
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
//
// Its deals come from one of two places. A local game (self play, the demo)
// has a Seed and deals hand h from fairdeal.LocalKey(seed, h). A table's game
// has TableID, GameID and Hands, the commit–reveal of every hand dealt
// (docs/fair-play.md), and no seed.
type Record struct {
	Format string `json:"format"`
	Game   Game   `json:"game"`
	Seed   Seed   `json:"seed,omitempty"`
	// TableID and GameID name a table's game: with the hand's index they
	// are each hand's identity in its commitment and key.
	TableID string `json:"tableId,omitempty"`
	GameID  string `json:"gameId,omitempty"`
	// Hands holds a table's game's hands, in order from hand 0: every hand
	// dealt (the last one may be unfinished).
	Hands []HandSeeds `json:"hands,omitempty"`
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

// HandSeeds is one hand's commit–reveal, as its HandCommitted and
// HandRevealed events gave it: 64 lower-case hex digits each.
type HandSeeds struct {
	Commitment string `json:"commitment"`
	ServerSeed string `json:"serverSeed"`
	// ClientSeeds holds one seed per seat in seat order (64 zeros for a
	// seat that sent none).
	ClientSeeds []string `json:"clientSeeds"`
}

// Table reports whether the record is a table's game (its hands dealt by
// commit–reveal), not a local one.
func (r *Record) Table() bool { return r.TableID != "" || r.GameID != "" || len(r.Hands) > 0 }

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
	if !r.Table() {
		return nil
	}
	if r.Seed != 0 || r.TableID == "" || r.GameID == "" || len(r.TableID) > fairdeal.MaxIDLen || len(r.GameID) > fairdeal.MaxIDLen {
		return fmt.Errorf("%w: a table's game has a table id, a game id, and no seed", ErrFormat)
	}
	for i, h := range r.Hands {
		if _, _, _, err := h.parse(r.seats()); err != nil {
			return fmt.Errorf("%w: hand %d: %w", ErrDeal, i, err)
		}
	}
	return nil
}

// parse reads the hand's seeds for a game of seats seats.
func (h HandSeeds) parse(seats int) (fairdeal.Commitment, fairdeal.ServerSeed, []fairdeal.ClientSeed, error) {
	c, err := fairdeal.ParseSeed(h.Commitment)
	if err != nil {
		return fairdeal.Commitment{}, fairdeal.ServerSeed{}, nil, fmt.Errorf("commitment: %w", err)
	}
	s, err := fairdeal.ParseSeed(h.ServerSeed)
	if err != nil {
		return fairdeal.Commitment{}, fairdeal.ServerSeed{}, nil, fmt.Errorf("server seed: %w", err)
	}
	if len(h.ClientSeeds) != seats {
		return fairdeal.Commitment{}, fairdeal.ServerSeed{}, nil, fmt.Errorf("%d client seeds for %d seats", len(h.ClientSeeds), seats)
	}
	cs := make([]fairdeal.ClientSeed, seats)
	for i, x := range h.ClientSeeds {
		b, err := fairdeal.ParseSeed(x)
		if err != nil {
			return fairdeal.Commitment{}, fairdeal.ServerSeed{}, nil, fmt.Errorf("client seed %d: %w", i, err)
		}
		cs[i] = fairdeal.ClientSeed(b)
	}
	return fairdeal.Commitment(c), fairdeal.ServerSeed(s), cs, nil
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
