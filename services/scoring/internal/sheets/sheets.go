// Package sheets turns a game's stored scoring inputs into the score sheet
// and final standings the scoring service publishes. It is pure: the same
// inputs always give the same sheet, version and standings, which is what
// lets the service rebuild a sheet after any redelivery instead of patching
// it, so premia and moshla can never be written twice.
//
// Classic sheets come from scoring.Build; a Japanese match has one "pulka"
// whose rows are the hands, the winner of each scoring the difference in
// tricks.
package sheets

import (
	"errors"
	"fmt"
	"sort"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// ErrInvalid means a scoring input is malformed: retrying cannot help.
var ErrInvalid = errors.New("invalid scoring input")

// MaxHands bounds hand indexes: a classic game has at most 24 hands, and a
// Japanese match only exceeds a few dozen through a long run of 9–9 draws.
const MaxHands = 1000

// Game is what is stored about one game, decoded.
type Game struct {
	TableID, GameID string
	// Start is nil until the GameStarted arrived.
	Start *scoringv1.GameStarted
	// Hands by index; there may be gaps while inputs arrive out of order.
	Hands map[uint32]*scoringv1.HandResult
	// End is nil until the GameEnded arrived.
	End *scoringv1.GameEnded
}

// Result is the sheet of a game at this point.
type Result struct {
	Sheet *scoringv1.Sheet
	// Version grows with the sheet's content: 1 + 2·hands + (1 if final).
	// The same stored inputs always give the same version.
	Version uint64
	// Final: the game is over; Standings is then set.
	Final     bool
	Standings []*scoringv1.Standing
	// Played is the number of hands on the sheet: the longest run from hand
	// 0 without a gap that could be scored.
	Played int
	// Waiting is the number of stored hands not on the sheet (after a gap,
	// or after a refused hand).
	Waiting int
	// Refused names the first stored hand that cannot be scored (bad bids or
	// tricks for its hand); the sheet stops before it until an operator
	// intervenes. Nil normally.
	Refused error
}

// Build computes the sheet of g, which must have its Start.
//
// Out-of-order delivery: only the hands from 0 up to the first missing one
// are on the sheet; later ones wait in the store and join the sheet when the
// gap is filled. The game is final when every hand of the variant is on the
// sheet (classic), when a player reached the target (Japanese), or when the
// GameEnded says the game stopped early (resign, forfeit, abort), no stored
// hand is still waiting and every hand it counts as played is on the sheet
// (a hand result still being redelivered is never cut off).
func Build(g Game) (Result, error) {
	if g.Start == nil {
		return Result{}, fmt.Errorf("%w: game %s has not started", ErrInvalid, g.GameID)
	}
	var r Result
	var err error
	switch g.Start.GetSettings().GetGame() {
	case lobbyv1.Game_GAME_CLASSIC:
		r, err = buildClassic(g)
	case lobbyv1.Game_GAME_JAPANESE:
		r, err = buildJapanese(g)
	default:
		err = fmt.Errorf("%w: game %s: unknown game %v", ErrInvalid, g.GameID, g.Start.GetSettings().GetGame())
	}
	if err != nil {
		return Result{}, err
	}
	r.Waiting = len(g.Hands) - r.Played
	if !r.Final && g.End != nil && !g.End.GetCompleted() && r.Waiting == 0 &&
		r.Played >= int(g.End.GetHandsPlayed()) {
		// Stopped early. A classic pulka cut short stays unfinished (no
		// premia, no moshla); the one "pulka" of a Japanese match is the
		// match, and it is over.
		r.Final = true
		if g.Start.GetSettings().GetGame() == lobbyv1.Game_GAME_JAPANESE {
			r.Sheet.Pulkas[0].Finished = true
		}
		for _, t := range r.Sheet.Totals {
			t.OnCourse = false // nobody is on course in a game that is over
		}
	}
	r.Version = 1 + 2*uint64(r.Played)
	if r.Final {
		r.Version++
		r.Standings = Standings(r.Sheet, g.End)
	}
	return r, nil
}

// base is the sheet's head: ids, settings and players.
func base(g Game) *scoringv1.Sheet {
	return &scoringv1.Sheet{
		TableId:  g.TableID,
		GameId:   g.GameID,
		Settings: g.Start.GetSettings(),
		Players:  g.Start.GetPlayers(),
	}
}

// ClassicSettings converts a table's settings to the score sheet's (the
// same reading of the wire as the table's and the lobby's).
func ClassicSettings(s *lobbyv1.TableSettings) (scoring.Settings, error) {
	out, err := tablesettings.ClassicRulesFromProto(s)
	if err != nil {
		return out, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return out, nil
}

// seatArrays puts a hand's per-seat facts in seat order, checking that every
// seat appears exactly once.
func seatArrays(h *scoringv1.HandResult, seats int) (bids, tricks []int, err error) {
	if len(h.GetSeats()) != seats {
		return nil, nil, fmt.Errorf("%d seats, want %d: %w", len(h.GetSeats()), seats, scoring.ErrSeats)
	}
	bids, tricks = make([]int, seats), make([]int, seats)
	seen := make([]bool, seats)
	for _, st := range h.GetSeats() {
		s := int(st.GetSeat())
		if s >= seats || seen[s] {
			return nil, nil, fmt.Errorf("seat %d twice or out of range: %w", s, scoring.ErrSeats)
		}
		seen[s] = true
		bids[s], tricks[s] = int(st.GetBid()), int(st.GetTricks())
	}
	return bids, tricks, nil
}

func buildClassic(g Game) (Result, error) {
	settings, err := ClassicSettings(g.Start.GetSettings())
	if err != nil {
		return Result{}, err
	}
	v := settings.Variant
	var refused error
	hands := make([]scoring.HandResult, 0, v.Hands())
	for i := 0; i < v.Hands(); i++ {
		h, ok := g.Hands[uint32(i)]
		if !ok {
			break
		}
		if n := int(h.GetCardsPerSeat()); n != v.CardsInHand(i) {
			refused = &scoring.InputError{Hand: i, Err: fmt.Errorf("%d cards per seat, the %s variant deals %d: %w",
				n, v, v.CardsInHand(i), ErrInvalid)}
			break
		}
		bids, tricks, err := seatArrays(h, scoring.Seats)
		if err != nil {
			refused = &scoring.InputError{Hand: i, Err: err}
			break
		}
		var hr scoring.HandResult
		copy(hr.Bids[:], bids)
		copy(hr.Tricks[:], tricks)
		hands = append(hands, hr)
	}
	sheet, err := scoring.Build(settings, hands)
	var ie *scoring.InputError
	if errors.As(err, &ie) {
		// Keep the hands before the bad one; they are still right.
		refused, hands = err, hands[:ie.Hand]
		sheet, err = scoring.Build(settings, hands)
	}
	if err != nil {
		return Result{}, fmt.Errorf("%w: game %s: %w", ErrInvalid, g.GameID, err)
	}
	out := base(g)
	out.CurrentHand = uint32(sheet.Next)
	for _, p := range sheet.Pulkas {
		sp := &scoringv1.SheetPulka{PulkaIndex: uint32(p.Index), Finished: p.Finished}
		for h := p.First; h < p.First+p.Played; h++ {
			sp.Hands = append(sp.Hands, classicRow(h, &sheet.Hands[h]))
		}
		for seat := range scoring.Seats {
			sp.Totals = append(sp.Totals, &scoringv1.SheetPulkaSeat{
				Seat: uint32(seat), Premia: int64(p.Premia[seat]), Moshla: int64(p.Moshla[seat]), Total: int64(p.Total[seat]),
			})
		}
		out.Pulkas = append(out.Pulkas, sp)
	}
	for seat := range scoring.Seats {
		out.Totals = append(out.Totals, &scoringv1.SeatTotal{
			Seat: uint32(seat), Total: int64(sheet.Total[seat]), OnCourse: sheet.OnCourse[seat],
		})
	}
	return Result{Sheet: out, Final: sheet.Finished, Played: len(hands), Refused: refused}, nil
}

func classicRow(h int, row *scoring.HandRow) *scoringv1.SheetHand {
	out := &scoringv1.SheetHand{HandIndex: uint32(h), Cards: uint32(row.Cards)}
	for seat := range scoring.Seats {
		bid := uint32(row.Bids[seat])
		c := &scoringv1.SheetCell{
			Seat: uint32(seat), Bid: &bid, Tricks: uint32(row.Tricks[seat]), Struck: row.Struck[seat],
		}
		switch row.Result[seat] {
		case scoring.ResultKhishti:
			// The contract keeps the penalty apart from the points, which
			// stay 0: the sheet shows the penalty, not a score.
			c.Penalty, c.Outcome = int64(row.Points[seat]), scoringv1.HandOutcome_HAND_OUTCOME_KHISHTI
		case scoring.ResultMade:
			c.Points, c.Outcome = int64(row.Points[seat]), scoringv1.HandOutcome_HAND_OUTCOME_MADE
		default:
			c.Points, c.Outcome = int64(row.Points[seat]), scoringv1.HandOutcome_HAND_OUTCOME_MISSED
		}
		out.Cells = append(out.Cells, c)
	}
	return out
}

// JapaneseTarget is the match's target score (0 in the settings means the
// default, 21).
func JapaneseTarget(s *lobbyv1.TableSettings) (int, error) {
	t := int(s.GetJapaneseTarget())
	if t == 0 {
		t = japanese.DefaultTarget
	}
	if err := (japanese.Settings{Target: t}).Validate(); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return t, nil
}

func buildJapanese(g Game) (Result, error) {
	target, err := JapaneseTarget(g.Start.GetSettings())
	if err != nil {
		return Result{}, err
	}
	out := base(g)
	pulka := &scoringv1.SheetPulka{}
	var totals [japanese.Seats]int64
	var refused error
	over := false
	played := 0
	for ; played < MaxHands; played++ {
		h, ok := g.Hands[uint32(played)]
		if !ok {
			break
		}
		if over {
			refused = &scoring.InputError{Hand: played, Err: fmt.Errorf("the match ended at %d–%d: %w",
				totals[0], totals[1], scoring.ErrTooManyHands)}
			break
		}
		row, err := japaneseRow(played, h)
		if err != nil {
			refused = &scoring.InputError{Hand: played, Err: err}
			break
		}
		for _, c := range row.Cells {
			totals[c.Seat] += c.Points
			over = over || totals[c.Seat] >= int64(target)
		}
		pulka.Hands = append(pulka.Hands, row)
	}
	pulka.Finished = over
	for seat := range japanese.Seats {
		pulka.Totals = append(pulka.Totals, &scoringv1.SheetPulkaSeat{Seat: uint32(seat), Total: totals[seat]})
		out.Totals = append(out.Totals, &scoringv1.SeatTotal{Seat: uint32(seat), Total: totals[seat]})
	}
	out.Pulkas = []*scoringv1.SheetPulka{pulka}
	out.CurrentHand = uint32(played)
	return Result{Sheet: out, Final: over, Played: played, Refused: refused}, nil
}

func japaneseRow(h int, hr *scoringv1.HandResult) (*scoringv1.SheetHand, error) {
	if hr.GetCardsPerSeat() != japanese.TricksPerHand {
		return nil, fmt.Errorf("%d cards per seat, Japanese deals %d: %w", hr.GetCardsPerSeat(), japanese.TricksPerHand, ErrInvalid)
	}
	_, tricks, err := seatArrays(hr, japanese.Seats)
	if err != nil {
		return nil, err
	}
	if tricks[0]+tricks[1] != japanese.TricksPerHand {
		return nil, fmt.Errorf("tricks %v add up to %d, want %d: %w", tricks, tricks[0]+tricks[1], japanese.TricksPerHand, scoring.ErrTrickSum)
	}
	row := &scoringv1.SheetHand{HandIndex: uint32(h), Cards: japanese.TricksPerHand}
	for seat := range japanese.Seats {
		diff := tricks[seat] - tricks[1-seat]
		c := &scoringv1.SheetCell{Seat: uint32(seat), Tricks: uint32(tricks[seat]), Outcome: scoringv1.HandOutcome_HAND_OUTCOME_MISSED}
		if diff > 0 {
			c.Points, c.Outcome = int64(diff), scoringv1.HandOutcome_HAND_OUTCOME_MADE
		}
		row.Cells = append(row.Cells, c)
	}
	return row, nil
}

// Standings ranks a finished game's players, best first: by total, tied
// players sharing a place (1, 1, 3, ...: standard competition ranking) and
// listed in seat order. A player who resigned or forfeited a Japanese match
// (the GameEnded's loser seat) is last whatever the score.
func Standings(sheet *scoringv1.Sheet, end *scoringv1.GameEnded) []*scoringv1.Standing {
	players := map[uint32]string{}
	for _, p := range sheet.GetPlayers() {
		players[p.GetSeat()] = p.GetPlayerId()
	}
	loser, hasLoser := uint32(0), false
	if end != nil && end.LoserSeat != nil && !end.GetCompleted() &&
		sheet.GetSettings().GetGame() == lobbyv1.Game_GAME_JAPANESE {
		loser, hasLoser = end.GetLoserSeat(), true
	}
	out := make([]*scoringv1.Standing, 0, len(sheet.GetTotals()))
	for _, t := range sheet.GetTotals() {
		out = append(out, &scoringv1.Standing{Seat: t.GetSeat(), PlayerId: players[t.GetSeat()], Total: t.GetTotal()})
	}
	// rank: lower is better. The loser of a resignation sorts after everyone.
	rank := func(s *scoringv1.Standing) (bool, int64) {
		return hasLoser && s.Seat == loser, -s.Total
	}
	sort.SliceStable(out, func(i, j int) bool {
		li, ti := rank(out[i])
		lj, tj := rank(out[j])
		if li != lj {
			return !li
		}
		if ti != tj {
			return ti < tj
		}
		return out[i].Seat < out[j].Seat
	})
	for i, s := range out {
		s.Place = uint32(i + 1)
		if i > 0 {
			pl, pt := rank(out[i-1])
			l, t := rank(s)
			if pl == l && pt == t {
				s.Place = out[i-1].Place
			}
		}
	}
	return out
}

// Validate checks what can be checked of an input before it is stored:
// the ids (they become keys), and the shape of each kind. What depends on
// the game's settings (the cards of a hand in the variant, the number of
// hands) is checked when the sheet is built.
func Validate(in *scoringv1.ScoringInput) error {
	if err := errors.Join(scoringclient.CheckID("table", in.GetTableId()), scoringclient.CheckID("game", in.GetGameId())); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	switch x := in.GetInput().(type) {
	case *scoringv1.ScoringInput_GameStarted:
		return validateStart(x.GameStarted)
	case *scoringv1.ScoringInput_HandResult:
		return validateHand(x.HandResult)
	case *scoringv1.ScoringInput_GameEnded:
		if x.GameEnded.LoserSeat != nil && x.GameEnded.GetLoserSeat() >= japanese.Seats {
			return fmt.Errorf("%w: loser seat %d", ErrInvalid, x.GameEnded.GetLoserSeat())
		}
		return nil
	case nil:
		return fmt.Errorf("%w: no input set", ErrInvalid)
	default:
		return fmt.Errorf("%w: unknown input %T", ErrInvalid, x)
	}
}

func validateStart(s *scoringv1.GameStarted) error {
	var seats int
	switch s.GetSettings().GetGame() {
	case lobbyv1.Game_GAME_CLASSIC:
		if _, err := ClassicSettings(s.GetSettings()); err != nil {
			return err
		}
		seats = scoring.Seats
	case lobbyv1.Game_GAME_JAPANESE:
		if _, err := JapaneseTarget(s.GetSettings()); err != nil {
			return err
		}
		seats = japanese.Seats
	default:
		return fmt.Errorf("%w: unknown game %v", ErrInvalid, s.GetSettings().GetGame())
	}
	if len(s.GetPlayers()) != seats {
		return fmt.Errorf("%w: %d players, want %d", ErrInvalid, len(s.GetPlayers()), seats)
	}
	seen := make([]bool, seats)
	for _, p := range s.GetPlayers() {
		if int(p.GetSeat()) >= seats || seen[p.GetSeat()] {
			return fmt.Errorf("%w: player seat %d twice or out of range", ErrInvalid, p.GetSeat())
		}
		seen[p.GetSeat()] = true
		if id := p.GetPlayerId(); id != "" {
			if err := scoringclient.CheckID("player", id); err != nil {
				return fmt.Errorf("%w: %w", ErrInvalid, err)
			}
		}
	}
	return nil
}

func validateHand(h *scoringv1.HandResult) error {
	if h.GetHandIndex() >= MaxHands {
		return fmt.Errorf("%w: hand index %d", ErrInvalid, h.GetHandIndex())
	}
	seats := len(h.GetSeats())
	if seats != scoring.Seats && seats != japanese.Seats {
		return fmt.Errorf("%w: hand %d has %d seats", ErrInvalid, h.GetHandIndex(), seats)
	}
	n := int(h.GetCardsPerSeat())
	if n < 1 || n > japanese.TricksPerHand {
		return fmt.Errorf("%w: hand %d deals %d cards per seat", ErrInvalid, h.GetHandIndex(), n)
	}
	bids, tricks, err := seatArrays(h, seats)
	if err != nil {
		return fmt.Errorf("%w: hand %d: %w", ErrInvalid, h.GetHandIndex(), err)
	}
	sum := 0
	for s := range seats {
		if bids[s] > n || tricks[s] > n {
			return fmt.Errorf("%w: hand %d: seat %d bid %d took %d of %d", ErrInvalid, h.GetHandIndex(), s, bids[s], tricks[s], n)
		}
		sum += tricks[s]
	}
	if sum != n {
		return fmt.Errorf("%w: hand %d: tricks add up to %d, want %d", ErrInvalid, h.GetHandIndex(), sum, n)
	}
	return nil
}
