package wsclient

import (
	"encoding/json"
	"unicode/utf8"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
)

// This file decodes score-sheet updates by hand, as eventjson.go does event
// bodies and for the same reason: the whole sheet comes once per table and
// hand, and protojson's reflection over it was a tenth of the load
// generator's CPU. It reads the layout protojson writes with UseProtoNames
// (keys in field-number order, zero scalars and empty lists left out, enums
// by name, 64-bit integers quoted, the optional bid present whenever set),
// and everything else, however valid (a trace, other spacing or key order,
// escapes, numbers written otherwise, a field this file does not know),
// falls back to protojson on the whole body, so what this accepts decodes
// exactly as protojson decodes it (FuzzDecodeSheetJSON).
//
// Two things differ from the event decoder. Strings here are names people
// chose (Georgian, Russian, Turkish...), so raw non-ASCII UTF-8 is read as
// is, as protojson reads it, instead of falling back; invalid UTF-8 falls
// back, and protojson refuses it. And the sheet's table settings (enums,
// durations, a stake oneof: a message of its own that a lobby change may
// extend) are not decoded here: their extent is found and protojson decodes
// that slice alone. That is about a fifth of a mid-game sheet's decoding
// (a tenth at the end), not worth a second decoder of durations and oneofs
// to keep in step with the lobby's messages.

// unmarshalSheet decodes a sheet update's body: by hand when it is in the
// gateway's layout (decodeSheetJSON; byHand is then true), else with
// protojson on a fresh message.
func unmarshalSheet(body []byte) (u *scoringv1.SheetUpdate, byHand bool, err error) {
	return unmarshalBody(body, decodeSheetJSON, "sheet")
}

// decodeSheetJSON decodes body if it is a sheet update in the gateway's
// layout; ok is false for anything else, valid or not (unmarshalSheet then
// asks protojson).
func decodeSheetJSON(body []byte) (u *scoringv1.SheetUpdate, ok bool) {
	c := cursor{b: body, ok: true}
	u = c.sheetUpdate()
	return u, c.ok && c.i == len(c.b)
}

// text reads a string without escapes: any UTF-8 but control characters,
// which JSON does not allow raw. Invalid UTF-8 fails, as protojson refuses
// it; an escape fails too, and protojson reads it (rare in names: the
// gateway writes raw UTF-8).
func (c *cursor) text() string {
	c.expect('"')
	if !c.ok {
		return ""
	}
	b := c.b[c.i:]
	ascii := true
	for i, ch := range b {
		switch {
		case ch == '"':
			s := b[:i]
			if !ascii && !utf8.Valid(s) {
				c.fail()
				return ""
			}
			c.i += i + 1
			return string(s)
		case ch < 0x20 || ch == '\\':
			c.fail()
			return ""
		case ch >= 0x80:
			ascii = false
		}
	}
	c.fail()
	return ""
}

// skipObject returns where the JSON object at i ends, without consuming
// it. It only tracks strings (with their escapes) and nesting, and does not
// check the grammar: its caller hands the slice to json.Valid and
// protojson, which do, and a slice they accept is a whole JSON object,
// which ends where its braces match — so the extent found is the one any
// parser of the whole body would find.
func (c *cursor) skipObject() int {
	if !c.ok || c.i >= len(c.b) || c.b[c.i] != '{' {
		c.fail()
		return c.i
	}
	depth := 0
	inString := false
	for j := c.i; j < len(c.b); j++ {
		ch := c.b[j]
		switch {
		case inString && ch == '\\':
			j++ // the escaped byte, which may be a quote
		case ch == '"':
			inString = !inString
		case inString:
		case ch == '{' || ch == '[':
			depth++
		case ch == '}' || ch == ']':
			if depth--; depth == 0 {
				return j + 1
			}
		}
	}
	c.fail()
	return c.i
}

// tableSettings reads the sheet's settings with protojson, alone: a
// sub-object decodes to the same message alone as embedded. The slice must
// be JSON as encoding/json reads it too, as the rest of what the hand
// decoders take is: protojson takes a little more (asInFull).
func (c *cursor) tableSettings() *lobbyv1.TableSettings {
	end := c.skipObject()
	if !c.ok {
		return nil
	}
	m := &lobbyv1.TableSettings{}
	if s := c.b[c.i:end]; !json.Valid(s) || protoIn.Unmarshal(s, m) != nil {
		c.fail()
		return nil
	}
	c.i = end
	return m
}

// The messages, one function each, their keys in field-number order.

func (c *cursor) sheetUpdate() *scoringv1.SheetUpdate {
	m := &scoringv1.SheetUpdate{}
	c.open()
	if c.key("version") {
		m.Version = c.quotedUint64()
	}
	if c.key("sheet") {
		m.Sheet = c.sheet()
	}
	// A trace (the gateway strips it) stays unread, and the update falls
	// back.
	c.close()
	return m
}

