package table

import (
	"fmt"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/cards/cardpb"
	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/classic/classicpb"
	"github.com/pulka/pulka/pkg/fairdeal"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// classicPlayer chooses the server's move for a classic seat: the move of a
// player whose time ran out, and every move of a bot seat. It must be
// deterministic — a replayed table must make the same moves — and decide
// only from what the seat may know.
type classicPlayer interface {
	Choose(g *classic.Game, seat int) (classic.Move, bool)
}

// classicBot is the server's classic player: a bot seat plays at the
// table's level, a player whose time ran out gets the strong bot's move
// (their own would have been a person's best). A table without a level was
// created before there were levels: it keeps the baseline everywhere, so
// its logged moves replay the same.
func classicBot(level classic.Level, bot bool, rules scoring.Settings) classicPlayer {
	switch {
	case level == 0:
		return classic.Bot{}
	case !bot:
		level = classic.LevelStrong
	}
	return classic.BotForRules(level, botRules(rules))
}

// botRules is what the strong bot must know of the table's sheet.
func botRules(s scoring.Settings) classic.ScoreRules {
	r := classic.ScoreRules{NoPremia: !s.Premia, NoMoshla: !s.Moshla}
	for n := 1; n <= classic.MaxCards; n++ {
		r.Khishti[n] = s.Khishti.Penalty(n)
	}
	return r
}

type classicEngine struct {
	g     classic.Game
	set   scoring.Settings
	level classic.Level // the bot seats' level; 0: a table from before levels
	buf   []classic.Event
}

func newClassicEngine(s tablesettings.Settings) (*classicEngine, error) {
	g, err := classic.NewLive(classic.Settings{Variant: s.Classic.Variant})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrBadSettings, err)
	}
	return &classicEngine{g: *g, set: s.Classic, level: s.BotLevel, buf: make([]classic.Event, 0, 16)}, nil
}

func (e *classicEngine) toMove() int { return e.g.ToMove() }
func (e *classicEngine) over() bool  { return e.g.Over() }

func (e *classicEngine) phase() tablev1.Phase { return classicpb.Phase(e.g.Phase()) }

func (e *classicEngine) awaitingDeal() bool { return e.g.AwaitingDeal() }
func (e *classicEngine) handIndex() uint32  { return uint32(e.g.HandIndex()) }
func (e *classicEngine) lastHand() bool     { return e.g.HandIndex()+1 >= e.set.Variant.Hands() }

func (e *classicEngine) deal(b *batch, k fairdeal.Key) error {
	evs, err := e.g.Deal(k, e.buf[:0])
	if err != nil {
		return err
	}
	e.buf = evs
	e.convert(b, evs, 0)
	return nil
}

func (e *classicEngine) end(*batch, int, bool) error { return ErrNotAllowed }

func (e *classicEngine) command(b *batch, seat int, cmd *tablev1.Command) error {
	m, err := classicMove(seat, cmd)
	if err != nil {
		return err
	}
	return e.apply(b, m)
}

// classicMove reads a command as a move of seat. The engine checks it.
func classicMove(seat int, cmd *tablev1.Command) (classic.Move, error) {
	switch c := cmd.GetCommand().(type) {
	case *tablev1.Command_Bid:
		n := c.Bid.GetTricks()
		if n > classic.MaxCards {
			return classic.Move{}, classic.ErrBadBid
		}
		return classic.BidMove(seat, int(n)), nil
	case *tablev1.Command_ChooseTrump:
		s, ok := cardpb.FromSuit(c.ChooseTrump.GetTrump())
		if !ok {
			return classic.Move{}, classic.ErrBadTrump
		}
		return classic.TrumpMove(seat, s), nil
	case *tablev1.Command_PlayCard:
		card := cardpb.FromCard(c.PlayCard.GetCard())
		if !card.Valid() {
			return classic.Move{}, ErrMalformed
		}
		if !card.IsJoker() {
			return classic.PlayMove(seat, card), nil
		}
		d := c.PlayCard.GetDeclaration()
		mode, ok := classicpb.FromJokerAction(d.GetAction())
		if !ok {
			return classic.Move{}, classic.ErrBadJokerDeclaration
		}
		suit := cards.NoSuit
		if mode == classic.JokerHighest || mode == classic.JokerGive {
			s, ok := cardpb.FromSuit(d.GetSuit())
			if !ok || !s.Valid() {
				return classic.Move{}, classic.ErrBadJokerDeclaration
			}
			suit = s
		}
		return classic.JokerMove(seat, card, mode, suit), nil
	}
	return classic.Move{}, ErrMalformed
}

