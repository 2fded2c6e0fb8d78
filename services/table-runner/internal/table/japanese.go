package table

import (
	"fmt"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/cards/cardpb"
	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/fairdeal"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/japanese/japanesepb"
	"github.com/pulka/pulka/pkg/tablesettings"
)

type japaneseEngine struct {
	g     japanese.Game
	level classic.Level // 0: a table from before levels; else strong
	buf   []japanese.Event
}

func newJapaneseEngine(s tablesettings.Settings) (*japaneseEngine, error) {
	g, err := japanese.NewLive(japanese.Settings{Target: s.JapaneseTarget})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSettings, err)
	}
	return &japaneseEngine{g: *g, level: s.BotLevel, buf: make([]japanese.Event, 0, 16)}, nil
}

func (e *japaneseEngine) toMove() int { return e.g.ToMove() }
func (e *japaneseEngine) over() bool  { return e.g.Over() }

func (e *japaneseEngine) phase() tablev1.Phase {
	switch e.g.Phase() {
	case japanese.PhaseTrump:
		return tablev1.Phase_PHASE_CHOOSE_TRUMP
	case japanese.PhasePlay:
		return tablev1.Phase_PHASE_PLAY
	case japanese.PhaseOver:
		return tablev1.Phase_PHASE_GAME_OVER
	case japanese.PhaseDeal:
		return tablev1.Phase_PHASE_WAITING
	}
	return tablev1.Phase_PHASE_UNSPECIFIED
}

func (e *japaneseEngine) awaitingDeal() bool { return e.g.AwaitingDeal() }
func (e *japaneseEngine) handIndex() uint32  { return uint32(e.g.Hand()) }

// lastHand: a match ends when a player reaches the target, which no hand
// knows before it is played.
func (e *japaneseEngine) lastHand() bool { return false }

func (e *japaneseEngine) deal(b *batch, k fairdeal.Key) error {
	evs, err := e.g.Deal(k, e.buf[:0])
	if err != nil {
		return err
	}
	e.buf = evs
	e.convert(b, evs)
	return nil
}

func (e *japaneseEngine) command(b *batch, seat int, cmd *tablev1.Command) error {
	m, err := japaneseMove(seat, cmd)
	if err != nil {
		return err
	}
	return e.apply(b, m)
}

// japaneseMove reads a command as a move of seat. A joker with a named suit
// is a led joker (it always demands the highest); a joker without one
// answers (it always takes). The engine checks which one fits the trick.
func japaneseMove(seat int, cmd *tablev1.Command) (japanese.Move, error) {
	switch c := cmd.GetCommand().(type) {
	case *tablev1.Command_Bid:
		return japanese.Move{}, japanese.ErrWrongPhase // no bidding in Japanese joker
	case *tablev1.Command_ChooseTrump:
		s, ok := cardpb.FromSuit(c.ChooseTrump.GetTrump())
		if !ok {
			return japanese.Move{}, japanese.ErrBadTrump
		}
		return japanese.TrumpMove(seat, s), nil
	case *tablev1.Command_PlayCard:
		card := cardpb.FromCard(c.PlayCard.GetCard())
		if !card.Valid() {
			return japanese.Move{}, ErrMalformed
		}
		if !card.IsJoker() {
			return japanese.PlayMove(seat, card), nil
		}
		d := c.PlayCard.GetDeclaration()
		switch d.GetAction() {
		case tablev1.JokerAction_JOKER_ACTION_UNSPECIFIED, tablev1.JokerAction_JOKER_ACTION_TAKE:
			if d.GetSuit() == 0 {
				return japanese.PlayMove(seat, card), nil
			}
		case tablev1.JokerAction_JOKER_ACTION_HIGHEST:
		default:
			return japanese.Move{}, japanese.ErrBadJokerDeclaration
		}
		s, ok := cardpb.FromSuit(d.GetSuit())
		if !ok || !s.Valid() {
			return japanese.Move{}, japanese.ErrBadJokerDeclaration
		}
		return japanese.LeadJoker(seat, card, s), nil
	}
	return japanese.Move{}, ErrMalformed
}

// serverMove is the move of a player whose time ran out (no bot sits at
// a Japanese table): the strong bot's, or the baseline's at a table from
// before levels (its logged moves replay the same).
func (e *japaneseEngine) serverMove(b *batch, _ bool) error {
	seat := e.g.ToMove()
	var p japanese.Player = japanese.StrongBot{}
	if e.level == 0 {
		p = japanese.Bot{}
	}
	m, ok := p.Choose(&e.g, seat)
	if !ok {
		return fmt.Errorf("no move for seat %d", seat)
	}
	return e.apply(b, m)
}

