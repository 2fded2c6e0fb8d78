package wire

// This file is a hand-written JSON encoder for the table events the gateway
// forwards most: the ones sent on every move and every hand (bids, cards,
// tricks, timers, deals, hand and pulka results, presence). protojson finds
// every field through reflection, and under load that was about 11% of the
// gateway's CPU; these events are a handful of small, fixed messages, so
// writing them field by field is cheap and easy to check.
//
// The output is protojson's (UseProtoNames) in meaning: the same keys, values
// and JSON types, with keys in protojson's order (field-number order), only
// laid out compactly. Whenever the encoder meets something it does not cover
// or is not sure to write exactly as protojson would (an event kind below not
// listed, an enum number the descriptor does not name, a string that needs
// escaping or might not be valid UTF-8, a timestamp out of range, a nil
// element), it gives up and Event falls back to protojson for the whole
// event, so protojson stays the definition of the format. The tests compare
// the two on every event of many real games and under go test -fuzz.
//
// When a field is added to one of these messages, add it here too: the
// tests fill every field of every covered message and fail until it is.

import (
	"strconv"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// The enum names by number, from the generated maps (which come from the
// descriptors, as protojson's names do); "" where a number has no name.
var (
	audienceNames    = enumNames(tablev1.Audience_name)
	phaseNames       = enumNames(tablev1.Phase_name)
	botReasonNames   = enumNames(tablev1.BotReason_name)
	jokerActionNames = enumNames(tablev1.JokerAction_name)
	cardNames        = enumNames(commonv1.Card_name)
	suitNames        = enumNames(commonv1.Suit_name)
)

func enumNames(byNumber map[int32]string) []string {
	n := 0
	for k := range byNumber {
		if int(k) >= n {
			n = int(k) + 1
		}
	}
	out := make([]string, n)
	for k, name := range byNumber {
		if k >= 0 {
			out[k] = name
		}
	}
	return out
}

// appendEventJSON appends ev as protojson would write it, without epoch,
// trace and command_entry_id (Event leaves those out). ok is false when ev is
// not one the encoder covers or it cannot be sure to match protojson; the
// caller then discards everything past len(b) and uses protojson.
func appendEventJSON(b []byte, ev *tablev1.Event) (_ []byte, ok bool) {
	if ev == nil {
		return b, false
	}
	e := eventEncoder{b: b, ok: true}
	e.event(ev)
	return e.b, e.ok
}

// eventEncoder appends one JSON object tree. Every field writer appends
// `"key":value,` (or nothing, for a value protojson omits) and end replaces
// the object's trailing comma by its closing brace. The first failure sets
// ok to false; later writes are harmless and the result is thrown away.
type eventEncoder struct {
	b  []byte
	ok bool
}

func (e *eventEncoder) fail() { e.ok = false }

func (e *eventEncoder) key(k string) {
	e.b = append(e.b, '"')
	e.b = append(e.b, k...)
	e.b = append(e.b, '"', ':')
}

// begin opens the object of message field k; a nil message is omitted by
// protojson, so the callers only begin the ones that are set.
func (e *eventEncoder) begin(k string) {
	e.key(k)
	e.b = append(e.b, '{')
}

func (e *eventEncoder) end() {
	if n := len(e.b); e.b[n-1] == ',' {
		e.b[n-1] = '}'
	} else {
		e.b = append(e.b, '}') // an empty message: {}
	}
	e.b = append(e.b, ',')
}

// beginArray opens the list of repeated field k; the callers write its
// elements, each followed by a comma, and close it with endArray. protojson
// omits an empty list, so the callers only begin non-empty ones.
func (e *eventEncoder) beginArray(k string) {
	e.key(k)
	e.b = append(e.b, '[')
}

func (e *eventEncoder) endArray() {
	e.b[len(e.b)-1] = ']' // the last element's comma
	e.b = append(e.b, ',')
}

// beginElement opens a message element of a list. A nil element fails: it
// cannot come from the wire, and what protojson makes of it is its business.
func (e *eventEncoder) beginElement(set bool) bool {
	if !set {
		e.fail()
		return false
	}
	e.b = append(e.b, '{')
	return true
}

// The proto3 scalars: omitted when zero, 64-bit integers as quoted decimals.

func (e *eventEncoder) uint32(k string, v uint32) {
	if v != 0 {
		e.key(k)
		e.b = strconv.AppendUint(e.b, uint64(v), 10)
		e.b = append(e.b, ',')
	}
}

func (e *eventEncoder) uint64(k string, v uint64) {
	if v != 0 {
		e.key(k)
		e.b = append(e.b, '"')
		e.b = strconv.AppendUint(e.b, v, 10)
		e.b = append(e.b, '"', ',')
	}
}

func (e *eventEncoder) int64(k string, v int64) {
	if v != 0 {
		e.key(k)
		e.b = append(e.b, '"')
		e.b = strconv.AppendInt(e.b, v, 10)
		e.b = append(e.b, '"', ',')
	}
}

func (e *eventEncoder) bool(k string, v bool) {
	if v {
		e.key(k)
		e.b = append(e.b, "true,"...)
	}
}

// string writes s only if it is printable ASCII without '"' and '\': such a
// string is valid UTF-8 and needs no escaping, so protojson writes it as is.
// Anything else (rare: the ids are ASCII) is left to protojson, which knows
// its own escaping and rejects invalid UTF-8.
func (e *eventEncoder) string(k, s string) {
	if s == "" {
		return
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			e.fail()
			return
		}
	}
	e.key(k)
	e.b = append(e.b, '"')
	e.b = append(e.b, s...)
	e.b = append(e.b, '"', ',')
}

