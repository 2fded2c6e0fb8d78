package japanese

import "github.com/pulka/pulka/pkg/cards"

// View is what one seat (or a spectator) may know: its own hand, the public
// cards and the counts, never the other hand nor a face-down card.
type View struct {
	Seat     int    `json:"seat"` // -1: a spectator
	Hand     int    `json:"hand"` // 0-based
	Phase    Phase  `json:"phase"`
	Declarer int    `json:"declarer"`
	Trump    string `json:"trump,omitempty"` // S, H, D, C or bezi; empty until chosen
	ToMove   int    `json:"toMove"`
	Leader   int    `json:"leader"`
	Trick    int    `json:"trick"` // 0-based number of the trick being played
	// MyCards is the seat's hand (empty for spectators).
	MyCards []cards.Card `json:"myCards"`
	// LegalCards is what the seat may play now (empty when it is not its turn).
	LegalCards []cards.Card `json:"legalCards"`
	// HandSizes counts the cards in each hand.
	HandSizes [Seats]int `json:"handSizes"`
	// Columns are each seat's remaining columns; each face-up card lies on a
	// face-down card nobody may see.
	Columns [Seats][]ColumnView `json:"columns"`
	// ColumnsOpen tells whether each seat may play its face-up cards yet
	// (from its second card of the hand on).
	ColumnsOpen  [Seats]bool  `json:"columnsOpen"`
	CurrentTrick []TrickCard  `json:"currentTrick"`
	Played       []cards.Card `json:"played"` // cards of this hand's completed tricks
	Tricks       [Seats]int   `json:"tricks"`
	Scores       [Seats]int   `json:"scores"`
	Target       int          `json:"target"`
	Winner       int          `json:"winner"` // -1 while the match goes on
	EndReason    EndReason    `json:"endReason,omitempty"`
}

// ColumnView is one remaining column: its face-up card.
type ColumnView struct {
	Column int        `json:"column"`
	Up     cards.Card `json:"up"`
}

// TrickCard is a card on the current trick.
type TrickCard struct {
	Seat  int        `json:"seat"`
	Card  cards.Card `json:"card"`
	Named string     `json:"named,omitempty"` // the suit a led joker named
}

// View returns what seat may see; any seat other than 0 or 1 gets the
// spectator's view.
func (g *Game) View(seat int) View {
	if seat < 0 || seat >= Seats {
		seat = -1
	}
	v := View{
		Seat:       seat,
		Hand:       int(g.hand),
		Phase:      g.phase,
		Declarer:   g.Declarer(),
		ToMove:     g.ToMove(),
		Leader:     int(g.leader),
		Trick:      int(g.trickNo),
		MyCards:    []cards.Card{},
		LegalCards: []cards.Card{},
		Played:     g.gone.Cards(),
		Target:     int(g.target),
		Winner:     int(g.winner),
		EndReason:  g.reason,
	}
	if g.chosen {
		v.Trump = trumpText(g.trump)
	}
	if seat >= 0 {
		v.MyCards = g.hands[seat].Cards()
		v.LegalCards = g.LegalCards(seat).Cards()
	}
	for s := range Seats {
		v.HandSizes[s] = g.hands[s].Len()
		v.Tricks[s] = int(g.tricks[s])
		v.Scores[s] = int(g.scores[s])
		v.ColumnsOpen[s] = g.chosen && !g.firstCard(s)
		v.Columns[s] = []ColumnView{}
		for i, c := range g.up[s] {
			if c != cards.NoCard {
				v.Columns[s] = append(v.Columns[s], ColumnView{Column: i, Up: c})
			}
		}
	}
	v.CurrentTrick = []TrickCard{}
	if l := int(g.leader); g.trick[l] != cards.NoCard {
		tc := TrickCard{Seat: l, Card: g.trick[l]}
		if g.named.Valid() {
			tc.Named = g.named.String()
		}
		v.CurrentTrick = append(v.CurrentTrick, tc)
		if a := 1 - l; g.trick[a] != cards.NoCard {
			v.CurrentTrick = append(v.CurrentTrick, TrickCard{Seat: a, Card: g.trick[a]})
		}
	}
	return v
}
