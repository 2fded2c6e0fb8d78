package wire

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/cards/cardpb"
	"github.com/pulka/pulka/pkg/fairdeal"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	gatewayv1 "github.com/pulka/pulka/pkg/gen/pulka/gateway/v1"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// Client frame types: the name of the member a ClientFrame carries (a table
// command by its command's member). They name frames in metrics, logs and
// docs/protocol.md.
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

// MaxTricks is the largest bid (a nine-card hand); MaxSeat the largest seat
// index (classic). The table checks the exact limits of its game.
const (
	MaxTricks = 9
	MaxSeat   = 3
)

// Client frames are read leniently: a field or member this gateway does not
// know is dropped, so that an older gateway still serves a newer client (a
// frame whose only member is unknown is refused as unknown_type).
var (
	binaryIn = proto.UnmarshalOptions{DiscardUnknown: true}
	jsonIn   = protojson.UnmarshalOptions{DiscardUnknown: true}
)

// Parse decodes and checks one client frame, in the encoding of the
// WebSocket message that carried it (Binary for a binary message, JSON for a
// text one). Its errors are *Error with the code to send back (CodeBadFrame,
// CodeBadJSON, CodeUnknownType, CodeInvalid…); the frame is returned even on
// error when it could be decoded, so that the refusal echoes its Ref (empty
// when the ref itself is what is wrong).
func Parse(data []byte, enc Encoding) (*gatewayv1.ClientFrame, error) {
	m := &gatewayv1.ClientFrame{}
	if enc == JSON {
		if err := jsonIn.Unmarshal(data, m); err != nil {
			return &gatewayv1.ClientFrame{}, Errorf(CodeBadJSON, "not a ClientFrame in protobuf JSON: %v", clipErr(err))
		}
	} else if err := binaryIn.Unmarshal(data, m); err != nil {
		return &gatewayv1.ClientFrame{}, Errorf(CodeBadFrame, "not a binary ClientFrame: %v", clipErr(err))
	}
	if len(m.GetRef()) > MaxRefLen || !utf8.ValidString(m.GetRef()) || strings.ContainsFunc(m.GetRef(), unicode.IsControl) {
		// Echoed in answers and logged: no control characters either.
		m.Ref = ""
		return m, Errorf(CodeInvalid, "ref: at most %d bytes of UTF-8 text without control characters", MaxRefLen)
	}
	return m, check(m)
}

// FrameType names what a client frame asks (Type…): its member, or its
// table command's; "" when it carries none this gateway knows.
func FrameType(m *gatewayv1.ClientFrame) string {
	switch f := m.GetFrame().(type) {
	case *gatewayv1.ClientFrame_Hello:
		return TypeHello
	case *gatewayv1.ClientFrame_Join:
		return TypeJoin
	case *gatewayv1.ClientFrame_Unjoin:
		return TypeUnjoin
	case *gatewayv1.ClientFrame_Ping:
		return TypePing
	case *gatewayv1.ClientFrame_Lobby:
		return TypeLobby
	case *gatewayv1.ClientFrame_Command:
		return commandType(f.Command)
	}
	return ""
}

func commandType(c *gatewayv1.TableCommand) string {
	switch c.GetCommand().(type) {
	case *gatewayv1.TableCommand_Bid:
		return TypeBid
	case *gatewayv1.TableCommand_Trump:
		return TypeTrump
	case *gatewayv1.TableCommand_Play:
		return TypePlay
	case *gatewayv1.TableCommand_Resign:
		return TypeResign
	case *gatewayv1.TableCommand_Leave:
		return TypeLeave
	case *gatewayv1.TableCommand_Sit:
		return TypeSit
	case *gatewayv1.TableCommand_Seed:
		return TypeSeed
	}
	return ""
}

// check is what the generated code cannot know: the limits of every
// client-chosen value, and the members a frame needs.
func check(m *gatewayv1.ClientFrame) error {
	switch f := m.GetFrame().(type) {
	case *gatewayv1.ClientFrame_Hello:
		if t := f.Hello.GetToken(); t == "" || len(t) > MaxTokenLen {
			return Errorf(CodeInvalid, "hello needs a token")
		}
		return nil
	case *gatewayv1.ClientFrame_Ping:
		return nil
	case *gatewayv1.ClientFrame_Lobby:
		return CheckFilter(f.Lobby.GetFilter())
	case *gatewayv1.ClientFrame_Join:
		if err := checkID("table", f.Join.GetTable(), true); err != nil {
			return err
		}
		if id := f.Join.GetLastEventId(); id != "" && !ValidStreamID(id) {
			return Errorf(CodeInvalid, "last_event_id %q is not a stream id", clip(id))
		}
		return nil
	case *gatewayv1.ClientFrame_Unjoin:
		return checkID("table", f.Unjoin.GetTable(), true)
	case *gatewayv1.ClientFrame_Command:
		_, err := command(f.Command)
		return err
	}
	return Errorf(CodeUnknownType, "no frame member this gateway knows (hello, join, unjoin, command, ping, lobby)")
}

