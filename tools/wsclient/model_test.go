package wsclient

import (
	"fmt"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/fairdeal"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/golden"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/tools/record"
)

// shadow is the rules engine a test plays alongside the table's game, dealt
// the same keys (proved by the game's reveals) and given the same moves, as
// the oracle of the legal moves.
type shadow interface {
	legal(seat int) []string
	apply(seat int, m Move) error
	awaitingDeal() bool
	hand() int
	deal(k fairdeal.Key) error
	// bot is the engine's baseline bot's move for seat in the real game.
	bot(seat int) string
}

type classicShadow struct{ g *classic.Game }

func (s classicShadow) awaitingDeal() bool { return s.g.AwaitingDeal() }
func (s classicShadow) hand() int          { return s.g.HandIndex() }
func (s classicShadow) deal(k fairdeal.Key) error {
	_, err := s.g.Deal(k, nil)
	return err
}

func (s classicShadow) legal(seat int) []string {
	var out []string
	for _, m := range s.g.Legal(seat, nil) {
		out = append(out, fromClassic(m).String())
	}
	return out
}

func (s classicShadow) apply(seat int, m Move) error {
	var cm classic.Move
	switch m.Kind {
	case MoveTrump:
		cm = classic.TrumpMove(seat, m.Suit)
	case MoveBid:
		cm = classic.BidMove(seat, m.Tricks)
	default:
		cm = classic.PlayMove(seat, m.Card)
		if m.Joker != nil {
			var mode classic.JokerMode
			if err := mode.UnmarshalText([]byte(m.Joker.Action)); err != nil {
				return err
			}
			su := cards.NoSuit
			if m.Joker.Suit != "" {
				su, _ = cards.ParseSuit(m.Joker.Suit)
			}
			cm = classic.JokerMove(seat, m.Card, mode, su)
		}
	}
	_, err := s.g.Apply(cm, nil)
	return err
}

func (s classicShadow) bot(seat int) string {
	m, _ := classic.Bot{}.Choose(s.g, seat)
	return fromClassic(m).String()
}

func fromClassic(m classic.Move) Move {
	switch m.Kind {
	case classic.MoveTrump:
		return Move{Kind: MoveTrump, Suit: m.Suit}
	case classic.MoveBid:
		return Move{Kind: MoveBid, Tricks: int(m.Bid)}
	}
	out := Move{Kind: MovePlay, Card: m.Card}
	if m.Card.IsJoker() {
		out.Joker = &wire.JokerDecl{Action: m.Joker.String()}
		if m.Joker == classic.JokerHighest || m.Joker == classic.JokerGive {
			out.Joker.Suit = m.Suit.String()
		}
	}
	return out
}

type japaneseShadow struct{ g *japanese.Game }

func (s japaneseShadow) awaitingDeal() bool { return s.g.AwaitingDeal() }
func (s japaneseShadow) hand() int          { return s.g.Hand() }
func (s japaneseShadow) deal(k fairdeal.Key) error {
	_, err := s.g.Deal(k, nil)
	return err
}

func (s japaneseShadow) legal(seat int) []string {
	var out []string
	for _, m := range s.g.Legal(seat, nil) {
		mv := Move{Kind: MovePlay, Card: m.Card}
		switch {
		case m.Kind == japanese.KindTrump:
			mv = Move{Kind: MoveTrump, Suit: m.Suit}
		case m.Card.IsJoker() && m.Suit.Valid():
			mv.Joker = &wire.JokerDecl{Action: "highest", Suit: m.Suit.String()}
		case m.Card.IsJoker():
			mv.Joker = &wire.JokerDecl{Action: "take"}
		}
		out = append(out, mv.String())
	}
	return out
}