func (e *japaneseEngine) end(b *batch, seat int, forfeit bool) error {
	m := japanese.ResignMove(seat)
	if forfeit {
		m = japanese.ForfeitMove(seat)
	}
	return e.apply(b, m)
}

func (e *japaneseEngine) apply(b *batch, m japanese.Move) error {
	evs, err := e.g.Apply(m, e.buf[:0])
	if err != nil {
		return err
	}
	e.buf = evs
	e.convert(b, evs)
	return nil
}

func (e *japaneseEngine) convert(b *batch, evs []japanese.Event) {
	for i := range evs {
		ev := &evs[i]
		switch ev.Kind {
		case japanese.EventHandStarted:
			b.add(public(), &tablev1.Event{Event: &tablev1.Event_HandStarted{HandStarted: &tablev1.HandStarted{
				HandIndex: ev.Hand, CardsPerSeat: japanese.TricksPerHand, DealerSeat: uint32(ev.Seat)}}})
		case japanese.EventDealt:
			b.add(toSeat(int(ev.To)), &tablev1.Event{Event: &tablev1.Event_Dealt{Dealt: &tablev1.Dealt{
				Seat: uint32(ev.Seat), Cards: cardpb.Cards(ev.Cards)}}})
		case japanese.EventTrumpChosen:
			b.add(public(), &tablev1.Event{Event: &tablev1.Event_TrumpChosen{TrumpChosen: &tablev1.TrumpChosen{
				Seat: uint32(ev.Seat), Trump: cardpb.Suit(ev.Suit), ByServer: b.byServer}}})
		case japanese.EventColumnsDealt:
			up := make([]commonv1.Card, 0, japanese.Columns)
			for _, c := range ev.Columns {
				up = append(up, cardpb.Card(c))
			}
			b.add(public(), &tablev1.Event{Event: &tablev1.Event_ColumnsDealt{ColumnsDealt: &tablev1.ColumnsDealt{
				Seat: uint32(ev.Seat), FaceUp: up}}})
		case japanese.EventCardPlayed:
			cp := &tablev1.CardPlayed{Seat: uint32(ev.Seat), Card: cardpb.Card(ev.Card), ByServer: b.byServer}
			if ev.Card.IsJoker() {
				cp.Declaration = japaneseJoker(ev.Suit)
			}
			if ev.Column >= 0 {
				col := uint32(ev.Column)
				cp.Column = &col
			}
			b.add(public(), &tablev1.Event{Event: &tablev1.Event_CardPlayed{CardPlayed: cp}})
		case japanese.EventFaceDownToHand:
			b.add(toSeat(int(ev.To)), &tablev1.Event{Event: &tablev1.Event_ColumnCardRevealed{
				ColumnCardRevealed: &tablev1.ColumnCardRevealed{Seat: uint32(ev.Seat), Column: uint32(ev.Column),
					Card: cardpb.Card(ev.Card)}}})
		case japanese.EventTableCleared:
			b.add(public(), &tablev1.Event{Event: &tablev1.Event_ColumnsToHand{ColumnsToHand: &tablev1.ColumnsToHand{
				Seat: uint32(ev.Seat), Columns: []uint32{uint32(ev.Column)}}}})
		case japanese.EventTrickWon:
			b.add(public(), &tablev1.Event{Event: &tablev1.Event_TrickWon{TrickWon: &tablev1.TrickWon{
				TrickIndex: uint32(ev.Trick), Seat: uint32(ev.Seat),
				TricksTaken: []uint32{uint32(ev.Tricks[0]), uint32(ev.Tricks[1])}}}})
		case japanese.EventHandEnded:
			res := make([]*tablev1.SeatHandResult, japanese.Seats)
			for s := range res {
				res[s] = &tablev1.SeatHandResult{Seat: uint32(s), Tricks: uint32(ev.Tricks[s]), Points: int64(ev.Points[s])}
			}
			b.add(public(), &tablev1.Event{Event: &tablev1.Event_HandEnded{HandEnded: &tablev1.HandEnded{
				HandIndex: ev.Hand, Results: res}}})
			b.t.reveal(b)
		case japanese.EventGameEnded:
			b.t.reveal(b) // a resignation or forfeit ends the hand too
			reason := tablev1.GameEndReason_GAME_END_REASON_COMPLETED
			switch ev.Reason {
			case japanese.ReasonResigned:
				reason = tablev1.GameEndReason_GAME_END_REASON_RESIGNED
			case japanese.ReasonForfeit:
				reason = tablev1.GameEndReason_GAME_END_REASON_FORFEITED
			}
			// A match won on the target ends with its last hand scored; a
			// resignation or forfeit leaves the current hand unscored.
			played := uint32(ev.Hand)
			if reason == tablev1.GameEndReason_GAME_END_REASON_COMPLETED {
				played++
			}
			w := int(ev.Seat)
			ps := []*tablev1.Placing{
				{Place: 1, Seat: uint32(w), PlayerId: b.t.endPlayer(w), Score: int64(ev.Scores[w])},
				{Place: 2, Seat: uint32(1 - w), PlayerId: b.t.endPlayer(1 - w), Score: int64(ev.Scores[1-w])},
			}
			b.add(public(), &tablev1.Event{Event: &tablev1.Event_GameEnded{GameEnded: &tablev1.GameEnded{
				Reason: reason, Placings: ps, HandsPlayed: played}}})
		}
	}
}

