package table

import (
	"errors"
	"fmt"
	"math"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/cards/cardpb"
	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/fairdeal"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	runnerv1 "github.com/pulka/pulka/pkg/gen/pulka/runner/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// The engines' states in a snapshot (runnerv1.ClassicState, JapaneseState):
// the engines' State, field by field. Reading narrows nothing unchecked: an
// out-of-range number is refused here or by the engine's SetState, never
// wrapped into a valid one, so what is accepted re-encodes to the same
// message.

// errEngineState is wrapped by the errors of reading an engine state.
var errEngineState = errors.New("engine state")

func badState(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errEngineState}, args...)...)
}

// keyBytes is a shuffle key as bytes: none for the zero key (no hand dealt).
func keyBytes(k fairdeal.Key) []byte {
	if k == (fairdeal.Key{}) {
		return nil
	}
	return append([]byte(nil), k[:]...)
}

func keyOf(b []byte) (fairdeal.Key, error) {
	var k fairdeal.Key
	switch len(b) {
	case 0:
	case len(k):
		copy(k[:], b)
		if k == (fairdeal.Key{}) {
			return k, badState("a zero shuffle key")
		}
	default:
		return k, badState("a shuffle key of %d bytes", len(b))
	}
	return k, nil
}

// optSeat is a seat number, or nil for -1 (none).
func optSeat(s int) *uint32 {
	if s < 0 {
		return nil
	}
	v := uint32(s)
	return &v
}

func seatOrNone(p *uint32) int {
	if p == nil {
		return -1
	}
	return int(*p)
}

// cardOrNone reads a card that may be absent (CARD_UNSPECIFIED: no card).
func cardOrNone(c commonv1.Card) (cards.Card, error) {
	if c == commonv1.Card_CARD_UNSPECIFIED {
		return cards.NoCard, nil
	}
	d := cardpb.FromCard(c)
	if !d.Valid() {
		return d, badState("card %d", c)
	}
	return d, nil
}

func suitOf(s commonv1.Suit) (cards.Suit, error) {
	d, ok := cardpb.FromSuit(s)
	if !ok {
		return d, badState("suit %d", s)
	}
	return d, nil
}

// setOf reads a list of cards as a set: every card known, none twice.
func setOf(cs []commonv1.Card) (cards.Set, error) {
	var s cards.Set
	for _, c := range cs {
		d := cardpb.FromCard(c)
		if !d.Valid() || s.Has(d) {
			return s, badState("card %d unknown or listed twice", c)
		}
		s = s.With(d)
	}
	return s, nil
}

// enumByte narrows an enum's number that the engine keeps in a byte.
func enumByte[E ~int32](v E) (uint8, error) {
	if v < 0 || v > math.MaxUint8 {
		return 0, badState("value %d", v)
	}
	return uint8(v), nil
}

func (e *classicEngine) snapshot(m *runnerv1.TableSnapshot) {
	s := e.g.State()
	c := &runnerv1.ClassicState{ShuffleKey: keyBytes(s.Key), Variant: lobbyv1.ClassicVariant(s.Variant + 1),
		Hand: uint32(s.Hand), FirstDealer: optSeat(s.FirstDealer), Phase: runnerv1.ClassicPhase(s.Phase),
		Turn: optSeat(s.Turn), Trump: cardpb.Suit(s.Trump), Turned: cardpb.Card(s.Turned),
		Seats: make([]*runnerv1.ClassicSeat, classic.Seats), TricksFinished: uint32(s.TricksFinished),
		Leader: uint32(s.Leader), LedSuit: cardpb.Suit(s.LedSuit), Played: cardpb.Cards(s.Played),
		Results: make([]*runnerv1.ClassicHandResult, len(s.Results))}
	if s.Local {
		c.LocalSeed = &s.LocalSeed
	}
	for i := range c.Seats {
		cs := &runnerv1.ClassicSeat{Tricks: uint32(s.Tricks[i]), Hand: cardpb.Cards(s.Hands[i])}
		if b := s.Bids[i]; b >= 0 {
			v := uint32(b)
			cs.Bid = &v
		}
		c.Seats[i] = cs
	}
	for _, tc := range s.Trick {
		c.Trick = append(c.Trick, &runnerv1.ClassicTrickCard{Card: cardpb.Card(tc.Card), Joker: tablev1.JokerAction(tc.Joker)})
	}
	for h, r := range s.Results {
		pr := &runnerv1.ClassicHandResult{Cards: uint32(r.Cards), Bids: make([]uint32, classic.Seats), Tricks: make([]uint32, classic.Seats)}
		for i := range classic.Seats {
			pr.Bids[i], pr.Tricks[i] = uint32(r.Bids[i]), uint32(r.Tricks[i])
		}
		c.Results[h] = pr
	}
	m.Engine = &runnerv1.TableSnapshot_Classic{Classic: c}
}