// CommandID is the command_id the table sees for a command of playerID. The
// client's key (or, without one, the generated key) is prefixed with the
// player so that one player can never make the table drop another player's
// command by sending its key first.
func CommandID(playerID, key string) string { return playerID + "/" + key }

// Command maps a checked table command to the table contract. commandID is
// the full id (see CommandID); playerID is the authenticated sender, never
// taken from the frame.
func Command(c *gatewayv1.TableCommand, playerID, commandID string) (*tablev1.Command, error) {
	out, err := command(c)
	if err != nil {
		return nil, err
	}
	out.CommandId, out.TableId, out.PlayerId = commandID, c.GetTable(), playerID
	return out, nil
}

// command checks c and maps it to a table command without its ids. The
// messages of the table contract are taken over as they are: they were
// decoded for this frame alone.
func command(c *gatewayv1.TableCommand) (*tablev1.Command, error) {
	if err := checkID("table", c.GetTable(), true); err != nil {
		return nil, err
	}
	if err := checkID("cmd", c.GetCmd(), false); err != nil {
		return nil, err
	}
	out := &tablev1.Command{}
	if s := c.GetAttachedSeed(); s != nil {
		switch c.GetCommand().(type) {
		case *gatewayv1.TableCommand_Bid, *gatewayv1.TableCommand_Trump, *gatewayv1.TableCommand_Play:
		default:
			return nil, Errorf(CodeInvalid, "only a move (bid, trump, play) carries an attached seed")
		}
		if err := checkSeed(s); err != nil {
			return nil, err
		}
		out.AttachedSeed = s
	}
	switch x := c.GetCommand().(type) {
	case *gatewayv1.TableCommand_Bid:
		if x.Bid.GetTricks() > MaxTricks {
			return nil, Errorf(CodeInvalid, "a bid is 0..%d tricks", MaxTricks)
		}
		out.Command = &tablev1.Command_Bid{Bid: orNew(x.Bid)}
	case *gatewayv1.TableCommand_Trump:
		if err := checkTrump(x.Trump.GetTrump()); err != nil {
			return nil, err
		}
		out.Command = &tablev1.Command_ChooseTrump{ChooseTrump: x.Trump}
	case *gatewayv1.TableCommand_Play:
		if err := checkPlay(x.Play); err != nil {
			return nil, err
		}
		out.Command = &tablev1.Command_PlayCard{PlayCard: x.Play}
	case *gatewayv1.TableCommand_Resign:
		out.Command = &tablev1.Command_Resign{Resign: orNew(x.Resign)}
	case *gatewayv1.TableCommand_Leave:
		out.Command = &tablev1.Command_Leave{Leave: orNew(x.Leave)}
	case *gatewayv1.TableCommand_Sit:
		if x.Sit.GetSeat() > MaxSeat {
			return nil, Errorf(CodeInvalid, "a seat is 0..%d", MaxSeat)
		}
		out.Command = &tablev1.Command_Sit{Sit: orNew(x.Sit)}
	case *gatewayv1.TableCommand_Seed:
		if err := checkSeed(x.Seed); err != nil {
			return nil, err
		}
		out.Command = &tablev1.Command_ClientSeed{ClientSeed: x.Seed}
	default:
		return nil, Errorf(CodeUnknownType, "no table command this gateway knows (bid, trump, play, resign, leave, sit, seed)")
	}
	return out, nil
}

// orNew is m, or an empty message for a member set to nil (which Go code
// can make and the wire cannot: an empty member decodes as an empty
// message).
func orNew[T any, M interface {
	*T
	proto.Message
}](m M) M {
	if m == nil {
		return new(T)
	}
	return m
}

// checkSeed checks a client seed: exactly fairdeal.SeedSize bytes.
func checkSeed(s *tablev1.ClientSeedCommand) error {
	if s == nil || len(s.GetSeed()) != fairdeal.SeedSize {
		return Errorf(CodeInvalid, "a seed is %d bytes", fairdeal.SeedSize)
	}
	return nil
}

// checkTrump accepts a suit or SUIT_NONE (no trump / bezi).
func checkTrump(s commonv1.Suit) error {
	if s == commonv1.Suit_SUIT_UNSPECIFIED {
		return Errorf(CodeInvalidSuit, "trump needs a suit: SUIT_SPADES, SUIT_HEARTS, SUIT_DIAMONDS, SUIT_CLUBS or SUIT_NONE")
	}
	if _, ok := commonv1.Suit_name[int32(s)]; !ok {
		return Errorf(CodeInvalidSuit, "%d is not a suit", s)
	}
	return nil
}

