package wsclient

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"math"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// This file decodes table event bodies by hand. protojson is generic: it
// walks the message through reflection and tokenises every byte, and it was
// about a quarter of the load generator's CPU, which shares the machine
// with the servers the load generator measures. The decoder here reads only
// the layout the gateway writes for the events of a game in play:
// protojson's own output with UseProtoNames (wire.Event), keys in
// declaration order, zero scalars and empty lists left out, enums by name,
// 64-bit integers quoted, timestamps in UTC. Anything else, however valid
// (other spacing, key order, escapes, numbers written otherwise, a field or
// event this file does not know), falls back to protojson, so what this
// accepts decodes exactly as protojson decodes it (FuzzDecodeEventJSON),
// and the rare rest decodes as before.

// unmarshalEvent decodes an event body: by hand when it is in the gateway's
// layout (decodeEventJSON; byHand is then true), else with protojson on a
// fresh message.
func unmarshalEvent(body []byte) (ev *tablev1.Event, byHand bool, err error) {
	return unmarshalBody(body, decodeEventJSON, "event")
}

// decodeEventJSON decodes body if it is an event in the gateway's layout;
// ok is false for anything else, valid or not, and then nothing is known
// about body (unmarshalEvent asks protojson).
func decodeEventJSON(body []byte) (ev *tablev1.Event, ok bool) {
	c := cursor{b: body, ok: true}
	ev = c.event()
	return ev, c.ok && c.i == len(c.b)
}

// unmarshalBody decodes body with decode when it takes it, else with
// protojson on a fresh message; what names the message in errors.
func unmarshalBody[T any, M interface {
	*T
	proto.Message
}](body []byte, decode func([]byte) (M, bool), what string) (m M, byHand bool, err error) {
	if m, ok := decode(body); ok {
		return m, true, nil
	}
	m = new(T)
	if err := protoIn.Unmarshal(body, m); err != nil {
		return nil, false, fmt.Errorf("wsclient: %s: %w", what, err)
	}
	return m, false, nil
}

// cursor reads JSON from b at i. A method that meets anything it does not
// expect calls fail, after which every method reads nothing and ok stays
// false: a message function reads its fields one after the other and its
// caller checks ok once at the end.
type cursor struct {
	b  []byte
	i  int
	ok bool
	// keyEnd is where the value of the key peekKey last saw begins.
	keyEnd int
}

func (c *cursor) fail() {
	c.ok = false
	c.i = len(c.b)
}

// expect consumes the byte ch.
func (c *cursor) expect(ch byte) {
	if c.i < len(c.b) && c.b[c.i] == ch {
		c.i++
		return
	}
	c.fail()
}

// open and close consume the braces of an object.
func (c *cursor) open()  { c.expect('{') }
func (c *cursor) close() { c.expect('}') }

// separator returns where the next field or element starts after the comma
// at j, or -1. Single-line protojson writes "," — or ", " in about half of
// all builds: its detrand package picks one by hashing the binary, so a
// gateway build writes one or the other throughout. Both are taken; other
// spacing falls back.
func (c *cursor) separator(j int) int {
	if j >= len(c.b) || c.b[j] != ',' {
		return -1
	}
	j++
	if j < len(c.b) && c.b[j] == ' ' {
		j++
	}
	return j
}

// peekKey returns the name of the object's next key, after its separating
// comma unless it is the first, without consuming it; nil at the end of the
// object or when the next key is not a plain string followed by a colon.
// take consumes what it saw.
func (c *cursor) peekKey() []byte {
	if !c.ok || c.i == 0 {
		return nil
	}
	j := c.i
	// Only an object's first key follows its opening brace: no value ends
	// with one.
	if c.b[j-1] != '{' {
		if j = c.separator(j); j < 0 {
			return nil
		}
	}
	if j >= len(c.b) || c.b[j] != '"' {
		return nil
	}
	n := bytes.IndexByte(c.b[j+1:], '"')
	if n < 0 {
		return nil
	}
	end := j + 1 + n + 1
	if end >= len(c.b) || c.b[end] != ':' {
		return nil
	}
	c.keyEnd = end + 1
	return c.b[j+1 : j+1+n]
}

