package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/fairdeal"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// Client message types (the "type" field of a client frame).
const (
	TypeHello  = "hello"  // authenticate with a token (when no cookie did)
	TypeJoin   = "join"   // follow a table's events, optionally resuming
	TypeUnjoin = "unjoin" // stop following a table (does not leave it)
	TypeBid    = "bid"
	TypeTrump  = "trump"
	TypePlay   = "play"
	TypeResign = "resign"
	TypeLeave  = "leave"
	TypeSit    = "sit"
	TypePing   = "ping"
	TypeLobby  = "lobby" // start or stop receiving lobby updates
	// TypeSeed contributes the player's client seed to the deal of a hand
	// (docs/fair-play.md).
	TypeSeed = "seed"
)

// Limits of client-chosen strings. They keep every id a client sends short
// enough to log and to store in a stream entry.
const (
	MaxIDLen    = 64
	MaxRefLen   = 64
	MaxTokenLen = 1024
)

// JokerDecl is how a played joker is meant, in a client frame.
type JokerDecl struct {
	// Action is "take", "discard", "highest" or "give".
	Action string `json:"action"`
	// Suit is the suit a led joker names (highest, give): S, H, D or C.
	Suit string `json:"suit,omitempty"`
}

// ClientMsg is one frame from a client. Which fields matter depends on Type;
// Parse checks that the ones a type needs are there and well formed. Unknown
// fields are ignored so that older gateways accept newer clients.
type ClientMsg struct {
	Type string `json:"type"`
	// Ref is the client's reference for this frame, echoed in the answer
	// (ack, joined, pong, error) so the client can match them.
	Ref string `json:"ref,omitempty"`
	// Token authenticates a hello.
	Token string `json:"token,omitempty"`
	// Table is the table a join, unjoin or table command is for.
	Table string `json:"table,omitempty"`
	// LastEventID is the id of the last event of Table the client received
	// (join): the gateway sends exactly the events after it.
	LastEventID string `json:"last_event_id,omitempty"`
	// Cmd is the client's idempotency key of a table command; sending the
	// same key again never applies the command twice. Optional.
	Cmd string `json:"cmd,omitempty"`
	// Tricks is the bid.
	Tricks *uint32 `json:"tricks,omitempty"`
	// Suit is the trump: S, H, D, C, or "none" for no trump / bezi.
	Suit string `json:"suit,omitempty"`
	// Card is the card played: "AS", "10H", "JK1", …
	Card string `json:"card,omitempty"`
	// Joker declares a played joker.
	Joker *JokerDecl `json:"joker,omitempty"`
	// Hand is the hand a seed is for (HandCommitted.hand_index).
	Hand *uint32 `json:"hand,omitempty"`
	// Seed is a client seed: 32 bytes as 64 hex digits. On a seed frame it
	// is the frame's whole point; on a move (bid, trump, play) it is the
	// seed of the hand committed ahead, riding on the move
	// (Command.attached_seed, docs/fair-play.md).
	Seed string `json:"seed,omitempty"`
	// Seat is the seat to sit at (sit).
	Seat *uint32 `json:"seat,omitempty"`
	// Watch turns lobby updates on (true) or off (false).
	Watch *bool `json:"watch,omitempty"`
	// Filter narrows the tables a lobby watch shows (nil: all listed).
	Filter *LobbyFilter `json:"filter,omitempty"`
	// Limit is the most tables a lobby watch shows, newest first (0: the
	// gateway's window; more than it is cut to it).
	Limit uint32 `json:"limit,omitempty"`
}

// Parse decodes and validates one client frame. Its errors are *Error with
// the code to send back (CodeBadJSON, CodeUnknownType, CodeInvalid…); the
// returned message carries Ref even on error when it could be read, so the
// error frame can echo it.
func Parse(data []byte) (ClientMsg, error) {
	var m ClientMsg
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&m); err != nil {
		return ClientMsg{}, Errorf(CodeBadJSON, "malformed JSON: %v", err)
	}
	if dec.More() {
		return ClientMsg{}, Errorf(CodeBadJSON, "one JSON object per frame")
	}
	if len(m.Ref) > MaxRefLen || !utf8.ValidString(m.Ref) || strings.ContainsFunc(m.Ref, unicode.IsControl) {
		// Echoed in answers and logged: no control characters either.
		m.Ref = ""
		return m, Errorf(CodeInvalid, "ref: at most %d bytes of UTF-8 text without control characters", MaxRefLen)
	}
	return m, m.validate()
}

