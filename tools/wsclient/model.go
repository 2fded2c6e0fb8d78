package wsclient

import (
	"time"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/cards/cardpb"
	"github.com/pulka/pulka/pkg/classic"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/wire"
)

// SeatInfo is who holds a seat.
type SeatInfo struct {
	PlayerID string
	Name     string
	// Bot: a bot plays the seat now.
	Bot bool
}

// Played is a card on the current trick.
type Played struct {
	Seat  int
	Card  cards.Card
	Joker *tablev1.JokerDeclaration
}

// Model is what one player sees of a table, folded from the events the
// gateway sends it: enough to show the table and to list the legal moves of
// its seat. It trusts the events (the table checked every move) and keeps
// only public information plus the seat's own cards.
//
// Whose turn it is comes from the move timer (an event's timer, or a
// timer_started event), which the table starts whenever a player (not a
// bot) is to move; any move clears it. A Model is not safe
// for concurrent use.
type Model struct {
	TableID  string
	PlayerID string
	Settings *lobbyv1.TableSettings
	Seats    []SeatInfo
	// MySeat is the player's seat, -1 while they hold none (watching).
	MySeat int
	Phase  tablev1.Phase
	// Turn is the seat a player must move for now, -1 when no player is to
	// move (a bot's turn, or the game is over).
	Turn     int
	Deadline time.Time

	HandIndex    int
	CardsPerSeat int
	Dealer       int
	// Trump is the hand's trump, cards.NoSuit for none (bezi); TrumpKnown
	// says whether it is set yet.
	Trump      cards.Suit
	TrumpKnown bool
	TurnedCard cards.Card
	// Hand is the seat's own cards (not its Japanese columns).
	Hand cards.Set
	// Bids per seat, -1 before a seat has bid (classic).
	Bids []int
	// Tricks taken per seat in this hand.
	Tricks []int
	// Points per seat summed over the hands (classic: points and penalties
	// of the hands, without premia; Japanese: the match score).
	Points []int64
	Trick  []Played
	// Columns are each seat's face-up column cards (Japanese; cards.NoCard
	// where a column is gone), FaceDown whether a card lies under it.
	Columns  [][]cards.Card
	FaceDown [][]bool

	// Over: the game ended; End says how.
	Over bool
	End  *tablev1.GameEnded
	// LegalMoves is what the table last said the seat may do (it sends
	// them after the event with the seat's timer); nil once whose turn it is
	// changed.
	LegalMoves *tablev1.LegalMoves
	// Rejected is the last move of this player the table refused.
	Rejected *tablev1.MoveRejected
	// LastSeq is the seq of the last event applied.
	LastSeq uint64

	// handPlayed is every card played this hand, the trick on the table
	// included; results the classic hands finished (what the engine's bot
	// is given, classicView).
	handPlayed cards.Set
	results    []classic.HandResult
}

// NewModel is the model of table as player sees it, before any event.
func NewModel(table, player string) *Model {
	return &Model{TableID: table, PlayerID: player, MySeat: -1, Turn: -1, Dealer: -1,
		Trump: cards.NoSuit, TurnedCard: cards.NoCard}
}

// Japanese reports whether the table plays Japanese joker.
func (m *Model) Japanese() bool { return m.Settings.GetGame() == lobbyv1.Game_GAME_JAPANESE }

// MyTurn reports whether the player is to move now.
func (m *Model) MyTurn() bool { return !m.Over && m.MySeat >= 0 && m.Turn == m.MySeat }

func (m *Model) seats(n int) {
	grow := func(s []int, v int) []int {
		for len(s) < n {
			s = append(s, v)
		}
		return s[:n]
	}
	m.Bids, m.Tricks = grow(m.Bids, -1), grow(m.Tricks, 0)
	for len(m.Points) < n {
		m.Points = append(m.Points, 0)
	}
	for len(m.Seats) < n {
		m.Seats = append(m.Seats, SeatInfo{})
	}
	for len(m.Columns) < n {
		m.Columns = append(m.Columns, nil)
		m.FaceDown = append(m.FaceDown, nil)
	}
}