func (c *cursor) take() { c.i = c.keyEnd }

// key consumes the key name when it comes next and reports whether it did.
// A message function asks for its keys in declaration order, each at most
// once, so a key out of order, repeated or unknown stays unread and the
// object's close fails on it.
func (c *cursor) key(name string) bool {
	if string(c.peekKey()) != name {
		return false
	}
	c.take()
	return true
}

// more reports whether an array has another element, consuming the
// separator before it, or consumes the array's closing bracket.
func (c *cursor) more() bool {
	if !c.ok {
		return false
	}
	if c.i < len(c.b) && c.b[c.i] == ']' {
		c.i++
		return false
	}
	if c.b[c.i-1] == '[' {
		return true
	}
	if c.i = c.separator(c.i); c.i < 0 {
		c.fail()
		return false
	}
	return true
}

// digits reads an unsigned decimal integer as JSON writes it: no sign, no
// leading zero, no fraction or exponent (those fall back, as the next
// separator is not there).
func (c *cursor) digits() uint64 {
	start := c.i
	var v uint64
	for c.i < len(c.b) && '0' <= c.b[c.i] && c.b[c.i] <= '9' {
		d := uint64(c.b[c.i] - '0')
		if v > (math.MaxUint64-d)/10 {
			c.fail()
			return 0
		}
		v = v*10 + d
		c.i++
	}
	if n := c.i - start; n == 0 || (n > 1 && c.b[start] == '0') {
		c.fail()
		return 0
	}
	return v
}

// uint32 reads a uint32: a bare number.
func (c *cursor) uint32() uint32 {
	v := c.digits()
	if v > math.MaxUint32 {
		c.fail()
		return 0
	}
	return uint32(v)
}

// quotedUint64 reads a uint64: a quoted decimal string.
func (c *cursor) quotedUint64() uint64 {
	c.expect('"')
	v := c.digits()
	c.expect('"')
	return v
}

// quotedInt64 reads an int64: a quoted decimal string, maybe negative ("-0"
// falls back).
func (c *cursor) quotedInt64() int64 {
	c.expect('"')
	neg := c.i < len(c.b) && c.b[c.i] == '-'
	if neg {
		c.i++
	}
	v := c.digits()
	c.expect('"')
	switch {
	case !neg && v <= math.MaxInt64:
		return int64(v)
	case neg && v == 1<<63:
		return math.MinInt64
	case neg && v != 0 && v < 1<<63:
		return -int64(v)
	}
	c.fail()
	return 0
}

// bool reads true or false.
func (c *cursor) bool() bool {
	rest := c.b[c.i:]
	switch {
	case bytes.HasPrefix(rest, []byte("true")):
		c.i += len("true")
		return true
	case bytes.HasPrefix(rest, []byte("false")):
		c.i += len("false")
		return false
	}
	c.fail()
	return false
}

// str reads a string of printable ASCII without escapes (cutPlainString).
func (c *cursor) str() string {
	c.expect('"')
	if !c.ok {
		return ""
	}
	s, rest, ok := cutPlainString(c.b[c.i:])
	if !ok {
		c.fail()
		return ""
	}
	c.i = len(c.b) - len(rest)
	return s
}

// quoted reads a string's raw bytes, which the caller validates.
func (c *cursor) quoted() []byte {
	c.expect('"')
	if !c.ok {
		return nil
	}
	n := bytes.IndexByte(c.b[c.i:], '"')
	if n < 0 {
		c.fail()
		return nil
	}
	s := c.b[c.i : c.i+n]
	c.i += n + 1
	return s
}

