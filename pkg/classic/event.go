package classic

import (
	"encoding/json"
	"fmt"

	"github.com/pulka/pulka/pkg/cards"
)

// EventKind says what happened.
type EventKind uint8

// The events. Fields of Event that a kind does not list are zero, except Card
// (cards.NoCard) and Suit (cards.NoSuit).
const (
	// EventHandStarted: Hand, Seat = dealer, N = cards each seat gets.
	EventHandStarted EventKind = iota + 1
	// EventFirstCards (private to the chooser): a nine-card hand's first three
	// cards of the seat after the dealer, who now names trump. Seat, Cards, N.
	EventFirstCards
	// EventDealt (private to Seat): the seat's whole hand. Seat, Cards, N.
	EventDealt
	// EventTrumpTurned: the card turned from the stock and the trump it makes
	// (Suit = NoSuit when it is a joker). Card, Suit.
	EventTrumpTurned
	// EventTrumpChosen: Seat named Suit (NoSuit = no trump).
	EventTrumpChosen
	// EventBid: Seat bid Bid.
	EventBid
	// EventPlayed: Seat played Card in trick Trick; for a joker also Joker,
	// and Suit when it led.
	EventPlayed
	// EventTrickWon: Seat won trick Trick.
	EventTrickWon
	// EventHandEnded: hand Hand of N cards ended with Bids and Tricks.
	EventHandEnded
	// EventGameEnded: the last hand has been played.
	EventGameEnded
)

var eventKindNames = [...]string{"", "hand_started", "first_cards", "dealt", "trump_turned",
	"trump_chosen", "bid", "played", "trick_won", "hand_ended", "game_ended"}

func (k EventKind) String() string {
	if k != 0 && int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return fmt.Sprintf("EventKind(%d)", uint8(k))
}

// MarshalText writes the kind's name.
func (k EventKind) MarshalText() ([]byte, error) {
	if k == 0 || int(k) >= len(eventKindNames) {
		return nil, fmt.Errorf("classic: invalid event kind %d", uint8(k))
	}
	return []byte(eventKindNames[k]), nil
}

// UnmarshalText reads a kind's name.
func (k *EventKind) UnmarshalText(b []byte) error {
	for i, n := range eventKindNames {
		if i > 0 && n == string(b) {
			*k = EventKind(i)
			return nil
		}
	}
	return fmt.Errorf("classic: unknown event kind %q", b)
}

// Public is the To of an event everybody may see.
const Public int8 = -1

// Event is one thing that happened, as a flat value. To is Public (-1) or the
// only seat that may see it: a service must deliver a private event to that
// seat alone.
type Event struct {
	Kind   EventKind
	To     int8
	Hand   int8 // 0-based
	Trick  int8 // 0-based, for EventPlayed and EventTrickWon
	Seat   int8
	Card   cards.Card
	Joker  JokerMode
	Suit   cards.Suit
	Bid    int8
	N      int8
	Cards  cards.Set
	Bids   [Seats]int8
	Tricks [Seats]int8
}

// eventJSON is Event on the wire: names instead of numbers, absent fields
// left out.
type eventJSON struct {
	Kind   EventKind    `json:"kind"`
	To     int8         `json:"to"`
	Hand   int8         `json:"hand"`
	Trick  *int8        `json:"trick,omitempty"`
	Seat   *int8        `json:"seat,omitempty"`
	Card   *cards.Card  `json:"card,omitempty"`
	Joker  JokerMode    `json:"joker,omitempty"`
	Suit   string       `json:"suit,omitempty"`
	Bid    *int8        `json:"bid,omitempty"`
	N      int8         `json:"n,omitempty"`
	Cards  []cards.Card `json:"cards,omitempty"`
	Bids   *[Seats]int8 `json:"bids,omitempty"`
	Tricks *[Seats]int8 `json:"tricks,omitempty"`
}

// MarshalJSON writes the event with the fields its kind uses, e.g.
// {"kind":"played","to":-1,"hand":3,"trick":0,"seat":2,"card":"JK1","joker":"highest","suit":"S"}.
// Suits are S, H, D, C or NT (no trump).
func (e Event) MarshalJSON() ([]byte, error) {
	j := eventJSON{Kind: e.Kind, To: e.To, Hand: e.Hand, Joker: e.Joker, N: e.N}
	seat := e.Seat
	switch e.Kind {
	case EventHandStarted, EventFirstCards, EventDealt, EventTrumpChosen, EventBid, EventPlayed, EventTrickWon:
		j.Seat = &seat
	}
	if e.Kind == EventPlayed || e.Kind == EventTrickWon {
		t := e.Trick
		j.Trick = &t
	}
	if e.Card != cards.NoCard {
		c := e.Card
		j.Card = &c
	}
	switch e.Kind {
	case EventTrumpTurned, EventTrumpChosen:
		j.Suit = suitText(e.Suit)
	case EventPlayed:
		if e.Suit.Valid() {
			j.Suit = e.Suit.String()
		}
	case EventBid:
		b := e.Bid
		j.Bid = &b
	case EventHandEnded:
		b, t := e.Bids, e.Tricks
		j.Bids, j.Tricks = &b, &t
	}
	if e.Cards != 0 {
		j.Cards = e.Cards.Cards()
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (e *Event) UnmarshalJSON(b []byte) error {
	var j eventJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	out := Event{Kind: j.Kind, To: j.To, Hand: j.Hand, Joker: j.Joker, N: j.N,
		Card: cards.NoCard, Suit: cards.NoSuit}
	if j.Trick != nil {
		out.Trick = *j.Trick
	}
	if j.Seat != nil {
		out.Seat = *j.Seat
	}
	if j.Card != nil {
		out.Card = *j.Card
	}
	if j.Suit != "" {
		s, err := cards.ParseSuit(j.Suit)
		if err != nil {
			return fmt.Errorf("classic: event suit: %w", err)
		}
		out.Suit = s
	}
	if j.Bid != nil {
		out.Bid = *j.Bid
	}
	for _, c := range j.Cards {
		out.Cards = out.Cards.With(c)
	}
	if j.Bids != nil {
		out.Bids = *j.Bids
	}
	if j.Tricks != nil {
		out.Tricks = *j.Tricks
	}
	*e = out
	return nil
}

// Visible reports whether seat may see e (seat -1 is a spectator).
func (e Event) Visible(seat int) bool { return e.To == Public || (seat >= 0 && int(e.To) == seat) }
