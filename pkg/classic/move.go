package classic

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/pulka/pulka/pkg/cards"
)

// MoveKind says what a move does. The zero value is no move at all, so a
// zero Move is never legal.
type MoveKind uint8

// The kinds of move.
const (
	MoveTrump MoveKind = iota + 1 // the seat after the dealer names trump in a nine-card hand
	MoveBid                       // a seat bids how many tricks it will take
	MovePlay                      // a seat plays a card
)

var moveKindNames = [...]string{"", "trump", "bid", "play"}

func (k MoveKind) String() string {
	if int(k) < len(moveKindNames) && k != 0 {
		return moveKindNames[k]
	}
	return fmt.Sprintf("MoveKind(%d)", uint8(k))
}

// JokerMode is what a joker's player declares when playing it.
type JokerMode uint8

// The joker declarations. A joker leading a trick is Highest or Give (with a
// suit); a joker played to a trick somebody else led is Take or Discard.
const (
	JokerNone    JokerMode = iota // not a joker
	JokerTake                     // wins the trick unless a later joker also takes
	JokerDiscard                  // a throw-away that never wins
	JokerHighest                  // led: everyone must play their highest card of the suit
	JokerGive                     // led: the joker is the lowest card of the suit
)

var jokerModeNames = [...]string{"", "take", "discard", "highest", "give"}

func (j JokerMode) String() string {
	if int(j) < len(jokerModeNames) {
		return jokerModeNames[j]
	}
	return fmt.Sprintf("JokerMode(%d)", uint8(j))
}

// MarshalText writes the declaration's name ("" for none).
func (j JokerMode) MarshalText() ([]byte, error) {
	if int(j) >= len(jokerModeNames) {
		return nil, fmt.Errorf("classic: invalid joker mode %d", uint8(j))
	}
	return []byte(jokerModeNames[j]), nil
}

// UnmarshalText reads a declaration's name.
func (j *JokerMode) UnmarshalText(b []byte) error {
	s := strings.ToLower(string(b))
	for i, n := range jokerModeNames {
		if n == s {
			*j = JokerMode(i)
			return nil
		}
	}
	return fmt.Errorf("classic: unknown joker declaration %q", b)
}

// Move is one decision of one seat. Only the fields of its Kind mean anything;
// Apply ignores the others, and Legal leaves them zero:
//
//	MoveTrump: Suit (cards.NoSuit = no trump)
//	MoveBid:   Bid
//	MovePlay:  Card; for a joker also Joker, and Suit when the joker leads
type Move struct {
	Seat  int8
	Kind  MoveKind
	Card  cards.Card
	Joker JokerMode
	Suit  cards.Suit
	Bid   int8
}

// canon returns the move with the fields its kind does not use zeroed, the
// form Legal produces.
func (m Move) canon() Move {
	c := Move{Seat: m.Seat, Kind: m.Kind}
	switch m.Kind {
	case MoveTrump:
		c.Suit = m.Suit
	case MoveBid:
		c.Bid = m.Bid
	case MovePlay:
		c.Card = m.Card
		if m.Card.IsJoker() {
			c.Joker = m.Joker
			if m.Joker == JokerHighest || m.Joker == JokerGive {
				c.Suit = m.Suit
			}
		}
	}
	return c
}

// String is the move's text form; see MarshalText.
func (m Move) String() string {
	b, err := m.MarshalText()
	if err != nil {
		return fmt.Sprintf("{seat %d %v card %d joker %d suit %d bid %d}",
			m.Seat, m.Kind, uint8(m.Card), uint8(m.Joker), uint8(m.Suit), m.Bid)
	}
	return string(b)
}

// suitText writes a suit for a move: S, H, D, C, or NT for no trump.
func suitText(s cards.Suit) string {
	if s == cards.NoSuit {
		return "NT"
	}
	return s.String()
}

