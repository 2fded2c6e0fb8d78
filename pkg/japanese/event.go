package japanese

import (
	"encoding/json"
	"strconv"

	"github.com/pulka/pulka/pkg/cards"
)

// Public is the To of an event everyone may see.
const Public int8 = -1

// EventKind says what happened.
type EventKind uint8

// The event kinds. The fields each one fills are listed; the others hold
// their zero value, NoCard, NoSuit or -1.
const (
	EventNone EventKind = iota
	// EventHandStarted (public): Hand, Seat = declarer.
	EventHandStarted
	// EventDealt (private to To): Cards = the cards added to To's hand — the
	// first three, then the five dealt after the trump choice.
	EventDealt
	// EventTrumpChosen (public): Seat = declarer, Suit = trump (NoSuit: bezi).
	EventTrumpChosen
	// EventColumnsDealt (public): Seat's five columns; Columns = their
	// face-up cards. The face-down cards are in no event.
	EventColumnsDealt
	// EventCardPlayed (public): Seat played Card from its hand (Column -1)
	// or from the face-up card of Column; Suit = the suit a led joker named.
	EventCardPlayed
	// EventFaceDownToHand (private to the owner): the face-down Card of
	// Column went into Seat's hand.
	EventFaceDownToHand
	// EventTableCleared (public): only one column was left, so Seat took it:
	// its face-up Card (already public) and, in a following private
	// EventFaceDownToHand, its face-down card went into Seat's hand.
	EventTableCleared
	// EventTrickWon (public): Seat took trick Trick; Tricks = tricks so far.
	EventTrickWon
	// EventHandEnded (public): Tricks per seat, Points scored, Scores after,
	// Suit = the hand's trump.
	EventHandEnded
	// EventGameEnded (public): Seat = winner, Reason, Scores.
	EventGameEnded
)

var eventNames = [...]string{"none", "handStarted", "dealt", "trumpChosen", "columnsDealt",
	"cardPlayed", "faceDownToHand", "tableCleared", "trickWon", "handEnded", "gameEnded"}

// String returns the kind's name as used in JSON.
func (k EventKind) String() string {
	if int(k) < len(eventNames) {
		return eventNames[k]
	}
	return "event(" + strconv.Itoa(int(k)) + ")"
}

// MarshalText writes the kind's name.
func (k EventKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// EndReason says why a match ended.
type EndReason uint8

// The reasons a match ends.
const (
	ReasonNone EndReason = iota
	// ReasonTarget: the winner reached the target score.
	ReasonTarget
	// ReasonResigned: the loser resigned (or left).
	ReasonResigned
	// ReasonForfeit: the loser did not come back within the reconnect grace.
	ReasonForfeit
)

var reasonNames = [...]string{"", "target", "resigned", "forfeit"}

// String returns "target", "resigned", "forfeit", or "" for none.
func (r EndReason) String() string {
	if int(r) < len(reasonNames) {
		return reasonNames[r]
	}
	return "reason(" + strconv.Itoa(int(r)) + ")"
}

// MarshalText writes the reason's name.
func (r EndReason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// Event is one thing that happened, a flat value (no pointers) so a buffer of
// them is reused without allocating.
type Event struct {
	Kind    EventKind
	To      int8 // Public, or the only seat that may see the event
	Seat    int8
	Column  int8
	Card    cards.Card
	Suit    cards.Suit
	Reason  EndReason
	Trick   uint8
	Hand    uint32
	Tricks  [Seats]uint8
	Points  [Seats]uint8
	Scores  [Seats]uint8
	Columns [Columns]cards.Card
	Cards   cards.Set
}

// Visible reports whether seat (-1 for a spectator) may see the event.
func (e Event) Visible(seat int) bool { return e.To == Public || int(e.To) == seat }

type eventJSON struct {
	Kind    EventKind     `json:"kind"`
	To      *int8         `json:"to,omitempty"`
	Hand    uint32        `json:"hand"`
	Seat    *int8         `json:"seat,omitempty"`
	Trick   *uint8        `json:"trick,omitempty"`
	Card    *cards.Card   `json:"card,omitempty"`
	Column  *int8         `json:"column,omitempty"`
	Suit    string        `json:"suit,omitempty"`
	Trump   string        `json:"trump,omitempty"`
	Cards   []cards.Card  `json:"cards,omitempty"`
	Columns []cards.Card  `json:"columns,omitempty"`
	Tricks  *[Seats]uint8 `json:"tricks,omitempty"`
	Points  *[Seats]uint8 `json:"points,omitempty"`
	Scores  *[Seats]uint8 `json:"scores,omitempty"`
	Reason  EndReason     `json:"reason,omitempty"`
}

// MarshalJSON writes the fields the event's kind uses, e.g.
// {"kind":"cardPlayed","hand":0,"seat":1,"trick":3,"card":"QH","column":-1}.
func (e Event) MarshalJSON() ([]byte, error) {
	j := eventJSON{Kind: e.Kind, Hand: e.Hand}
	if e.To != Public {
		j.To = &e.To
	}
	card := func() {
		if e.Card.Valid() {
			j.Card = &e.Card
		}
	}
	switch e.Kind {
	case EventHandStarted:
		j.Seat = &e.Seat
	case EventDealt:
		j.Cards = e.Cards.Cards()
	case EventTrumpChosen:
		j.Seat, j.Trump = &e.Seat, trumpText(e.Suit)
	case EventColumnsDealt:
		j.Seat = &e.Seat
		j.Columns = make([]cards.Card, 0, Columns)
		for _, c := range e.Columns {
			if c.Valid() {
				j.Columns = append(j.Columns, c)
			}
		}
	case EventCardPlayed:
		j.Seat, j.Trick, j.Column = &e.Seat, &e.Trick, &e.Column
		card()
		if e.Suit.Valid() {
			j.Suit = e.Suit.String()
		}
	case EventFaceDownToHand, EventTableCleared:
		j.Seat, j.Trick, j.Column = &e.Seat, &e.Trick, &e.Column
		card()
	case EventTrickWon:
		j.Seat, j.Trick, j.Tricks = &e.Seat, &e.Trick, &e.Tricks
	case EventHandEnded:
		j.Tricks, j.Points, j.Scores, j.Trump = &e.Tricks, &e.Points, &e.Scores, trumpText(e.Suit)
	case EventGameEnded:
		j.Seat, j.Scores, j.Reason = &e.Seat, &e.Scores, e.Reason
	}
	return json.Marshal(j)
}