// japaneseJoker is how a Japanese joker is meant: a led one names a suit
// and demands the highest, an answering one always takes.
func japaneseJoker(named cards.Suit) *tablev1.JokerDeclaration {
	a, s := japanesepb.Declare(named)
	return &tablev1.JokerDeclaration{Action: a, Suit: s}
}

func (e *japaneseEngine) view(seat int, tv *tablev1.TableView) {
	v := e.g.View(seat)
	tv.Phase = e.phase()
	tv.HandIndex = uint32(v.Hand)
	if v.Declarer >= 0 {
		tv.DealerSeat = uint32(v.Declarer)
	}
	if v.ToMove >= 0 {
		tv.TurnSeat = uint32(v.ToMove)
	}
	if v.Phase != japanese.PhaseOver {
		tv.CardsPerSeat = japanese.TricksPerHand
	}
	if v.Trump != "" {
		s := cards.NoSuit
		if v.Trump != "bezi" {
			s = parseTrumpText(v.Trump)
		}
		tv.Trump = cardpb.Suit(s)
	}
	if seat >= 0 {
		for _, c := range v.MyCards {
			tv.YourHand = append(tv.YourHand, cardpb.Card(c))
		}
	}
	for _, tc := range v.CurrentTrick {
		p := &tablev1.PlayedCard{Seat: uint32(tc.Seat), Card: cardpb.Card(tc.Card)}
		if tc.Card.IsJoker() {
			named := cards.NoSuit
			if tc.Named != "" {
				named = parseTrumpText(tc.Named)
			}
			p.Declaration = japaneseJoker(named)
		}
		tv.Trick = append(tv.Trick, p)
	}
	_, chosen := e.g.Trump()
	for s, sv := range tv.Seats {
		sv.Tricks = uint32(v.Tricks[s])
		sv.Score = int64(v.Scores[s])
		sv.HandSize = uint32(v.HandSizes[s])
		if !chosen {
			continue
		}
		// A column holds its face-down card exactly as long as its face-up
		// one: playing the face-up card moves the face-down one to the hand.
		sv.ColumnsFaceUp = make([]commonv1.Card, japanese.Columns)
		sv.ColumnsFaceDown = make([]bool, japanese.Columns)
		for _, cv := range v.Columns[s] {
			sv.ColumnsFaceUp[cv.Column] = cardpb.Card(cv.Up)
			sv.ColumnsFaceDown[cv.Column] = true
		}
	}
}

func (e *japaneseEngine) marshal() ([]byte, error) { return e.g.MarshalBinary() }

func (e *japaneseEngine) unmarshal(b []byte) error { return e.g.UnmarshalBinary(b) }

func (e *japaneseEngine) legal(seat int) *tablev1.LegalMoves {
	var buf [japanese.MaxLegal]japanese.Move
	var trumps [6]cards.Suit
	var plays [japanese.MaxLegal]legalPlay
	nt, np := 0, 0
	for _, m := range e.g.Legal(seat, buf[:0]) {
		switch m.Kind {
		case japanese.KindTrump:
			trumps[nt] = m.Suit
			nt++
		case japanese.KindPlay:
			p := legalPlay{card: m.Card}
			if m.Card.IsJoker() {
				p.hasDecl = true
				p.action, p.suit = japanesepb.Declare(m.Suit)
			}
			plays[np] = p
			np++
		}
	}
	return buildLegal(seat, e.phase(), trumps[:nt], nil, plays[:np])
}
