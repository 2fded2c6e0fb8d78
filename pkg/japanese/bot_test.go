package japanese

import (
	"slices"
	"testing"

	"github.com/pulka/pulka/pkg/cards"
)

func TestChooseTrumpFor_LongestOrStrongestSuitElseBezi(t *testing.T) {
	cases := []struct {
		first string
		want  cards.Suit
	}{
		{"AH KH 7S", cards.Hearts},
		{"7D 8D AS", cards.Diamonds}, // two cards beat one ace
		{"QS 7D 8C", cards.Spades},   // a lone queen or better
		{"KC 9D JK1", cards.Clubs},
		{"7S 8D 9C", cards.NoSuit}, // weak and scattered
		{"JK1 JK2 7D", cards.NoSuit},
		{"7H 8H 9H", cards.Hearts},
	}
	for _, c := range cases {
		if got := ChooseTrumpFor(setOf(t, c.first)); got != c.want {
			t.Errorf("%s: trump %v, want %v", c.first, got, c.want)
		}
	}
}

func TestBot_Answers(t *testing.T) {
	cases := []struct {
		name           string
		trump          cards.Suit
		lead           string
		named          cards.Suit
		hand, up, down string
		leaderHand     string
		want           string
	}{
		{name: "wins as cheaply as it can", trump: cards.Hearts, lead: "10D", hand: "QD KD AD 7H", want: "QD"},
		{name: "dumps its lowest when it cannot win", trump: cards.Hearts, lead: "AD", hand: "9D 7D", want: "7D"},
		{name: "dumps the lowest rank of any suit", trump: cards.Hearts, lead: "10H", hand: "9S 7C KD",
			want: "7C"},
		{name: "trumps with its lowest trump when void", trump: cards.Hearts, lead: "AD", hand: "QH 7H AS",
			want: "7H"},
		{name: "takes a joker with the other joker", trump: cards.Hearts, lead: "JK1", named: cards.Spades,
			hand: "7S JK2", want: "JK2"},
		{name: "takes a high lead with a joker", trump: cards.Hearts, lead: "AD", hand: "JK2 7D", want: "JK2"},
		{name: "keeps the joker for a low lead", trump: cards.Hearts, lead: "7D", hand: "JK2 8S 9S 10S", want: "8S"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := pos{Trump: c.trump, TrickNo: 1, Lead: c.lead, Named: c.named,
				Hands: [Seats]string{c.leaderHand, c.hand}, Up: [Seats]string{"", c.up},
				Down: [Seats]string{"", c.down}}.game(t)
			m, ok := Bot{}.Choose(g, 1)
			if !ok || m != PlayMove(1, card(t, c.want)) {
				t.Fatalf("bot played %v, want %s", m, c.want)
			}
		})
	}
}

func TestBot_Leads(t *testing.T) {
	cases := []struct {
		name  string
		trump cards.Suit
		hand  string
		other string
		gone  string
		want  Move
	}{
		// The other joker is ours: a led joker cannot lose, name trump to
		// pull the opponent's best trump.
		{name: "safe joker names trump", trump: cards.Hearts, hand: "JK1 JK2 7D", other: "AH 8D",
			want: LeadJoker(0, cards.Joker1, cards.Hearts)},
		{name: "unsafe joker is kept; lead the master", trump: cards.Hearts, hand: "JK1 AD 7C", other: "JK2 8D",
			want: PlayMove(0, cards.New(cards.Diamonds, cards.Ace))},
		{name: "no master: lead low", trump: cards.Hearts, hand: "KD 7C 9H", other: "AD AC AH",
			want: PlayMove(0, cards.New(cards.Clubs, cards.Seven))},
		{name: "trump master first", trump: cards.Hearts, hand: "AH AD 7C", other: "8D 9H",
			want: PlayMove(0, cards.New(cards.Hearts, cards.Ace))},
		{name: "bezi joker pulls the highest outside card", trump: cards.NoSuit, hand: "JK1 7C", other: "AS 8C",
			gone: "JK2", want: LeadJoker(0, cards.Joker1, cards.Spades)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := pos{Trump: c.trump, TrickNo: 1, Hands: [Seats]string{c.hand, c.other}}.game(t)
			g.gone = setOf(t, c.gone)
			if m, ok := (Bot{}).Choose(g, 0); !ok || m != c.want {
				t.Fatalf("bot led %v, want %v", m, c.want)
			}
		})
	}
}