// checkPlay checks a played card and its declaration. Following a trick a
// joker takes or discards (no suit); leading it demands the highest of a
// suit or gives the trick away in a suit, so highest and give need a real
// suit. A card that is no joker has no declaration.
func checkPlay(p *tablev1.PlayCardCommand) error {
	c := p.GetCard()
	if _, ok := commonv1.Card_name[int32(c)]; !ok || c == commonv1.Card_CARD_UNSPECIFIED {
		return Errorf(CodeInvalidCard, "play needs a card: a value of pulka.common.v1.Card")
	}
	d := p.GetDeclaration()
	joker := c == commonv1.Card_CARD_JOKER_1 || c == commonv1.Card_CARD_JOKER_2
	switch {
	case !joker && d != nil:
		return Errorf(CodeInvalidJoker, "only a joker has a declaration: drop it")
	case !joker:
		return nil
	case d == nil:
		return Errorf(CodeInvalidJoker, "a joker needs a declaration: take, discard, highest or give")
	}
	switch d.GetAction() {
	case tablev1.JokerAction_JOKER_ACTION_TAKE, tablev1.JokerAction_JOKER_ACTION_DISCARD:
		if d.GetSuit() != commonv1.Suit_SUIT_UNSPECIFIED {
			return Errorf(CodeInvalidJoker, "%s names no suit", d.GetAction())
		}
	case tablev1.JokerAction_JOKER_ACTION_HIGHEST, tablev1.JokerAction_JOKER_ACTION_GIVE:
		if s := d.GetSuit(); s < commonv1.Suit_SUIT_SPADES || s > commonv1.Suit_SUIT_CLUBS {
			return Errorf(CodeInvalidJoker, "%s needs a suit: spades, hearts, diamonds or clubs", d.GetAction())
		}
	default:
		return Errorf(CodeInvalidJoker, "a joker's action is take, discard, highest or give")
	}
	return nil
}

// CheckFilter checks a lobby watch's filter: known enum values, a stake
// that is not negative. nil filters nothing.
func CheckFilter(f *lobbyv1.TableFilter) error {
	if f == nil {
		return nil
	}
	if _, ok := lobbyv1.Game_name[int32(f.GetGame())]; !ok {
		return Errorf(CodeInvalid, "filter: %d is not a game", f.GetGame())
	}
	if _, ok := lobbyv1.ClassicVariant_name[int32(f.GetClassicVariant())]; !ok {
		return Errorf(CodeInvalid, "filter: %d is not a variant", f.GetClassicVariant())
	}
	if _, ok := lobbyv1.TableStatus_name[int32(f.GetStatus())]; !ok {
		return Errorf(CodeInvalid, "filter: %d is not a table status", f.GetStatus())
	}
	if f.GetMaxStake() < 0 {
		return Errorf(CodeInvalid, "max_stake is a number of coins, not %d", f.GetMaxStake())
	}
	return nil
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

// JokerDecl is how a played joker is meant, in the words a person types
// (pulkactl play) and Go clients list moves with; ParseJoker turns it into
// the protocol's JokerDeclaration.
type JokerDecl struct {
	// Action is "take", "discard", "highest" or "give".
	Action string
	// Suit is the suit a led joker names (highest, give): S, H, D or C.
	Suit string
}

// ParseJoker reads a joker declaration in words: take or discard (no suit)
// following a trick, highest or give with a real suit leading it.
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
		out.Suit = cardpb.Suit(s)
	case d.Suit != "":
		return nil, Errorf(CodeInvalidJoker, "%s names no suit", strings.ToLower(d.Action))
	}
	return out, nil
}

// JokerWords is d in the words ParseJoker reads: the action in lower case
// and, for a led joker, its suit's letter.
func JokerWords(d *tablev1.JokerDeclaration) *JokerDecl {
	w := &JokerDecl{Action: strings.ToLower(strings.TrimPrefix(d.GetAction().String(), "JOKER_ACTION_"))}
	if s, ok := cardpb.FromSuit(d.GetSuit()); ok && s.Valid() {
		w.Suit = s.String()
	}
	return w
}

// ParseCard reads a card as players write it ("AS", "10H", "th", "JK1") or as
// its protobuf enum name ("CARD_ACE_OF_SPADES").
func ParseCard(s string) (cards.Card, error) {
	if strings.HasPrefix(s, "CARD_") {
		if c := cardpb.FromCard(commonv1.Card(commonv1.Card_value[s])); c.Valid() {
			return c, nil
		}
	} else if c, err := cards.Parse(s); err == nil {
		return c, nil
	}
	return cards.NoCard, Errorf(CodeInvalidCard, "%q is not a card (write e.g. AS, 10H, QD, JK1)", clip(s))
}

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

// clipErr is a decoding error's text, short: it may quote the client's
// bytes.
func clipErr(err error) string {
	const max = 96
	s := err.Error()
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
	CodeBadFrame     = "bad_frame"
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
