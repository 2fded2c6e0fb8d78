package record

import (
	"fmt"
	"io"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/fairdeal"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/scoring"
)

// ClassicPlayer chooses the move of a seat whose turn it is.
type ClassicPlayer interface {
	Choose(g *classic.Game, seat int) (classic.Move, bool)
}

// JapanesePlayer chooses the move of a seat whose turn it is.
type JapanesePlayer interface {
	Choose(g *japanese.Game, seat int) (japanese.Move, bool)
}

// PlayClassic plays a whole local classic game (hand h dealt from
// fairdeal.LocalKey(seed, h)) with the given players and returns its record.
func PlayClassic(seed uint64, s scoring.Settings, players [classic.Seats]ClassicPlayer) (*Record, error) {
	g, err := classic.New(seed, classic.Settings{Variant: s.Variant})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSettings, err)
	}
	rec := &Record{Format: Format, Game: Classic, Seed: Seed(seed), Classic: &s}
	events := make([]classic.Event, 0, 16)
	for !g.Over() {
		if err := playClassicMove(g, players, events, rec); err != nil {
			return nil, err
		}
	}
	return rec, nil
}

// PlayJapanese plays a whole Japanese match with the given players and
// returns its record.
func PlayJapanese(seed uint64, s japanese.Settings, players [japanese.Seats]JapanesePlayer) (*Record, error) {
	g, err := japanese.New(seed, s)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSettings, err)
	}
	rec := &Record{Format: Format, Game: Japanese, Seed: Seed(seed), Japanese: &s}
	events := make([]japanese.Event, 0, 16)
	for !g.Over() {
		seat := g.ToMove()
		m, ok := players[seat].Choose(g, seat)
		if !ok {
			return nil, fmt.Errorf("record: japanese player %d made no move", seat)
		}
		if _, err := g.Apply(m, events[:0]); err != nil {
			return nil, fmt.Errorf("record: japanese player %d: %w", seat, err)
		}
		text, err := m.MarshalText()
		if err != nil {
			return nil, fmt.Errorf("record: %w", err)
		}
		rec.Moves = append(rec.Moves, string(text))
	}
	return rec, nil
}

// PlayClassicTable plays a whole classic game as a table deals it — every
// hand by commit–reveal, its server seed and the client seeds of seats 0
// and 2 read from rnd (seats 1 and 3 send none) — and returns its record
// with every hand's seeds. It is a table's game without the table: for
// tests and examples of records that pulkactl verify checks.
func PlayClassicTable(tableID, gameID string, rnd io.Reader, s scoring.Settings, players [classic.Seats]ClassicPlayer) (*Record, error) {
	g, err := classic.NewLive(classic.Settings{Variant: s.Variant})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSettings, err)
	}
	rec := &Record{Format: Format, Game: Classic, TableID: tableID, GameID: gameID, Classic: &s}
	events := make([]classic.Event, 0, 16)
	for !g.Over() {
		if g.AwaitingDeal() {
			hand := fairdeal.Hand{TableID: tableID, GameID: gameID, Index: uint32(g.HandIndex())}
			var server fairdeal.ServerSeed
			clients := make([]fairdeal.ClientSeed, classic.Seats)
			if _, err := io.ReadFull(rnd, server[:]); err != nil {
				return nil, fmt.Errorf("record: server seed: %w", err)
			}
			hs := HandSeeds{ServerSeed: fairdeal.Hex(server)}
			for seat := range clients {
				if seat%2 == 0 {
					if _, err := io.ReadFull(rnd, clients[seat][:]); err != nil {
						return nil, fmt.Errorf("record: client seed: %w", err)
					}
				}
				hs.ClientSeeds = append(hs.ClientSeeds, fairdeal.Hex(clients[seat]))
			}
			c, err := fairdeal.Commit(hand, server)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrDeal, err)
			}
			k, err := fairdeal.ShuffleKey(hand, server, clients)
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrDeal, err)
			}
			if _, err := g.Deal(k, events[:0]); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrDeal, err)
			}
			hs.Commitment = fairdeal.Hex(c)
			rec.Hands = append(rec.Hands, hs)
			continue
		}
		if err := playClassicMove(g, players, events, rec); err != nil {
			return nil, err
		}
	}
	return rec, nil
}

// playClassicMove has the seat to move choose its move, applies it and
// writes it into rec.
func playClassicMove(g *classic.Game, players [classic.Seats]ClassicPlayer, events []classic.Event, rec *Record) error {
	seat := g.ToMove()
	m, ok := players[seat].Choose(g, seat)
	if !ok {
		return fmt.Errorf("record: classic player %d made no move", seat)
	}
	if _, err := g.Apply(m, events[:0]); err != nil {
		return fmt.Errorf("record: classic player %d: %w", seat, err)
	}
	text, err := m.MarshalText()
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	rec.Moves = append(rec.Moves, string(text))
	return nil
}