// enum writes an enum by name; zero is omitted like any proto3 scalar.
func (e *eventEncoder) enum(k string, v int32, names []string) {
	if v != 0 {
		e.key(k)
		e.enumValue(v, names)
		e.b = append(e.b, ',')
	}
}

// enumValue writes v's name. protojson writes a number the descriptor does
// not name as a bare number; that is rare enough to leave to it.
func (e *eventEncoder) enumValue(v int32, names []string) {
	if v < 0 || int(v) >= len(names) || names[v] == "" {
		e.fail()
		return
	}
	e.b = append(e.b, '"')
	e.b = append(e.b, names[v]...)
	e.b = append(e.b, '"')
}

func (e *eventEncoder) cards(k string, cs []commonv1.Card) {
	if len(cs) == 0 {
		return
	}
	e.beginArray(k)
	for _, c := range cs {
		e.enumValue(int32(c), cardNames)
		e.b = append(e.b, ',')
	}
	e.endArray()
}

func (e *eventEncoder) uint32s(k string, vs []uint32) {
	if len(vs) == 0 {
		return
	}
	e.beginArray(k)
	for _, v := range vs {
		e.b = strconv.AppendUint(e.b, uint64(v), 10)
		e.b = append(e.b, ',')
	}
	e.endArray()
}

// The range protojson accepts for google.protobuf.Timestamp: years 1 to 9999.
const (
	minTimestampSeconds = -62135596800
	maxTimestampSeconds = 253402300799
)

// timestamp writes a google.protobuf.Timestamp as protojson does: RFC 3339 in
// UTC with 0, 3, 6 or 9 fractional digits. A timestamp protojson rejects
// fails, so that Event gets protojson's error.
func (e *eventEncoder) timestamp(k string, ts *timestamppb.Timestamp) {
	if ts == nil {
		return
	}
	secs, nanos := ts.GetSeconds(), ts.GetNanos()
	if secs < minTimestampSeconds || secs > maxTimestampSeconds || nanos < 0 || nanos > 999_999_999 {
		e.fail()
		return
	}
	// What protojson writes with Format("2006-01-02T15:04:05.000000000") and
	// then trimming "000" twice and ".000", written digit by digit:
	// AppendFormat parses its layout on every call, and it was half the
	// time of a move's event.
	t := time.Unix(secs, int64(nanos)).UTC()
	year, month, day := t.Date()
	hour, minute, second := t.Clock()
	e.key(k)
	e.b = append(e.b, '"')
	e.b = appendDigits(e.b, year, 4)
	e.b = append(e.b, '-')
	e.b = appendDigits(e.b, int(month), 2)
	e.b = append(e.b, '-')
	e.b = appendDigits(e.b, day, 2)
	e.b = append(e.b, 'T')
	e.b = appendDigits(e.b, hour, 2)
	e.b = append(e.b, ':')
	e.b = appendDigits(e.b, minute, 2)
	e.b = append(e.b, ':')
	e.b = appendDigits(e.b, second, 2)
	switch {
	case nanos == 0:
	case nanos%1_000_000 == 0:
		e.b = append(e.b, '.')
		e.b = appendDigits(e.b, int(nanos/1_000_000), 3)
	case nanos%1_000 == 0:
		e.b = append(e.b, '.')
		e.b = appendDigits(e.b, int(nanos/1_000), 6)
	default:
		e.b = append(e.b, '.')
		e.b = appendDigits(e.b, int(nanos), 9)
	}
	e.b = append(e.b, `Z",`...)
}

// appendDigits appends v (0 <= v < 10^width, width <= 9) as exactly width
// decimal digits, zeros in front.
func appendDigits(b []byte, v, width int) []byte {
	var d [9]byte
	u := uint(v)
	for i := width - 1; i >= 0; i-- {
		d[i] = byte('0' + u%10)
		u /= 10
	}
	return append(b, d[:width]...)
}