func (m *Model) startHand() {
	m.Hand, m.Trick, m.handPlayed = 0, nil, 0
	m.Trump, m.TrumpKnown, m.TurnedCard = cards.NoSuit, false, cards.NoCard
	for s := range m.Bids {
		m.Bids[s], m.Tricks[s] = -1, 0
		m.Columns[s], m.FaceDown[s] = nil, nil
	}
}

// valid reports whether seat s is a seat of the table.
func (m *Model) valid(s uint32) bool { return int(s) < len(m.Seats) }

// Apply folds one event into the model. Events at or before LastSeq are
// ignored (a resumed stream never repeats one, but a caller may replay), and
// it reports whether ev was applied.
func (m *Model) Apply(ev *tablev1.Event) bool {
	if ev.GetSeq() != 0 && ev.GetSeq() <= m.LastSeq {
		return false
	}
	if ev.GetSeq() != 0 {
		m.LastSeq = ev.GetSeq()
	}
	switch e := ev.GetEvent().(type) {
	case *tablev1.Event_GameStarted:
		m.Settings = e.GameStarted.GetSettings()
		m.Seats, m.Bids, m.Tricks, m.Points, m.Columns, m.FaceDown = nil, nil, nil, nil, nil, nil
		m.seats(len(e.GameStarted.GetSeats()))
		m.MySeat, m.Over, m.End, m.results = -1, false, nil, nil
		for _, sp := range e.GameStarted.GetSeats() {
			m.seat(sp)
		}
		m.startHand()
	case *tablev1.Event_PlayerSeated:
		m.seat(e.PlayerSeated.GetSeat())
	case *tablev1.Event_PlayerLeft:
		if s := e.PlayerLeft.GetSeat(); m.valid(s) {
			m.Seats[s].Bot = true
			if int(s) == m.MySeat {
				m.MySeat = -1
			}
		}
	case *tablev1.Event_SeatTakenByBot:
		if s := e.SeatTakenByBot.GetSeat(); m.valid(s) {
			m.Seats[s].Bot = true
		}
	case *tablev1.Event_HandStarted:
		h := e.HandStarted
		m.HandIndex, m.CardsPerSeat, m.Dealer = int(h.GetHandIndex()), int(h.GetCardsPerSeat()), int(h.GetDealerSeat())
		m.startHand()
	case *tablev1.Event_Dealt:
		if int(e.Dealt.GetSeat()) == m.MySeat {
			m.Hand |= cardpb.Set(e.Dealt.GetCards())
		}
	case *tablev1.Event_TrumpTurned:
		m.TurnedCard = cardpb.FromCard(e.TrumpTurned.GetCard())
		m.Trump, m.TrumpKnown = cardpb.FromSuit(e.TrumpTurned.GetTrump())
	case *tablev1.Event_TrumpChosen:
		m.Trump, m.TrumpKnown = cardpb.FromSuit(e.TrumpChosen.GetTrump())
		m.Turn, m.LegalMoves = -1, nil
	case *tablev1.Event_ColumnsDealt:
		if s := e.ColumnsDealt.GetSeat(); m.valid(s) {
			up := e.ColumnsDealt.GetFaceUp()
			m.Columns[s], m.FaceDown[s] = make([]cards.Card, len(up)), make([]bool, len(up))
			for i, c := range up {
				m.Columns[s][i], m.FaceDown[s][i] = cardpb.FromCard(c), true
			}
		}
	case *tablev1.Event_ColumnCardRevealed:
		r := e.ColumnCardRevealed
		if int(r.GetSeat()) == m.MySeat {
			m.Hand = m.Hand.With(cardpb.FromCard(r.GetCard()))
		}
		m.columnGone(r.GetSeat(), r.GetColumn(), false)
	case *tablev1.Event_ColumnsToHand:
		s := e.ColumnsToHand.GetSeat()
		for _, col := range e.ColumnsToHand.GetColumns() {
			if int(s) == m.MySeat && m.valid(s) && int(col) < len(m.Columns[s]) {
				m.Hand = m.Hand.With(m.Columns[s][col])
			}
			m.columnGone(s, col, true)
		}
	case *tablev1.Event_BidMade:
		if s := e.BidMade.GetSeat(); m.valid(s) {
			m.Bids[s] = int(e.BidMade.GetTricks())
		}
		m.Turn, m.LegalMoves = -1, nil
	case *tablev1.Event_TimerStarted:
		m.timer(e.TimerStarted)
	case *tablev1.Event_CardPlayed:
		m.played(e.CardPlayed)
	case *tablev1.Event_TrickWon:
		m.Trick = nil
		for s, n := range e.TrickWon.GetTricksTaken() {
			if s < len(m.Tricks) {
				m.Tricks[s] = int(n)
			}
		}
	case *tablev1.Event_HandEnded:
		hr := classic.HandResult{Cards: m.CardsPerSeat}
		for _, r := range e.HandEnded.GetResults() {
			if m.valid(r.GetSeat()) {
				m.Points[r.GetSeat()] += r.GetPoints() + r.GetPenalty()
			}
			if s := r.GetSeat(); s < classic.Seats {
				hr.Bids[s], hr.Tricks[s] = int(r.GetBid()), int(r.GetTricks())
			}
		}
		if !m.Japanese() {
			m.results = append(m.results, hr)
		}
		m.Trick = nil
	case *tablev1.Event_GameEnded:
		m.Over, m.End, m.Turn, m.Phase, m.LegalMoves = true, e.GameEnded, -1, tablev1.Phase_PHASE_GAME_OVER, nil
	case *tablev1.Event_MoveRejected:
		if ev.GetVisibility().GetAudience() == tablev1.Audience_AUDIENCE_PUBLIC {
			break
		}
		m.Rejected = e.MoveRejected
	case *tablev1.Event_ViewSynced:
		m.sync(e.ViewSynced.GetView())
	case *tablev1.Event_LegalMoves:
		if int(e.LegalMoves.GetSeat()) == m.MySeat {
			m.LegalMoves = e.LegalMoves
		}
	}
	if t := ev.GetTimer(); t != nil {
		m.timer(t) // after the event, as a timer_started that followed it
	}
	return true
}

