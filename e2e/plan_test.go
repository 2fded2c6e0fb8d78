package e2e

import (
	"context"
	"encoding/hex"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/pulka/pulka/pkg/assign"
	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/fairdeal"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/tools/wsclient"
)

// premiaPlanner plans the first pulka of a classic game so that seat earns
// its premia, which random play rarely gives. No one can know a hand's deal
// before it is dealt (each hand has its own committed server seed), so it
// plans hand by hand: when a hand of the pulka has been dealt, it reads the
// hand's key from the table's log in Redis — a privileged test, as only the
// server could — and tries random legal hands with the rules engine (bids up
// to maxRandomBid, as decide plays) until one where seat takes exactly the
// tricks it bid; in the first hand the next seat must miss its bid but take
// a trick, so that it gets a moshla (not zero, not a premia of its own).
// The clients then play that hand's moves (seatModel.planner).
type premiaPlanner struct {
	rdb     redis.UniversalClient
	tableID string
	seat    int
	end     int // the first hand after the pulka

	mu      sync.Mutex
	rng     cards.RNG
	g       *classic.Game // the game at the start of hand planned
	planned int           // the hand whose moves are in moves; -1 before the first
	moves   [classic.Seats][]wsclient.Move
	err     error
}

func newPremiaPlanner(rdb redis.UniversalClient, tableID string, v classic.Variant, seat int, rng cards.RNG) (*premiaPlanner, error) {
	g, err := classic.NewLive(classic.Settings{Variant: v})
	if err != nil {
		return nil, err
	}
	_, end := v.PulkaHands(0)
	return &premiaPlanner{rdb: rdb, tableID: tableID, seat: seat, end: end, rng: rng, g: g, planned: -1}, nil
}

// script returns the moves seat plays in hand h: planned when h is a hand
// of the first pulka, none after it (random play).
func (p *premiaPlanner) script(seat, h int) []wsclient.Move {
	p.mu.Lock()
	defer p.mu.Unlock()
	if h >= p.end || p.err != nil {
		return nil
	}
	for p.planned < h && p.err == nil {
		p.err = p.planNext()
	}
	if p.planned != h {
		return nil
	}
	moves := p.moves[seat]
	p.moves[seat] = nil // a seat asks once per hand
	return moves
}

// planNext deals the next hand from the log's key and plans it.
func (p *premiaPlanner) planNext() error {
	h := p.planned + 1
	k, err := dealtKey(p.rdb, p.tableID, h)
	if err != nil {
		return err
	}
	if _, err := p.g.Deal(k, nil); err != nil {
		return fmt.Errorf("hand %d: %w", h, err)
	}
	var legal, low []classic.Move
	for try := 0; try < 10000; try++ {
		c := p.g.Clone()
		var moves []classic.Move
		for !c.Over() && c.HandIndex() == h {
			legal = c.Legal(c.ToMove(), legal[:0])
			if c.Phase() == classic.PhaseBid {
				low = low[:0]
				for _, m := range legal {
					if m.Bid <= maxRandomBid {
						low = append(low, m)
					}
				}
				if len(low) > 0 {
					legal = low
				}
			}
			m := legal[p.rng.IntN(len(legal))]
			if _, err := c.Apply(m, nil); err != nil {
				return fmt.Errorf("hand %d: %v: %w", h, m, err)
			}
			moves = append(moves, m)
		}
		r := c.HandResults()[h]
		other := (p.seat + 1) % classic.Seats
		if h == 0 && (r.Bids[other] == r.Tricks[other] || r.Tricks[other] == 0) {
			continue
		}
		if r.Bids[p.seat] == r.Tricks[p.seat] {
			p.g, p.planned = c, h
			p.moves = [classic.Seats][]wsclient.Move{}
			for _, m := range moves {
				p.moves[m.Seat] = append(p.moves[m.Seat], wsMove(m))
			}
			return nil
		}
	}
	return fmt.Errorf("hand %d: no random hand of 10,000 where seat %d makes its bid", h, p.seat)
}

// failed says why the planner stopped planning ("" if it did not).
func (p *premiaPlanner) failed() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		return ""
	}
	return p.err.Error()
}

// dealtKey reads the shuffle key of hand h, dealt and not yet revealed,
// from the table's log: the table the log replays to (table-runner replay)
// holds its seeds.
func dealtKey(rdb redis.UniversalClient, tableID string, h int) (fairdeal.Key, error) {
	r, err := replayLog(context.Background(), rdb, tableID, true)
	if err != nil {
		return fairdeal.Key{}, err
	}
	if r.Hand == nil || int(*r.Hand) != h || !r.Dealt {
		return fairdeal.Key{}, fmt.Errorf("hand %d is not the table's dealt hand (%+v)", h, r)
	}
	b, err := hex.DecodeString(r.DealtKey)
	if err != nil {
		return fairdeal.Key{}, fmt.Errorf("hand %d: key %q: %w", h, r.DealtKey, err)
	}
	var k fairdeal.Key
	if len(b) != len(k) {
		return fairdeal.Key{}, fmt.Errorf("hand %d: a key of %d bytes", h, len(b))
	}
	copy(k[:], b)
	return k, nil
}

// wsMove is the rules engine's move as a client sends it.
func wsMove(m classic.Move) wsclient.Move {
	switch m.Kind {
	case classic.MoveBid:
		return wsclient.Move{Kind: wsclient.MoveBid, Tricks: int(m.Bid)}
	case classic.MoveTrump:
		return wsclient.Move{Kind: wsclient.MoveTrump, Suit: m.Suit}
	}
	out := wsclient.Move{Kind: wsclient.MovePlay, Card: m.Card}
	if m.Joker != classic.JokerNone {
		out.Joker = &wire.JokerDecl{Action: m.Joker.String()}
		if m.Joker == classic.JokerHighest || m.Joker == classic.JokerGive {
			out.Joker.Suit = m.Suit.String()
		}
	}
	return out
}

// startedTable waits for the lobby's start of tableID (written when its
// last seat was taken).
func startedTable(t *testing.T, s *stack, tableID string) *lobbyv1.TableStarted {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := s.Redis().Exists(context.Background(), assign.StartKey(tableID)).Result()
		if err == nil && n == 1 {
			return tableStarted(t, s.Redis(), tableID)
		}
		if time.Now().After(deadline) {
			t.Fatalf("table %s has not started (err %v)", tableID, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// playPlan makes the client play the planner's moves in the hands it plans,
// before its random ones.
func (c *client) playPlan(table string, p *premiaPlanner) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seatModel(table).planner = p
}

// scriptMissed says why the client left its script ("" if it did not).
func (c *client) scriptMissed(table string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seatModel(table).offScript
}
