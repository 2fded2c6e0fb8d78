package scoring

import (
	"fmt"

	"github.com/pulka/pulka/pkg/classic"
)

// Seats is the number of players on a classic sheet.
const Seats = classic.Seats

// HandRow is one row of the sheet.
type HandRow struct {
	Cards int `json:"cards"`
	// Pulka is the 0-based pulka the hand belongs to.
	Pulka  int           `json:"pulka"`
	Bids   [Seats]int    `json:"bids"`
	Tricks [Seats]int    `json:"tricks"`
	Points [Seats]int    `json:"points"`
	Result [Seats]Result `json:"result"`
	// Struck marks the hands cancelled by a moshla. The hand keeps its
	// points; the moshla is written separately on the pulka's Σ line.
	Struck [Seats]bool `json:"struck"`
}

// PulkaTotals is the Σ line of one pulka.
type PulkaTotals struct {
	// Index is the pulka's 0-based number (0 is pulka I).
	Index int `json:"index"`
	// First is the index in Sheet.Hands of the pulka's first hand, Played how
	// many of its hands are on the sheet, and Size how many it has in all.
	First  int `json:"first"`
	Played int `json:"played"`
	Size   int `json:"size"`
	// Finished: every hand of the pulka is on the sheet. Premia and moshla
	// are only ever written in a finished pulka.
	Finished bool `json:"finished"`
	// Sum is the sum of the hands' points.
	Sum [Seats]int `json:"sum"`
	// Premia is zero or positive, Moshla zero or negative.
	Premia [Seats]int `json:"premia"`
	Moshla [Seats]int `json:"moshla"`
	// Struck is the index in Sheet.Hands of the hand each seat's moshla
	// cancels, or -1 when the seat has no moshla.
	Struck [Seats]int `json:"struck"`
	// Total is Sum + Premia + Moshla.
	Total [Seats]int `json:"total"`
	// OnCourse: with the premia on, the seat has made every hand of the pulka
	// so far, so it earns (or, in a finished pulka, earned) the premia.
	OnCourse [Seats]bool `json:"onCourse"`
}

// Sheet is the whole score sheet of a game, possibly still in progress.
type Sheet struct {
	Settings Settings      `json:"settings"`
	Hands    []HandRow     `json:"hands"`
	Pulkas   []PulkaTotals `json:"pulkas"` // the pulkas with at least one hand played
	// Total is the grand total ("sul") of every pulka, the unfinished one
	// included.
	Total [Seats]int `json:"total"`
	// OnCourse is each seat's colour on the "sul" line: on course for the
	// premia of the current pulka. A pulka not yet started has everybody on
	// course; when the game is over nobody is.
	OnCourse [Seats]bool `json:"onCourse"`
	// Next is the 0-based index of the hand to be played next: the "current
	// hand" of the sheet's foot. It equals the variant's hand count once the
	// game is over.
	Next int `json:"next"`
	// Finished: every hand of the game is on the sheet.
	Finished bool `json:"finished"`
}

// Build writes the sheet for the hands played so far, in play order. It
// validates every hand (bids and tricks in 0..cards, tricks adding up to the
// cards) and returns an *InputError naming the first bad hand. It does not
// check the dealer restriction: the sheet does not know who dealt.
func Build(s Settings, hands []HandResult) (Sheet, error) {
	if err := s.Validate(); err != nil {
		return Sheet{}, err
	}
	v := s.Variant
	if len(hands) > v.Hands() {
		return Sheet{}, &InputError{Hand: v.Hands(), Err: fmt.Errorf(
			"%w: %d hands given, %s has %d", ErrTooManyHands, len(hands), v, v.Hands())}
	}
	sheet := Sheet{
		Settings: s,
		Hands:    make([]HandRow, len(hands)),
		Next:     len(hands),
		Finished: len(hands) == v.Hands(),
	}
	for h := range hands {
		if err := scoreHand(&sheet.Hands[h], s, h, &hands[h]); err != nil {
			return Sheet{}, &InputError{Hand: h, Err: err}
		}
	}

	if len(hands) > 0 {
		sheet.Pulkas = make([]PulkaTotals, v.PulkaOf(len(hands)-1)+1)
	} else {
		sheet.Pulkas = []PulkaTotals{}
	}
	for p := range sheet.Pulkas {
		pt := &sheet.Pulkas[p]
		totalPulka(pt, s, p, sheet.Hands)
		for seat := range Seats {
			sheet.Total[seat] += pt.Total[seat]
		}
	}

	switch {
	case sheet.Finished || !s.Premia:
		// Nobody is on course: the game is over, or there is no premia.
	case len(sheet.Pulkas) > 0 && !sheet.Pulkas[len(sheet.Pulkas)-1].Finished:
		sheet.OnCourse = sheet.Pulkas[len(sheet.Pulkas)-1].OnCourse
	default:
		sheet.OnCourse = [Seats]bool{true, true, true, true}
	}
	return sheet, nil
}

