package japanese

// An independent review of the engine against /work/shared/spec/rules.md
// (Japanese section) and seed 002. Tests are named after the rule they
// check; docs/rules-review.md lists what was checked and found. The
// reference functions at the bottom are written from the wording of the
// rules, and random matches are checked against them through the public API
// (views and events), move by move.

import (
	"errors"
	"fmt"
	"testing"

	"github.com/pulka/pulka/pkg/cards"
)

// rvAnswer is a position where seat 0 has led and seat 1 answers.
type rvAnswer struct {
	name    string
	trump   cards.Suit // NoSuit: bezi
	first   bool       // seat 1's first card of the hand (trick 0)
	lead    string
	named   cards.Suit
	hand    string
	up      string // seat 1's face-up cards, one per column
	legal   string
	bad     string
	badErr  error
	play    string
	takerIs int
}

func rvRunAnswers(t *testing.T, cases []rvAnswer) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			trickNo := 3
			if c.first {
				trickNo = 0
			}
			// Face-down cards under seat 1's columns: whatever the table
			// does not use, so that every card is in one place.
			used := setOf(t, c.lead+" "+c.hand+" "+c.up)
			spare := (cards.FullDeck &^ used &^ cards.Jokers).Cards()
			downs := ""
			for i := range parseCards(t, c.up) {
				downs += " " + spare[len(spare)-1-i].String()
			}
			g := pos{Trump: c.trump, TrickNo: trickNo, Lead: c.lead, Named: c.named,
				Hands: [Seats]string{"", c.hand}, Up: [Seats]string{"", c.up},
				Down: [Seats]string{"", downs}}.game(t)
			if got, want := g.LegalCards(1), setOf(t, c.legal); got != want {
				t.Fatalf("seat 1 may play %v, want %v", got, want)
			}
			if c.bad != "" {
				before := *g
				_, err := g.Apply(PlayMove(1, card(t, c.bad)), nil)
				if !errors.Is(err, c.badErr) || *g != before {
					t.Fatalf("%s: %v, want %v with the game unchanged", c.bad, err, c.badErr)
				}
			}
			ev := mustApply(t, g, PlayMove(1, card(t, c.play)))
			won := eventsOf(ev, EventTrickWon)
			if len(won) != 1 || int(won[0].Seat) != c.takerIs {
				t.Fatalf("trick won by %+v, want seat %d", won, c.takerIs)
			}
			// Seat 0 led and seat 1 answered, so positions are seats here.
			if ref := rvRefWinner(card(t, c.lead), c.named, card(t, c.play), c.trump); ref != c.takerIs {
				t.Fatalf("the reference reading says seat %d takes it: fix the table", ref)
			}
		})
	}
}

// Follow suit if the suit is in the hand or among the face-up cards; if not,
// trump if you can (not in bezi); otherwise any card. A joker is always
// legal. The first card of the hand comes from the hand, so face-up cards
// neither may be played nor oblige anything until then.
func TestReview_JP_FollowSuitCountsFaceUpCards(t *testing.T) {
	H, NT := cards.Hearts, cards.NoSuit
	rvRunAnswers(t, []rvAnswer{
		{name: "suit only face up must be followed", trump: H, lead: "9D", hand: "7S 8H", up: "JD 7C",
			legal: "JD", bad: "8H", badErr: ErrMustFollowSuit, play: "JD", takerIs: 1},
		{name: "suit in hand and face up: either", trump: H, lead: "9D", hand: "7D 8H", up: "JD 7C",
			legal: "7D JD", bad: "7C", badErr: ErrMustFollowSuit, play: "7D", takerIs: 0},
		{name: "void, trump only face up", trump: H, lead: "9D", hand: "7S 8C", up: "10H 7C",
			legal: "10H", bad: "7S", badErr: ErrMustTrump, play: "10H", takerIs: 1},
		{name: "void, trump in hand and face up: any of them", trump: H, lead: "9D", hand: "7H 8C", up: "10H 7C",
			legal: "7H 10H", bad: "7C", badErr: ErrMustTrump, play: "7H", takerIs: 1},
		{name: "bezi, void: any card, the leader keeps it", trump: NT, lead: "9D", hand: "7H 8C", up: "AH 7C",
			legal: "7H 8C AH 7C", play: "AH", takerIs: 0},
		{name: "a joker is legal while holding the suit", trump: H, lead: "AD", hand: "7D JK2", up: "JD",
			legal: "7D JD JK2", play: "JK2", takerIs: 1},
		{name: "a joker beats the trump ace led", trump: H, lead: "AH", hand: "7H JK1", up: "KH",
			legal: "7H KH JK1", play: "JK1", takerIs: 1},
		{name: "first card: face-up suit does not oblige and cannot be played", trump: H, first: true, lead: "9D",
			hand: "7S 8C", up: "JD 7C 8D 9C 10C", legal: "7S 8C", bad: "JD", badErr: ErrFirstCardFromHand,
			play: "8C", takerIs: 0},
		{name: "first card: the trump obligation looks at the hand only", trump: H, first: true, lead: "9D",
			hand: "7S 8H", up: "JD 7C 8D 9C 10C", legal: "8H", bad: "7S", badErr: ErrMustTrump,
			play: "8H", takerIs: 1},
	})
}