func (s japaneseShadow) bot(seat int) string {
	m, _ := japanese.Bot{}.Choose(s.g, seat)
	mv := Move{Kind: MovePlay, Card: m.Card}
	switch {
	case m.Kind == japanese.KindTrump:
		mv = Move{Kind: MoveTrump, Suit: m.Suit}
	case m.Card.IsJoker() && m.Suit.Valid():
		mv.Joker = &wire.JokerDecl{Action: "highest", Suit: m.Suit.String()}
	case m.Card.IsJoker():
		mv.Joker = &wire.JokerDecl{Action: "take"}
	}
	return mv.String()
}

func (s japaneseShadow) apply(seat int, m Move) error {
	jm := japanese.PlayMove(seat, m.Card)
	switch {
	case m.Kind == MoveTrump:
		jm = japanese.TrumpMove(seat, m.Suit)
	case m.Joker != nil && m.Joker.Suit != "":
		su, _ := cards.ParseSuit(m.Joker.Suit)
		jm = japanese.LeadJoker(seat, m.Card, su)
	}
	_, err := s.g.Apply(jm, nil)
	return err
}

// visibleTo reports whether the gateway would send ev to the player of seat.
func visibleTo(ev *tablev1.Event, seat int, player string) bool {
	v := ev.GetVisibility()
	switch v.GetAudience() {
	case tablev1.Audience_AUDIENCE_PUBLIC:
		return true
	case tablev1.Audience_AUDIENCE_SEAT:
		return int(v.GetSeat()) == seat
	case tablev1.Audience_AUDIENCE_PLAYER:
		return v.GetPlayerId() == player
	}
	return false
}

// playThrough replays game name of pkg/golden's golden.SetModel — a whole
// game played by the runner's table, whose every seat is a player sending
// one of the engine's legal moves — into a Model per seat, each fed only
// what the gateway sends that seat. Before every move, exactly the moving
// seat's model must be to move, its legal moves must equal the engine's
// (the shadow, dealt the keys the game's own reveals prove), the move made
// must be one of them, and Choose must pick the engine bot's move. The table
// refuses none of the moves, and every model sees the end.
func playThrough(t *testing.T, name string, sh shadow) (moves int) {
	t.Helper()
	evs, err := golden.Events(golden.SetModel, name, golden.KindEvents)
	if err != nil {
		t.Fatal(err)
	}
	var public []*tablev1.Event
	for _, ev := range evs {
		if ev.GetVisibility().GetAudience() == tablev1.Audience_AUDIENCE_PUBLIC {
			public = append(public, ev)
		}
	}
	rec, err := record.FromEvents(public)
	if err != nil {
		t.Fatal(err)
	}
	var models []*Model
	for _, sp := range evs[0].GetGameStarted().GetSeats() {
		models = append(models, NewModel("t1", sp.GetPlayerId()))
	}
	if len(models) < 2 {
		t.Fatalf("game %s does not start with its seats: %v", name, evs[0])
	}
	for i, ev := range evs {
		if r := ev.GetMoveRejected(); r != nil {
			t.Fatalf("event %d: the table refused a move: %v", i, r)
		}
		if seat, ok := moveSeat(ev); ok {
			mover := -1
			for s, m := range models {
				if m.MyTurn() {
					if mover >= 0 {
						t.Fatalf("event %d: seats %d and %d both think they are to move", i, mover, s)
					}
					mover = s
				}
			}
			if mover != seat {
				t.Fatalf("event %d: seat %d moves, the models say seat %d is to move", i, seat, mover)
			}
			if sh.awaitingDeal() {
				k, err := rec.HandKey(sh.hand())
				if err == nil {
					err = sh.deal(k)
				}
				if err != nil {
					t.Fatalf("event %d: deal hand %d: %v", i, sh.hand(), err)
				}
			}
			m := models[mover]
			legal := m.Legal()
			got := make([]string, len(legal))
			for k, mv := range legal {
				got[k] = mv.String()
			}
			want := sh.legal(mover)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("event %d, seat %d (phase %v, trick %v, hand %v): model lists %v, the engine %v",
					i, mover, m.Phase, m.Trick, m.Hand, got, want)
			}
			// Choose is the engine's bot, run on the game the model's events
			// make (FromView): it picks what the bot picks in the real game.
			if mv, ok := m.Choose(); !ok || mv.String() != sh.bot(mover) {
				t.Fatalf("event %d, seat %d: Choose picks %v (%v), the engine's bot %v", i, mover, mv, ok, sh.bot(mover))
			}
			k := slices.IndexFunc(legal, func(mv Move) bool { return made(mv, ev) })
			if k < 0 {
				t.Fatalf("event %d: seat %d made %v, not one of the model's moves %v", i, mover, ev, got)
			}
			if err := sh.apply(mover, legal[k]); err != nil {
				t.Fatalf("event %d: shadow engine refused %v: %v", i, legal[k], err)
			}
			moves++
		}
		for s, m := range models {
			if visibleTo(ev, s, m.PlayerID) {
				m.Apply(ev)
			}
		}
	}
	for s, m := range models {
		if !m.Over || m.End == nil {
			t.Fatalf("seat %d's model did not see the end", s)
		}
		if m.MyTurn() || len(m.Legal()) != 0 {
			t.Fatalf("seat %d's model lists moves after the end", s)
		}
	}
	return moves
}

