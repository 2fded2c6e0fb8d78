package record

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/cards/cardpb"
	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/classic/classicpb"
	"github.com/pulka/pulka/pkg/fairdeal"
	commonv1 "github.com/pulka/pulka/pkg/gen/pulka/common/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// ErrEvents says the events do not make a record (no GameStarted, events of
// another table or game, a hand revealed out of order or not as committed,
// a move that cannot be written).
var ErrEvents = errors.New("record: the events do not make a record")

// FromEvents builds a table's game record (format 2) from the game's
// events in order, as the table's event stream or any client received
// them. It reads only public events — GameStarted (ids, settings, names),
// the moves (BidMade, TrumpChosen, CardPlayed, a Japanese GameEnded by
// resignation or forfeit), HandCommitted and HandRevealed — so every
// player and watcher who saw the game from its start can build it; other
// events are skipped, and so is an event whose seq is not after the last
// one's (a client receives again, after a reconnect, what it missed). A
// hand not revealed yet (the game in progress) has no seeds in the record,
// and neither has a hand revealed without a deal (committed a hand ahead of
// the game's end, docs/fair-play.md): no card came from it. The record is not checked against its moves: that is
// Replay's and Verify's work.
func FromEvents(events []*tablev1.Event) (*Record, error) {
	var rec *Record
	var japaneseGame bool
	commitments := map[uint32][]byte{}
	dealt := map[uint32]bool{}
	var seq uint64
	for i, e := range events {
		// A client that reconnects receives the events it missed again:
		// an event not after the last one read is one it has.
		if e.GetSeq() != 0 {
			if e.GetSeq() <= seq {
				continue
			}
			seq = e.GetSeq()
		}
		if rec == nil {
			gs := e.GetGameStarted()
			if gs == nil {
				continue // what came before the game (seats taken, …)
			}
			r, err := fromGameStarted(e, gs)
			if err != nil {
				return nil, fmt.Errorf("event %d: %w", i, err)
			}
			rec, japaneseGame = r, r.Game == Japanese
			continue
		}
		if e.GetTableId() != rec.TableID || e.GetGameId() != rec.GameID {
			return nil, fmt.Errorf("%w: event %d is of table %q game %q, not %q %q", ErrEvents, i, e.GetTableId(), e.GetGameId(), rec.TableID, rec.GameID)
		}
		var m interface{ MarshalText() ([]byte, error) }
		switch ev := e.GetEvent().(type) {
		case *tablev1.Event_HandCommitted:
			commitments[ev.HandCommitted.GetHandIndex()] = ev.HandCommitted.GetCommitment()
		case *tablev1.Event_HandStarted:
			dealt[ev.HandStarted.GetHandIndex()] = true
		case *tablev1.Event_HandRevealed:
			hr := ev.HandRevealed
			if !dealt[hr.GetHandIndex()] {
				if c := commitments[hr.GetHandIndex()]; c == nil || !bytes.Equal(c, hr.GetCommitment()) {
					return nil, fmt.Errorf("%w: event %d: hand %d revealed, not as committed", ErrEvents, i, hr.GetHandIndex())
				}
				continue
			}
			if int(hr.GetHandIndex()) != len(rec.Hands) || !bytes.Equal(commitments[hr.GetHandIndex()], hr.GetCommitment()) {
				return nil, fmt.Errorf("%w: event %d: hand %d revealed after %d hands, or not as committed", ErrEvents, i, hr.GetHandIndex(), len(rec.Hands))
			}
			hs := HandSeeds{Commitment: hex.EncodeToString(hr.GetCommitment()), ServerSeed: hex.EncodeToString(hr.GetServerSeed())}
			for _, c := range hr.GetClientSeeds() {
				hs.ClientSeeds = append(hs.ClientSeeds, hex.EncodeToString(c))
			}
			rec.Hands = append(rec.Hands, hs)
		case *tablev1.Event_BidMade:
			m = classic.Move{Seat: int8(ev.BidMade.GetSeat()), Kind: classic.MoveBid, Bid: int8(ev.BidMade.GetTricks())}
		case *tablev1.Event_TrumpChosen:
			s := suitOf(ev.TrumpChosen.GetTrump())
			if japaneseGame {
				m = japanese.TrumpMove(int(ev.TrumpChosen.GetSeat()), s)
			} else {
				m = classic.Move{Seat: int8(ev.TrumpChosen.GetSeat()), Kind: classic.MoveTrump, Suit: s}
			}
		case *tablev1.Event_CardPlayed:
			m = playOf(ev.CardPlayed, japaneseGame)
		case *tablev1.Event_GameEnded:
			m = japaneseEnd(ev.GameEnded, japaneseGame)
		}
		if m == nil {
			continue
		}
		b, err := m.MarshalText()
		if err != nil {
			return nil, fmt.Errorf("%w: event %d: %w", ErrEvents, i, err)
		}
		rec.Moves = append(rec.Moves, string(b))
	}
	if rec == nil {
		return nil, fmt.Errorf("%w: no GameStarted", ErrEvents)
	}
	return rec, nil
}

