package payout_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/pulka/pulka/pkg/payout"
	"github.com/pulka/pulka/pkg/tablesettings"
)

// p is a player line: seat, place, eligible.
func p(seat, place uint32, eligible bool) payout.Player {
	return payout.Player{Seat: seat, Place: place, Eligible: eligible}
}

func TestSplit_Rules(t *testing.T) {
	tests := []struct {
		rule      string
		game      tablesettings.Game
		pot       int64
		players   []payout.Player
		want      []int64
		unclaimed int64
	}{
		{"classic pays 50/30/20/0 by place", tablesettings.Classic, 400,
			[]payout.Player{p(0, 3, true), p(1, 1, true), p(2, 4, true), p(3, 2, true)}, []int64{80, 200, 0, 120}, 0},
		{"japanese: the winner takes the pot", tablesettings.Japanese, 200,
			[]payout.Player{p(0, 2, true), p(1, 1, true)}, []int64{0, 200}, 0},
		{"tied players share the payouts of the places they cover", tablesettings.Classic, 400,
			[]payout.Player{p(0, 1, true), p(1, 2, true), p(2, 2, true), p(3, 4, true)}, []int64{200, 100, 100, 0}, 0},
		{"a tie for first shares 50+30", tablesettings.Classic, 4000,
			[]payout.Player{p(0, 1, true), p(1, 1, true), p(2, 3, true), p(3, 4, true)}, []int64{1600, 1600, 800, 0}, 0},
		{"a four-way tie shares the pot equally", tablesettings.Classic, 400,
			[]payout.Player{p(0, 1, true), p(1, 1, true), p(2, 1, true), p(3, 1, true)}, []int64{100, 100, 100, 100}, 0},
		{"the odd coin goes to the better place", tablesettings.Classic, 41,
			// exact 20.5, 12.3, 8.2: floors 20, 12, 8 leave 1 coin, to 1st
			[]payout.Player{p(0, 1, true), p(1, 2, true), p(2, 3, true), p(3, 4, true)}, []int64{21, 12, 8, 0}, 0},
		{"two odd coins go to the two best places", tablesettings.Classic, 3,
			// exact 1.5, 0.9, 0.6: floors 1, 0, 0 leave 2 coins
			[]payout.Player{p(0, 1, true), p(1, 2, true), p(2, 3, true), p(3, 4, true)}, []int64{2, 1, 0, 0}, 0},
		{"among tied players the odd coin goes to the lowest seat", tablesettings.Japanese, 21,
			[]payout.Player{p(1, 1, true), p(0, 1, true)}, []int64{10, 11}, 0},
		{"a classic leaver is paid nothing and the stayers are paid as if the leaver came last", tablesettings.Classic, 400,
			[]payout.Player{p(0, 1, false), p(1, 2, true), p(2, 3, true), p(3, 4, true)}, []int64{0, 200, 120, 80}, 0},
		{"with two leavers the stayers share 50:30 of the pot", tablesettings.Classic, 400,
			[]payout.Player{p(0, 1, true), p(1, 2, false), p(2, 3, true), p(3, 4, false)}, []int64{250, 0, 150, 0}, 0},
		{"a lone stayer takes the pot", tablesettings.Classic, 400,
			[]payout.Player{p(0, 4, true), p(1, 1, false), p(2, 2, false), p(3, 3, false)}, []int64{400, 0, 0, 0}, 0},
		{"japanese: a player who resigned or timed out leaves the pot to the opponent", tablesettings.Japanese, 1000,
			[]payout.Player{p(0, 1, false), p(1, 2, true)}, []int64{0, 1000}, 0},
		{"bots never win coins", tablesettings.Classic, 200,
			[]payout.Player{p(0, 1, false), p(1, 2, false), p(2, 3, true), p(3, 4, true)}, []int64{0, 0, 125, 75}, 0},
		{"nobody eligible: the pot is unclaimed", tablesettings.Classic, 400,
			[]payout.Player{p(0, 1, false), p(1, 2, false), p(2, 3, false), p(3, 4, false)}, []int64{0, 0, 0, 0}, 400},
		{"an empty pot pays nothing", tablesettings.Classic, 0,
			[]payout.Player{p(0, 1, true), p(1, 2, true), p(2, 3, true), p(3, 4, true)}, []int64{0, 0, 0, 0}, 0},
		{"fewer players than seats: the paid places are the first ones", tablesettings.Classic, 100,
			[]payout.Player{p(2, 2, true), p(3, 1, true)}, []int64{37, 63}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			got, err := payout.Split(tt.game, tt.pot, tt.players)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got.Shares) != fmt.Sprint(tt.want) || got.Unclaimed != tt.unclaimed {
				t.Fatalf("Split = %v unclaimed %d, want %v unclaimed %d", got.Shares, got.Unclaimed, tt.want, tt.unclaimed)
			}
			checkInvariants(t, tt.game, tt.pot, tt.players, got)
		})
	}
}

