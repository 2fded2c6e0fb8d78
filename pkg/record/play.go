package record

import (
	"fmt"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/scoring"
)

// ClassicPlayer chooses the move of a seat whose turn it is.
type ClassicPlayer interface {
	Choose(g *classic.Game, seat int) (classic.Move, bool)
}

// JapanesePlayer chooses the move of a seat whose turn it is.
type JapanesePlayer interface {
	Choose(g *japanese.Game, seat int) (japanese.Move, bool)
}

// PlayClassic plays a whole classic game with the given players and returns
// its record.
func PlayClassic(seed uint64, s scoring.Settings, players [classic.Seats]ClassicPlayer) (*Record, error) {
	g, err := classic.New(seed, classic.Settings{Variant: s.Variant})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSettings, err)
	}
	rec := &Record{Format: Format, Game: Classic, Seed: Seed(seed), Classic: &s}
	events := make([]classic.Event, 0, 16)
	for !g.Over() {
		seat := g.ToMove()
		m, ok := players[seat].Choose(g, seat)
		if !ok {
			return nil, fmt.Errorf("record: classic player %d made no move", seat)
		}
		if _, err := g.Apply(m, events[:0]); err != nil {
			return nil, fmt.Errorf("record: classic player %d: %w", seat, err)
		}
		text, err := m.MarshalText()
		if err != nil {
			return nil, fmt.Errorf("record: %w", err)
		}
		rec.Moves = append(rec.Moves, string(text))
	}
	return rec, nil
}

// PlayJapanese plays a whole Japanese match with the given players and
// returns its record.
func PlayJapanese(seed uint64, s japanese.Settings, players [japanese.Seats]JapanesePlayer) (*Record, error) {
	g, err := japanese.New(seed, s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSettings, err)
	}
	rec := &Record{Format: Format, Game: Japanese, Seed: Seed(seed), Japanese: &s}
	events := make([]japanese.Event, 0, 16)
	for !g.Over() {
		seat := g.ToMove()
		m, ok := players[seat].Choose(g, seat)
		if !ok {
			return nil, fmt.Errorf("record: japanese player %d made no move", seat)
		}
		if _, err := g.Apply(m, events[:0]); err != nil {
			return nil, fmt.Errorf("record: japanese player %d: %w", seat, err)
		}
		text, err := m.MarshalText()
		if err != nil {
			return nil, fmt.Errorf("record: %w", err)
		}
		rec.Moves = append(rec.Moves, string(text))
	}
	return rec, nil
}
