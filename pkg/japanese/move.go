package japanese

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/pulka/pulka/pkg/cards"
)

// MoveKind says what a move does. The zero value is no move at all, so a
// zero Move is rejected.
type MoveKind uint8

// The move kinds.
const (
	KindNone MoveKind = iota
	// KindTrump: the declarer chooses trump; Suit is the suit, or NoSuit for bezi.
	KindTrump
	// KindPlay: play Card; Suit is the suit named by a led joker, else NoSuit.
	KindPlay
	// KindResign: Seat gives up the match; the opponent wins. Allowed at any
	// time before the end, whoever is to move.
	KindResign
	// KindForfeit: Seat loses the match because it did not come back within
	// the reconnect grace. Only the service issues it (a client sending it for
	// its own seat just resigns).
	KindForfeit
)

var kindNames = [...]string{"none", "trump", "play", "resign", "forfeit"}

// String returns the kind's name as used in the text and JSON encodings.
func (k MoveKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Move is one player's action. Use the constructors (TrumpMove, PlayMove,
// LeadJoker, ResignMove, ForfeitMove): a move must be in canonical form —
// fields a kind does not use hold NoCard/NoSuit — or Apply rejects it.
type Move struct {
	Kind MoveKind
	Seat int
	Card cards.Card
	Suit cards.Suit
}

// TrumpMove is the declarer choosing suit s as trump, or bezi with cards.NoSuit.
func TrumpMove(seat int, s cards.Suit) Move {
	return Move{Kind: KindTrump, Seat: seat, Card: cards.NoCard, Suit: s}
}

// PlayMove plays card c (not a led joker: use LeadJoker for that).
func PlayMove(seat int, c cards.Card) Move {
	return Move{Kind: KindPlay, Seat: seat, Card: c, Suit: cards.NoSuit}
}

// LeadJoker leads joker j naming suit s.
func LeadJoker(seat int, j cards.Card, s cards.Suit) Move {
	return Move{Kind: KindPlay, Seat: seat, Card: j, Suit: s}
}

// ResignMove is seat giving up the match.
func ResignMove(seat int) Move {
	return Move{Kind: KindResign, Seat: seat, Card: cards.NoCard, Suit: cards.NoSuit}
}

// ForfeitMove is the service declaring that seat lost by not returning in time.
func ForfeitMove(seat int) Move {
	return Move{Kind: KindForfeit, Seat: seat, Card: cards.NoCard, Suit: cards.NoSuit}
}

// trumpText writes a trump choice: a suit letter or "bezi".
func trumpText(s cards.Suit) string {
	if s == cards.NoSuit {
		return "bezi"
	}
	return s.String()
}

func parseTrump(s string) (cards.Suit, error) {
	if strings.EqualFold(s, "bezi") {
		return cards.NoSuit, nil
	}
	su, err := cards.ParseSuit(s)
	if err != nil || su == cards.NoSuit {
		return cards.NoSuit, fmt.Errorf("%w: trump %q", ErrBadMove, s)
	}
	return su, nil
}

func parseNamedSuit(s string) (cards.Suit, error) {
	su, err := cards.ParseSuit(s)
	if err != nil || su == cards.NoSuit {
		return cards.NoSuit, fmt.Errorf("%w: suit %q", ErrBadMove, s)
	}
	return su, nil
}

// String writes the move in its text form; unlike MarshalText it never fails,
// so it can describe malformed moves in errors.
func (m Move) String() string {
	b, err := m.MarshalText()
	if err != nil {
		return fmt.Sprintf("{%v seat %d card %v suit %v}", m.Kind, m.Seat, m.Card, m.Suit)
	}
	return string(b)
}

// MarshalText writes the move's text form (see the package doc).
func (m Move) MarshalText() ([]byte, error) {
	if m.Seat < 0 || m.Seat >= Seats {
		return nil, fmt.Errorf("%w: seat %d", ErrBadMove, m.Seat)
	}
	head := strconv.Itoa(m.Seat) + " " + m.Kind.String()
	switch m.Kind {
	case KindTrump:
		if m.Suit > cards.NoSuit || m.Card != cards.NoCard {
			break
		}
		return []byte(head + " " + trumpText(m.Suit)), nil
	case KindPlay:
		if !m.Card.Valid() || m.Suit > cards.NoSuit {
			break
		}
		if m.Suit == cards.NoSuit {
			return []byte(head + " " + m.Card.String()), nil
		}
		return []byte(head + " " + m.Card.String() + " " + m.Suit.String()), nil
	case KindResign, KindForfeit:
		if m.Card != cards.NoCard || m.Suit != cards.NoSuit {
			break
		}
		return []byte(head), nil
	}
	return nil, fmt.Errorf("%w: %v seat %d card %d suit %d", ErrBadMove, m.Kind, m.Seat, m.Card, m.Suit)
}

// UnmarshalText reads the text form written by MarshalText.
func (m *Move) UnmarshalText(b []byte) error {
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return fmt.Errorf("%w: %q", ErrBadMove, b)
	}
	seat, err := strconv.Atoi(f[0])
	if err != nil || seat < 0 || seat >= Seats {
		return fmt.Errorf("%w: seat %q", ErrBadMove, f[0])
	}
	var card, suit string
	if len(f) > 2 {
		card = f[2]
	}
	if len(f) > 3 {
		suit = f[3]
	}
	if len(f) > 4 {
		return fmt.Errorf("%w: %q", ErrBadMove, b)
	}
	mv, err := buildMove(seat, f[1], card, suit)
	if err != nil {
		return err
	}
	*m = mv
	return nil
}

