package table

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/cards/cardpb"
	"github.com/pulka/pulka/pkg/classic"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// candidates is every move a client can express for seat's phase, each
// joker declaration in its documented form (docs/protocol.md): every bid,
// every trump, every card alone and every joker with every declaration.
func candidates(t *Table) []*tablev1.Command {
	var out []*tablev1.Command
	for n := range classic.MaxCards + 2 {
		out = append(out, bidCmd(n))
	}
	for s := cards.Spades; s <= cards.NoSuit; s++ {
		out = append(out, trumpCmd(s))
	}
	decls := []*tablev1.JokerDeclaration{{Action: tablev1.JokerAction_JOKER_ACTION_TAKE}}
	if t.set.Game == tablesettings.Classic {
		decls = append(decls, &tablev1.JokerDeclaration{Action: tablev1.JokerAction_JOKER_ACTION_DISCARD})
	}
	for _, s := range cards.Suits {
		decls = append(decls, &tablev1.JokerDeclaration{Action: tablev1.JokerAction_JOKER_ACTION_HIGHEST, Suit: cardpb.Suit(s)})
		if t.set.Game == tablesettings.Classic {
			decls = append(decls, &tablev1.JokerDeclaration{Action: tablev1.JokerAction_JOKER_ACTION_GIVE, Suit: cardpb.Suit(s)})
		}
	}
	for c := cards.Card(0); c < cards.DeckSize; c++ {
		if !c.IsJoker() {
			out = append(out, playCmd(c))
			continue
		}
		for _, d := range decls {
			out = append(out, &tablev1.Command{Command: &tablev1.Command_PlayCard{PlayCard: &tablev1.PlayCardCommand{
				Card: cardpb.Card(c), Declaration: d}}})
		}
	}
	return out
}

// offered reports whether lm lists the move of c.
func offered(lm *tablev1.LegalMoves, c *tablev1.Command) bool {
	switch x := c.GetCommand().(type) {
	case *tablev1.Command_Bid:
		return lm.GetPhase() == tablev1.Phase_PHASE_BID && slices.Contains(lm.GetBids(), x.Bid.GetTricks())
	case *tablev1.Command_ChooseTrump:
		return lm.GetPhase() == tablev1.Phase_PHASE_CHOOSE_TRUMP && slices.Contains(lm.GetTrumps(), x.ChooseTrump.GetTrump())
	case *tablev1.Command_PlayCard:
		if lm.GetPhase() != tablev1.Phase_PHASE_PLAY {
			return false
		}
		for _, p := range lm.GetPlays() {
			if p.GetCard() != x.PlayCard.GetCard() {
				continue
			}
			if len(p.GetDeclarations()) == 0 {
				return x.PlayCard.GetDeclaration() == nil
			}
			return slices.ContainsFunc(p.GetDeclarations(), func(d *tablev1.JokerDeclaration) bool {
				return proto.Equal(d, x.PlayCard.GetDeclaration())
			})
		}
	}
	return false
}

// accepts reports whether the table would apply c from seat's player now,
// on a copy restored from its snapshot.
func accepts(tb testing.TB, h *harness, seat int, c *tablev1.Command) bool {
	tb.Helper()
	r, err := Restore(state(tb, h.t))
	if err != nil {
		tb.Fatal(err)
	}
	c = proto.Clone(c).(*tablev1.Command)
	c.CommandId, c.PlayerId, c.TableId = "probe", r.seats[seat].player, r.ID()
	in := CommandInput(c, strconv.FormatUint(r.last.ms+1, 10)+"-0", h.now)
	in.Entropy = entropyOf(h.seed, 1<<20) // a move that ends a hand commits the one after next
	evs, err := r.Apply(in)
	return err == nil && len(evs) > 0
}

// TestLegalMoves_ExactlyWhatTheTableAcceptsToTheSeatAlone: over random games
// (bots, timers, leaves, sits, refusals, reconnects), whenever a player is to
// move, the last LegalMoves the table sent went to that seat alone, equals
// what its view says, and lists exactly the moves the table accepts from it:
// every bid, trump, card and joker declaration a client can express was
// tried on a copy of the table. Bots are sent none.
func TestLegalMoves_ExactlyWhatTheTableAcceptsToTheSeatAlone(t *testing.T) {
	games, probeEvery := 16, 7
	if testing.Short() || raceOn {
		games = 6
	}
	checked, probed := 0, 0
	for g := range games {
		d := newDriver(t, uint64(70000+g))
		var last *tablev1.LegalMoves
		see := func(evs []*tablev1.Event) {
			for _, e := range evs {
				lm := e.GetLegalMoves()
				if lm == nil {
					continue
				}
				v := e.GetVisibility()
				if v.GetAudience() != tablev1.Audience_AUDIENCE_SEAT || v.GetSeat() != lm.GetSeat() {
					t.Fatalf("game %d: legal moves of seat %d sent to %v", g, lm.GetSeat(), v)
				}
				if e.GetTimer() != nil {
					t.Fatalf("game %d: legal moves carry a timer", g)
				}
				last = lm
			}
		}
		see(d.h.start)
		seen := 0
		for i := 0; i < 3000 && !d.h.t.Over(); i++ {
			d.step()
			for _, l := range d.h.log[seen:] {
				see(l.evs)
			}
			seen = len(d.h.log)
			tt := d.h.t
			s := tt.eng.toMove()
			if s < 0 || tt.seats[s].mode != seatHuman {
				if v := tt.View(max(s, 0)); v.GetLegal() != nil {
					t.Fatalf("game %d: the view of seat %d offers moves while a bot or nobody is to move", g, s)
				}
				continue
			}
			checked++
			view := tt.View(s).GetLegal()
			if last == nil || int(last.GetSeat()) != s || !proto.Equal(last, view) {
				t.Fatalf("game %d step %d: seat %d to move; last legal moves sent %v, its view %v", g, i, s, last, view)
			}
			for o := -1; o < len(tt.seats); o++ {
				if o != s && tt.View(o).GetLegal() != nil {
					t.Fatalf("game %d: the view of seat %d offers seat %d's moves", g, o, s)
				}
			}
			// Probe only while nothing is due: at a passed deadline the
			// server moves first, and the moves offered are of before it.
			if next, ok := tt.NextDeadline(); checked%probeEvery != 0 || (ok && !next.After(d.h.now)) {
				continue
			}
			probed++
			for _, c := range candidates(tt) {
				if got, want := accepts(t, d.h, s, c), offered(view, c); got != want {
					t.Fatalf("game %d step %d: %v from seat %d: the table accepts it %v, the legal moves offer it %v (%v)",
						g, i, c.GetCommand(), s, got, want, view)
				}
			}
		}
	}
	if checked == 0 || probed == 0 {
		t.Fatal("no player was ever to move")
	}
	t.Logf("%d games: %d turns checked, %d probed with every move", games, checked, probed)
}