// A led joker names a suit S: the opponent gives their highest available S
// (hand or face up) and the joker takes the trick, except that when the
// opponent has no S and S is not trump (and the hand is not bezi) they must
// trump if they can, and the trump takes it. Two jokers: the second wins.
func TestReview_JP_JokerLedNamesASuit(t *testing.T) {
	S, H, D, NT := cards.Spades, cards.Hearts, cards.Diamonds, cards.NoSuit
	rvRunAnswers(t, []rvAnswer{
		{name: "highest S across hand and face up", trump: H, lead: "JK1", named: S, hand: "7S 9S 8H", up: "QS 7C",
			legal: "QS", bad: "9S", badErr: ErrMustPlayHighest, play: "QS", takerIs: 0},
		{name: "highest S held, trump refused", trump: H, lead: "JK1", named: S, hand: "AS 7H", up: "QS",
			legal: "AS", bad: "7H", badErr: ErrMustPlayHighest, play: "AS", takerIs: 0},
		{name: "highest S or the other joker, which takes", trump: H, lead: "JK1", named: S, hand: "AS JK2", up: "QS",
			legal: "AS JK2", play: "JK2", takerIs: 1},
		{name: "void in S (not trump): must trump, the trump takes", trump: H, lead: "JK2", named: S, hand: "7D 7H", up: "9H",
			legal: "7H 9H", bad: "7D", badErr: ErrMustTrump, play: "7H", takerIs: 1},
		{name: "void in S, trump only face up", trump: D, lead: "JK2", named: S, hand: "7C 7H", up: "7D",
			legal: "7D", bad: "7C", badErr: ErrMustTrump, play: "7D", takerIs: 1},
		{name: "void in S and trump: any card, the joker takes", trump: H, lead: "JK1", named: S, hand: "7D AC", up: "AD",
			legal: "7D AC AD", play: "AD", takerIs: 0},
		{name: "S is trump: highest trump, the joker takes", trump: H, lead: "JK1", named: H, hand: "7H AH 7S", up: "KH",
			legal: "AH", bad: "7H", badErr: ErrMustPlayHighest, play: "AH", takerIs: 0},
		{name: "S is trump, void: any card, the joker takes", trump: H, lead: "JK1", named: H, hand: "AS AD", up: "AC",
			legal: "AS AD AC", play: "AS", takerIs: 0},
		{name: "bezi, holding S: highest S, the joker takes", trump: NT, lead: "JK1", named: S, hand: "AS 7S", up: "KS",
			legal: "AS", play: "AS", takerIs: 0},
		{name: "bezi, void: any card, nothing ordinary takes it", trump: NT, lead: "JK1", named: S, hand: "AH AD", up: "AC",
			legal: "AH AD AC", play: "AH", takerIs: 0},
		{name: "first card: the named suit only face up cannot be given", trump: H, first: true, lead: "JK1", named: S,
			hand: "7D 8C", up: "AS 9C 10C JC QC", legal: "7D 8C", bad: "AS", badErr: ErrFirstCardFromHand,
			play: "7D", takerIs: 0},
	})
}

