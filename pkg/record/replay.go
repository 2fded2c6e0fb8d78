package record

import (
	"errors"
	"fmt"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/scoring"
)

// ErrIllegalMove is wrapped by every MoveError.
var ErrIllegalMove = errors.New("illegal move")

// MoveError says which move of a record failed and why. Hand, Trick and Seat
// are 0-based; Err is the engine's rule (errors.Is works through it) or a
// parse error for a move that is not even text of a move.
type MoveError struct {
	Index             int // 0-based index into Record.Moves
	Move              string
	Hand, Trick, Seat int
	Err               error
}

func (e *MoveError) Error() string {
	return fmt.Sprintf("move %d %q (hand %d, trick %d, seat %d): %v",
		e.Index+1, e.Move, e.Hand+1, e.Trick+1, e.Seat, e.Err)
}

// Unwrap gives both ErrIllegalMove and the engine's own reason.
func (e *MoveError) Unwrap() []error { return []error{ErrIllegalMove, e.Err} }

// Result is a replayed game.
type Result struct {
	Game Game
	// Over is true when the record reaches the end of the game.
	Over bool
	// Moves is how many moves were applied.
	Moves int
	// Classic is the final position and Sheet its score sheet (classic only).
	Classic *classic.Game
	Sheet   *scoring.Sheet
	// Japanese is the final position of a Japanese match, Scores its match
	// score and Winner the winning seat (-1 while the match goes on).
	Japanese *japanese.Game
	Scores   [japanese.Seats]int
	Winner   int
}

// Replay applies every move of the record with the rules engine and returns
// the final position. An illegal move stops it with a *MoveError naming the
// hand, trick, seat and rule.
func Replay(r *Record) (*Result, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if r.Game == Japanese {
		return replayJapanese(r)
	}
	return replayClassic(r)
}

func replayClassic(r *Record) (*Result, error) {
	g, err := classic.New(uint64(r.Seed), classic.Settings{Variant: r.Classic.Variant})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSettings, err)
	}
	events := make([]classic.Event, 0, 16)
	for i, text := range r.Moves {
		var m classic.Move
		if err := m.UnmarshalText([]byte(text)); err != nil {
			return nil, &MoveError{Index: i, Move: text, Hand: g.HandIndex(), Seat: -1, Err: err}
		}
		if _, err := g.Apply(m, events[:0]); err != nil {
			me := &MoveError{Index: i, Move: text, Hand: g.HandIndex(), Seat: int(m.Seat), Err: err}
			var ce *classic.MoveError
			if errors.As(err, &ce) {
				me.Hand, me.Trick, me.Seat, me.Err = ce.Hand, ce.Trick, ce.Seat, ce.Err
			}
			return nil, me
		}
	}
	sheet, err := scoring.Build(*r.Classic, sheetHands(g.HandResults()))
	if err != nil {
		return nil, fmt.Errorf("record: score the replayed game: %w", err)
	}
	return &Result{Game: Classic, Over: g.Over(), Moves: len(r.Moves), Classic: g, Sheet: &sheet, Winner: -1}, nil
}

// sheetHands converts the engine's hand results to the sheet's input.
func sheetHands(hs []classic.HandResult) []scoring.HandResult {
	out := make([]scoring.HandResult, len(hs))
	for i, h := range hs {
		out[i] = scoring.HandResult{Bids: h.Bids, Tricks: h.Tricks}
	}
	return out
}

func replayJapanese(r *Record) (*Result, error) {
	g, err := japanese.New(uint64(r.Seed), *r.Japanese)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSettings, err)
	}
	events := make([]japanese.Event, 0, 16)
	for i, text := range r.Moves {
		var m japanese.Move
		if err := m.UnmarshalText([]byte(text)); err != nil {
			return nil, &MoveError{Index: i, Move: text, Hand: g.Hand(), Trick: g.Trick(), Seat: -1, Err: err}
		}
		if _, err := g.Apply(m, events[:0]); err != nil {
			me := &MoveError{Index: i, Move: text, Hand: g.Hand(), Trick: g.Trick(), Seat: m.Seat, Err: err}
			var je *japanese.MoveError
			if errors.As(err, &je) {
				me.Hand, me.Trick, me.Seat, me.Err = je.Hand, je.Trick, je.Seat, je.Err
			}
			return nil, me
		}
	}
	return &Result{Game: Japanese, Over: g.Over(), Moves: len(r.Moves), Japanese: g, Scores: g.Scores(), Winner: g.Winner()}, nil
}