// bytes reads a bytes field as protojson writes it: standard base64 with
// padding. Anything else protojson would take (URL-safe or unpadded
// base64, escapes, non-canonical trailing bits) falls back.
func (c *cursor) bytes() []byte {
	q := c.quoted()
	if !c.ok {
		return nil
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(q)))
	n, err := base64.StdEncoding.Decode(out, q)
	if err != nil || base64.StdEncoding.EncodedLen(n) != len(q) {
		c.fail()
		return nil
	}
	out = out[:n]
	// Decode skips newlines and takes any trailing bits: only the canonical
	// form is protojson's output.
	if !bytes.Equal(base64.StdEncoding.AppendEncode(make([]byte, 0, len(q)), out), q) {
		c.fail()
		return nil
	}
	return out
}

// enum reads an enum value by its name in values, a generated X_value map.
// An unknown name falls back (protojson with DiscardUnknown has its own
// rule for it), and so does a number.
func (c *cursor) enum(values map[string]int32) int32 {
	name := c.quoted()
	v, ok := values[string(name)]
	if !ok {
		c.fail()
	}
	return v
}

// timestamp reads a google.protobuf.Timestamp as protojson writes it:
// 2006-01-02T15:04:05Z with 0, 3, 6 or 9 fractional digits. Other offsets
// and precisions fall back, and so do invalid dates (protojson refuses
// them).
func (c *cursor) timestamp() *timestamppb.Timestamp {
	secs, nanos, ok := parseUTC(c.quoted())
	if !ok {
		c.fail()
		return nil
	}
	return &timestamppb.Timestamp{Seconds: secs, Nanos: nanos}
}

// parseUTC is timestamp's parser: it takes a date only when time.Parse
// would (day within its month, second below 60) and the year is within the
// Timestamp's range, 1 to 9999.
func parseUTC(s []byte) (secs int64, nanos int32, ok bool) {
	switch len(s) {
	case len("2006-01-02T15:04:05Z"), len("2006-01-02T15:04:05.000Z"),
		len("2006-01-02T15:04:05.000000Z"), len("2006-01-02T15:04:05.000000000Z"):
	default:
		return 0, 0, false
	}
	if s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[len(s)-1] != 'Z' {
		return 0, 0, false
	}
	year, ok1 := decimal(s[0:4])
	month, ok2 := decimal(s[5:7])
	day, ok3 := decimal(s[8:10])
	hour, ok4 := decimal(s[11:13])
	minute, ok5 := decimal(s[14:16])
	sec, ok6 := decimal(s[17:19])
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 ||
		year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(month, year) ||
		hour > 23 || minute > 59 || sec > 59 {
		return 0, 0, false
	}
	if frac := s[19 : len(s)-1]; len(frac) > 0 {
		f, ok := decimal(frac[1:])
		if frac[0] != '.' || !ok {
			return 0, 0, false
		}
		for range 9 - (len(frac) - 1) {
			f *= 10
		}
		nanos = int32(f)
	}
	secs = time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC).Unix()
	return secs, nanos, true
}

