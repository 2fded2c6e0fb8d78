package wsclient

import (
	"errors"
	"fmt"

	"github.com/pulka/pulka/pkg/cards/cardpb"
	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/classic/classicpb"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/japanese/japanesepb"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/pkg/wire"
)

// Choose picks the seat's move with the engine's baseline bot (classic.Bot,
// japanese.Bot) — the one the server seats at its tables — run on a game
// made from what the seat was sent (classic.FromView, japanese.FromView),
// so the Go clients hold no bot of their own. It is meant to keep games
// going in tools and tests. The move is always one of Legal's; ok is false
// when the seat has no move now (not its turn, or the table sent no legal
// moves yet).
func (m *Model) Choose() (Move, bool) {
	legal := m.Legal()
	if len(legal) == 0 {
		return Move{}, false
	}
	mv, err := m.botMove()
	if err == nil {
		for _, l := range legal {
			if l.String() == mv.String() {
				return l, true
			}
		}
	}
	// A model that missed part of the hand (joined after a trimmed history)
	// can disagree with the table: the table's list decides.
	return legal[0], true
}

// botMove is the engine bot's move for the seat.
func (m *Model) botMove() (Move, error) {
	set, err := tablesettings.FromProto(m.Settings)
	if err != nil {
		return Move{}, err
	}
	if set.Game == tablesettings.Japanese {
		v, err := m.japaneseView(set.JapaneseTarget)
		if err != nil {
			return Move{}, err
		}
		g, err := japanese.FromView(v)
		if err != nil {
			return Move{}, err
		}
		jm, ok := japanese.Bot{}.Choose(g, m.MySeat)
		if !ok {
			return Move{}, errNoBotMove
		}
		switch jm.Kind {
		case japanese.KindTrump:
			return Move{Kind: MoveTrump, Suit: jm.Suit}, nil
		case japanese.KindPlay:
			mv := Move{Kind: MovePlay, Card: jm.Card}
			if jm.Card.IsJoker() {
				a, su := japanesepb.Declare(jm.Suit)
				mv.Joker = wire.JokerWords(&tablev1.JokerDeclaration{Action: a, Suit: su})
			}
			return mv, nil
		}
		return Move{}, errNoBotMove
	}
	g, err := classic.FromView(m.classicView(set.Classic.Variant))
	if err != nil {
		return Move{}, err
	}
	cm, ok := classic.Bot{}.Choose(g, m.MySeat)
	if !ok {
		return Move{}, errNoBotMove
	}
	switch cm.Kind {
	case classic.MoveTrump:
		return Move{Kind: MoveTrump, Suit: cm.Suit}, nil
	case classic.MoveBid:
		return Move{Kind: MoveBid, Tricks: int(cm.Bid)}, nil
	case classic.MovePlay:
		mv := Move{Kind: MovePlay, Card: cm.Card}
		if cm.Card.IsJoker() {
			a, su := classicpb.Declare(cm.Joker, cm.Suit)
			mv.Joker = wire.JokerWords(&tablev1.JokerDeclaration{Action: a, Suit: su})
		}
		return mv, nil
	}
	return Move{}, errNoBotMove
}

var errNoBotMove = errors.New("wsclient: the bot has no move")