// The columns: playing a face-up card brings its face-down card into the
// owner's hand (privately); when only two columns remain and one is played,
// the other goes into the hand too, both cards. 5 → 4 → 3 → 2 → 0.
func TestReview_JP_ColumnsAndTheTwoColumnClearing(t *testing.T) {
	for _, c := range []struct {
		name            string
		up, down        string
		play            string
		wantHand        string // seat 0's hand afterwards (it held 7D)
		wantCols        int
		wantFaceDownEvs int
		cleared         bool
	}{
		{"five columns, one played: four left", "AS KS QS JS 10S", "9S 8S 7S 9D 8H", "QS", "7D 7S", 4, 1, false},
		{"four left, one played: three", "AS - QS JS 10S", "9S - 7S 9D 8H", "AS", "7D 9S", 3, 1, false},
		{"three left, one played: two", "AS - QS - 10S", "9S - 7S - 8H", "10S", "7D 8H", 2, 1, false},
		{"two left, one played: the table is cleared", "- - QS - 10S", "- - 7S - 8H", "QS", "7D 7S 10S 8H", 0, 2, true},
		{"two left, the other one played: cleared the same way", "- - QS - 10S", "- - 7S - 8H", "10S", "7D 8H QS 7S", 0, 2, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := pos{Trump: cards.Hearts, TrickNo: 5, Hands: [Seats]string{"7D", "8D"},
				Up: [Seats]string{c.up, "AC KC QC JC 10C"}, Down: [Seats]string{c.down, "9C 8C 7C AH KH"}}.game(t)
			before := [Seats]cards.Set{}
			for s := range Seats {
				before[s] = rvSeen(g.View(s))
			}
			ev := mustApply(t, g, PlayMove(0, card(t, c.play)))
			if got := g.hands[0]; got != setOf(t, c.wantHand) {
				t.Fatalf("hand %v, want %v", got, setOf(t, c.wantHand))
			}
			if got := len(g.View(1).Columns[0]); got != c.wantCols {
				t.Fatalf("%d columns left, want %d", got, c.wantCols)
			}
			fd := eventsOf(ev, EventFaceDownToHand)
			if len(fd) != c.wantFaceDownEvs {
				t.Fatalf("%d face-down events, want %d", len(fd), c.wantFaceDownEvs)
			}
			for _, e := range fd {
				if e.To != 0 || e.Visible(1) || e.Visible(-1) {
					t.Fatalf("face-down card %v is not private to its owner: %+v", e.Card, e)
				}
				if before[0].Has(e.Card) || before[1].Has(e.Card) {
					t.Fatalf("face-down card %v was visible before it reached the hand", e.Card)
				}
			}
			if cl := eventsOf(ev, EventTableCleared); (len(cl) == 1) != c.cleared {
				t.Fatalf("table cleared events %+v, want cleared=%v", cl, c.cleared)
			}
			// The opponent's columns are untouched.
			if got := len(g.View(0).Columns[1]); got != Columns {
				t.Fatalf("opponent has %d columns", got)
			}
		})
	}
}

// The answering seat may clear its own table too: the rule is the player's,
// not the leader's.
func TestReview_JP_ColumnsClearingOnAnAnswer(t *testing.T) {
	g := pos{Trump: cards.Hearts, TrickNo: 5, Lead: "9D", Hands: [Seats]string{"", "7S"},
		Up: [Seats]string{"", "- QD - - 10S"}, Down: [Seats]string{"", "- 7C - - 8H"}}.game(t)
	mustApply(t, g, PlayMove(1, card(t, "QD")))
	if g.hands[1] != setOf(t, "7S 7C 10S 8H") || len(g.View(0).Columns[1]) != 0 {
		t.Fatalf("hand %v, columns %v", g.hands[1], g.View(0).Columns[1])
	}
}

// After 18 tricks the player with more tricks scores the difference, the
// other nothing; 9–9 scores nothing.
func TestReview_JP_ScoringByDifference(t *testing.T) {
	for _, c := range []struct {
		before [Seats]int // tricks before the last trick, which seat 0 takes
		points [Seats]int
	}{
		{[Seats]int{17, 0}, [Seats]int{18, 0}},
		{[Seats]int{10, 7}, [Seats]int{4, 0}},
		{[Seats]int{9, 8}, [Seats]int{2, 0}},
		{[Seats]int{8, 9}, [Seats]int{0, 0}},
		{[Seats]int{7, 10}, [Seats]int{0, 2}},
		{[Seats]int{0, 17}, [Seats]int{0, 16}},
	} {
		t.Run(fmt.Sprint(c.before), func(t *testing.T) {
			g := pos{Trump: cards.Hearts, TrickNo: TricksPerHand - 1, Tricks: c.before, Scores: [Seats]int{1, 2},
				Hands: [Seats]string{"AS", "7S"}}.game(t)
			mustApply(t, g, PlayMove(0, card(t, "AS")))
			ev := mustApply(t, g, PlayMove(1, card(t, "7S")))
			he := eventsOf(ev, EventHandEnded)
			if len(he) != 1 {
				t.Fatalf("hand ended events %+v", he)
			}
			got := [Seats]int{int(he[0].Points[0]), int(he[0].Points[1])}
			if got != c.points {
				t.Fatalf("points %v, want %v", got, c.points)
			}
			if want := [Seats]int{1 + c.points[0], 2 + c.points[1]}; g.Scores() != want {
				t.Fatalf("scores %v, want %v", g.Scores(), want)
			}
		})
	}
}