func TestSplit_RefusesInvalidInput(t *testing.T) {
	four := []payout.Player{p(0, 1, true), p(1, 2, true), p(2, 3, true), p(3, 4, true)}
	tests := []struct {
		rule    string
		game    tablesettings.Game
		pot     int64
		players []payout.Player
	}{
		{"unknown game", tablesettings.Game(9), 10, four},
		{"negative pot", tablesettings.Classic, -1, four},
		{"pot above MaxPot", tablesettings.Classic, payout.MaxPot + 1, four},
		{"more players than seats", tablesettings.Japanese, 10, four},
		{"a seat twice", tablesettings.Classic, 10, []payout.Player{p(0, 1, true), p(0, 2, true)}},
		{"place 0", tablesettings.Classic, 10, []payout.Player{p(0, 0, true), p(1, 1, true)}},
		{"a place beyond the players", tablesettings.Japanese, 10, []payout.Player{p(0, 1, true), p(1, 3, true)}},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			if _, err := payout.Split(tt.game, tt.pot, tt.players); !errors.Is(err, payout.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestTables_AddUpToAHundredAndNeverIncrease(t *testing.T) {
	for _, g := range []tablesettings.Game{tablesettings.Classic, tablesettings.Japanese} {
		tab := payout.Table(g)
		var sum int64
		for i, w := range tab {
			sum += w
			if i > 0 && w > tab[i-1] {
				t.Errorf("%s: place %d pays more than place %d", g, i+1, i)
			}
		}
		if sum != 100 || len(tab) != g.Seats() {
			t.Errorf("%s: table %v adds up to %d", g, tab, sum)
		}
	}
}

func TestStakes_Ladder(t *testing.T) {
	if got := fmt.Sprint(payout.Stakes()); got != "[10 50 100 500 1000]" {
		t.Fatalf("ladder %s", got)
	}
	if !payout.ValidStake(500) || payout.ValidStake(20) || payout.ValidStake(0) {
		t.Fatal("ValidStake disagrees with the ladder")
	}
}

// The property: for random games, pots, standings with ties and
// eligibility, the shares add up to the pot, none is negative, ineligible
// players get nothing, a better place never gets less than a worse one,
// and tied players differ by at most one coin.
func TestSplit_Property(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 2026))
	for range 200_000 {
		g, pot, players := randomInput(r)
		got, err := payout.Split(g, pot, players)
		if err != nil {
			t.Fatalf("Split(%s, %d, %v): %v", g, pot, players, err)
		}
		checkInvariants(t, g, pot, players, got)
	}
}

func randomInput(r *rand.Rand) (tablesettings.Game, int64, []payout.Player) {
	g := tablesettings.Classic
	if r.IntN(2) == 0 {
		g = tablesettings.Japanese
	}
	n := 1 + r.IntN(g.Seats())
	// Totals decide the places (competition ranking), as scoring does.
	totals := make([]int, n)
	for i := range totals {
		totals[i] = r.IntN(4)
	}
	players := make([]payout.Player, n)
	seats := r.Perm(g.Seats())
	for i := range players {
		place := uint32(1)
		for j := range totals {
			if totals[j] > totals[i] {
				place++
			}
		}
		players[i] = payout.Player{Seat: uint32(seats[i]), Place: place, Eligible: r.IntN(5) > 0}
	}
	var pot int64
	switch r.IntN(4) {
	case 0:
		pot = r.Int64N(10)
	case 1:
		pot = r.Int64N(5000)
	case 2:
		pot = r.Int64N(payout.MaxPot + 1)
	default:
		pot = int64(n) * []int64{10, 50, 100, 500, 1000}[r.IntN(5)]
	}
	return g, pot, players
}

func checkInvariants(t *testing.T, g tablesettings.Game, pot int64, players []payout.Player, got payout.Result) {
	t.Helper()
	if len(got.Shares) != len(players) {
		t.Fatalf("%d shares for %d players", len(got.Shares), len(players))
	}
	sum := got.Unclaimed
	anyEligible := false
	for i, s := range got.Shares {
		sum += s
		if s < 0 {
			t.Fatalf("%s pot %d %v: negative share %v", g, pot, players, got.Shares)
		}
		if !players[i].Eligible && s != 0 {
			t.Fatalf("%s pot %d %v: ineligible seat %d paid %d", g, pot, players, players[i].Seat, s)
		}
		anyEligible = anyEligible || players[i].Eligible
	}
	if sum != pot {
		t.Fatalf("%s pot %d %v: shares %v + unclaimed %d add up to %d", g, pot, players, got.Shares, got.Unclaimed, sum)
	}
	if got.Unclaimed < 0 || (anyEligible && got.Unclaimed != 0) {
		t.Fatalf("%s pot %d %v: unclaimed %d with eligible players", g, pot, players, got.Unclaimed)
	}
	for i, a := range players {
		for j, b := range players {
			if !a.Eligible || !b.Eligible {
				continue
			}
			if a.Place < b.Place && got.Shares[i] < got.Shares[j] {
				t.Fatalf("%s pot %d %v: place %d got %d, less than place %d's %d", g, pot, players, a.Place, got.Shares[i], b.Place, got.Shares[j])
			}
			if a.Place == b.Place && got.Shares[i]-got.Shares[j] > 1 {
				t.Fatalf("%s pot %d %v: tied players got %d and %d", g, pot, players, got.Shares[i], got.Shares[j])
			}
		}
	}
}

func FuzzSplit(f *testing.F) {
	f.Add(uint8(1), int64(400), []byte{0, 1, 1, 1, 2, 1, 2, 3, 1, 3, 4, 1})
	f.Add(uint8(2), int64(21), []byte{0, 1, 1, 1, 1, 1})
	f.Add(uint8(1), int64(3), []byte{0, 1, 0, 1, 1, 1, 2, 1, 1})
	f.Fuzz(func(t *testing.T, game uint8, pot int64, raw []byte) {
		var players []payout.Player
		for i := 0; i+2 < len(raw); i += 3 {
			players = append(players, payout.Player{Seat: uint32(raw[i]), Place: uint32(raw[i+1]), Eligible: raw[i+2]&1 == 1})
		}
		g := tablesettings.Game(game % 4)
		got, err := payout.Split(g, pot, players)
		if err != nil {
			if !errors.Is(err, payout.ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		checkInvariants(t, g, pot, players, got)
	})
}
