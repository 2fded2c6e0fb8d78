package wire

// This file is the hand-written JSON encoder for score-sheet updates. The
// gateway forwards the whole sheet to every client of a table after every
// hand (a classic sheet grows to 24 rows of four cells), and protojson's
// reflection over it was about 5% of the gateway's CPU. jsonenc.go has the
// encoder and the rules it follows; an update the encoder is not sure of
// goes to protojson whole.
//
// Two things matter here more than for the events:
//   - display names are people's names, mostly not ASCII (Georgian,
//     Russian, Turkish...): a fallback on non-ASCII would miss most real
//     games, so strings are escaped exactly as protojson escapes them
//     (appendProtoString), and only invalid UTF-8 falls back;
//   - the table settings are written here too, not by protojson, although
//     protojson.MarshalAppend of that one message would give what protojson
//     embeds: for its few enums, bools, two durations and a stake oneof,
//     protojson took about 3.8µs and 10 allocations, a third more than the
//     rest of a mid-game sheet, against 0.1µs and none here. A field the
//     lobby adds to TableSettings fails TestSheetJSON_CoversEveryField
//     until it is written here.
//
// When a field is added to one of these messages, add it here too: the
// tests fill every field of every message and fail until it is.

import (
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
)

// The names of the sheet's and the settings' enums by number (enumNames).
var (
	handOutcomeNames     = enumNames(scoringv1.HandOutcome_name)
	gameNames            = enumNames(lobbyv1.Game_name)
	classicVariantNames  = enumNames(lobbyv1.ClassicVariant_name)
	khishtiPenaltyNames  = enumNames(lobbyv1.KhishtiPenalty_name)
	tableVisibilityNames = enumNames(lobbyv1.TableVisibility_name)
)

// appendSheetJSON appends u as protojson would write it, without the trace
// (Sheet leaves it out). ok is false when the encoder cannot be sure to
// match protojson; the caller then discards everything past len(b) and uses
// protojson.
func appendSheetJSON(b []byte, u *scoringv1.SheetUpdate) (_ []byte, ok bool) {
	if u == nil {
		return b, false
	}
	e := jsonEncoder{b: b, ok: true}
	e.beginRoot()
	e.uint64("version", u.GetVersion())
	if s := u.GetSheet(); s != nil {
		e.begin("sheet")
		e.sheet(s)
		e.end()
	}
	// trace (3): never written.
	e.endRoot()
	return e.b, e.ok
}

// One function per message, fields in field-number order.

func (e *jsonEncoder) sheet(m *scoringv1.Sheet) {
	e.string("table_id", m.GetTableId())
	e.string("game_id", m.GetGameId())
	if s := m.GetSettings(); s != nil {
		e.begin("settings")
		e.tableSettings(s)
		e.end()
	}
	if ps := m.GetPlayers(); len(ps) > 0 {
		e.beginArray("players")
		for _, p := range ps {
			if !e.beginElement(p != nil) {
				return
			}
			e.sheetPlayer(p)
			e.end()
		}
		e.endArray()
	}
	if ps := m.GetPulkas(); len(ps) > 0 {
		e.beginArray("pulkas")
		for _, p := range ps {
			if !e.beginElement(p != nil) {
				return
			}
			e.sheetPulka(p)
			e.end()
		}
		e.endArray()
	}
	if ts := m.GetTotals(); len(ts) > 0 {
		e.beginArray("totals")
		for _, t := range ts {
			if !e.beginElement(t != nil) {
				return
			}
			e.seatTotal(t)
			e.end()
		}
		e.endArray()
	}
	e.uint32("current_hand", m.GetCurrentHand())
}

func (e *jsonEncoder) sheetPlayer(m *scoringv1.SheetPlayer) {
	e.uint32("seat", m.GetSeat())
	e.string("player_id", m.GetPlayerId())
	e.string("display_name", m.GetDisplayName())
}

func (e *jsonEncoder) sheetPulka(m *scoringv1.SheetPulka) {
	e.uint32("pulka_index", m.GetPulkaIndex())
	e.bool("finished", m.GetFinished())
	if hs := m.GetHands(); len(hs) > 0 {
		e.beginArray("hands")
		for _, h := range hs {
			if !e.beginElement(h != nil) {
				return
			}
			e.sheetHand(h)
			e.end()
		}
		e.endArray()
	}
	if ts := m.GetTotals(); len(ts) > 0 {
		e.beginArray("totals")
		for _, t := range ts {
			if !e.beginElement(t != nil) {
				return
			}
			e.sheetPulkaSeat(t)
			e.end()
		}
		e.endArray()
	}
}

func (e *jsonEncoder) sheetHand(m *scoringv1.SheetHand) {
	e.uint32("hand_index", m.GetHandIndex())
	e.uint32("cards", m.GetCards())
	if cs := m.GetCells(); len(cs) > 0 {
		e.beginArray("cells")
		for _, c := range cs {
			if !e.beginElement(c != nil) {
				return
			}
			e.sheetCell(c)
			e.end()
		}
		e.endArray()
	}
}

func (e *jsonEncoder) sheetCell(m *scoringv1.SheetCell) {
	e.uint32("seat", m.GetSeat())
	e.optionalUint32("bid", m.Bid) // a pass (0) is written once the bid is made
	e.uint32("tricks", m.GetTricks())
	e.int64("points", m.GetPoints())
	e.int64("penalty", m.GetPenalty())
	e.enum("outcome", int32(m.GetOutcome()), handOutcomeNames)
	e.bool("struck", m.GetStruck())
}

func (e *jsonEncoder) sheetPulkaSeat(m *scoringv1.SheetPulkaSeat) {
	e.uint32("seat", m.GetSeat())
	e.int64("premia", m.GetPremia())
	e.int64("moshla", m.GetMoshla())
	e.int64("total", m.GetTotal())
}

func (e *jsonEncoder) seatTotal(m *scoringv1.SeatTotal) {
	e.uint32("seat", m.GetSeat())
	e.int64("total", m.GetTotal())
	e.bool("on_course", m.GetOnCourse())
}

func (e *jsonEncoder) tableSettings(m *lobbyv1.TableSettings) {
	e.enum("game", int32(m.GetGame()), gameNames)
	e.enum("classic_variant", int32(m.GetClassicVariant()), classicVariantNames)
	e.enum("khishti", int32(m.GetKhishti()), khishtiPenaltyNames)
	e.bool("premia", m.GetPremia())
	e.bool("moshla", m.GetMoshla())
	e.bool("rest_docked", m.GetRestDocked())
	e.uint32("japanese_target", m.GetJapaneseTarget())
	e.enum("visibility", int32(m.GetVisibility()), tableVisibilityNames)
	e.bool("has_password", m.GetHasPassword())
	if s := m.GetStake(); s != nil {
		e.begin("stake")
		e.stake(s)
		e.end()
	}
	e.duration("move_time", m.GetMoveTime())
	e.duration("reconnect_grace", m.GetReconnectGrace())
}

// stake writes the oneof member, if any. A kind not listed here (one the
// lobby added later) or a member holding a nil message fails.
func (e *jsonEncoder) stake(m *lobbyv1.Stake) {
	switch x := m.GetKind().(type) {
	case nil:
	case *lobbyv1.Stake_Free:
		if e.beginMember("free", x.Free != nil) {
			e.end() // FreeStake has no fields
		}
	case *lobbyv1.Stake_Coins:
		if e.beginMember("coins", x.Coins != nil) {
			e.int64("amount", x.Coins.GetAmount())
			e.end()
		}
	default:
		e.fail()
	}
}