func (e *classicEngine) restore(m *runnerv1.TableSnapshot) error {
	c := m.GetClassic()
	if c == nil {
		return badState("no classic state at a classic table")
	}
	s, err := classicState(c)
	if err != nil {
		return err
	}
	if s.Variant != e.set.Variant {
		return badState("engine variant %v, settings %v", s.Variant, e.set.Variant)
	}
	return e.g.SetState(s)
}

func classicState(c *runnerv1.ClassicState) (classic.State, error) {
	var s classic.State
	var err error
	if s.Key, err = keyOf(c.GetShuffleKey()); err != nil {
		return s, err
	}
	v, ok := tablesettings.ClassicVariantFromProto(c.GetVariant())
	if !ok {
		return s, badState("variant %v", c.GetVariant())
	}
	p, err := enumByte(c.GetPhase())
	if err != nil {
		return s, err
	}
	s.Variant, s.Phase = v, classic.Phase(p)
	if c.LocalSeed != nil {
		s.Local, s.LocalSeed = true, c.GetLocalSeed()
	}
	// The engine checks the ranges of the numbers (uint32 fits an int).
	s.Hand, s.FirstDealer, s.Turn = int(c.GetHand()), seatOrNone(c.FirstDealer), seatOrNone(c.Turn)
	s.TricksFinished, s.Leader = int(c.GetTricksFinished()), int(c.GetLeader())
	if s.Trump, err = suitOf(c.GetTrump()); err != nil {
		return s, err
	}
	if s.LedSuit, err = suitOf(c.GetLedSuit()); err != nil {
		return s, err
	}
	if s.Turned, err = cardOrNone(c.GetTurned()); err != nil {
		return s, err
	}
	if s.Played, err = setOf(c.GetPlayed()); err != nil {
		return s, err
	}
	if len(c.GetSeats()) != classic.Seats {
		return s, badState("%d classic seats", len(c.GetSeats()))
	}
	for i, cs := range c.GetSeats() {
		s.Bids[i], s.Tricks[i] = seatOrNone(cs.Bid), int(cs.GetTricks())
		if s.Hands[i], err = setOf(cs.GetHand()); err != nil {
			return s, err
		}
	}
	if len(c.GetTrick()) >= classic.Seats {
		return s, badState("%d cards in a trick", len(c.GetTrick()))
	}
	for _, tc := range c.GetTrick() {
		card := cardpb.FromCard(tc.GetCard())
		j, err := enumByte(tc.GetJoker())
		if !card.Valid() || err != nil {
			return s, badState("trick card %v %v", tc.GetCard(), tc.GetJoker())
		}
		s.Trick = append(s.Trick, classic.TrickCard{Card: card, Joker: classic.JokerMode(j)})
	}
	if len(c.GetResults()) > int(c.GetHand()) {
		return s, badState("%d results in hand %d", len(c.GetResults()), c.GetHand())
	}
	for _, r := range c.GetResults() {
		if len(r.GetBids()) != classic.Seats || len(r.GetTricks()) != classic.Seats {
			return s, badState("a result of %d bids and %d tricks", len(r.GetBids()), len(r.GetTricks()))
		}
		hr := classic.HandResult{Cards: int(r.GetCards())}
		for i := range classic.Seats {
			hr.Bids[i], hr.Tricks[i] = int(r.GetBids()[i]), int(r.GetTricks()[i])
		}
		s.Results = append(s.Results, hr)
	}
	return s, nil
}

// The Japanese end reasons as the contract's game end reasons.
var japaneseReasons = [...]tablev1.GameEndReason{
	japanese.ReasonNone:     tablev1.GameEndReason_GAME_END_REASON_UNSPECIFIED,
	japanese.ReasonTarget:   tablev1.GameEndReason_GAME_END_REASON_COMPLETED,
	japanese.ReasonResigned: tablev1.GameEndReason_GAME_END_REASON_RESIGNED,
	japanese.ReasonForfeit:  tablev1.GameEndReason_GAME_END_REASON_FORFEITED,
}

func (e *japaneseEngine) snapshot(m *runnerv1.TableSnapshot) {
	s := e.g.State()
	j := &runnerv1.JapaneseState{ShuffleKey: keyBytes(s.Key), Target: uint32(s.Target), Hand: s.Hand,
		HandsFinished: s.Finished, Phase: runnerv1.JapanesePhase(s.Phase + 1), FirstDeclarer: optSeat(s.FirstDeclarer),
		Trump: cardpb.Suit(s.Trump), TrumpChosen: s.TrumpChosen, Leader: uint32(s.Leader),
		TricksFinished: uint32(s.TricksFinished), NamedSuit: cardpb.Suit(s.Named), Winner: optSeat(s.Winner),
		EndReason: japaneseReasons[s.Reason], Seats: make([]*runnerv1.JapaneseSeat, japanese.Seats),
		Gone: cardpb.Cards(s.Gone), Results: make([]*runnerv1.JapaneseHandResult, len(s.Results))}
	if s.Local {
		j.LocalSeed = &s.LocalSeed
	}
	for i := range j.Seats {
		js := &runnerv1.JapaneseSeat{Hand: cardpb.Cards(s.Hands[i]), TrickCard: cardpb.Card(s.Trick[i]),
			Tricks: uint32(s.Tricks[i]), Score: uint32(s.Scores[i])}
		if s.Up[i] != noColumns || s.Down[i] != noColumns {
			js.Columns = make([]*runnerv1.JapaneseColumn, japanese.Columns)
			for c := range js.Columns {
				js.Columns[c] = &runnerv1.JapaneseColumn{FaceUp: cardpb.Card(s.Up[i][c]), FaceDown: cardpb.Card(s.Down[i][c])}
			}
		}
		j.Seats[i] = js
	}
	for h, r := range s.Results {
		j.Results[h] = &runnerv1.JapaneseHandResult{Trump: cardpb.Suit(r.Trump), Tricks: []uint32{uint32(r.Tricks[0]), uint32(r.Tricks[1])}}
	}
	m.Engine = &runnerv1.TableSnapshot_Japanese{Japanese: j}
}