// TestLegalMoves_TheDealersForbiddenBidAndTheFollowRule: the two rules the
// clients used to re-implement, as the table now sends them.
func TestLegalMoves_TheDealersForbiddenBidAndTheFollowRule(t *testing.T) {
	h := newHarness(t, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 7, humans(4))
	// Hand 0 deals one card each: the dealer (seat 3 bids last) may not
	// make the bids total 1.
	lastLegal := func(evs []*tablev1.Event) *tablev1.LegalMoves {
		for i := len(evs) - 1; i >= 0; i-- {
			if lm := evs[i].GetLegalMoves(); lm != nil {
				return lm
			}
		}
		t.Fatalf("no legal moves in %v", kinds(evs))
		return nil
	}
	lm := lastLegal(h.start)
	if s := h.t.eng.toMove(); int(lm.GetSeat()) != s || !slices.Equal(lm.GetBids(), []uint32{0, 1}) {
		t.Fatalf("first bidder %d: %v, want bids 0 and 1", s, lm)
	}
	var evs []*tablev1.Event
	for range 3 {
		s := h.t.eng.toMove()
		evs = h.mustCmd(player(s), bidCmd(0))
	}
	dealer := h.t.eng.toMove()
	lm = lastLegal(evs)
	if int(lm.GetSeat()) != dealer || !slices.Equal(lm.GetBids(), []uint32{0}) {
		t.Fatalf("the dealer after three zeros: %v, want only 0 (1 would make the total the cards dealt)", lm)
	}
	evs = h.mustCmd(player(dealer), bidCmd(0))
	lm = lastLegal(evs)
	leader := h.t.eng.toMove()
	v := h.t.View(leader)
	if int(lm.GetSeat()) != leader || lm.GetPhase() != tablev1.Phase_PHASE_PLAY || len(lm.GetPlays()) != 1 ||
		lm.GetPlays()[0].GetCard() != v.GetYourHand()[0] {
		t.Fatalf("the leader of a one-card hand: %v, want its one card %v", lm, v.GetYourHand())
	}
}

// TestLegalMoves_ABotIsSentNoneAndAPlayerTakingTheSeatBackIs: a seat its
// player left is a bot's (no legal moves); the player sitting again while
// it is the seat's turn gets its moves at once.
func TestLegalMoves_ABotIsSentNoneAndAPlayerTakingTheSeatBackIs(t *testing.T) {
	h := newHarness(t, classicSet(classic.Standard, time.Hour), 7, humans(4))
	s := h.t.eng.toMove()
	evs := h.mustCmd(player(s), leaveCmd())
	if count(evs, "legal_moves") != 0 {
		t.Fatalf("a bot's seat was sent legal moves: %v", kinds(evs))
	}
	if h.t.View(s).GetLegal() != nil {
		t.Fatal("the view offers moves to a seat a bot plays")
	}
	evs = h.mustCmd(player(s), sitCmd(s))
	lm, ok := find(evs, (*tablev1.Event).GetLegalMoves)
	if !ok || int(lm.GetSeat()) != s || !proto.Equal(lm, h.t.View(s).GetLegal()) {
		t.Fatalf("back in seat %d: %v, want its legal moves", s, kinds(evs))
	}
}

// TestLegalMoves_ATableFromBeforeThemSendsNone: a table restored from a
// snapshot written before legal moves replays to the events it had.
func TestLegalMoves_ATableFromBeforeThemSendsNone(t *testing.T) {
	h := newHarness(t, classicSet(classic.Standard, tablesettings.DefaultBotDelay), 7, humans(4))
	h.t.legal = false
	r, err := Restore(state(t, h.t))
	if err != nil || r.legal {
		t.Fatalf("restored: %v, legal %v", err, r != nil && r.legal)
	}
	h.t = r
	s := h.t.eng.toMove()
	evs := h.mustCmd(player(s), legalCommands(h.t, s)[0])
	if count(evs, "legal_moves") != 0 || h.t.View(h.t.eng.toMove()).GetLegal() != nil {
		t.Fatalf("a table from before legal moves sent some: %v", kinds(evs))
	}
}