// moveSeat is the seat whose move ev is (a bid, a trump chosen, a card
// played), ok false for other events.
func moveSeat(ev *tablev1.Event) (seat int, ok bool) {
	switch e := ev.GetEvent().(type) {
	case *tablev1.Event_BidMade:
		return int(e.BidMade.GetSeat()), true
	case *tablev1.Event_TrumpChosen:
		return int(e.TrumpChosen.GetSeat()), true
	case *tablev1.Event_CardPlayed:
		return int(e.CardPlayed.GetSeat()), true
	}
	return -1, false
}

// made reports whether ev is move mv, as the gateway sends it, made: the
// same bid, trump, or card with the same joker declaration.
func made(mv Move, ev *tablev1.Event) bool {
	tc, err := MoveCommand("t1", mv)
	if err != nil {
		return false
	}
	switch e := ev.GetEvent().(type) {
	case *tablev1.Event_BidMade:
		return tc.GetBid() != nil && tc.GetBid().GetTricks() == e.BidMade.GetTricks()
	case *tablev1.Event_TrumpChosen:
		return tc.GetTrump() != nil && tc.GetTrump().GetTrump() == e.TrumpChosen.GetTrump()
	case *tablev1.Event_CardPlayed:
		p := tc.GetPlay()
		return p != nil && p.GetCard() == e.CardPlayed.GetCard() && proto.Equal(p.GetDeclaration(), e.CardPlayed.GetDeclaration())
	}
	return false
}

func TestModel_LegalMovesEqualTheClassicEngineOverWholeGames(t *testing.T) {
	for seed := 1; seed <= 6; seed++ {
		for _, v := range []classic.Variant{classic.Standard, classic.Nines} {
			t.Run(fmt.Sprintf("%v/seed%d", v, seed), func(t *testing.T) {
				g, err := classic.NewLive(classic.Settings{Variant: v})
				if err != nil {
					t.Fatal(err)
				}
				if n := playThrough(t, fmt.Sprintf("classic-%v-%d", v, seed), classicShadow{g}); n < 100 {
					t.Fatalf("only %d moves in a whole game", n)
				}
			})
		}
	}
}

func TestModel_LegalMovesEqualTheJapaneseEngineOverWholeMatches(t *testing.T) {
	for seed := 1; seed <= 6; seed++ {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			g, err := japanese.NewLive(japanese.Settings{Target: 11})
			if err != nil {
				t.Fatal(err)
			}
			playThrough(t, fmt.Sprintf("japanese-%d", seed), japaneseShadow{g})
		})
	}
}