// buildMove checks and assembles a move from its encoded parts; for a trump
// move the choice arrives in arg.
func buildMove(seat int, kind, arg, suit string) (Move, error) {
	switch strings.ToLower(kind) {
	case "trump":
		if suit != "" {
			return Move{}, fmt.Errorf("%w: trump takes one argument", ErrBadMove)
		}
		s, err := parseTrump(arg)
		if err != nil {
			return Move{}, err
		}
		return TrumpMove(seat, s), nil
	case "play":
		c, err := cards.Parse(arg)
		if err != nil {
			return Move{}, fmt.Errorf("%w: %w", ErrBadMove, err)
		}
		if suit == "" {
			return PlayMove(seat, c), nil
		}
		s, err := parseNamedSuit(suit)
		if err != nil {
			return Move{}, err
		}
		return LeadJoker(seat, c, s), nil
	case "resign", "forfeit":
		if arg != "" || suit != "" {
			return Move{}, fmt.Errorf("%w: %s takes no argument", ErrBadMove, kind)
		}
		if strings.EqualFold(kind, "resign") {
			return ResignMove(seat), nil
		}
		return ForfeitMove(seat), nil
	}
	return Move{}, fmt.Errorf("%w: kind %q", ErrBadMove, kind)
}

type moveJSON struct {
	Seat *int   `json:"seat"`
	Kind string `json:"kind"`
	Card string `json:"card,omitempty"`
	Suit string `json:"suit,omitempty"`
}

// MarshalJSON writes the move as {"seat","kind","card","suit"} (see the package doc).
func (m Move) MarshalJSON() ([]byte, error) {
	if _, err := m.MarshalText(); err != nil {
		return nil, err
	}
	seat := m.Seat
	j := moveJSON{Seat: &seat, Kind: m.Kind.String()}
	switch m.Kind {
	case KindTrump:
		j.Suit = trumpText(m.Suit)
	case KindPlay:
		j.Card = m.Card.String()
		if m.Suit != cards.NoSuit {
			j.Suit = m.Suit.String()
		}
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads the object written by MarshalJSON.
func (m *Move) UnmarshalJSON(b []byte) error {
	var j moveJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return fmt.Errorf("%w: %w", ErrBadMove, err)
	}
	if j.Seat == nil || *j.Seat < 0 || *j.Seat >= Seats {
		return fmt.Errorf("%w: missing or bad seat", ErrBadMove)
	}
	arg, suit := j.Card, j.Suit
	if strings.EqualFold(j.Kind, "trump") {
		if j.Card != "" {
			return fmt.Errorf("%w: a trump move names no card", ErrBadMove)
		}
		arg, suit = j.Suit, ""
	}
	mv, err := buildMove(*j.Seat, j.Kind, arg, suit)
	if err != nil {
		return err
	}
	*m = mv
	return nil
}