func (m *Model) timer(t *tablev1.TimerStarted) {
	m.Turn, m.Phase, m.LegalMoves = int(t.GetSeat()), t.GetPhase(), nil
	m.Deadline = t.GetDeadline().AsTime()
}

func (m *Model) seat(sp *tablev1.SeatPlayer) {
	s := sp.GetSeat()
	if !m.valid(s) {
		return
	}
	m.Seats[s] = SeatInfo{PlayerID: sp.GetPlayerId(), Name: sp.GetDisplayName(), Bot: sp.GetBot()}
	if sp.GetPlayerId() == m.PlayerID && !sp.GetBot() {
		m.MySeat = int(s)
	}
}

// columnGone removes seat s's column col: its face-up card (when up) and
// the card under it.
func (m *Model) columnGone(s, col uint32, up bool) {
	if !m.valid(s) || int(col) >= len(m.Columns[s]) {
		return
	}
	if up {
		m.Columns[s][col] = cards.NoCard
	}
	m.FaceDown[s][col] = false
}

func (m *Model) played(p *tablev1.CardPlayed) {
	s, c := int(p.GetSeat()), cardpb.FromCard(p.GetCard())
	m.Turn, m.LegalMoves = -1, nil
	if p.Column != nil {
		m.columnGone(p.GetSeat(), p.GetColumn(), true)
	} else if s == m.MySeat {
		m.Hand = m.Hand.Without(c)
	}
	m.Trick = append(m.Trick, Played{Seat: s, Card: c, Joker: p.GetDeclaration()})
	m.handPlayed = m.handPlayed.With(c)
}

