package table

import (
	"fmt"

	"github.com/pulka/pulka/pkg/fairdeal"
	runnerv1 "github.com/pulka/pulka/pkg/gen/pulka/runner/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// engine is one game's rules behind the table: it turns commands and server
// moves into engine moves and the engine's events into contract events.
type engine interface {
	// toMove is the seat to move, -1 when the game is over.
	toMove() int
	over() bool
	phase() tablev1.Phase
	// awaitingDeal: the current hand waits for deal.
	awaitingDeal() bool
	// handIndex is the current hand's index (hand_index of its events).
	handIndex() uint32
	// lastHand: the current hand is certainly the game's last (no hand is
	// committed ahead of it). A game that cannot know says false.
	lastHand() bool
	// deal deals the current hand from k and emits its events.
	deal(b *batch, k fairdeal.Key) error
	// command plays seat's move; an error is a broken rule and changes
	// nothing.
	command(b *batch, seat int, cmd *tablev1.Command) error
	// serverMove plays the server's move for the seat to move: a bot
	// seat's (bot: at the table's bot level) or, when a player's time ran
	// out, the strong bot's.
	serverMove(b *batch, bot bool) error
	// end ends the game as lost by seat (Japanese: resign, or forfeit).
	end(b *batch, seat int, forfeit bool) error
	// legal is every move seat may make now (it must be seat's turn), as
	// the engine's Legal lists them.
	legal(seat int) *tablev1.LegalMoves
	// view fills what seat (-1: a watcher) may see into v, whose Seats
	// exist already.
	view(seat int, v *tablev1.TableView)
	// snapshot sets m's engine state.
	snapshot(m *runnerv1.TableSnapshot)
	// restore takes the engine state of m, checked as the engine checks its
	// own snapshots; an error changes nothing.
	restore(m *runnerv1.TableSnapshot) error
	// marshal and unmarshal are the engine's own binary state, which the
	// snapshot layouts before version 6 embed.
	marshal() ([]byte, error)
	unmarshal([]byte) error
}

func newEngine(s tablesettings.Settings) (engine, error) {
	switch s.Game {
	case tablesettings.Classic:
		return newClassicEngine(s)
	case tablesettings.Japanese:
		return newJapaneseEngine(s)
	}
	return nil, fmt.Errorf("%w: unknown game %d", ErrBadSettings, uint8(s.Game))
}

// emptyEngine returns an engine of s.Game to unmarshal a state into.
func emptyEngine(s tablesettings.Settings) (engine, error) {
	switch s.Game {
	case tablesettings.Classic:
		return &classicEngine{set: s.Classic, level: s.BotLevel}, nil
	case tablesettings.Japanese:
		return &japaneseEngine{level: s.BotLevel}, nil
	}
	return nil, fmt.Errorf("%w: unknown game %d", ErrBadSnapshot, uint8(s.Game))
}

// rank gives places to scores, best first: tied seats share a place and the
// next place skips (1, 1, 3). Seats with equal scores stay in seat order.
func placings(scores []int64, player func(int) string) []*tablev1.Placing {
	order := make([]int, len(scores))
	for i := range order {
		order[i] = i
	}
	// Insertion sort: four seats at most, and stable.
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && scores[order[j]] > scores[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	out := make([]*tablev1.Placing, len(order))
	for i, s := range order {
		place := uint32(i + 1)
		if i > 0 && scores[s] == scores[order[i-1]] {
			place = out[i-1].Place
		}
		out[i] = &tablev1.Placing{Place: place, Seat: uint32(s), PlayerId: player(s), Score: scores[s]}
	}
	return out
}

// endPlayer is who held seat s at the end: its player, or "" for a bot.
func (t *Table) endPlayer(s int) string {
	if t.seats[s].mode != seatHuman {
		return ""
	}
	return t.seats[s].player
}