// event writes the envelope in field-number order, the oneof member in its
// place (10..31) and timer (32) last.
func (e *eventEncoder) event(ev *tablev1.Event) {
	e.b = append(e.b, '{')
	e.uint64("seq", ev.GetSeq())
	e.string("table_id", ev.GetTableId())
	e.string("game_id", ev.GetGameId())
	// epoch (4): never written.
	e.timestamp("occurred_at", ev.GetOccurredAt())
	if v := ev.GetVisibility(); v != nil {
		e.begin("visibility")
		e.visibility(v)
		e.end()
	}
	e.string("caused_by", ev.GetCausedBy())
	// trace (8) and command_entry_id (9): never written.
	e.member(ev)
	if t := ev.GetTimer(); t != nil {
		e.begin("timer")
		e.timerStarted(t)
		e.end()
	}
	e.end()
	e.b = e.b[:len(e.b)-1] // the top level has no comma after it
}

// member writes the oneof member. A kind not listed here, no member, or a
// member holding a nil message (which protojson treats as unset) fails.
func (e *eventEncoder) member(ev *tablev1.Event) {
	switch x := ev.GetEvent().(type) {
	case *tablev1.Event_PlayerLeft:
		if e.beginMember("player_left", x.PlayerLeft != nil) {
			e.playerLeft(x.PlayerLeft)
			e.end()
		}
	case *tablev1.Event_SeatTakenByBot:
		if e.beginMember("seat_taken_by_bot", x.SeatTakenByBot != nil) {
			e.seatTakenByBot(x.SeatTakenByBot)
			e.end()
		}
	case *tablev1.Event_PlayerAway:
		if e.beginMember("player_away", x.PlayerAway != nil) {
			e.playerAway(x.PlayerAway)
			e.end()
		}
	case *tablev1.Event_PlayerBack:
		if e.beginMember("player_back", x.PlayerBack != nil) {
			e.playerBack(x.PlayerBack)
			e.end()
		}
	case *tablev1.Event_HandStarted:
		if e.beginMember("hand_started", x.HandStarted != nil) {
			e.handStarted(x.HandStarted)
			e.end()
		}
	case *tablev1.Event_Dealt:
		if e.beginMember("dealt", x.Dealt != nil) {
			e.dealt(x.Dealt)
			e.end()
		}
	case *tablev1.Event_TrumpTurned:
		if e.beginMember("trump_turned", x.TrumpTurned != nil) {
			e.trumpTurned(x.TrumpTurned)
			e.end()
		}
	case *tablev1.Event_TrumpChosen:
		if e.beginMember("trump_chosen", x.TrumpChosen != nil) {
			e.trumpChosen(x.TrumpChosen)
			e.end()
		}
	case *tablev1.Event_BidMade:
		if e.beginMember("bid_made", x.BidMade != nil) {
			e.bidMade(x.BidMade)
			e.end()
		}
	case *tablev1.Event_TimerStarted:
		if e.beginMember("timer_started", x.TimerStarted != nil) {
			e.timerStarted(x.TimerStarted)
			e.end()
		}
	case *tablev1.Event_CardPlayed:
		if e.beginMember("card_played", x.CardPlayed != nil) {
			e.cardPlayed(x.CardPlayed)
			e.end()
		}
	case *tablev1.Event_TrickWon:
		if e.beginMember("trick_won", x.TrickWon != nil) {
			e.trickWon(x.TrickWon)
			e.end()
		}
	case *tablev1.Event_HandEnded:
		if e.beginMember("hand_ended", x.HandEnded != nil) {
			e.handEnded(x.HandEnded)
			e.end()
		}
	case *tablev1.Event_PulkaEnded:
		if e.beginMember("pulka_ended", x.PulkaEnded != nil) {
			e.pulkaEnded(x.PulkaEnded)
			e.end()
		}
	default:
		e.fail()
	}
}

// beginMember begins the oneof member's object when it is set and fails
// otherwise.
func (e *eventEncoder) beginMember(k string, set bool) bool {
	if !set {
		e.fail()
		return false
	}
	e.begin(k)
	return true
}

// One function per message, fields in field-number order.

func (e *eventEncoder) visibility(m *tablev1.Visibility) {
	e.enum("audience", int32(m.GetAudience()), audienceNames)
	e.uint32("seat", m.GetSeat())
	e.string("player_id", m.GetPlayerId())
}

func (e *eventEncoder) playerLeft(m *tablev1.PlayerLeft) {
	e.uint32("seat", m.GetSeat())
	e.string("player_id", m.GetPlayerId())
}