// The match ends when a player reaches or passes the target (11, 15, 21,
// 31); that player wins. Seat 1 can win it on a hand where it took more.
func TestReview_JP_MatchEndsAtOrPastTheTarget(t *testing.T) {
	for _, c := range []struct {
		target int
		scores [Seats]int
		tricks [Seats]int // before the last trick, which seat 0 takes
		winner int        // -1: the match goes on
	}{
		{11, [Seats]int{9, 0}, [Seats]int{9, 8}, 0},    // 9+2 = 11: reaches
		{11, [Seats]int{8, 0}, [Seats]int{9, 8}, -1},   // 8+2 = 10: short
		{15, [Seats]int{14, 3}, [Seats]int{17, 0}, 0},  // 14+18 = 32: passes
		{21, [Seats]int{0, 19}, [Seats]int{7, 10}, 1},  // seat 1: 19+2 = 21
		{21, [Seats]int{20, 20}, [Seats]int{8, 9}, -1}, // 9–9: nobody scores
		{31, [Seats]int{30, 0}, [Seats]int{9, 8}, 0},
		{31, [Seats]int{28, 0}, [Seats]int{9, 8}, -1},
	} {
		t.Run(fmt.Sprintf("target %d scores %v tricks %v", c.target, c.scores, c.tricks), func(t *testing.T) {
			g := pos{Trump: cards.Hearts, TrickNo: TricksPerHand - 1, Tricks: c.tricks, Scores: c.scores,
				Target: c.target, Hands: [Seats]string{"AS", "7S"}}.game(t)
			mustApply(t, g, PlayMove(0, card(t, "AS")))
			ev := mustApply(t, g, PlayMove(1, card(t, "7S")))
			if g.Winner() != c.winner || g.Over() != (c.winner >= 0) {
				t.Fatalf("winner %d over %v, want %d", g.Winner(), g.Over(), c.winner)
			}
			ended := eventsOf(ev, EventGameEnded)
			if (len(ended) == 1) != (c.winner >= 0) {
				t.Fatalf("game ended events %+v", ended)
			}
			if c.winner >= 0 && (int(ended[0].Seat) != c.winner || ended[0].Reason != ReasonTarget) {
				t.Fatalf("game ended %+v", ended[0])
			}
			if c.winner < 0 && (g.Phase() != PhaseTrump || g.Hand() != 1) {
				t.Fatalf("the next hand is not dealt: phase %v hand %d", g.Phase(), g.Hand())
			}
		})
	}
}

// Random matches checked through views and events against the rules:
// declarer alternation, who chooses trump and leads, the first card from
// the hand, the legal cards, the columns, hidden face-down cards, trick
// winners, scoring and the end of the match.
func TestReview_JP_RandomMatchesAgreeWithTheRulesReading(t *testing.T) {
	matches := 150
	if testing.Short() {
		matches = 25
	}
	targets := []int{11, 15, 21, 31}
	var clears, jokerLeads, trumpedJokers int
	for i := range matches {
		seed := uint64(9100 + i)
		target := targets[i%len(targets)]
		g, err := New(seed, Settings{Target: target})
		if err != nil {
			t.Fatal(err)
		}
		r := rvMatch{t: t, g: g, seed: seed, target: target, first: g.Declarer()}
		var players [Seats]interface {
			Choose(*Game, int) (Move, bool)
		}
		players[0], players[1] = NewRandomBot(seed), NewRandomBot(seed+1)
		if i%3 == 0 {
			players[i%2] = Bot{}
		}
		r.startHand(g.StartEvents(nil))
		for !g.Over() {
			seat := g.ToMove()
			m, ok := players[seat].Choose(g, seat)
			if !ok {
				t.Fatalf("seed %d: seat %d has no move", seed, seat)
			}
			r.move(seat, m)
		}
		r.finish()
		clears += r.clears
		jokerLeads += r.jokerLeads
		trumpedJokers += r.trumpedJokers
	}
	if clears == 0 || jokerLeads == 0 || trumpedJokers == 0 {
		t.Fatalf("the matches never cleared a table (%d), led a joker (%d) or trumped one (%d)",
			clears, jokerLeads, trumpedJokers)
	}
}