// scoreHand validates hand h and fills its row.
func scoreHand(row *HandRow, s Settings, h int, in *HandResult) error {
	n := s.Variant.CardsInHand(h)
	row.Cards = n
	row.Pulka = s.Variant.PulkaOf(h)
	row.Bids = in.Bids
	row.Tricks = in.Tricks
	sum := 0
	for seat := range Seats {
		b, t := in.Bids[seat], in.Tricks[seat]
		if b < 0 || b > n {
			return fmt.Errorf("seat %d bid %d in a %d-card hand, want 0..%d: %w", seat+1, b, n, n, ErrBid)
		}
		if t < 0 || t > n {
			return fmt.Errorf("seat %d took %d tricks in a %d-card hand, want 0..%d: %w", seat+1, t, n, n, ErrTricks)
		}
		sum += t
		row.Points[seat], row.Result[seat] = HandScore(n, b, t, s.Khishti)
	}
	if sum != n {
		return fmt.Errorf("tricks %v add up to %d, want %d: %w", in.Tricks, sum, n, ErrTrickSum)
	}
	return nil
}

// totalPulka writes pulka p's Σ line, and strikes the hands its moshla
// cancels.
func totalPulka(pt *PulkaTotals, s Settings, p int, rows []HandRow) {
	first, end := s.Variant.PulkaHands(p)
	played := min(end, len(rows))
	*pt = PulkaTotals{
		Index:    p,
		First:    first,
		Played:   played - first,
		Size:     end - first,
		Finished: played == end,
		Struck:   [Seats]int{-1, -1, -1, -1},
	}

	// best and bestAt are each seat's best ordinary hand (never a khishti:
	// its penalty is not a score) and the earliest hand that scored it.
	var best [Seats]int
	bestAt := [Seats]int{-1, -1, -1, -1}
	for seat := range Seats {
		pt.OnCourse[seat] = s.Premia
	}
	for h := first; h < played; h++ {
		row := &rows[h]
		for seat := range Seats {
			pt.Sum[seat] += row.Points[seat]
			if row.Result[seat] != ResultMade {
				pt.OnCourse[seat] = false
			}
			if row.Result[seat] != ResultKhishti && row.Points[seat] > best[seat] {
				best[seat], bestAt[seat] = row.Points[seat], h
			}
		}
	}

	if pt.Finished {
		earned := 0
		for seat := range Seats {
			if pt.OnCourse[seat] {
				pt.Premia[seat] = best[seat]
				earned++
			}
		}
		if moshlaWritten(s, earned) {
			for seat := range Seats {
				// A seat whose every hand was a khishti has no ordinary hand:
				// there is nothing to strike, so there is no moshla.
				if !pt.OnCourse[seat] && bestAt[seat] >= 0 {
					pt.Moshla[seat] = -best[seat]
					pt.Struck[seat] = bestAt[seat]
					rows[bestAt[seat]].Struck[seat] = true
				}
			}
		}
	}
	for seat := range Seats {
		pt.Total[seat] = pt.Sum[seat] + pt.Premia[seat] + pt.Moshla[seat]
	}
}

// moshlaWritten decides whether the players without the premia are docked,
// given how many earned it.
func moshlaWritten(s Settings, earned int) bool {
	switch {
	case !s.Moshla || earned == 0 || earned == Seats:
		return false
	case earned == 1:
		return true
	default:
		return s.RestDocked
	}
}
