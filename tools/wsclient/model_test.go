package wsclient

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/fairdeal"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/table"
	"github.com/pulka/pulka/pkg/tablesettings"
	"github.com/pulka/pulka/pkg/wire"
)

// shadow is the rules engine a test plays alongside the table, dealt the
// same keys (read from the table, as only the server could) and given the
// same moves, as the oracle of the legal moves.
type shadow interface {
	legal(seat int) []string
	apply(seat int, m Move) error
	awaitingDeal() bool
	deal(k fairdeal.Key) error
}

type classicShadow struct{ g *classic.Game }

func (s classicShadow) awaitingDeal() bool { return s.g.AwaitingDeal() }
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

// playThrough plays a whole game at a pkg/table table whose every seat is
// a player with a Model fed only what the gateway would send that seat.
// pick chooses among the model's legal moves. At every turn the model's
// legal moves must equal the engine's, and the table must accept the pick.
func playThrough(t *testing.T, settings tablesettings.Settings, seed uint64, sh shadow, pick func(m *Model, legal []Move) Move) (moves int) {
	t.Helper()
	n := 4
	if settings.Game == tablesettings.Japanese {
		n = 2
	}
	seats := make([]table.SeatInfo, n)
	models := make([]*Model, n)
	for s := range seats {
		p := "p" + strconv.Itoa(s)
		seats[s] = table.SeatInfo{PlayerID: p, Name: p}
		models[s] = NewModel("t1", p)
	}
	now := time.Unix(1_800_000_000, 0)
	tb, evs, err := table.New("t1", "g1", settings, seats, now, table.Entropy(fairdeal.LocalKey(seed, 0)))
	if err != nil {
		t.Fatal(err)
	}
	inputs := 0
	apply := func(in table.Input) ([]*tablev1.Event, error) {
		inputs++
		in.Entropy = table.Entropy(fairdeal.LocalKey(seed, uint32(inputs)))
		return tb.Apply(in)
	}
	// The shadow is dealt each hand the table deals.
	dealShadow := func() {
		if sd, ok := tb.CurrentSeeds(); ok && sd.Dealt && sh.awaitingDeal() {
			k, err := sd.Key()
			if err == nil {
				err = sh.deal(k)
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	feed := func(evs []*tablev1.Event) {
		defer dealShadow()
		for _, ev := range evs {
			if r := ev.GetMoveRejected(); r != nil {
				t.Fatalf("the table refused a move the model listed: %v", r)
			}
			for s, m := range models {
				if visibleTo(ev, s, m.PlayerID) {
					m.Apply(ev)
				}
			}
		}
	}
	feed(evs)
	for step := 0; step < 5000 && !tb.Over(); step++ {
		mover := -1
		for s, m := range models {
			if m.MyTurn() {
				if mover >= 0 {
					t.Fatalf("step %d: seats %d and %d both think they are to move", step, mover, s)
				}
				mover = s
			}
		}
		if mover < 0 {
			// A hand waits for its client seeds (nobody here sends any):
			// it is dealt at the seed deadline.
			if next, ok := tb.NextDeadline(); ok && sh.awaitingDeal() {
				now = next
				evs, err := apply(table.Tick(now))
				if err != nil {
					t.Fatal(err)
				}
				feed(evs)
				continue
			}
			t.Fatalf("step %d: no model is to move, yet the game goes on", step)
		}
		m := models[mover]
		legal := m.Legal()
		got := make([]string, len(legal))
		for i, mv := range legal {
			got[i] = mv.String()
		}
		want := sh.legal(mover)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("step %d, seat %d (phase %v, trick %v, hand %v): model lists %v, the engine %v",
				step, mover, m.Phase, m.Trick, m.Hand, got, want)
		}
		mv := pick(m, legal)
		if err := sh.apply(mover, mv); err != nil {
			t.Fatalf("step %d: shadow engine refused %v: %v", step, mv, err)
		}
		cmd, err := commandOf(mv, "t1", m.PlayerID, fmt.Sprintf("k%d", step))
		if err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
		evs, err := apply(table.CommandInput(cmd, fmt.Sprintf("%d-0", step+1), now))
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		feed(evs)
		moves++
	}
	if !tb.Over() {
		t.Fatal("the game did not end")
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

// commandOf is the table command the gateway makes of a move.
func commandOf(mv Move, tableID, player, key string) (*tablev1.Command, error) {
	m, err := MoveCommand(tableID, mv)
	if err != nil {
		return nil, err
	}
	m.Cmd = key
	return wire.Command(m, player, wire.CommandID(player, key))
}

func chooseBaseline(m *Model, _ []Move) Move {
	mv, ok := m.Choose()
	if !ok {
		panic("Choose found no move on the seat's turn")
	}
	return mv
}

func pickRandom(seed uint64) func(*Model, []Move) Move {
	rng := cards.NewRNG(seed, 7)
	return func(_ *Model, legal []Move) Move { return legal[rng.IntN(len(legal))] }
}

func TestModel_LegalMovesEqualTheClassicEngineOverWholeGames(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		for _, v := range []classic.Variant{classic.Standard, classic.Nines} {
			pick := chooseBaseline
			if seed%2 == 0 {
				pick = pickRandom(seed) // random moves reach jokers led and discarded
			}
			t.Run(fmt.Sprintf("%v/seed%d", v, seed), func(t *testing.T) {
				s := tablesettings.ClassicSettings(scoring.Settings{Variant: v, Khishti: scoring.Khishti200})
				g, err := classic.NewLive(classic.Settings{Variant: v})
				if err != nil {
					t.Fatal(err)
				}
				if n := playThrough(t, s, seed, classicShadow{g}, pick); n < 100 {
					t.Fatalf("only %d moves in a whole game", n)
				}
			})
		}
	}
}

func TestModel_LegalMovesEqualTheJapaneseEngineOverWholeMatches(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		pick := chooseBaseline
		if seed%2 == 0 {
			pick = pickRandom(seed)
		}
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			s := tablesettings.JapaneseSettings(11)
			g, err := japanese.NewLive(japanese.Settings{Target: 11})
			if err != nil {
				t.Fatal(err)
			}
			playThrough(t, s, seed, japaneseShadow{g}, pick)
		})
	}
}