type rvMatch struct {
	t                                 *testing.T
	g                                 *Game
	seed                              uint64
	target, first                     int
	hand                              int
	scores                            [Seats]int
	playedThisHand                    [Seats]bool
	clears, jokerLeads, trumpedJokers int
}

func (r *rvMatch) fail(format string, args ...any) {
	r.t.Helper()
	r.t.Fatalf("seed %d hand %d: %s", r.seed, r.hand, fmt.Sprintf(format, args...))
}

// startHand checks the events that deal a hand.
func (r *rvMatch) startHand(ev []Event) {
	r.t.Helper()
	hs := eventsOf(ev, EventHandStarted)
	if len(hs) != 1 {
		r.fail("hand started events %+v", hs)
	}
	r.hand = int(hs[0].Hand)
	r.playedThisHand = [Seats]bool{}
	decl := (r.first + r.hand) % Seats
	if int(hs[0].Seat) != decl || r.g.Declarer() != decl || r.g.ToMove() != decl {
		r.fail("declarer %d (event %d, to move %d), want %d: the declarer alternates", r.g.Declarer(), hs[0].Seat, r.g.ToMove(), decl)
	}
	for s := range Seats {
		if v := r.g.View(s); len(v.MyCards) != FirstDeal || len(v.Columns[0])+len(v.Columns[1]) != 0 {
			r.fail("seat %d sees %v and columns %v before trump", s, v.MyCards, v.Columns)
		}
	}
	if len(r.g.Legal(1-decl, nil)) != 0 || len(r.g.Legal(decl, nil)) != 5 {
		r.fail("trump choices: declarer %d, other %d", len(r.g.Legal(decl, nil)), len(r.g.Legal(1-decl, nil)))
	}
}

