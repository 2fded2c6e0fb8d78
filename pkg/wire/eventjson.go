package wire

// This file is the hand-written JSON encoder for the table events the
// gateway forwards most: the ones sent on every move and every hand (bids,
// cards, tricks, timers, deals, hand and pulka results, presence). protojson
// finds every field through reflection, and under load that was about 11% of
// the gateway's CPU; these events are a handful of small, fixed messages.
// jsonenc.go has the encoder and the rules it follows; every event kind not
// listed below, and any event the encoder is not sure of, goes to protojson.
//
// When a field is added to one of these messages, add it here too: the
// tests fill every field of every covered message and fail until it is.

import (
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
)

// The names of the events' enums by number (enumNames).
var (
	audienceNames    = enumNames(tablev1.Audience_name)
	phaseNames       = enumNames(tablev1.Phase_name)
	botReasonNames   = enumNames(tablev1.BotReason_name)
	jokerActionNames = enumNames(tablev1.JokerAction_name)
	cardNames        = enumNames(commonv1.Card_name)
	suitNames        = enumNames(commonv1.Suit_name)
)

// appendEventJSON appends ev as protojson would write it, without epoch,
// trace and command_entry_id (Event leaves those out). ok is false when ev is
// not one the encoder covers or it cannot be sure to match protojson; the
// caller then discards everything past len(b) and uses protojson.
func appendEventJSON(b []byte, ev *tablev1.Event) (_ []byte, ok bool) {
	if ev == nil {
		return b, false
	}
	e := jsonEncoder{b: b, ok: true}
	e.event(ev)
	return e.b, e.ok
}

func (e *jsonEncoder) cards(k string, cs []commonv1.Card) {
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

// event writes the envelope in field-number order, the oneof member in its
// place (10..31) and timer (32) last.
func (e *jsonEncoder) event(ev *tablev1.Event) {
	e.beginRoot()
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
	if a := ev.GetSeedAccepted(); a != nil {
		e.begin("seed_accepted")
		e.clientSeedAccepted(a)
		e.end()
	}
	e.endRoot()
}

// member writes the oneof member. A kind not listed here, no member, or a
// member holding a nil message (which protojson treats as unset) fails.
func (e *jsonEncoder) member(ev *tablev1.Event) {
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
	case *tablev1.Event_HandCommitted:
		if e.beginMember("hand_committed", x.HandCommitted != nil) {
			e.handCommitted(x.HandCommitted)
			e.end()
		}
	case *tablev1.Event_ClientSeedAccepted:
		if e.beginMember("client_seed_accepted", x.ClientSeedAccepted != nil) {
			e.clientSeedAccepted(x.ClientSeedAccepted)
			e.end()
		}
	case *tablev1.Event_HandRevealed:
		if e.beginMember("hand_revealed", x.HandRevealed != nil) {
			e.handRevealed(x.HandRevealed)
			e.end()
		}
	default:
		e.fail()
	}
}

// One function per message, fields in field-number order.

func (e *jsonEncoder) visibility(m *tablev1.Visibility) {
	e.enum("audience", int32(m.GetAudience()), audienceNames)
	e.uint32("seat", m.GetSeat())
	e.string("player_id", m.GetPlayerId())
}

func (e *jsonEncoder) playerLeft(m *tablev1.PlayerLeft) {
	e.uint32("seat", m.GetSeat())
	e.string("player_id", m.GetPlayerId())
}

func (e *jsonEncoder) seatTakenByBot(m *tablev1.SeatTakenByBot) {
	e.uint32("seat", m.GetSeat())
	e.enum("reason", int32(m.GetReason()), botReasonNames)
}

func (e *jsonEncoder) playerAway(m *tablev1.PlayerAway) {
	e.uint32("seat", m.GetSeat())
	e.string("player_id", m.GetPlayerId())
	e.timestamp("grace_deadline", m.GetGraceDeadline())
}

func (e *jsonEncoder) playerBack(m *tablev1.PlayerBack) {
	e.uint32("seat", m.GetSeat())
	e.string("player_id", m.GetPlayerId())
}