// MarshalText writes the move as words: the seat, the kind, its arguments.
//
//	"1 trump H"   "1 trump NT"   "2 bid 0"   "3 play AH"
//	"0 play JK1 take"   "0 play JK2 discard"   "2 play JK1 highest S"   "2 play JK2 give D"
func (m Move) MarshalText() ([]byte, error) {
	if m.Seat < 0 || m.Seat >= Seats {
		return nil, fmt.Errorf("classic: move seat %d out of range", m.Seat)
	}
	b := make([]byte, 0, 24)
	b = strconv.AppendInt(b, int64(m.Seat), 10)
	b = append(b, ' ')
	switch m.Kind {
	case MoveTrump:
		if m.Suit > cards.NoSuit {
			return nil, fmt.Errorf("classic: move trump suit %d invalid", m.Suit)
		}
		b = append(b, "trump "...)
		b = append(b, suitText(m.Suit)...)
	case MoveBid:
		b = append(b, "bid "...)
		b = strconv.AppendInt(b, int64(m.Bid), 10)
	case MovePlay:
		if !m.Card.Valid() {
			return nil, fmt.Errorf("classic: move card %d invalid", m.Card)
		}
		b = append(b, "play "...)
		b = append(b, m.Card.String()...)
		if m.Card.IsJoker() {
			switch m.Joker {
			case JokerTake, JokerDiscard:
				b = append(b, ' ')
				b = append(b, m.Joker.String()...)
			case JokerHighest, JokerGive:
				if !m.Suit.Valid() {
					return nil, fmt.Errorf("classic: joker %v without a suit", m.Joker)
				}
				b = append(b, ' ')
				b = append(b, m.Joker.String()...)
				b = append(b, ' ')
				b = append(b, m.Suit.String()...)
			default:
				return nil, fmt.Errorf("classic: joker played without a declaration")
			}
		}
	default:
		return nil, fmt.Errorf("classic: move kind %d invalid", m.Kind)
	}
	return b, nil
}

// UnmarshalText reads the form MarshalText writes (case-insensitive words).
func (m *Move) UnmarshalText(text []byte) error {
	f := strings.Fields(string(text))
	bad := func(why string) error { return fmt.Errorf("classic: move %q: %s", text, why) }
	if len(f) < 3 {
		return bad("want '<seat> <trump|bid|play> ...'")
	}
	seat, err := strconv.Atoi(f[0])
	if err != nil || seat < 0 || seat >= Seats {
		return bad("seat must be 0..3")
	}
	out := Move{Seat: int8(seat)}
	switch strings.ToLower(f[1]) {
	case "trump":
		if len(f) != 3 {
			return bad("want '<seat> trump <S|H|D|C|NT>'")
		}
		s, err := cards.ParseSuit(f[2])
		if err != nil {
			return bad("unknown suit")
		}
		out.Kind, out.Suit = MoveTrump, s
	case "bid":
		if len(f) != 3 {
			return bad("want '<seat> bid <n>'")
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 || n > MaxCards {
			return bad("bid must be 0..9")
		}
		out.Kind, out.Bid = MoveBid, int8(n)
	case "play":
		c, err := cards.Parse(f[2])
		if err != nil {
			return bad("unknown card")
		}
		out.Kind, out.Card = MovePlay, c
		if !c.IsJoker() {
			if len(f) != 3 {
				return bad("only a joker takes a declaration")
			}
			break
		}
		if len(f) < 4 {
			return bad("a joker needs a declaration: take, discard, highest <suit> or give <suit>")
		}
		var j JokerMode
		if err := j.UnmarshalText([]byte(f[3])); err != nil || j == JokerNone {
			return bad("unknown joker declaration")
		}
		out.Joker = j
		switch j {
		case JokerTake, JokerDiscard:
			if len(f) != 4 {
				return bad("take and discard name no suit")
			}
		default:
			if len(f) != 5 {
				return bad("highest and give name a suit")
			}
			s, err := cards.ParseSuit(f[4])
			if err != nil || !s.Valid() {
				return bad("unknown suit")
			}
			out.Suit = s
		}
	default:
		return bad("unknown kind of move")
	}
	*m = out
	return nil
}

// TrumpMove is seat naming trump suit s (cards.NoSuit for no trump).
func TrumpMove(seat int, s cards.Suit) Move {
	return Move{Seat: int8(seat), Kind: MoveTrump, Suit: s}
}

// BidMove is seat bidding n tricks.
func BidMove(seat, n int) Move { return Move{Seat: int8(seat), Kind: MoveBid, Bid: int8(n)} }

// PlayMove is seat playing ordinary card c.
func PlayMove(seat int, c cards.Card) Move { return Move{Seat: int8(seat), Kind: MovePlay, Card: c} }

// JokerMove is seat playing joker c with a declaration: JokerTake or
// JokerDiscard (suit ignored) on another seat's lead, JokerHighest or
// JokerGive with a suit when leading.
func JokerMove(seat int, c cards.Card, j JokerMode, suit cards.Suit) Move {
	m := Move{Seat: int8(seat), Kind: MovePlay, Card: c, Joker: j}
	if j == JokerHighest || j == JokerGive {
		m.Suit = suit
	}
	return m
}