// decimal reads s, digits only, leading zeros allowed (at most 9 digits).
func decimal(s []byte) (int, bool) {
	v := 0
	for _, ch := range s {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		v = v*10 + int(ch-'0')
	}
	return v, true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// The messages, one function each, their keys in declaration order (which
// is field-number order in these messages, and protojson's order).

func (c *cursor) event() *tablev1.Event {
	ev := &tablev1.Event{}
	c.open()
	if c.key("seq") {
		ev.Seq = c.quotedUint64()
	}
	if c.key("table_id") {
		ev.TableId = c.str()
	}
	if c.key("game_id") {
		ev.GameId = c.str()
	}
	if c.key("occurred_at") {
		ev.OccurredAt = c.timestamp()
	}
	if c.key("visibility") {
		ev.Visibility = c.visibility()
	}
	if c.key("caused_by") {
		ev.CausedBy = c.str()
	}
	c.member(ev)
	if c.key("timer") {
		ev.Timer = c.timerStarted()
	}
	if c.key("seed_accepted") {
		ev.SeedAccepted = c.clientSeedAccepted()
	}
	c.close()
	return ev
}

// member reads the event's oneof member, if it is one this file knows. The
// others (game_started, view_synced, ...: a few per game) stay unread, and
// the event falls back.
func (c *cursor) member(ev *tablev1.Event) {
	switch string(c.peekKey()) {
	case "player_left":
		c.take()
		ev.Event = &tablev1.Event_PlayerLeft{PlayerLeft: c.playerLeft()}
	case "seat_taken_by_bot":
		c.take()
		ev.Event = &tablev1.Event_SeatTakenByBot{SeatTakenByBot: c.seatTakenByBot()}
	case "player_away":
		c.take()
		ev.Event = &tablev1.Event_PlayerAway{PlayerAway: c.playerAway()}
	case "player_back":
		c.take()
		ev.Event = &tablev1.Event_PlayerBack{PlayerBack: c.playerBack()}
	case "hand_started":
		c.take()
		ev.Event = &tablev1.Event_HandStarted{HandStarted: c.handStarted()}
	case "dealt":
		c.take()
		ev.Event = &tablev1.Event_Dealt{Dealt: c.dealt()}
	case "trump_turned":
		c.take()
		ev.Event = &tablev1.Event_TrumpTurned{TrumpTurned: c.trumpTurned()}
	case "trump_chosen":
		c.take()
		ev.Event = &tablev1.Event_TrumpChosen{TrumpChosen: c.trumpChosen()}
	case "bid_made":
		c.take()
		ev.Event = &tablev1.Event_BidMade{BidMade: c.bidMade()}
	case "timer_started":
		c.take()
		ev.Event = &tablev1.Event_TimerStarted{TimerStarted: c.timerStarted()}
	case "card_played":
		c.take()
		ev.Event = &tablev1.Event_CardPlayed{CardPlayed: c.cardPlayed()}
	case "trick_won":
		c.take()
		ev.Event = &tablev1.Event_TrickWon{TrickWon: c.trickWon()}
	case "hand_ended":
		c.take()
		ev.Event = &tablev1.Event_HandEnded{HandEnded: c.handEnded()}
	case "pulka_ended":
		c.take()
		ev.Event = &tablev1.Event_PulkaEnded{PulkaEnded: c.pulkaEnded()}
	case "hand_committed":
		c.take()
		ev.Event = &tablev1.Event_HandCommitted{HandCommitted: c.handCommitted()}
	case "client_seed_accepted":
		c.take()
		ev.Event = &tablev1.Event_ClientSeedAccepted{ClientSeedAccepted: c.clientSeedAccepted()}
	case "hand_revealed":
		c.take()
		ev.Event = &tablev1.Event_HandRevealed{HandRevealed: c.handRevealed()}
	}
}

func (c *cursor) visibility() *tablev1.Visibility {
	m := &tablev1.Visibility{}
	c.open()
	if c.key("audience") {
		m.Audience = tablev1.Audience(c.enum(tablev1.Audience_value))
	}
	if c.key("seat") {
		m.Seat = c.uint32()
	}
	if c.key("player_id") {
		m.PlayerId = c.str()
	}
	c.close()
	return m
}

func (c *cursor) playerLeft() *tablev1.PlayerLeft {
	m := &tablev1.PlayerLeft{}
	c.open()
	if c.key("seat") {
		m.Seat = c.uint32()
	}
	if c.key("player_id") {
		m.PlayerId = c.str()
	}
	c.close()
	return m
}

func (c *cursor) seatTakenByBot() *tablev1.SeatTakenByBot {
	m := &tablev1.SeatTakenByBot{}
	c.open()
	if c.key("seat") {
		m.Seat = c.uint32()
	}
	if c.key("reason") {
		m.Reason = tablev1.BotReason(c.enum(tablev1.BotReason_value))
	}
	c.close()
	return m
}

func (c *cursor) playerAway() *tablev1.PlayerAway {
	m := &tablev1.PlayerAway{}
	c.open()
	if c.key("seat") {
		m.Seat = c.uint32()
	}
	if c.key("player_id") {
		m.PlayerId = c.str()
	}
	if c.key("grace_deadline") {
		m.GraceDeadline = c.timestamp()
	}
	c.close()
	return m
}

func (c *cursor) playerBack() *tablev1.PlayerBack {
	m := &tablev1.PlayerBack{}
	c.open()
	if c.key("seat") {
		m.Seat = c.uint32()
	}
	if c.key("player_id") {
		m.PlayerId = c.str()
	}
	c.close()
	return m
}

func (c *cursor) handStarted() *tablev1.HandStarted {
	m := &tablev1.HandStarted{}
	c.open()
	if c.key("hand_index") {
		m.HandIndex = c.uint32()
	}
	if c.key("pulka_index") {
		m.PulkaIndex = c.uint32()
	}
	if c.key("cards_per_seat") {
		m.CardsPerSeat = c.uint32()
	}
	if c.key("dealer_seat") {
		m.DealerSeat = c.uint32()
	}
	c.close()
	return m
}

func (c *cursor) dealt() *tablev1.Dealt {
	m := &tablev1.Dealt{}
	c.open()
	if c.key("seat") {
		m.Seat = c.uint32()
	}
	if c.key("cards") {
		c.expect('[')
		m.Cards = make([]commonv1.Card, 0, 9) // a classic hand at most
		for c.more() {
			m.Cards = append(m.Cards, commonv1.Card(c.enum(commonv1.Card_value)))
		}
	}
	c.close()
	return m
}

func (c *cursor) trumpTurned() *tablev1.TrumpTurned {
	m := &tablev1.TrumpTurned{}
	c.open()
	if c.key("card") {
		m.Card = commonv1.Card(c.enum(commonv1.Card_value))
	}
	if c.key("trump") {
		m.Trump = commonv1.Suit(c.enum(commonv1.Suit_value))
	}
	c.close()
	return m
}

func (c *cursor) trumpChosen() *tablev1.TrumpChosen {
	m := &tablev1.TrumpChosen{}
	c.open()
	if c.key("seat") {
		m.Seat = c.uint32()
	}
	if c.key("trump") {
		m.Trump = commonv1.Suit(c.enum(commonv1.Suit_value))
	}
	if c.key("by_server") {
		m.ByServer = c.bool()
	}
	c.close()
	return m
}

func (c *cursor) bidMade() *tablev1.BidMade {
	m := &tablev1.BidMade{}
	c.open()
	if c.key("seat") {
		m.Seat = c.uint32()
	}
	if c.key("tricks") {
		m.Tricks = c.uint32()
	}
	if c.key("by_server") {
		m.ByServer = c.bool()
	}
	c.close()
	return m
}

func (c *cursor) timerStarted() *tablev1.TimerStarted {
	m := &tablev1.TimerStarted{}
	c.open()
	if c.key("seat") {
		m.Seat = c.uint32()
	}
	if c.key("phase") {
		m.Phase = tablev1.Phase(c.enum(tablev1.Phase_value))
	}
	if c.key("deadline") {
		m.Deadline = c.timestamp()
	}
	c.close()
	return m
}

func (c *cursor) cardPlayed() *tablev1.CardPlayed {
	m := &tablev1.CardPlayed{}
	c.open()
	if c.key("seat") {
		m.Seat = c.uint32()
	}
	if c.key("card") {
		m.Card = commonv1.Card(c.enum(commonv1.Card_value))
	}
	if c.key("declaration") {
		m.Declaration = c.jokerDeclaration()
	}
	// proto3 optional: present, even as 0, when the card came from a column.
	if c.key("column") {
		col := c.uint32()
		m.Column = &col
	}
	if c.key("by_server") {
		m.ByServer = c.bool()
	}
	c.close()
	return m
}

func (c *cursor) jokerDeclaration() *tablev1.JokerDeclaration {
	m := &tablev1.JokerDeclaration{}
	c.open()
	if c.key("action") {
		m.Action = tablev1.JokerAction(c.enum(tablev1.JokerAction_value))
	}
	if c.key("suit") {
		m.Suit = commonv1.Suit(c.enum(commonv1.Suit_value))
	}
	c.close()
	return m
}

func (c *cursor) trickWon() *tablev1.TrickWon {
	m := &tablev1.TrickWon{}
	c.open()
	if c.key("trick_index") {
		m.TrickIndex = c.uint32()
	}
	if c.key("seat") {
		m.Seat = c.uint32()
	}
	if c.key("tricks_taken") {
		c.expect('[')
		m.TricksTaken = make([]uint32, 0, 4) // one per seat
		for c.more() {
			m.TricksTaken = append(m.TricksTaken, c.uint32())
		}
	}
	c.close()
	return m
}

func (c *cursor) handEnded() *tablev1.HandEnded {
	m := &tablev1.HandEnded{}
	c.open()
	if c.key("hand_index") {
		m.HandIndex = c.uint32()
	}
	if c.key("results") {
		c.expect('[')
		for c.more() {
			m.Results = append(m.Results, c.seatHandResult())
		}
	}
	c.close()
	return m
}

func (c *cursor) seatHandResult() *tablev1.SeatHandResult {
	m := &tablev1.SeatHandResult{}
	c.open()
	if c.key("seat") {
		m.Seat = c.uint32()
	}
	if c.key("bid") {
		m.Bid = c.uint32()
	}
	if c.key("tricks") {
		m.Tricks = c.uint32()
	}
	if c.key("points") {
		m.Points = c.quotedInt64()
	}
	if c.key("penalty") {
		m.Penalty = c.quotedInt64()
	}
	c.close()
	return m
}

func (c *cursor) pulkaEnded() *tablev1.PulkaEnded {
	m := &tablev1.PulkaEnded{}
	c.open()
	if c.key("pulka_index") {
		m.PulkaIndex = c.uint32()
	}
	if c.key("results") {
		c.expect('[')
		for c.more() {
			m.Results = append(m.Results, c.seatPulkaResult())
		}
	}
	c.close()
	return m
}

func (c *cursor) seatPulkaResult() *tablev1.SeatPulkaResult {
	m := &tablev1.SeatPulkaResult{}
	c.open()
	if c.key("seat") {
		m.Seat = c.uint32()
	}
	if c.key("premia") {
		m.Premia = c.quotedInt64()
	}
	if c.key("moshla") {
		m.Moshla = c.quotedInt64()
	}
	if c.key("total") {
		m.Total = c.quotedInt64()
	}
	c.close()
	return m
}

func (c *cursor) handCommitted() *tablev1.HandCommitted {
	m := &tablev1.HandCommitted{}
	c.open()
	if c.key("hand_index") {
		m.HandIndex = c.uint32()
	}
	if c.key("commitment") {
		m.Commitment = c.bytes()
	}
	if c.key("seed_deadline") {
		m.SeedDeadline = c.timestamp()
	}
	if c.key("awaited_seats") {
		c.expect('[')
		m.AwaitedSeats = make([]uint32, 0, 4) // one per seat at most
		for c.more() {
			m.AwaitedSeats = append(m.AwaitedSeats, c.uint32())
		}
	}
	c.close()
	return m
}

func (c *cursor) clientSeedAccepted() *tablev1.ClientSeedAccepted {
	m := &tablev1.ClientSeedAccepted{}
	c.open()
	if c.key("hand_index") {
		m.HandIndex = c.uint32()
	}
	if c.key("seat") {
		m.Seat = c.uint32()
	}
	c.close()
	return m
}

func (c *cursor) handRevealed() *tablev1.HandRevealed {
	m := &tablev1.HandRevealed{}
	c.open()
	if c.key("hand_index") {
		m.HandIndex = c.uint32()
	}
	if c.key("server_seed") {
		m.ServerSeed = c.bytes()
	}
	if c.key("client_seeds") {
		c.expect('[')
		m.ClientSeeds = make([][]byte, 0, 4) // one per seat
		for c.more() {
			m.ClientSeeds = append(m.ClientSeeds, c.bytes())
		}
	}
	if c.key("commitment") {
		m.Commitment = c.bytes()
	}
	c.close()
	return m
}
