package wsclient

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/wire"
)

// MoveKind is what a Move does.
type MoveKind uint8

// The moves a seat makes.
const (
	MoveNone MoveKind = iota
	MoveTrump
	MoveBid
	MovePlay
)

// Move is one move of a seat, as a person types it ("bid 2", "trump H",
// "play AS", "play JK1 take", "play JK1 highest H").
type Move struct {
	Kind MoveKind
	// Tricks is the bid.
	Tricks int
	// Suit is the trump chosen; cards.NoSuit means no trump (bezi).
	Suit cards.Suit
	// Card is the card played.
	Card cards.Card
	// Joker declares a played joker; nil for other cards.
	Joker *wire.JokerDecl
}

// String writes the move the way ParseMove reads it.
func (m Move) String() string {
	switch m.Kind {
	case MoveBid:
		return "bid " + strconv.Itoa(m.Tricks)
	case MoveTrump:
		return "trump " + suitWord(m.Suit)
	case MovePlay:
		s := "play " + m.Card.String()
		if m.Joker != nil {
			s += " " + m.Joker.Action
			if m.Joker.Suit != "" {
				s += " " + m.Joker.Suit
			}
		}
		return s
	}
	return "none"
}

// ErrBadMove is returned for a typed move that ParseMove cannot read.
var ErrBadMove = errors.New("wsclient: not a move (bid N, trump S|H|D|C|none, play CARD [take|discard|highest S|give S])")

// ParseMove reads a typed move: "bid 2", "trump H" or "trump none",
// "play AS", "play 10h", "play JK1 take", "play JK2 highest D".
func ParseMove(s string) (Move, error) {
	f := strings.Fields(strings.TrimSpace(s))
	if len(f) < 2 {
		return Move{}, ErrBadMove
	}
	switch strings.ToLower(f[0]) {
	case "bid", "b":
		n, err := strconv.Atoi(f[1])
		if err != nil || n < 0 || n > wire.MaxTricks || len(f) != 2 {
			return Move{}, fmt.Errorf("%w: %q", ErrBadMove, s)
		}
		return Move{Kind: MoveBid, Tricks: n}, nil
	case "trump", "t":
		if len(f) != 2 {
			return Move{}, fmt.Errorf("%w: %q", ErrBadMove, s)
		}
		su := cards.NoSuit
		if !strings.EqualFold(f[1], "none") {
			var err error
			if su, err = cards.ParseSuit(f[1]); err != nil || !su.Valid() {
				return Move{}, fmt.Errorf("%w: %q", ErrBadMove, s)
			}
		}
		return Move{Kind: MoveTrump, Suit: su}, nil
	case "play", "p":
		c, err := wire.ParseCard(f[1])
		if err != nil {
			return Move{}, fmt.Errorf("%w: %w", ErrBadMove, err)
		}
		m := Move{Kind: MovePlay, Card: c}
		if len(f) > 2 {
			d := &wire.JokerDecl{Action: strings.ToLower(f[2])}
			if len(f) > 3 {
				d.Suit = strings.ToUpper(f[3])
			}
			if len(f) > 4 {
				return Move{}, fmt.Errorf("%w: %q", ErrBadMove, s)
			}
			m.Joker = d
		}
		// The gateway's own check, so a typo is caught before it is sent.
		tc, err := MoveCommand("t", m)
		var frame []byte
		if err == nil {
			frame, err = proto.Marshal(commandFrame(tc))
		}
		if err == nil {
			_, err = wire.Parse(frame, wire.Binary)
		}
		if err != nil {
			return Move{}, fmt.Errorf("%w: %w", ErrBadMove, err)
		}
		return m, nil
	}
	return Move{}, fmt.Errorf("%w: %q", ErrBadMove, s)
}

// suitWord is a trump as ParseMove reads it: S, H, D, C or none.
func suitWord(s cards.Suit) string {
	if !s.Valid() {
		return "none"
	}
	return s.String()
}