// fromGameStarted is the record's head: ids, settings and seat names.
func fromGameStarted(e *tablev1.Event, gs *tablev1.GameStarted) (*Record, error) {
	s, err := tablesettings.FromProto(gs.GetSettings())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSettings, err)
	}
	rec := &Record{Format: Format, TableID: e.GetTableId(), GameID: e.GetGameId(), Moves: []string{}}
	if rec.TableID == "" || rec.GameID == "" {
		return nil, fmt.Errorf("%w: GameStarted without its table and game ids", ErrEvents)
	}
	if s.Game == tablesettings.Japanese {
		rec.Game = Japanese
		rec.Japanese = &japanese.Settings{Target: s.JapaneseTarget}
	} else {
		rec.Game = Classic
		rec.Classic = &s.Classic
	}
	names := make([]string, rec.seats())
	for _, sp := range gs.GetSeats() {
		if int(sp.GetSeat()) < len(names) {
			names[sp.GetSeat()] = sp.GetDisplayName()
		}
	}
	for _, n := range names {
		if n != "" {
			rec.Players = names
			break
		}
	}
	return rec, nil
}

// suitOf reads a wire suit (cardpb); an unknown value gives an invalid
// suit, which Replay refuses.
func suitOf(s commonv1.Suit) cards.Suit {
	if d, ok := cardpb.FromSuit(s); ok {
		return d
	}
	return cards.NoSuit + 1
}

// playOf is a CardPlayed as its engine's move.
func playOf(p *tablev1.CardPlayed, japaneseGame bool) interface{ MarshalText() ([]byte, error) } {
	c, seat, d := cardpb.FromCard(p.GetCard()), int(p.GetSeat()), p.GetDeclaration()
	if japaneseGame {
		if c.IsJoker() && d.GetAction() == tablev1.JokerAction_JOKER_ACTION_HIGHEST {
			return japanese.LeadJoker(seat, c, suitOf(d.GetSuit()))
		}
		return japanese.PlayMove(seat, c)
	}
	m := classic.Move{Seat: int8(seat), Kind: classic.MovePlay, Card: c}
	if c.IsJoker() {
		m.Joker, _ = classicpb.FromJokerAction(d.GetAction())
		if m.Joker == classic.JokerHighest || m.Joker == classic.JokerGive {
			m.Suit = suitOf(d.GetSuit())
		}
	}
	return m
}

// japaneseEnd is the move that ended a Japanese match early (a resignation
// or a forfeit: the loser's), or nil.
func japaneseEnd(g *tablev1.GameEnded, japaneseGame bool) interface{ MarshalText() ([]byte, error) } {
	if !japaneseGame {
		return nil
	}
	loser := -1
	for _, pl := range g.GetPlacings() {
		if pl.GetPlace() != 1 {
			loser = int(pl.GetSeat())
		}
	}
	switch g.GetReason() {
	case tablev1.GameEndReason_GAME_END_REASON_RESIGNED:
		return japanese.ResignMove(loser)
	case tablev1.GameEndReason_GAME_END_REASON_FORFEITED:
		return japanese.ForfeitMove(loser)
	}
	return nil
}

// HandKey is the shuffle key of hand h (from 0) of the record: a local
// game's, or a table's from its revealed seeds once the server seed is
// checked against the commitment.
func (r *Record) HandKey(h int) (fairdeal.Key, error) {
	rep, err := keyOf(r, h)
	return rep.Key, err
}