func (e *classicEngine) serverMove(b *batch, bot bool) error {
	seat := e.g.ToMove()
	m, ok := classicBot(e.level, bot, e.set).Choose(&e.g, seat)
	if !ok {
		return fmt.Errorf("no move for seat %d", seat)
	}
	return e.apply(b, m)
}

func (e *classicEngine) apply(b *batch, m classic.Move) error {
	// A nine-card hand's chooser has seen three cards already; the deal
	// after trump gives it only the other six.
	var first cards.Set
	if m.Kind == classic.MoveTrump && e.g.Phase() == classic.PhaseTrump && int(m.Seat) == e.g.ToMove() {
		for _, c := range e.g.View(int(m.Seat)).MyCards {
			first = first.With(c)
		}
	}
	evs, err := e.g.Apply(m, e.buf[:0])
	if err != nil {
		return err
	}
	e.buf = evs
	e.convert(b, evs, first)
	return nil
}

// convert emits the contract events of the engine events evs; first is the
// chooser's first three cards when evs start with a trump choice.
func (e *classicEngine) convert(b *batch, evs []classic.Event, first cards.Set) {
	v := e.set.Variant
	chooser := -1
	for i := range evs {
		ev := &evs[i]
		switch ev.Kind {
		case classic.EventHandStarted:
			chooser = -1
			b.add(public(), &tablev1.Event{Event: &tablev1.Event_HandStarted{HandStarted: &tablev1.HandStarted{
				HandIndex: uint32(ev.Hand), PulkaIndex: uint32(v.PulkaOf(int(ev.Hand))),
				CardsPerSeat: uint32(ev.N), DealerSeat: uint32(ev.Seat)}}})
		case classic.EventFirstCards, classic.EventDealt:
			cs := ev.Cards
			if ev.Kind == classic.EventDealt && int(ev.Seat) == chooser {
				cs &^= first
			}
			b.add(toSeat(int(ev.Seat)), &tablev1.Event{Event: &tablev1.Event_Dealt{Dealt: &tablev1.Dealt{
				Seat: uint32(ev.Seat), Cards: cardpb.Cards(cs)}}})
		case classic.EventTrumpTurned:
			b.add(public(), &tablev1.Event{Event: &tablev1.Event_TrumpTurned{TrumpTurned: &tablev1.TrumpTurned{
				Card: cardpb.Card(ev.Card), Trump: cardpb.Suit(ev.Suit)}}})
		case classic.EventTrumpChosen:
			chooser = int(ev.Seat)
			b.add(public(), &tablev1.Event{Event: &tablev1.Event_TrumpChosen{TrumpChosen: &tablev1.TrumpChosen{
				Seat: uint32(ev.Seat), Trump: cardpb.Suit(ev.Suit), ByServer: b.byServer}}})
		case classic.EventBid:
			b.add(public(), &tablev1.Event{Event: &tablev1.Event_BidMade{BidMade: &tablev1.BidMade{
				Seat: uint32(ev.Seat), Tricks: uint32(ev.Bid), ByServer: b.byServer}}})
		case classic.EventPlayed:
			cp := &tablev1.CardPlayed{Seat: uint32(ev.Seat), Card: cardpb.Card(ev.Card), ByServer: b.byServer}
			if ev.Card.IsJoker() {
				a, su := classicpb.Declare(ev.Joker, ev.Suit)
				cp.Declaration = &tablev1.JokerDeclaration{Action: a, Suit: su}
			}
			b.add(public(), &tablev1.Event{Event: &tablev1.Event_CardPlayed{CardPlayed: cp}})
		case classic.EventTrickWon:
			tricks := e.tricksAfter(evs[i+1:], ev.Hand)
			b.add(public(), &tablev1.Event{Event: &tablev1.Event_TrickWon{TrickWon: &tablev1.TrickWon{
				TrickIndex: uint32(ev.Trick), Seat: uint32(ev.Seat), TricksTaken: tricks}}})
		case classic.EventHandEnded:
			e.handEnded(b, ev)
		case classic.EventGameEnded:
			b.t.reveal(b)
			e.gameEnded(b)
		}
	}
}