func (e *eventEncoder) seatTakenByBot(m *tablev1.SeatTakenByBot) {
	e.uint32("seat", m.GetSeat())
	e.enum("reason", int32(m.GetReason()), botReasonNames)
}

func (e *eventEncoder) playerAway(m *tablev1.PlayerAway) {
	e.uint32("seat", m.GetSeat())
	e.string("player_id", m.GetPlayerId())
	e.timestamp("grace_deadline", m.GetGraceDeadline())
}

func (e *eventEncoder) playerBack(m *tablev1.PlayerBack) {
	e.uint32("seat", m.GetSeat())
	e.string("player_id", m.GetPlayerId())
}

func (e *eventEncoder) handStarted(m *tablev1.HandStarted) {
	e.uint32("hand_index", m.GetHandIndex())
	e.uint32("pulka_index", m.GetPulkaIndex())
	e.uint32("cards_per_seat", m.GetCardsPerSeat())
	e.uint32("dealer_seat", m.GetDealerSeat())
}

func (e *eventEncoder) dealt(m *tablev1.Dealt) {
	e.uint32("seat", m.GetSeat())
	e.cards("cards", m.GetCards())
}

func (e *eventEncoder) trumpTurned(m *tablev1.TrumpTurned) {
	e.enum("card", int32(m.GetCard()), cardNames)
	e.enum("trump", int32(m.GetTrump()), suitNames)
}

func (e *eventEncoder) trumpChosen(m *tablev1.TrumpChosen) {
	e.uint32("seat", m.GetSeat())
	e.enum("trump", int32(m.GetTrump()), suitNames)
	e.bool("by_server", m.GetByServer())
}

func (e *eventEncoder) bidMade(m *tablev1.BidMade) {
	e.uint32("seat", m.GetSeat())
	e.uint32("tricks", m.GetTricks())
	e.bool("by_server", m.GetByServer())
}

func (e *eventEncoder) timerStarted(m *tablev1.TimerStarted) {
	e.uint32("seat", m.GetSeat())
	e.enum("phase", int32(m.GetPhase()), phaseNames)
	e.timestamp("deadline", m.GetDeadline())
}

func (e *eventEncoder) cardPlayed(m *tablev1.CardPlayed) {
	e.uint32("seat", m.GetSeat())
	e.enum("card", int32(m.GetCard()), cardNames)
	if d := m.GetDeclaration(); d != nil {
		e.begin("declaration")
		e.jokerDeclaration(d)
		e.end()
	}
	// A proto3 optional field is written whenever it is set, even to 0.
	if m.Column != nil {
		e.key("column")
		e.b = strconv.AppendUint(e.b, uint64(*m.Column), 10)
		e.b = append(e.b, ',')
	}
	e.bool("by_server", m.GetByServer())
}

func (e *eventEncoder) jokerDeclaration(m *tablev1.JokerDeclaration) {
	e.enum("action", int32(m.GetAction()), jokerActionNames)
	e.enum("suit", int32(m.GetSuit()), suitNames)
}

func (e *eventEncoder) trickWon(m *tablev1.TrickWon) {
	e.uint32("trick_index", m.GetTrickIndex())
	e.uint32("seat", m.GetSeat())
	e.uint32s("tricks_taken", m.GetTricksTaken())
}

func (e *eventEncoder) handEnded(m *tablev1.HandEnded) {
	e.uint32("hand_index", m.GetHandIndex())
	if rs := m.GetResults(); len(rs) > 0 {
		e.beginArray("results")
		for _, r := range rs {
			if !e.beginElement(r != nil) {
				return
			}
			e.seatHandResult(r)
			e.end()
		}
		e.endArray()
	}
}

func (e *eventEncoder) seatHandResult(m *tablev1.SeatHandResult) {
	e.uint32("seat", m.GetSeat())
	e.uint32("bid", m.GetBid())
	e.uint32("tricks", m.GetTricks())
	e.int64("points", m.GetPoints())
	e.int64("penalty", m.GetPenalty())
}

func (e *eventEncoder) pulkaEnded(m *tablev1.PulkaEnded) {
	e.uint32("pulka_index", m.GetPulkaIndex())
	if rs := m.GetResults(); len(rs) > 0 {
		e.beginArray("results")
		for _, r := range rs {
			if !e.beginElement(r != nil) {
				return
			}
			e.seatPulkaResult(r)
			e.end()
		}
		e.endArray()
	}
}

func (e *eventEncoder) seatPulkaResult(m *tablev1.SeatPulkaResult) {
	e.uint32("seat", m.GetSeat())
	e.int64("premia", m.GetPremia())
	e.int64("moshla", m.GetMoshla())
	e.int64("total", m.GetTotal())
}
