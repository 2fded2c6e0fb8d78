package classic

import (
	"flag"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

var (
	refitStrong    = flag.Bool("refit.strong", false, "print strongBidWeights refitted to four strong bots' play")
	strongFitGames = flag.Int("strongfit.games", 0, "four-strong games TestStrongBot_OwnBidModelIsCalibrated plays (0: a short check; the committed table: 400)")
)

// strongSelfPlaySamples plays standard games of four strong bots bidding
// without their model of their own tricks (noBidModel: the fit must not
// depend on itself), seeds apart from TestBotMatch's, and collects per hand
// size every seat's bidding features and the tricks it then took. The games
// run on GOMAXPROCS goroutines; the samples come out in game order, so the
// fit does not depend on it.
func strongSelfPlaySamples(t testing.TB, games int) [MaxCards + 1][]bidSample {
	per := make([][MaxCards + 1][]bidSample, games)
	errs := make([]error, games)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			var evs []Event
			for {
				i := int(next.Add(1)) - 1
				if i >= games {
					return
				}
				seed := uint64(i)*7919 + 1_000_003
				g, err := New(seed, Settings{Variant: Standard})
				if err != nil {
					errs[i] = err
					continue
				}
				var pending [Seats]bidSample
				for !g.Over() && err == nil {
					seat := g.ToMove()
					if g.phase == PhaseBid {
						pending[seat].f = bidFeatures(g, seat)
					}
					m, _ := StrongBot{Seed: seed + uint64(seat), noBidModel: true}.Choose(g, seat)
					if evs, err = g.Apply(m, evs[:0]); err != nil {
						errs[i] = err
					}
					for _, e := range evs {
						if e.Kind == EventHandEnded {
							for s := range Seats {
								pending[s].tricks = float64(e.Tricks[s])
								per[i][e.N] = append(per[i][e.N], pending[s])
							}
						}
					}
				}
			}
		})
	}
	wg.Wait()
	var out [MaxCards + 1][]bidSample
	for i := range per {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		for n := range out {
			out[n] = append(out[n], per[i][n]...)
		}
	}
	return out
}

// TestStrongBot_OwnBidModelIsCalibrated checks that strongBidWeights are
// unbiased against the tricks four strong bots take, per hand size. With
// -refit.strong (and -strongfit.games 400, the committed table's games) it
// prints the weights fitted to that play, to paste into strongBidWeights.
func TestStrongBot_OwnBidModelIsCalibrated(t *testing.T) {
	games := *strongFitGames
	if games == 0 {
		games = 8
		if testing.Short() || raceOn {
			games = 2
		}
	}
	samples := strongSelfPlaySamples(t, games)
	refitted := calibration(t, "the strong bot's tricks", &samples, 0.25, func(n int, f *[numFeatures]float64) float64 {
		return min(max(weighted(&strongBidWeights[n], f), 0), float64(n))
	})
	if *refitStrong {
		t.Logf("refitted strongBidWeights (%d games):\n%s", games, refitted)
	}
}

// TestStrongBot_BidPull is the rule that pulls the strong bot's bid to the
// tricks it expects of its own play: the squared distance, times
// bidPullWeight; a pass is charged as a bid of one unless the bids before
// fall a trick or more short of their seats' share of the cards.
func TestStrongBot_BidPull(t *testing.T) {
	w := float64(bidPullWeight)
	for _, tc := range []struct {
		bid   int
		own   float64
		short bool
		want  float64
	}{
		{bid: 2, own: 2, want: 0},
		{bid: 1, own: 2, want: w},
		{bid: 3, own: 1.5, want: 2.25 * w},
		{bid: 0, own: 0.2, want: 0.64 * w},              // a pass costs what a bid of one costs...
		{bid: 1, own: 0.2, want: 0.64 * w},              // ...so the playouts decide between them
		{bid: 0, own: 0.8, short: true, want: 0.64 * w}, // unless the table is short
		{bid: 0, own: 0.8, want: 0.04 * w},
		{bid: 2, own: 0.8, short: true, want: 1.44 * w},
	} {
		if got := bidPull(tc.bid, tc.own, tc.short); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("bidPull(%d, %.1f, short %v) = %.2f, want %.2f", tc.bid, tc.own, tc.short, got, tc.want)
		}
	}
	// The table is short when the bids before fall bidShortfall below a
	// quarter of the cards a seat (hand 7 deals 8 cards: two bids before the
	// third bidder's have a share of 4); the first bidder's never is.
	g := newGame(t, 5, Standard)
	for g.HandIndex() < 7 {
		m, _ := Bot{}.Choose(g, g.ToMove())
		if _, err := g.Apply(m, nil); err != nil {
			t.Fatal(err)
		}
	}
	if g.CardsDealt() != 8 || g.phase != PhaseBid {
		t.Fatalf("hand %d: %d cards, phase %v", g.HandIndex(), g.CardsDealt(), g.phase)
	}
	first := (g.Dealer() + 1) % Seats
	third := (g.Dealer() + 3) % Seats
	for _, tc := range []struct {
		a, b  int8 // the first two bids
		short bool
	}{{0, 0, true}, {1, 2, true}, {2, 2, false}, {3, 2, false}} {
		h := *g
		h.bids = [Seats]int8{noBid, noBid, noBid, noBid}
		h.bids[first], h.bids[(first+1)%Seats] = tc.a, tc.b
		if got := tableShort(&h, third); got != tc.short {
			t.Errorf("bids %d and %d of 8 cards before the third bidder: short %v, want %v", tc.a, tc.b, got, tc.short)
		}
	}
	if tableShort(g, first) {
		t.Error("the first bidder's table is short")
	}
}