// tricksAfter is every seat's tricks in hand h after a trick won: the
// engine's count while the hand goes on, the hand's record once the same
// move ended it (the engine has dealt the next hand by then).
func (e *classicEngine) tricksAfter(rest []classic.Event, h int8) []uint32 {
	out := make([]uint32, classic.Seats)
	for i := range rest {
		if rest[i].Kind == classic.EventHandEnded && rest[i].Hand == h {
			for s := range out {
				out[s] = uint32(rest[i].Tricks[s])
			}
			return out
		}
	}
	for s := range out {
		out[s] = uint32(e.g.Tricks(s))
	}
	return out
}

func (e *classicEngine) handEnded(b *batch, ev *classic.Event) {
	n := int(ev.N)
	res := make([]*tablev1.SeatHandResult, classic.Seats)
	for s := range res {
		bid, tricks := int(ev.Bids[s]), int(ev.Tricks[s])
		r := &tablev1.SeatHandResult{Seat: uint32(s), Bid: uint32(bid), Tricks: uint32(tricks)}
		pts, how := scoring.HandScore(n, bid, tricks, e.set.Khishti)
		if how == scoring.ResultKhishti {
			r.Penalty = int64(pts)
		} else {
			r.Points = int64(pts)
		}
		res[s] = r
	}
	b.add(public(), &tablev1.Event{Event: &tablev1.Event_HandEnded{HandEnded: &tablev1.HandEnded{
		HandIndex: uint32(ev.Hand), Results: res}}})
	// The hand's last event is its HandEnded, or the PulkaEnded it closes.
	defer b.t.reveal(b)

	v := e.set.Variant
	p := v.PulkaOf(int(ev.Hand))
	if _, end := v.PulkaHands(p); int(ev.Hand) != end-1 {
		return
	}
	sheet, err := e.sheet()
	if err != nil || p >= len(sheet.Pulkas) {
		b.fail(fmt.Errorf("table: sheet of pulka %d: %w", p, err))
		return
	}
	pt := &sheet.Pulkas[p]
	pr := make([]*tablev1.SeatPulkaResult, classic.Seats)
	for s := range pr {
		pr[s] = &tablev1.SeatPulkaResult{Seat: uint32(s), Premia: int64(pt.Premia[s]),
			Moshla: int64(pt.Moshla[s]), Total: int64(pt.Total[s])}
	}
	b.add(public(), &tablev1.Event{Event: &tablev1.Event_PulkaEnded{PulkaEnded: &tablev1.PulkaEnded{
		PulkaIndex: uint32(p), Results: pr}}})
}

// sheet is the score sheet of the hands played so far.
func (e *classicEngine) sheet() (scoring.Sheet, error) {
	hr := e.g.HandResults()
	in := make([]scoring.HandResult, len(hr))
	for i, h := range hr {
		in[i] = scoring.HandResult{Bids: h.Bids, Tricks: h.Tricks}
	}
	return scoring.Build(e.set, in)
}