// TestBot_DecidesOnlyFromWhatItsSeatSees reshuffles every card the bot's seat
// cannot see (the opponent's hand and all face-down cards) and checks the
// choice does not change.
func TestBot_DecidesOnlyFromWhatItsSeatSees(t *testing.T) {
	for seed := range uint64(200) {
		g := fuzzGame(t, seed, uint16(seed%60))
		if g.Over() {
			continue
		}
		s := g.ToMove()
		want, _ := Bot{}.Choose(g, s)
		// Gather the hidden cards, then deal them back in another order.
		var hidden []cards.Card
		hidden = g.hands[1-s].AppendCards(hidden)
		for seat := range Seats {
			for _, c := range g.down[seat] {
				if c != cards.NoCard {
					hidden = append(hidden, c)
				}
			}
		}
		r := cards.NewRNG(seed, 99)
		for i := len(hidden) - 1; i > 0; i-- {
			j := r.IntN(i + 1)
			hidden[i], hidden[j] = hidden[j], hidden[i]
		}
		h := *g
		n := h.hands[1-s].Len()
		h.hands[1-s] = cards.SetOf(hidden[:n]...)
		k := n
		for seat := range Seats {
			for i, c := range h.down[seat] {
				if c != cards.NoCard {
					h.down[seat][i] = hidden[k]
					k++
				}
			}
		}
		if got, _ := (Bot{}).Choose(&h, s); got != want {
			t.Fatalf("seed %d: bot chose %v, but %v once hidden cards moved", seed, want, got)
		}
	}
}

func TestBot_AlwaysLegalAndDeterministic(t *testing.T) {
	for seed := range uint64(1000) {
		g := newGame(t, seed)
		r := NewRandomBot(seed)
		var legal []Move
		for !g.Over() {
			s := g.ToMove()
			var m Move
			if s == int(seed%2) {
				m, _ = Bot{}.Choose(g, s)
				legal = g.Legal(s, legal[:0])
				if !slices.Contains(legal, m) {
					t.Fatalf("seed %d: bot move %v not in %v", seed, m, legal)
				}
				if again, _ := (Bot{}).Choose(g.Clone(), s); again != m {
					t.Fatalf("seed %d: bot chose %v then %v", seed, m, again)
				}
			} else {
				m, _ = r.Choose(g, s)
			}
			mustApply(t, g, m)
		}
		if _, ok := (Bot{}).Choose(g, 0); ok {
			t.Fatal("bot moves after the end")
		}
	}
}

func TestBot_DoesNotAllocate(t *testing.T) {
	g := fuzzGame(t, 8, 23)
	s := g.ToMove()
	r := NewRandomBot(1)
	if n := testing.AllocsPerRun(100, func() { Bot{}.Choose(g, s) }); n != 0 {
		t.Fatalf("Bot.Choose allocates %v times", n)
	}
	if n := testing.AllocsPerRun(100, func() { r.Choose(g, s) }); n != 0 {
		t.Fatalf("RandomBot.Choose allocates %v times", n)
	}
}

func TestRandomBot_UniformOverLegal(t *testing.T) {
	g := newGame(t, 12)
	s := g.ToMove()
	legal := g.Legal(s, nil) // the five trump choices
	counts := map[Move]int{}
	r := NewRandomBot(3)
	const n = 50000
	for range n {
		m, _ := r.Choose(g, s)
		counts[m]++
	}
	for _, m := range legal {
		if c := counts[m]; c < n/len(legal)*9/10 || c > n/len(legal)*11/10 {
			t.Errorf("%v chosen %d times of %d", m, c, n)
		}
	}
}

// TestBot_BeatsTheRandomBot prints the baseline's win rate against uniform
// random play over 10,000 seeded matches (seats alternating) and asserts it
// is clearly above a coin flip.
func TestBot_BeatsTheRandomBot(t *testing.T) {
	n := 10000
	if testing.Short() {
		n = 1000
	}
	var matches, hands, handsWon, handsLost int
	buf := make([]Event, 0, 16)
	for seed := range uint64(n) {
		g, _ := New(seed, Settings{})
		me := int(seed % 2)
		var players [Seats]Player
		players[me], players[1-me] = Bot{}, NewRandomBot(seed)
		for !g.Over() {
			s := g.ToMove()
			m, _ := players[s].Choose(g, s)
			var err error
			if buf, err = g.Apply(m, buf[:0]); err != nil {
				t.Fatal(err)
			}
			for _, e := range buf {
				if e.Kind != EventHandEnded {
					continue
				}
				hands++
				switch {
				case e.Points[me] > 0:
					handsWon++
				case e.Points[1-me] > 0:
					handsLost++
				}
			}
		}
		if g.Winner() == me {
			matches++
		}
	}
	rate := float64(matches) / float64(n)
	t.Logf("baseline vs random: won %d of %d matches (%.1f%%); hands won %d, lost %d, drawn %d of %d (%.1f%% won)",
		matches, n, 100*rate, handsWon, handsLost, hands-handsWon-handsLost, hands, 100*float64(handsWon)/float64(hands))
	if rate < 0.75 {
		t.Fatalf("baseline wins only %.1f%% of matches against random play", 100*rate)
	}
}