func (r *rvMatch) move(seat int, m Move) {
	r.t.Helper()
	g := r.g
	var before [Seats]View
	var seen [3]cards.Set
	for s := range Seats {
		before[s] = g.View(s)
		seen[s] = rvSeen(before[s])
	}
	seen[2] = rvSeen(g.View(-1))
	if len(g.Legal(1-seat, nil)) != 0 {
		r.fail("seat %d has moves on seat %d's turn", 1-seat, seat)
	}
	if g.Phase() == PhasePlay {
		v := before[seat]
		if v.ColumnsOpen[seat] != r.playedThisHand[seat] {
			r.fail("seat %d columns open %v after playing=%v", seat, v.ColumnsOpen[seat], r.playedThisHand[seat])
		}
		want := rvRefLegal(v, seat, r.playedThisHand[seat])
		if got := cards.SetOf(v.LegalCards...); got != want {
			r.fail("seat %d may play %v, the rules say %v (trick %+v, trump %q)", seat, got, want, v.CurrentTrick, v.Trump)
		}
	}
	wasTrump := g.Phase() == PhaseTrump
	trumpBefore, _ := g.Trump()
	ev, err := g.Apply(m, nil)
	if err != nil {
		r.fail("%v: %v", m, err)
	}
	if wasTrump {
		tc := eventsOf(ev, EventTrumpChosen)
		if len(tc) != 1 || int(tc[0].Seat) != seat || seat != g.Declarer() {
			r.fail("trump chosen %+v by %d", tc, seat)
		}
		for s := range Seats {
			v := g.View(s)
			if len(v.MyCards) != FirstDeal+SecondDeal || len(v.Columns[0]) != Columns || len(v.Columns[1]) != Columns {
				r.fail("after trump seat %d holds %d cards, columns %d/%d", s, len(v.MyCards), len(v.Columns[0]), len(v.Columns[1]))
			}
		}
		if g.ToMove() != g.Declarer() {
			r.fail("the declarer does not lead the first trick")
		}
		return
	}
	played := eventsOf(ev, EventCardPlayed)
	if len(played) != 1 {
		r.fail("card played events %+v", played)
	}
	p := played[0]
	if !r.playedThisHand[seat] && p.Column >= 0 {
		r.fail("seat %d's first card %v came from a column", seat, p.Card)
	}
	r.playedThisHand[seat] = true
	if len(before[seat].CurrentTrick) == 0 && p.Card.IsJoker() {
		r.jokerLeads++
	}
	for _, e := range eventsOf(ev, EventFaceDownToHand) {
		if e.To != int8(seat) || e.Visible(1-seat) || e.Visible(-1) {
			r.fail("face-down card %v goes to %d, played by %d", e.Card, e.To, seat)
		}
		if seen[0].Has(e.Card) || seen[1].Has(e.Card) || seen[2].Has(e.Card) {
			r.fail("face-down card %v was seen before it reached the hand", e.Card)
		}
	}
	handEnded := eventsOf(ev, EventHandEnded)
	if len(handEnded) == 0 {
		r.checkColumns(seat, before[seat], p, ev)
	}
	if won := eventsOf(ev, EventTrickWon); len(won) == 1 {
		lead := before[seat].CurrentTrick[0]
		named, _ := cards.ParseSuit(lead.Named)
		pos := rvRefWinner(lead.Card, named, p.Card, trumpBefore)
		want := lead.Seat
		if pos == 1 {
			want = seat
		}
		if int(won[0].Seat) != want {
			r.fail("trick %v/%v (named %v, trump %v) won by %d, the rules say %d",
				lead.Card, p.Card, named, trumpBefore, won[0].Seat, want)
		}
		if lead.Card.IsJoker() && !p.Card.IsJoker() && want == seat {
			r.trumpedJokers++
		}
		if len(handEnded) == 0 && g.ToMove() != want {
			r.fail("seat %d leads, want the trick's winner %d", g.ToMove(), want)
		}
	}
	if len(handEnded) == 1 {
		r.checkHandEnd(handEnded[0], ev)
	}
}

// checkColumns: a face-up card played brings its face-down card into the
// hand; with two columns left, the other column comes too.
func (r *rvMatch) checkColumns(seat int, before View, p Event, ev []Event) {
	r.t.Helper()
	after := r.g.View(seat)
	handBefore := cards.SetOf(before.MyCards...)
	handAfter := cards.SetOf(after.MyCards...)
	cols := len(before.Columns[seat])
	if p.Column < 0 {
		if handAfter != handBefore.Without(p.Card) || len(after.Columns[seat]) != cols {
			r.fail("a hand card %v changed the columns or the hand", p.Card)
		}
		return
	}
	fd := eventsOf(ev, EventFaceDownToHand)
	gained := cards.Set(0)
	for _, e := range fd {
		gained = gained.With(e.Card)
	}
	wantCols, wantFD := cols-1, 1
	if cols == 2 {
		wantCols, wantFD = 0, 2
		r.clears++
		for _, c := range before.Columns[seat] {
			if c.Up != p.Card {
				gained = gained.With(c.Up)
			}
		}
	}
	if len(after.Columns[seat]) != wantCols || len(fd) != wantFD || handAfter != handBefore|gained {
		r.fail("seat %d played column card %v with %d columns: now %d columns, %d face-down cards, hand %v (was %v)",
			seat, p.Card, cols, len(after.Columns[seat]), len(fd), handAfter, handBefore)
	}
}

// checkHandEnd: the difference goes to the player with more tricks, 9–9
// scores nothing, and the match ends at or past the target.
func (r *rvMatch) checkHandEnd(he Event, ev []Event) {
	r.t.Helper()
	t0, t1 := int(he.Tricks[0]), int(he.Tricks[1])
	if t0+t1 != TricksPerHand {
		r.fail("%d+%d tricks", t0, t1)
	}
	var pts [Seats]int
	if t0 > t1 {
		pts[0] = t0 - t1
	} else {
		pts[1] = t1 - t0
	}
	if got := [Seats]int{int(he.Points[0]), int(he.Points[1])}; got != pts {
		r.fail("tricks %d–%d scored %v, want %v", t0, t1, got, pts)
	}
	for s := range Seats {
		if r.scores[s] >= r.target {
			r.fail("a hand was dealt after seat %d reached %d", s, r.scores[s])
		}
		r.scores[s] += pts[s]
	}
	if r.g.Scores() != r.scores {
		r.fail("scores %v, want %v", r.g.Scores(), r.scores)
	}
	winner := -1
	for s := range Seats {
		if r.scores[s] >= r.target {
			winner = s
		}
	}
	if r.g.Winner() != winner {
		r.fail("winner %d with scores %v and target %d", r.g.Winner(), r.scores, r.target)
	}
	if winner < 0 {
		r.startHand(ev)
	}
}

