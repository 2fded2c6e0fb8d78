package classic

import (
	"flag"
	"fmt"
	"math"
	"strings"
	"testing"
)

var refit = flag.Bool("refit", false, "print bid weights refitted to the baseline's self-play")

// bidSample is one bid decision: the features of the hand, the tricks then
// taken.
type bidSample struct {
	f      [numFeatures]float64
	tricks float64
}

// selfPlaySamples plays games of four baseline bots and collects, per hand
// size, every seat's bidding features and the tricks it then took.
func selfPlaySamples(t testing.TB, games int) [MaxCards + 1][]bidSample {
	var out [MaxCards + 1][]bidSample
	var evs []Event
	for i := range games {
		g := newGame(t, uint64(i)*104729+11, Variant(i%4/3))
		var pending [Seats]bidSample
		for !g.Over() {
			seat := g.ToMove()
			if g.phase == PhaseBid {
				pending[seat].f = bidFeatures(g, seat)
			}
			m, _ := Bot{}.Choose(g, seat)
			var err error
			if evs, err = g.Apply(m, evs[:0]); err != nil {
				t.Fatal(err)
			}
			for _, e := range evs {
				if e.Kind != EventHandEnded {
					continue
				}
				for s := range Seats {
					pending[s].tricks = float64(e.Tricks[s])
					out[e.N] = append(out[e.N], pending[s])
				}
			}
		}
	}
	return out
}

// bidPrior is what a card player would say each feature is worth; the fit
// is pulled towards it (see fitWeights).
var bidPrior = [numFeatures]float64{
	featJokers: 1, featTopTrumps: 1, featTrumps: 0.7, featSideTops: 0.8, featSide: 0.5,
	featLength: 0.6, featLead: 0.1, featRuff: 0.3,
}

// bidPriorStrength is how hard each weight is pulled to bidPrior, per
// sample. The sure tricks (jokers, top trumps, side tops) are held firmly:
// the baseline makes its bid by ducking the tricks it does not need, so
// the tricks it takes follow its own bid, and a free fit would settle on
// any self-consistent under-valuation of strong hands.
var bidPriorStrength = [numFeatures]float64{
	featOne: 1e-4, featJokers: 0.3, featTopTrumps: 0.3, featTrumps: 0.02, featSideTops: 0.1, featSide: 0.02,
	featLength: 0.02, featLead: 1e-3, featRuff: 0.02, featBidsBefore: 1e-3, featBiddersLeft: 1e-3,
}

// fitWeights solves the least-squares weights for one hand size,
// regularised towards bidPrior.
func fitWeights(samples []bidSample) [numFeatures]float64 {
	const k = numFeatures
	var a [k][k + 1]float64
	for _, s := range samples {
		for i := range k {
			for j := range k {
				a[i][j] += s.f[i] * s.f[j]
			}
			a[i][k] += s.f[i] * s.tricks
		}
	}
	for i := range k {
		l := bidPriorStrength[i] * float64(len(samples))
		a[i][i] += l
		a[i][k] += l * bidPrior[i]
	}
	for c := range k {
		p := c
		for r := c + 1; r < k; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		for r := range k {
			if r == c || a[c][c] == 0 {
				continue
			}
			f := a[r][c] / a[c][c]
			for j := c; j <= k; j++ {
				a[r][j] -= f * a[c][j]
			}
		}
	}
	var w [k]float64
	for i := range k {
		if a[i][i] != 0 {
			w[i] = a[i][k] / a[i][i]
		}
	}
	return w
}

// TestBot_BidEstimatesAreCalibrated checks that the baseline's trick
// estimates are unbiased against the tricks it then takes in self-play, per
// hand size. With -refit it prints weights fitted to that play, to paste
// into bidWeights after changing the bot's play.
func TestBot_BidEstimatesAreCalibrated(t *testing.T) {
	games := 2_000
	if testing.Short() || raceOn {
		games = 300
	}
	samples := selfPlaySamples(t, games)
	refitted := calibration(t, "tricks taken", &samples, 0.2, func(n int, f *[numFeatures]float64) float64 {
		return weighted(&bidWeights[n], f)
	})
	if *refit {
		t.Logf("refitted bidWeights:\n%s", refitted)
	}
}

// calibration fails t for every hand size whose samples took more or fewer
// tricks than estimate says by over maxBias on average, and returns the
// weights fitted to the samples, as Go source to paste into the table.
func calibration(t *testing.T, what string, samples *[MaxCards + 1][]bidSample, maxBias float64, estimate func(n int, f *[numFeatures]float64) float64) string {
	t.Helper()
	var b strings.Builder
	for n := 1; n <= MaxCards; n++ {
		bias := 0.0
		for _, s := range samples[n] {
			bias += s.tricks - estimate(n, &s.f)
		}
		bias /= float64(len(samples[n]))
		if math.Abs(bias) > maxBias {
			t.Errorf("%d-card hands: %s exceed the estimate by %.2f on average", n, what, bias)
		}
		w := fitWeights(samples[n])
		fmt.Fprintf(&b, "\t%d: {", n)
		for i, x := range w {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%.3f", x)
		}
		b.WriteString("},\n")
	}
	return b.String()
}