// sync replaces everything with a ViewSynced's view.
func (m *Model) sync(v *tablev1.TableView) {
	m.Settings = v.GetSettings()
	n := len(v.GetSeats())
	m.Seats, m.Bids, m.Tricks, m.Points, m.Columns, m.FaceDown = nil, nil, nil, nil, nil, nil
	m.seats(n)
	m.MySeat = -1
	if v.YourSeat != nil {
		m.MySeat = int(v.GetYourSeat())
	}
	m.startHand()
	for s, sv := range v.GetSeats() {
		m.Seats[s] = SeatInfo{PlayerID: sv.GetPlayer().GetPlayerId(), Name: sv.GetPlayer().GetDisplayName(), Bot: sv.GetPlayer().GetBot()}
		if sv.Bid != nil {
			m.Bids[s] = int(sv.GetBid())
		}
		m.Tricks[s] = int(sv.GetTricks())
		m.Points[s] = sv.GetScore()
		if up := sv.GetColumnsFaceUp(); len(up) > 0 {
			m.Columns[s], m.FaceDown[s] = make([]cards.Card, len(up)), make([]bool, len(up))
			for i, c := range up {
				m.Columns[s][i] = cardpb.FromCard(c)
				m.FaceDown[s][i] = i < len(sv.GetColumnsFaceDown()) && sv.GetColumnsFaceDown()[i]
			}
		}
	}
	m.Hand = cardpb.Set(v.GetYourHand())
	m.Phase = v.GetPhase()
	m.HandIndex, m.CardsPerSeat, m.Dealer = int(v.GetHandIndex()), int(v.GetCardsPerSeat()), int(v.GetDealerSeat())
	m.Trump, m.TrumpKnown = cardpb.FromSuit(v.GetTrump())
	m.TurnedCard = cardpb.FromCard(v.GetTurnedCard())
	m.results = nil // a view has no past hands, nor this hand's earlier tricks
	for _, p := range v.GetTrick() {
		m.Trick = append(m.Trick, Played{Seat: int(p.GetSeat()), Card: cardpb.FromCard(p.GetCard()), Joker: p.GetDeclaration()})
		m.handPlayed = m.handPlayed.With(cardpb.FromCard(p.GetCard()))
	}
	m.Over = m.Phase == tablev1.Phase_PHASE_GAME_OVER
	m.Turn, m.LegalMoves = -1, nil
	switch m.Phase {
	case tablev1.Phase_PHASE_CHOOSE_TRUMP, tablev1.Phase_PHASE_BID, tablev1.Phase_PHASE_PLAY:
		m.Turn = int(v.GetTurnSeat())
		m.Deadline = v.GetDeadline().AsTime()
	}
	m.LegalMoves = v.GetLegal()
}

// Playable is the set of cards the seat may play now, from its legal moves
// (empty when it is not its turn to play).
func (m *Model) Playable() cards.Set {
	var set cards.Set
	if !m.MyTurn() || m.Phase != tablev1.Phase_PHASE_PLAY {
		return 0
	}
	for _, p := range m.LegalMoves.GetPlays() {
		set = set.With(cardpb.FromCard(p.GetCard()))
	}
	return set
}

// Legal lists every legal move of the seat now, as the table sent them
// (LegalMoves): nothing when it is not its turn, and nothing at a table
// from before legal moves, which sends none (the table then decides alone).
// A joker is listed once per declaration.
func (m *Model) Legal() []Move {
	lm := m.LegalMoves
	if !m.MyTurn() || lm == nil || int(lm.GetSeat()) != m.MySeat {
		return nil
	}
	var out []Move
	for _, t := range lm.GetTrumps() {
		if s, ok := cardpb.FromSuit(t); ok {
			out = append(out, Move{Kind: MoveTrump, Suit: s})
		}
	}
	for _, b := range lm.GetBids() {
		out = append(out, Move{Kind: MoveBid, Tricks: int(b)})
	}
	for _, p := range lm.GetPlays() {
		c := cardpb.FromCard(p.GetCard())
		if len(p.GetDeclarations()) == 0 {
			out = append(out, Move{Kind: MovePlay, Card: c})
		}
		for _, d := range p.GetDeclarations() {
			out = append(out, Move{Kind: MovePlay, Card: c, Joker: wire.JokerWords(d)})
		}
	}
	return out
}