func (r *rvMatch) finish() {
	r.t.Helper()
	if !r.g.Over() || r.g.EndReason() != ReasonTarget || r.scores[r.g.Winner()] < r.target ||
		r.scores[1-r.g.Winner()] >= r.target {
		r.fail("match ended with %v, winner %d, reason %v", r.scores, r.g.Winner(), r.g.EndReason())
	}
	if got := len(r.g.HandResults()); got != r.hand+1 {
		r.fail("%d hand results for %d hands", got, r.hand+1)
	}
	for h, hr := range r.g.HandResults() {
		if hr.Declarer != (r.first+h)%Seats {
			r.fail("hand result %d declarer %d", h, hr.Declarer)
		}
	}
}

// rvSeen is every card a view shows.
func rvSeen(v View) cards.Set {
	s := cards.SetOf(v.MyCards...) | cards.SetOf(v.LegalCards...) | cards.SetOf(v.Played...)
	for _, side := range v.Columns {
		for _, c := range side {
			s = s.With(c.Up)
		}
	}
	for _, tc := range v.CurrentTrick {
		s = s.With(tc.Card)
	}
	return s
}

// rvRefLegal is rules.md read literally, from what the seat's view shows:
// the available cards are the hand, plus the own face-up cards once the seat
// has played its first card of the hand. Leading, any of them. Answering a
// joker that named S: the highest available S; without S, a trump when S is
// not trump (and there is a trump); else anything. Answering a card: its
// suit; else a trump; else anything. A joker is always legal.
func rvRefLegal(v View, seat int, playedBefore bool) cards.Set {
	avail := cards.SetOf(v.MyCards...)
	if playedBefore {
		for _, c := range v.Columns[seat] {
			avail = avail.With(c.Up)
		}
	}
	if len(v.CurrentTrick) == 0 {
		return avail
	}
	trump := cards.NoSuit
	if v.Trump != "bezi" {
		trump, _ = cards.ParseSuit(v.Trump)
	}
	of := func(s cards.Suit) []cards.Card {
		var out []cards.Card
		for _, c := range avail.Cards() {
			if !c.IsJoker() && s != cards.NoSuit && c.Suit() == s {
				out = append(out, c)
			}
		}
		return out
	}
	jokers := avail & cards.Jokers
	lead := v.CurrentTrick[0]
	if lead.Card.IsJoker() {
		named, _ := cards.ParseSuit(lead.Named)
		if s := of(named); len(s) > 0 {
			top := s[0]
			for _, c := range s {
				if c.Rank() > top.Rank() {
					top = c
				}
			}
			return jokers.With(top)
		}
		if t := of(trump); named != trump && len(t) > 0 {
			return jokers | cards.SetOf(t...)
		}
		return avail
	}
	if s := of(lead.Card.Suit()); len(s) > 0 {
		return jokers | cards.SetOf(s...)
	}
	if t := of(trump); len(t) > 0 {
		return jokers | cards.SetOf(t...)
	}
	return avail
}

// rvRefWinner returns 0 when the led card takes the trick, 1 when the
// answer does: an answering joker always takes (the second joker too); a
// led joker takes unless the answer is a trump given for a missing named
// suit that is not trump (not in bezi); otherwise the higher card of the led
// suit, or a trump, takes it.
func rvRefWinner(lead cards.Card, named cards.Suit, ans cards.Card, trump cards.Suit) int {
	switch {
	case ans.IsJoker():
		return 1
	case lead.IsJoker():
		if trump != cards.NoSuit && named != trump && ans.Suit() == trump {
			return 1
		}
		return 0
	case ans.Suit() == lead.Suit():
		if ans.Rank() > lead.Rank() {
			return 1
		}
		return 0
	case trump != cards.NoSuit && ans.Suit() == trump:
		return 1
	}
	return 0
}