func (m *ClientMsg) validate() error {
	switch m.Type {
	case TypeHello:
		if m.Token == "" || len(m.Token) > MaxTokenLen {
			return Errorf(CodeInvalid, "hello needs a token")
		}
		return nil
	case TypePing:
		return nil
	case TypeLobby:
		if m.Watch == nil {
			return Errorf(CodeInvalid, "lobby needs watch: true or false")
		}
		if m.Filter != nil {
			if _, err := m.Filter.Proto(); err != nil {
				return err
			}
		}
		return nil
	case TypeJoin, TypeUnjoin, TypeBid, TypeTrump, TypePlay, TypeResign, TypeLeave, TypeSit, TypeSeed:
	case "":
		return Errorf(CodeInvalid, "missing type")
	default:
		return Errorf(CodeUnknownType, "unknown message type %q", clip(m.Type))
	}
	if err := checkID("table", m.Table, true); err != nil {
		return err
	}
	if err := checkID("cmd", m.Cmd, false); err != nil {
		return err
	}
	if m.LastEventID != "" && !ValidStreamID(m.LastEventID) {
		return Errorf(CodeInvalid, "last_event_id %q is not a stream id", clip(m.LastEventID))
	}
	if err := m.checkAttachedSeed(); err != nil {
		return err
	}
	switch m.Type {
	case TypeBid:
		if m.Tricks == nil {
			return Errorf(CodeInvalid, "bid needs tricks")
		}
		if *m.Tricks > MaxTricks {
			return Errorf(CodeInvalid, "a bid is 0..%d tricks", MaxTricks)
		}
	case TypeTrump:
		if _, err := ParseTrump(m.Suit); err != nil {
			return err
		}
	case TypePlay:
		if _, _, err := m.playCard(); err != nil {
			return err
		}
	case TypeSit:
		if m.Seat == nil {
			return Errorf(CodeInvalid, "sit needs a seat")
		}
		if *m.Seat > MaxSeat {
			return Errorf(CodeInvalid, "a seat is 0..%d", MaxSeat)
		}
	case TypeSeed:
		if _, _, err := m.clientSeed(); err != nil {
			return err
		}
	}
	return nil
}

// checkAttachedSeed checks a seed riding on a move: both hand and seed, or
// neither; no other frame than a move or a seed carries one.
func (m *ClientMsg) checkAttachedSeed() error {
	switch m.Type {
	case TypeSeed:
		return nil
	case TypeBid, TypeTrump, TypePlay:
		_, err := m.attachedSeed()
		return err
	}
	if m.Seed != "" || m.Hand != nil {
		return Errorf(CodeInvalid, "only a move or a seed frame carries a seed")
	}
	return nil
}

// attachedSeed is the seed a move carries, nil when none.
func (m *ClientMsg) attachedSeed() (*tablev1.ClientSeedCommand, error) {
	if m.Seed == "" && m.Hand == nil {
		return nil, nil
	}
	hand, seed, err := m.clientSeed()
	if err != nil {
		return nil, err
	}
	return &tablev1.ClientSeedCommand{HandIndex: hand, Seed: seed[:]}, nil
}

// clientSeed reads a seed frame's hand and seed.
func (m *ClientMsg) clientSeed() (uint32, fairdeal.ClientSeed, error) {
	if m.Hand == nil {
		return 0, fairdeal.ClientSeed{}, Errorf(CodeInvalid, "seed needs a hand")
	}
	s, err := fairdeal.ParseSeed(m.Seed)
	if err != nil {
		return 0, fairdeal.ClientSeed{}, Errorf(CodeInvalid, "a seed is %d hex digits", 2*fairdeal.SeedSize)
	}
	return *m.Hand, fairdeal.ClientSeed(s), nil
}

// MaxTricks is the largest bid (a nine-card hand); MaxSeat the largest seat
// index (classic). The table checks the exact limits of its game.
const (
	MaxTricks = 9
	MaxSeat   = 3
)

// IsTableCommand reports whether the message becomes a tablev1.Command.
func (m *ClientMsg) IsTableCommand() bool {
	switch m.Type {
	case TypeBid, TypeTrump, TypePlay, TypeResign, TypeLeave, TypeSit, TypeSeed:
		return true
	}
	return false
}

// CommandID is the command_id the table sees for a command of playerID. The
// client's key (or, without one, the generated key) is prefixed with the
// player so that one player can never make the table drop another player's
// command by sending its key first.
func CommandID(playerID, key string) string { return playerID + "/" + key }

