package payout

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/pulka/pulka/pkg/tablesettings"
)

// MaxPot bounds a pot, so that pot × percent cannot overflow an int64 and
// every amount stays exact in a Lua number (2^53) on the wallet's side.
const MaxPot = 1 << 50

// ErrInvalid is wrapped by every refusal of Split: the input cannot be paid
// out (an unknown game, a pot out of range, more players than seats, a seat
// twice, a place of 0 or beyond the number of players).
var ErrInvalid = errors.New("payout: invalid input")

// tables holds each game's shares of the pot by place, in percent: the
// documented payout table (see the package comment). Each is non-increasing
// and adds up to 100.
var tables = map[tablesettings.Game][]int64{
	tablesettings.Classic:  {50, 30, 20, 0},
	tablesettings.Japanese: {100, 0},
}

// Table returns the game's payout table: the percent of the pot paid to
// each place, best first (one entry per seat). Nil for an unknown game.
func Table(g tablesettings.Game) []int64 { return slices.Clone(tables[g]) }

// Stakes is the ladder of Domino Coin stakes a coin table may have.
var stakes = []int64{10, 50, 100, 500, 1000}

// Stakes returns the stake ladder, smallest first.
func Stakes() []int64 { return slices.Clone(stakes) }

// ValidStake reports whether n is a rung of the stake ladder.
func ValidStake(n int64) bool { return slices.Contains(stakes, n) }

// Player is one seat's line of the final standings, as the payout sees it.
type Player struct {
	// Seat is the seat number; unique.
	Seat uint32
	// Place is the final place, 1 for the winner; tied players share a
	// place (competition ranking: 1, 1, 3, 4).
	Place uint32
	// Eligible is true for a player who staked and did not forfeit; a bot,
	// a seat whose player left, or a seat without a stake is not.
	Eligible bool
}

// Result is a divided pot.
type Result struct {
	// Shares holds each player's coins, in the order of the players given.
	Shares []int64
	// Unclaimed is the pot when no player is eligible (else 0): the wallet
	// pays it to its forfeit account.
	Unclaimed int64
}

// Split divides pot among players by the game's payout table (see the
// package comment for every rule). The shares and Unclaimed add up to pot
// exactly, none is negative, a player who is not eligible gets nothing, and
// a better place never gets less than a worse one.
func Split(g tablesettings.Game, pot int64, players []Player) (Result, error) {
	table, ok := tables[g]
	switch {
	case !ok:
		return Result{}, fmt.Errorf("%w: unknown game %d", ErrInvalid, int(g))
	case pot < 0 || pot > MaxPot:
		return Result{}, fmt.Errorf("%w: pot %d out of 0..%d", ErrInvalid, pot, int64(MaxPot))
	case len(players) > len(table):
		return Result{}, fmt.Errorf("%w: %d players for %s, which seats %d", ErrInvalid, len(players), g, len(table))
	}
	seen := make(map[uint32]bool, len(players))
	for _, p := range players {
		if seen[p.Seat] {
			return Result{}, fmt.Errorf("%w: seat %d twice", ErrInvalid, p.Seat)
		}
		seen[p.Seat] = true
		if p.Place < 1 || int(p.Place) > len(players) {
			return Result{}, fmt.Errorf("%w: seat %d has place %d, not in 1..%d", ErrInvalid, p.Seat, p.Place, len(players))
		}
	}

	res := Result{Shares: make([]int64, len(players))}
	// order: the eligible players' indexes by place, then seat.
	order := make([]int, 0, len(players))
	for i, p := range players {
		if p.Eligible {
			order = append(order, i)
		}
	}
	if len(order) == 0 {
		res.Unclaimed = pot
		return res, nil
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(players[a].Place, players[b].Place), cmp.Compare(players[a].Seat, players[b].Seat))
	})
	paid := table[:len(order)]
	var total int64
	for _, w := range paid {
		total += w
	}
	// Each group of tied players shares the percent of the positions it
	// covers; everyone gets the floor of their exact share first.
	left := pot
	for start := 0; start < len(order); {
		end := start + 1
		for end < len(order) && players[order[end]].Place == players[order[start]].Place {
			end++
		}
		var w int64
		for _, x := range paid[start:end] {
			w += x
		}
		each := pot * w / (total * int64(end-start))
		for _, i := range order[start:end] {
			res.Shares[i] = each
			left -= each
		}
		start = end
	}
	// The coins the floors left (fewer than the eligible players) go one
	// each to the best placed, lowest seat first among equals.
	for _, i := range order {
		if left == 0 {
			break
		}
		res.Shares[i]++
		left--
	}
	return res, nil
}