// noColumns are a seat's columns before they are dealt.
var noColumns = [japanese.Columns]cards.Card{cards.NoCard, cards.NoCard, cards.NoCard, cards.NoCard, cards.NoCard}

func (e *japaneseEngine) restore(m *runnerv1.TableSnapshot) error {
	j := m.GetJapanese()
	if j == nil {
		return badState("no Japanese state at a Japanese table")
	}
	s, err := japaneseState(j)
	if err != nil {
		return err
	}
	if target := int(m.GetSettings().GetJapaneseTarget()); s.Target != target {
		return badState("engine target %d, settings %d", s.Target, target)
	}
	return e.g.SetState(s)
}

func japaneseState(j *runnerv1.JapaneseState) (japanese.State, error) {
	var s japanese.State
	var err error
	if s.Key, err = keyOf(j.GetShuffleKey()); err != nil {
		return s, err
	}
	p, err := enumByte(j.GetPhase())
	if err != nil || p == 0 {
		return s, badState("phase %v", j.GetPhase())
	}
	s.Phase = japanese.Phase(p - 1)
	if j.LocalSeed != nil {
		s.Local, s.LocalSeed = true, j.GetLocalSeed()
	}
	// The engine checks the ranges of the numbers (uint32 fits an int).
	s.Target, s.Hand, s.Finished = int(j.GetTarget()), j.GetHand(), j.GetHandsFinished()
	s.FirstDeclarer, s.Winner = seatOrNone(j.FirstDeclarer), seatOrNone(j.Winner)
	s.TrumpChosen, s.Leader, s.TricksFinished = j.GetTrumpChosen(), int(j.GetLeader()), int(j.GetTricksFinished())
	if s.Trump, err = suitOf(j.GetTrump()); err != nil {
		return s, err
	}
	if s.Named, err = suitOf(j.GetNamedSuit()); err != nil {
		return s, err
	}
	reason := -1
	for r, w := range japaneseReasons {
		if w == j.GetEndReason() {
			reason = r
		}
	}
	if reason < 0 {
		return s, badState("end reason %v", j.GetEndReason())
	}
	s.Reason = japanese.EndReason(reason)
	if s.Gone, err = setOf(j.GetGone()); err != nil {
		return s, err
	}
	if len(j.GetSeats()) != japanese.Seats {
		return s, badState("%d Japanese seats", len(j.GetSeats()))
	}
	for i, js := range j.GetSeats() {
		s.Tricks[i], s.Scores[i] = int(js.GetTricks()), int(js.GetScore())
		if s.Hands[i], err = setOf(js.GetHand()); err != nil {
			return s, err
		}
		if s.Trick[i], err = cardOrNone(js.GetTrickCard()); err != nil {
			return s, err
		}
		s.Up[i], s.Down[i] = noColumns, noColumns
		switch len(js.GetColumns()) {
		case 0:
		case japanese.Columns:
			for c, col := range js.GetColumns() {
				if s.Up[i][c], err = cardOrNone(col.GetFaceUp()); err != nil {
					return s, err
				}
				if s.Down[i][c], err = cardOrNone(col.GetFaceDown()); err != nil {
					return s, err
				}
			}
			if s.Up[i] == noColumns && s.Down[i] == noColumns {
				return s, badState("seat %d: five empty columns", i)
			}
		default:
			return s, badState("seat %d: %d columns", i, len(js.GetColumns()))
		}
	}
	if len(j.GetResults()) > japanese.MaxRecordedHands {
		return s, badState("%d results", len(j.GetResults()))
	}
	for _, r := range j.GetResults() {
		trump, err := suitOf(r.GetTrump())
		if err != nil {
			return s, err
		}
		if len(r.GetTricks()) != japanese.Seats || r.GetTricks()[0] > math.MaxInt8 || r.GetTricks()[1] > math.MaxInt8 {
			return s, badState("a result's tricks %v", r.GetTricks())
		}
		s.Results = append(s.Results, japanese.HandRecord{Trump: trump, Tricks: [japanese.Seats]int{int(r.GetTricks()[0]), int(r.GetTricks()[1])}})
	}
	return s, nil
}