// Command maps a validated table-command message to the table contract.
// commandID is the full id (see CommandID); playerID is the authenticated
// sender, never taken from the frame.
func Command(m ClientMsg, playerID, commandID string) (*tablev1.Command, error) {
	c := &tablev1.Command{CommandId: commandID, TableId: m.Table, PlayerId: playerID}
	switch m.Type {
	case TypeBid, TypeTrump, TypePlay:
		s, err := m.attachedSeed()
		if err != nil {
			return nil, err
		}
		c.AttachedSeed = s
	}
	switch m.Type {
	case TypeBid:
		if m.Tricks == nil {
			return nil, Errorf(CodeInvalid, "bid needs tricks")
		}
		c.Command = &tablev1.Command_Bid{Bid: &tablev1.BidCommand{Tricks: *m.Tricks}}
	case TypeTrump:
		s, err := ParseTrump(m.Suit)
		if err != nil {
			return nil, err
		}
		c.Command = &tablev1.Command_ChooseTrump{ChooseTrump: &tablev1.ChooseTrumpCommand{Trump: s}}
	case TypePlay:
		card, decl, err := m.playCard()
		if err != nil {
			return nil, err
		}
		c.Command = &tablev1.Command_PlayCard{PlayCard: &tablev1.PlayCardCommand{Card: card, Declaration: decl}}
	case TypeResign:
		c.Command = &tablev1.Command_Resign{Resign: &tablev1.ResignCommand{}}
	case TypeLeave:
		c.Command = &tablev1.Command_Leave{Leave: &tablev1.LeaveCommand{}}
	case TypeSit:
		if m.Seat == nil {
			return nil, Errorf(CodeInvalid, "sit needs a seat")
		}
		c.Command = &tablev1.Command_Sit{Sit: &tablev1.SitCommand{Seat: *m.Seat}}
	case TypeSeed:
		hand, seed, err := m.clientSeed()
		if err != nil {
			return nil, err
		}
		c.Command = &tablev1.Command_ClientSeed{ClientSeed: &tablev1.ClientSeedCommand{HandIndex: hand, Seed: seed[:]}}
	default:
		return nil, Errorf(CodeInvalid, "%q is not a table command", clip(m.Type))
	}
	return c, nil
}

// ReconnectCommand is the command the gateway sends on a player's behalf when
// the events a resuming client missed are no longer in the stream: the table
// answers it with a ViewSynced for the player.
func ReconnectCommand(tableID, playerID, commandID, lastEventID string) *tablev1.Command {
	return &tablev1.Command{
		CommandId: commandID, TableId: tableID, PlayerId: playerID,
		Command: &tablev1.Command_Reconnect{Reconnect: &tablev1.ReconnectCommand{LastEventId: lastEventID}},
	}
}

func (m *ClientMsg) playCard() (commonv1.Card, *tablev1.JokerDeclaration, error) {
	c, err := ParseCard(m.Card)
	if err != nil {
		return 0, nil, err
	}
	if !c.IsJoker() {
		if m.Joker != nil {
			return 0, nil, Errorf(CodeInvalidJoker, "%s is not a joker: drop the joker declaration", c)
		}
		return CardToProto(c), nil, nil
	}
	if m.Joker == nil {
		return 0, nil, Errorf(CodeInvalidJoker, "a joker needs a declaration: take, discard, highest or give")
	}
	d, err := ParseJoker(*m.Joker)
	if err != nil {
		return 0, nil, err
	}
	return CardToProto(c), d, nil
}

// ParseCard reads a card as players write it ("AS", "10H", "th", "JK1") or as
// its protobuf enum name ("CARD_ACE_OF_SPADES"), which is how events show it.
func ParseCard(s string) (cards.Card, error) {
	if strings.HasPrefix(s, "CARD_") {
		if v, ok := commonv1.Card_value[s]; ok && v > 0 {
			return cards.Card(v - 1), nil
		}
	} else if c, err := cards.Parse(s); err == nil {
		return c, nil
	}
	return cards.NoCard, Errorf(CodeInvalidCard, "%q is not a card (write e.g. AS, 10H, QD, JK1)", clip(s))
}

// ParseTrump reads a trump choice: S, H, D, C, or none ("none", "-", "NT")
// for no trump / bezi.
func ParseTrump(s string) (commonv1.Suit, error) {
	if strings.EqualFold(s, "none") {
		return commonv1.Suit_SUIT_NONE, nil
	}
	if s == "" {
		return 0, Errorf(CodeInvalidSuit, "trump needs a suit: S, H, D, C or none")
	}
	su, err := cards.ParseSuit(s)
	if err != nil {
		return 0, Errorf(CodeInvalidSuit, "%q is not a suit (S, H, D, C or none)", clip(s))
	}
	return SuitToProto(su), nil
}