func (e *classicEngine) gameEnded(b *batch) {
	sheet, err := e.sheet()
	if err != nil {
		b.fail(fmt.Errorf("table: final sheet: %w", err))
		return
	}
	scores := make([]int64, classic.Seats)
	for s := range scores {
		scores[s] = int64(sheet.Total[s])
	}
	b.add(public(), &tablev1.Event{Event: &tablev1.Event_GameEnded{GameEnded: &tablev1.GameEnded{
		Reason: tablev1.GameEndReason_GAME_END_REASON_COMPLETED, Placings: placings(scores, b.t.endPlayer),
		HandsPlayed: uint32(len(sheet.Hands))}}})
}

func (e *classicEngine) view(seat int, tv *tablev1.TableView) {
	v := e.g.View(seat)
	tv.Phase = e.phase()
	tv.HandIndex = uint32(v.Hand)
	tv.PulkaIndex = uint32(v.Pulka)
	tv.CardsPerSeat = uint32(v.Cards)
	if v.Dealer >= 0 {
		tv.DealerSeat = uint32(v.Dealer)
	}
	if v.ToMove >= 0 {
		tv.TurnSeat = uint32(v.ToMove)
	}
	if v.Trump != "" {
		tv.Trump = cardpb.Suit(parseTrumpText(v.Trump))
	}
	if v.Turned != nil {
		tv.TurnedCard = cardpb.Card(*v.Turned)
	}
	if seat >= 0 {
		for _, c := range v.MyCards {
			tv.YourHand = append(tv.YourHand, cardpb.Card(c))
		}
	}
	for _, pc := range v.Trick {
		p := &tablev1.PlayedCard{Seat: uint32(pc.Seat), Card: cardpb.Card(pc.Card)}
		if pc.Card.IsJoker() {
			p.Declaration = &tablev1.JokerDeclaration{Action: classicpb.JokerAction(pc.Joker)}
			if pc.Suit != "" {
				p.Declaration.Suit = cardpb.Suit(parseTrumpText(pc.Suit))
			}
		}
		tv.Trick = append(tv.Trick, p)
	}
	var total [classic.Seats]int
	if sheet, err := e.sheet(); err == nil {
		total = sheet.Total
	}
	for s, sv := range tv.Seats {
		if v.Bids[s] >= 0 && !v.Over {
			bid := uint32(v.Bids[s])
			sv.Bid = &bid
		}
		sv.Tricks = uint32(v.Tricks[s])
		sv.HandSize = uint32(v.HandSizes[s])
		sv.Score = int64(total[s])
	}
}

// parseTrumpText reads the engine view's suit text: S, H, D, C or NT.
func parseTrumpText(s string) cards.Suit {
	if s == "NT" {
		return cards.NoSuit
	}
	su, err := cards.ParseSuit(s)
	if err != nil {
		return cards.NoSuit + 1 // becomes SUIT_UNSPECIFIED
	}
	return su
}

func (e *classicEngine) marshal() ([]byte, error) { return e.g.MarshalBinary() }

func (e *classicEngine) unmarshal(b []byte) error {
	if err := e.g.UnmarshalBinary(b); err != nil {
		return err
	}
	if e.g.Settings().Variant != e.set.Variant {
		return fmt.Errorf("%w: engine variant %v, settings %v", ErrBadSnapshot, e.g.Settings().Variant, e.set.Variant)
	}
	return nil
}

func (e *classicEngine) legal(seat int) *tablev1.LegalMoves {
	var buf [32]classic.Move
	var trumps [6]cards.Suit
	var bids [classic.MaxCards + 1]uint32
	var plays [32]legalPlay
	nt, nb, np := 0, 0, 0
	for _, m := range e.g.Legal(seat, buf[:0]) {
		switch m.Kind {
		case classic.MoveTrump:
			trumps[nt] = m.Suit
			nt++
		case classic.MoveBid:
			bids[nb] = uint32(m.Bid)
			nb++
		case classic.MovePlay:
			p := legalPlay{card: m.Card}
			if m.Card.IsJoker() {
				p.hasDecl = true
				p.action, p.suit = classicpb.Declare(m.Joker, m.Suit)
			}
			plays[np] = p
			np++
		}
	}
	return buildLegal(seat, e.phase(), trumps[:nt], bids[:nb], plays[:np])
}
