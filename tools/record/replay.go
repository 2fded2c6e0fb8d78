package record

import (
	"errors"
	"fmt"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/fairdeal"
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

// HandReport is one hand a replay dealt.
type HandReport struct {
	Index int // 0-based
	// Local: dealt from the record's seed (no commitment to check);
	// otherwise the server seed matched the commitment.
	Local bool
	Key   fairdeal.Key
	// Moves is how many of the record's moves were played in the hand.
	Moves int
}

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
	// Hands is every hand dealt, in order.
	Hands []HandReport
}

// keyOf is the key of hand h of r: its local key, or for a table's game the
// key of its revealed seeds once the server seed is checked against the
// commitment.
func keyOf(r *Record, h int) (HandReport, error) {
	rep := HandReport{Index: h}
	if !r.Table() {
		rep.Local, rep.Key = true, fairdeal.LocalKey(uint64(r.Seed), uint32(h))
		return rep, nil
	}
	if h >= len(r.Hands) {
		return rep, fmt.Errorf("%w: hand %d is played and its seeds are not in the record", ErrDeal, h+1)
	}
	c, s, cs, err := r.Hands[h].parse(r.seats())
	if err != nil {
		return rep, fmt.Errorf("%w: hand %d: %w", ErrDeal, h+1, err)
	}
	hand := fairdeal.Hand{TableID: r.TableID, GameID: r.GameID, Index: uint32(h)}
	if !fairdeal.Verify(hand, s, c) {
		return rep, fmt.Errorf("%w: hand %d: the server seed is not the one committed to", ErrDeal, h+1)
	}
	if rep.Key, err = fairdeal.ShuffleKey(hand, s, cs); err != nil {
		return rep, fmt.Errorf("%w: hand %d: %w", ErrDeal, h+1, err)
	}
	return rep, nil
}

// dealer deals a live engine's hands from a record's keys.
type dealer struct {
	r     *Record
	hands []HandReport
}

// deal deals hand h when the engine waits for it (deal is the engine's Deal).
func (d *dealer) deal(waiting bool, h int, deal func(fairdeal.Key) error) error {
	if !waiting {
		return nil
	}
	rep, err := keyOf(d.r, h)
	if err != nil {
		return err
	}
	if err := deal(rep.Key); err != nil {
		return fmt.Errorf("%w: hand %d: %w", ErrDeal, h+1, err)
	}
	d.hands = append(d.hands, rep)
	return nil
}

// moved counts a move of hand h.
func (d *dealer) moved(h int) {
	if n := len(d.hands); n > 0 && d.hands[n-1].Index == h {
		d.hands[n-1].Moves++
	}
}

// done checks that the record holds no seeds of a hand never dealt.
func (d *dealer) done() error {
	if d.r.Table() && len(d.r.Hands) > len(d.hands) {
		return fmt.Errorf("%w: the record has seeds of %d hands, the moves deal %d", ErrDeal, len(d.r.Hands), len(d.hands))
	}
	return nil
}

// Replay applies every move of the record with the rules engine and returns
// the final position. An illegal move stops it with a *MoveError naming the
// hand, trick, seat and rule.
func Replay(r *Record) (*Result, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if r.Game == Japanese {
		return replayJapanese(r, &dealer{r: r})
	}
	return replayClassic(r, &dealer{r: r})
}

// Verify replays r as Replay does and returns every hand it dealt, the
// hands before a failure too: with a table's record each one's server seed
// checked against its commitment, its key recomputed from the seeds, and the
// hand re-dealt from it and its moves replayed. The error is a *MoveError
// (a move does not fit the deal: a seed or a move was changed) or wraps
// ErrDeal (a seed is not the committed one, or is missing) or
// ErrFormat/ErrSettings.
func Verify(r *Record) ([]HandReport, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	d := &dealer{r: r}
	var err error
	if r.Game == Japanese {
		_, err = replayJapanese(r, d)
	} else {
		_, err = replayClassic(r, d)
	}
	return d.hands, err
}

func replayClassic(r *Record, d *dealer) (*Result, error) {
	// Every record is replayed on a live engine dealt hand by hand, so a
	// local record's keys are checked the same way as a table's.
	g, err := classic.NewLive(classic.Settings{Variant: r.Classic.Variant})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSettings, err)
	}
	events := make([]classic.Event, 0, 16)
	deal := func() error {
		return d.deal(g.AwaitingDeal(), g.HandIndex(), func(k fairdeal.Key) error { _, err := g.Deal(k, events[:0]); return err })
	}
	for i, text := range r.Moves {
		if err := deal(); err != nil {
			return nil, err
		}
		h := g.HandIndex()
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
		d.moved(h)
	}
	// A record may end between hands; the next one is dealt when its seeds
	// are there (a table reveals a hand only once it is over).
	if !r.Table() || g.HandIndex() < len(r.Hands) {
		if err := deal(); err != nil {
			return nil, err
		}
	}
	if err := d.done(); err != nil {
		return nil, err
	}
	sheet, err := scoring.Build(*r.Classic, sheetHands(g.HandResults()))
	if err != nil {
		return nil, fmt.Errorf("record: score the replayed game: %w", err)
	}
	return &Result{Game: Classic, Over: g.Over(), Moves: len(r.Moves), Classic: g, Sheet: &sheet, Winner: -1, Hands: d.hands}, nil
}

// sheetHands converts the engine's hand results to the sheet's input.
func sheetHands(hs []classic.HandResult) []scoring.HandResult {
	out := make([]scoring.HandResult, len(hs))
	for i, h := range hs {
		out[i] = scoring.HandResult{Bids: h.Bids, Tricks: h.Tricks}
	}
	return out
}

func replayJapanese(r *Record, d *dealer) (*Result, error) {
	g, err := japanese.NewLive(*r.Japanese)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSettings, err)
	}
	events := make([]japanese.Event, 0, 16)
	deal := func() error {
		return d.deal(g.AwaitingDeal(), g.Hand(), func(k fairdeal.Key) error { _, err := g.Deal(k, events[:0]); return err })
	}
	for i, text := range r.Moves {
		if err := deal(); err != nil {
			return nil, err
		}
		h := g.Hand()
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
		d.moved(h)
	}
	if !g.Over() && (!r.Table() || g.Hand() < len(r.Hands)) {
		if err := deal(); err != nil {
			return nil, err
		}
	}
	if err := d.done(); err != nil {
		return nil, err
	}
	return &Result{Game: Japanese, Over: g.Over(), Moves: len(r.Moves), Japanese: g, Scores: g.Scores(), Winner: g.Winner(), Hands: d.hands}, nil
}
