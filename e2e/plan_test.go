package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/assign"
	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/classic"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/pkg/wsclient"
)

// premiaPlan plans the first pulka of a classic game so that seat earns its
// premia, which random play rarely gives: knowing the table's seed (the
// deals), it tries, hand by hand, random legal hands with the rules engine
// (bids up to maxRandomBid, as decide plays) until one where seat takes
// exactly the tricks it bid, and keeps that hand; in the first hand the next
// seat must miss its bid but take a trick, so that it gets a moshla (not
// zero, not a premia of its own). It returns each seat's moves in order.
func premiaPlan(seed uint64, v classic.Variant, seat int, rng cards.RNG) ([classic.Seats][]wsclient.Move, error) {
	var plan [classic.Seats][]wsclient.Move
	g, err := classic.New(seed, classic.Settings{Variant: v})
	if err != nil {
		return plan, err
	}
	first, end := v.PulkaHands(0)
	var legal, low []classic.Move
	for h := first; h < end; h++ {
		made := false
		for try := 0; try < 10000 && !made; try++ {
			c := g.Clone()
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
				m := legal[rng.IntN(len(legal))]
				if _, err := c.Apply(m, nil); err != nil {
					return plan, fmt.Errorf("hand %d: %v: %w", h, m, err)
				}
				moves = append(moves, m)
			}
			r := c.HandResults()[h]
			// The next seat misses the first hand, taking a trick, so it
			// earns no premia and its moshla is not zero.
			other := (seat + 1) % classic.Seats
			if h == first && (r.Bids[other] == r.Tricks[other] || r.Tricks[other] == 0) {
				continue
			}
			if r.Bids[seat] == r.Tricks[seat] {
				made, g = true, c
				for _, m := range moves {
					plan[m.Seat] = append(plan[m.Seat], wsMove(m))
				}
			}
		}
		if !made {
			return plan, fmt.Errorf("hand %d: no random hand of 10,000 where seat %d makes its bid", h, seat)
		}
	}
	return plan, nil
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
		n, err := s.rdb.Exists(context.Background(), assign.StartKey(tableID)).Result()
		if err == nil && n == 1 {
			return tableStarted(t, s.rdb, tableID)
		}
		if time.Now().After(deadline) {
			t.Fatalf("table %s has not started (err %v)", tableID, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// playScript makes the client play moves, in order, on table before its
// random ones.
func (c *client) playScript(table string, moves []wsclient.Move) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seatModel(table).script = moves
}

// scriptMissed says why the client left its script ("" if it did not).
func (c *client) scriptMissed(table string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seatModel(table).offScript
}