func (c *cursor) sheet() *scoringv1.Sheet {
	m := &scoringv1.Sheet{}
	c.open()
	if c.key("table_id") {
		m.TableId = c.text()
	}
	if c.key("game_id") {
		m.GameId = c.text()
	}
	if c.key("settings") {
		m.Settings = c.tableSettings()
	}
	if c.key("players") {
		c.expect('[')
		m.Players = make([]*scoringv1.SheetPlayer, 0, 4) // a classic table at most
		for c.more() {
			m.Players = append(m.Players, c.sheetPlayer())
		}
	}
	if c.key("pulkas") {
		c.expect('[')
		m.Pulkas = make([]*scoringv1.SheetPulka, 0, 4) // a classic game at most
		for c.more() {
			m.Pulkas = append(m.Pulkas, c.sheetPulka())
		}
	}
	if c.key("totals") {
		c.expect('[')
		m.Totals = make([]*scoringv1.SeatTotal, 0, 4)
		for c.more() {
			m.Totals = append(m.Totals, c.seatTotal())
		}
	}
	if c.key("current_hand") {
		m.CurrentHand = c.uint32()
	}
	c.close()
	return m
}

func (c *cursor) sheetPlayer() *scoringv1.SheetPlayer {
	m := &scoringv1.SheetPlayer{}
	c.open()
	if c.key("seat") {
		m.Seat = c.uint32()
	}
	if c.key("player_id") {
		m.PlayerId = c.text()
	}
	if c.key("display_name") {
		m.DisplayName = c.text()
	}
	c.close()
	return m
}

func (c *cursor) sheetPulka() *scoringv1.SheetPulka {
	m := &scoringv1.SheetPulka{}
	c.open()
	if c.key("pulka_index") {
		m.PulkaIndex = c.uint32()
	}
	if c.key("finished") {
		m.Finished = c.bool()
	}
	if c.key("hands") {
		c.expect('[')
		m.Hands = make([]*scoringv1.SheetHand, 0, 8) // a pulka of the standard variant at most
		for c.more() {
			m.Hands = append(m.Hands, c.sheetHand())
		}
	}
	if c.key("totals") {
		c.expect('[')
		m.Totals = make([]*scoringv1.SheetPulkaSeat, 0, 4)
		for c.more() {
			m.Totals = append(m.Totals, c.sheetPulkaSeat())
		}
	}
	c.close()
	return m
}

func (c *cursor) sheetHand() *scoringv1.SheetHand {
	m := &scoringv1.SheetHand{}
	c.open()
	if c.key("hand_index") {
		m.HandIndex = c.uint32()
	}
	if c.key("cards") {
		m.Cards = c.uint32()
	}
	if c.key("cells") {
		c.expect('[')
		// One cell per seat: the cells of a hand, and their bids, are
		// allocated together, which takes two fifths off a whole sheet's
		// allocations; a fifth cell, which no game has, gets its own.
		cells := new([4]scoringv1.SheetCell)
		bids := new([4]uint32)
		m.Cells = make([]*scoringv1.SheetCell, 0, len(cells))
		for c.more() {
			var cell *scoringv1.SheetCell
			var bid *uint32
			if n := len(m.Cells); n < len(cells) {
				cell, bid = &cells[n], &bids[n]
			} else {
				cell, bid = &scoringv1.SheetCell{}, new(uint32)
			}
			c.sheetCell(cell, bid)
			m.Cells = append(m.Cells, cell)
		}
	}
	c.close()
	return m
}

// sheetCell reads a cell into m, and its bid, if any, into bid.
func (c *cursor) sheetCell(m *scoringv1.SheetCell, bid *uint32) {
	c.open()
	if c.key("seat") {
		m.Seat = c.uint32()
	}
	// proto3 optional: present, even as 0 (a pass), once the bid is made.
	if c.key("bid") {
		*bid = c.uint32()
		m.Bid = bid
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
	if c.key("outcome") {
		m.Outcome = scoringv1.HandOutcome(c.enum(scoringv1.HandOutcome_value))
	}
	if c.key("struck") {
		m.Struck = c.bool()
	}
	c.close()
}

func (c *cursor) sheetPulkaSeat() *scoringv1.SheetPulkaSeat {
	m := &scoringv1.SheetPulkaSeat{}
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

func (c *cursor) seatTotal() *scoringv1.SeatTotal {
	m := &scoringv1.SeatTotal{}
	c.open()
	if c.key("seat") {
		m.Seat = c.uint32()
	}
	if c.key("total") {
		m.Total = c.quotedInt64()
	}
	if c.key("on_course") {
		m.OnCourse = c.bool()
	}
	c.close()
	return m
}