// ParseJoker reads a joker declaration. Following a trick a joker takes or
// discards (no suit); leading it demands the highest of a suit or gives the
// trick away in a suit, so highest and give need a real suit.
func ParseJoker(d JokerDecl) (*tablev1.JokerDeclaration, error) {
	var a tablev1.JokerAction
	switch strings.ToLower(d.Action) {
	case "take":
		a = tablev1.JokerAction_JOKER_ACTION_TAKE
	case "discard":
		a = tablev1.JokerAction_JOKER_ACTION_DISCARD
	case "highest":
		a = tablev1.JokerAction_JOKER_ACTION_HIGHEST
	case "give":
		a = tablev1.JokerAction_JOKER_ACTION_GIVE
	default:
		return nil, Errorf(CodeInvalidJoker, "joker action %q is not take, discard, highest or give", clip(d.Action))
	}
	out := &tablev1.JokerDeclaration{Action: a}
	leading := a == tablev1.JokerAction_JOKER_ACTION_HIGHEST || a == tablev1.JokerAction_JOKER_ACTION_GIVE
	switch {
	case leading:
		s, err := cards.ParseSuit(d.Suit)
		if err != nil || !s.Valid() {
			return nil, Errorf(CodeInvalidJoker, "%s needs a suit: S, H, D or C", strings.ToLower(d.Action))
		}
		out.Suit = SuitToProto(s)
	case d.Suit != "":
		return nil, Errorf(CodeInvalidJoker, "%s names no suit", strings.ToLower(d.Action))
	}
	return out, nil
}

// CardToProto is the wire value of a card (pkg/cards' number plus one).
func CardToProto(c cards.Card) commonv1.Card {
	if !c.Valid() {
		return commonv1.Card_CARD_UNSPECIFIED
	}
	return commonv1.Card(c + 1)
}

// SuitToProto is the wire value of a suit (pkg/cards' number plus one).
func SuitToProto(s cards.Suit) commonv1.Suit { return commonv1.Suit(s + 1) }

// ValidStreamID reports whether s is a Redis stream id ("ms-seq" or "ms").
func ValidStreamID(s string) bool {
	if s == "" || len(s) > 41 {
		return false
	}
	ms, seq, hasSeq := strings.Cut(s, "-")
	return digits(ms) && (!hasSeq || digits(seq))
}

func digits(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// checkID accepts the ids clients send (tables, command keys): short, and
// printable ASCII without the characters that carry meaning in Redis keys
// ('{', '}') or in our command ids ('/').
func checkID(field, s string, required bool) error {
	if s == "" {
		if required {
			return Errorf(CodeInvalid, "%s is required", field)
		}
		return nil
	}
	if len(s) > MaxIDLen {
		return Errorf(CodeInvalid, "%s longer than %d bytes", field, MaxIDLen)
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b <= ' ' || b >= 0x7f || b == '{' || b == '}' || b == '/' {
			return Errorf(CodeInvalid, "%s may only hold printable ASCII without {, } and /", field)
		}
	}
	return nil
}

// ValidTableID reports whether s may name a table (see checkID).
func ValidTableID(s string) bool { return checkID("table", s, true) == nil }

// clip keeps echoed client text short in error messages.
func clip(s string) string {
	const max = 32
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}

// Error is a protocol error with the code sent to the client.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Errorf makes an *Error.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf is the code of err if it is (or wraps) an *Error, else "".
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Error codes of frames the gateway refuses before anything reaches a table.
const (
	CodeBadJSON      = "bad_json"
	CodeUnknownType  = "unknown_type"
	CodeInvalid      = "invalid_message"
	CodeInvalidCard  = "invalid_card"
	CodeInvalidSuit  = "invalid_suit"
	CodeInvalidJoker = "invalid_joker"
	CodeTooBig       = "too_big"
	CodeRateLimited  = "rate_limited"
	CodeAuthRequired = "auth_required"
	CodeUnauthorized = "unauthorized"
	CodeNotJoined    = "not_joined"
	CodeTooMany      = "too_many_tables"
	CodeTrimmed      = "history_trimmed"
	CodeUnavailable  = "unavailable"
	CodeInternal     = "internal"
	// Issue 17's refusals: a join of a table that does not exist, a
	// command from someone holding no seat there, a socket over a
	// connection limit, and a socket closed (4003) because its session
	// expired or was revoked.
	CodeTableNotFound  = "table_not_found"
	CodeNotSeated      = "not_seated"
	CodeTooManyConns   = "too_many_connections"
	CodeSessionExpired = "session_expired"
	CodeSessionRevoked = "session_revoked"
)