// classicView is what the seat knows, as classic.View says it.
func (m *Model) classicView(variant classic.Variant) classic.View {
	v := classic.View{
		Seat: m.MySeat, Variant: variant, Hands: variant.Hands(), Hand: m.HandIndex, Cards: m.CardsPerSeat,
		Dealer: m.Dealer, Phase: classicPhaseOf(m.Phase), ToMove: m.Turn, Forbidden: -1,
		MyCards: m.Hand.Cards(), Played: m.handPlayed.Cards(), Results: m.results,
	}
	if m.TrumpKnown {
		v.Trump = "NT"
		if m.Trump.Valid() {
			v.Trump = m.Trump.String()
		}
	}
	if m.TurnedCard.Valid() {
		t := m.TurnedCard
		v.Turned = &t
	}
	done := 0
	for s := range classic.Seats {
		if s < len(m.Bids) {
			v.Bids[s], v.Tricks[s] = m.Bids[s], m.Tricks[s]
			done += m.Tricks[s]
		}
	}
	// The first trick's leader is the seat after the dealer; a later one,
	// with nothing on the table yet, is the seat to move.
	v.TrickNo, v.Leader = done, (m.Dealer+1)%classic.Seats
	if v.Phase == classic.PhasePlay && len(m.Trick) == 0 {
		v.Leader = m.Turn
	}
	for i, p := range m.Trick {
		if i == 0 {
			v.Leader = p.Seat
		}
		pc := classic.PlayedCard{Seat: p.Seat, Card: p.Card}
		if p.Card.IsJoker() {
			pc.Joker, _ = classicpb.FromJokerAction(p.Joker.GetAction())
			if s, ok := cardpb.FromSuit(p.Joker.GetSuit()); ok && s.Valid() {
				pc.Suit = s.String()
			}
		}
		v.Trick = append(v.Trick, pc)
	}
	for s := range classic.Seats {
		switch v.Phase {
		case classic.PhaseTrump:
			v.HandSizes[s] = 3
		case classic.PhaseBid:
			v.HandSizes[s] = m.CardsPerSeat
		default:
			v.HandSizes[s] = m.CardsPerSeat - done
			if (s-v.Leader+classic.Seats)%classic.Seats < len(m.Trick) {
				v.HandSizes[s]--
			}
		}
	}
	return v
}

// classicPhaseOf is p, PhaseOver for a phase no move is made in.
func classicPhaseOf(p tablev1.Phase) classic.Phase {
	if ph, ok := classicpb.FromPhase(p); ok {
		return ph
	}
	return classic.PhaseOver
}

// japaneseView is what the seat knows, as japanese.View says it.
func (m *Model) japaneseView(target int) (japanese.View, error) {
	if target == 0 {
		target = japanese.DefaultTarget
	}
	if m.MySeat < 0 || m.MySeat >= japanese.Seats || len(m.Tricks) != japanese.Seats {
		return japanese.View{}, fmt.Errorf("wsclient: seat %d of a Japanese table", m.MySeat)
	}
	v := japanese.View{
		Seat: m.MySeat, Hand: m.HandIndex, Phase: japanese.PhasePlay, Declarer: m.Dealer, ToMove: m.Turn,
		Leader: m.Turn, MyCards: m.Hand.Cards(), Target: target, Winner: -1,
	}
	if m.Phase == tablev1.Phase_PHASE_CHOOSE_TRUMP {
		v.Phase = japanese.PhaseTrump
	}
	if m.TrumpKnown {
		v.Trump = "bezi"
		if m.Trump.Valid() {
			v.Trump = m.Trump.String()
		}
	}
	gone := m.handPlayed
	for i, p := range m.Trick {
		if i == 0 {
			v.Leader = p.Seat
		}
		tc := japanese.TrickCard{Seat: p.Seat, Card: p.Card}
		if s, ok := cardpb.FromSuit(p.Joker.GetSuit()); ok && s.Valid() && i == 0 && p.Card.IsJoker() {
			tc.Named = s.String()
		}
		v.CurrentTrick = append(v.CurrentTrick, tc)
		gone = gone.Without(p.Card)
	}
	v.Played = gone.Cards()
	for s := range japanese.Seats {
		v.Tricks[s], v.Scores[s] = m.Tricks[s], int(m.Points[s])
		v.Trick += m.Tricks[s]
	}
	for s := range japanese.Seats {
		onTable := 0
		v.Columns[s] = []japanese.ColumnView{}
		for c, up := range m.Columns[s] {
			if up.Valid() {
				v.Columns[s] = append(v.Columns[s], japanese.ColumnView{Column: c, Up: up})
			}
			onTable += boolInt(up.Valid()) + boolInt(m.FaceDown[s][c])
		}
		// Every card a seat has not played is in its hand or on its columns.
		left := japanese.TricksPerHand - v.Trick
		for _, p := range m.Trick {
			if p.Seat == s {
				left--
			}
		}
		v.HandSizes[s] = left - onTable
	}
	v.HandSizes[m.MySeat] = m.Hand.Len()
	return v, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