func (e *jsonEncoder) handStarted(m *tablev1.HandStarted) {
	e.uint32("hand_index", m.GetHandIndex())
	e.uint32("pulka_index", m.GetPulkaIndex())
	e.uint32("cards_per_seat", m.GetCardsPerSeat())
	e.uint32("dealer_seat", m.GetDealerSeat())
}

func (e *jsonEncoder) dealt(m *tablev1.Dealt) {
	e.uint32("seat", m.GetSeat())
	e.cards("cards", m.GetCards())
}

func (e *jsonEncoder) trumpTurned(m *tablev1.TrumpTurned) {
	e.enum("card", int32(m.GetCard()), cardNames)
	e.enum("trump", int32(m.GetTrump()), suitNames)
}

func (e *jsonEncoder) trumpChosen(m *tablev1.TrumpChosen) {
	e.uint32("seat", m.GetSeat())
	e.enum("trump", int32(m.GetTrump()), suitNames)
	e.bool("by_server", m.GetByServer())
}

func (e *jsonEncoder) bidMade(m *tablev1.BidMade) {
	e.uint32("seat", m.GetSeat())
	e.uint32("tricks", m.GetTricks())
	e.bool("by_server", m.GetByServer())
}

func (e *jsonEncoder) timerStarted(m *tablev1.TimerStarted) {
	e.uint32("seat", m.GetSeat())
	e.enum("phase", int32(m.GetPhase()), phaseNames)
	e.timestamp("deadline", m.GetDeadline())
}

func (e *jsonEncoder) cardPlayed(m *tablev1.CardPlayed) {
	e.uint32("seat", m.GetSeat())
	e.enum("card", int32(m.GetCard()), cardNames)
	if d := m.GetDeclaration(); d != nil {
		e.begin("declaration")
		e.jokerDeclaration(d)
		e.end()
	}
	e.optionalUint32("column", m.Column)
	e.bool("by_server", m.GetByServer())
}

func (e *jsonEncoder) jokerDeclaration(m *tablev1.JokerDeclaration) {
	e.enum("action", int32(m.GetAction()), jokerActionNames)
	e.enum("suit", int32(m.GetSuit()), suitNames)
}

func (e *jsonEncoder) trickWon(m *tablev1.TrickWon) {
	e.uint32("trick_index", m.GetTrickIndex())
	e.uint32("seat", m.GetSeat())
	e.uint32s("tricks_taken", m.GetTricksTaken())
}

func (e *jsonEncoder) handEnded(m *tablev1.HandEnded) {
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

func (e *jsonEncoder) seatHandResult(m *tablev1.SeatHandResult) {
	e.uint32("seat", m.GetSeat())
	e.uint32("bid", m.GetBid())
	e.uint32("tricks", m.GetTricks())
	e.int64("points", m.GetPoints())
	e.int64("penalty", m.GetPenalty())
}

func (e *jsonEncoder) pulkaEnded(m *tablev1.PulkaEnded) {
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

func (e *jsonEncoder) seatPulkaResult(m *tablev1.SeatPulkaResult) {
	e.uint32("seat", m.GetSeat())
	e.int64("premia", m.GetPremia())
	e.int64("moshla", m.GetMoshla())
	e.int64("total", m.GetTotal())
}

// The commit–reveal events (docs/fair-play.md): one of each a hand, and one
// client_seed_accepted per seated player.

func (e *jsonEncoder) handCommitted(m *tablev1.HandCommitted) {
	e.uint32("hand_index", m.GetHandIndex())
	e.bytes("commitment", m.GetCommitment())
	e.timestamp("seed_deadline", m.GetSeedDeadline())
	e.uint32s("awaited_seats", m.GetAwaitedSeats())
}

func (e *jsonEncoder) clientSeedAccepted(m *tablev1.ClientSeedAccepted) {
	e.uint32("hand_index", m.GetHandIndex())
	e.uint32("seat", m.GetSeat())
}

func (e *jsonEncoder) handRevealed(m *tablev1.HandRevealed) {
	e.uint32("hand_index", m.GetHandIndex())
	e.bytes("server_seed", m.GetServerSeed())
	e.bytesList("client_seeds", m.GetClientSeeds())
	e.bytes("commitment", m.GetCommitment())
}
