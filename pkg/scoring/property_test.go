package scoring

import (
	"math/rand/v2"
	"testing"

	"github.com/pulka/pulka/pkg/classic"
)

// randomGame returns random settings and a random valid game of up to the
// whole variant. Bids match the tricks more often than chance would, so that
// premia, moshla and ties for the best hand all occur.
func randomGame(r *rand.Rand) (Settings, []HandResult) {
	s := Settings{
		Variant:    classic.Variant(r.IntN(2)),
		Khishti:    Khishti(r.IntN(4)),
		Premia:     r.IntN(5) > 0,
		Moshla:     r.IntN(5) > 0,
		RestDocked: r.IntN(2) == 0,
	}
	hands := make([]HandResult, r.IntN(s.Variant.Hands()+1))
	for h := range hands {
		n := s.Variant.CardsInHand(h)
		for range n {
			hands[h].Tricks[r.IntN(Seats)]++
		}
		for seat := range Seats {
			if r.IntN(10) < 8 {
				hands[h].Bids[seat] = hands[h].Tricks[seat]
			} else {
				hands[h].Bids[seat] = r.IntN(n + 1)
			}
		}
	}
	return s, hands
}

func TestSheet_PropertiesHoldForRandomGames(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var premias, moshlas int
	for game := range 5000 {
		s, hands := randomGame(r)
		sheet, err := Build(s, hands)
		if err != nil {
			t.Fatalf("game %d: valid input rejected: %v", game, err)
		}
		p, m := checkSheetProperties(t, s, hands, sheet)
		premias += p
		moshlas += m
		if t.Failed() {
			t.Fatalf("game %d: settings %+v hands %v", game, s, hands)
		}
	}
	// The generator must reach the interesting cases, or the test proves
	// little.
	if premias < 1000 || moshlas < 1000 {
		t.Errorf("only %d premia and %d moshla in 5000 games", premias, moshlas)
	}
}

// checkSheetProperties checks the invariants of a sheet against its input
// and returns how many premia and moshla entries it holds.
func checkSheetProperties(t *testing.T, s Settings, hands []HandResult, sheet Sheet) (premias, moshlas int) {
	t.Helper()
	if len(sheet.Hands) != len(hands) || sheet.Next != len(hands) || sheet.Finished != (len(hands) == s.Variant.Hands()) {
		t.Errorf("%d rows, next %d, finished %v for %d hands", len(sheet.Hands), sheet.Next, sheet.Finished, len(hands))
	}
	var grand [Seats]int
	covered := 0
	for pi, p := range sheet.Pulkas {
		if p.Index != pi || p.First != covered {
			t.Errorf("pulka %d: index %d first %d, want first %d", pi, p.Index, p.First, covered)
		}
		covered += p.Played
		if p.Finished != (p.Played == p.Size) {
			t.Errorf("pulka %d: finished %v with %d of %d played", pi, p.Finished, p.Played, p.Size)
		}
		earned := 0
		for seat := range Seats {
			var sum, best int
			allMade := true
			for h := p.First; h < p.First+p.Played; h++ {
				row := sheet.Hands[h]
				sum += row.Points[seat]
				allMade = allMade && row.Result[seat] == ResultMade
				if row.Result[seat] != ResultKhishti {
					best = max(best, row.Points[seat])
				}
				if row.Struck[seat] != (p.Struck[seat] == h) {
					t.Errorf("hand %d seat %d: struck %v, pulka strikes %d", h, seat, row.Struck[seat], p.Struck[seat])
				}
			}
			if p.Sum[seat] != sum || p.Total[seat] != sum+p.Premia[seat]+p.Moshla[seat] {
				t.Errorf("pulka %d seat %d: sum %d total %d, hands add up to %d, premia %d moshla %d",
					pi, seat, p.Sum[seat], p.Total[seat], sum, p.Premia[seat], p.Moshla[seat])
			}
			grand[seat] += p.Total[seat]
			if p.OnCourse[seat] != (s.Premia && allMade) {
				t.Errorf("pulka %d seat %d: on course %v, all made %v", pi, seat, p.OnCourse[seat], allMade)
			}
			if p.Premia[seat] != 0 {
				premias++
				if !p.Finished || !s.Premia || !allMade || p.Premia[seat] != best {
					t.Errorf("pulka %d seat %d: premia %d (finished %v, all made %v, best %d)",
						pi, seat, p.Premia[seat], p.Finished, allMade, best)
				}
			} else if p.Finished && s.Premia && allMade {
				t.Errorf("pulka %d seat %d: made every hand but no premia", pi, seat)
			}
			if p.Premia[seat] > 0 {
				earned++
			}
			if p.Moshla[seat] > 0 || p.Premia[seat] < 0 {
				t.Errorf("pulka %d seat %d: premia %d moshla %d have the wrong sign", pi, seat, p.Premia[seat], p.Moshla[seat])
			}
			// Exactly one struck hand per moshla: the earliest best.
			if (p.Moshla[seat] != 0) != (p.Struck[seat] >= 0) {
				t.Errorf("pulka %d seat %d: moshla %d but struck %d", pi, seat, p.Moshla[seat], p.Struck[seat])
			}
			if h := p.Struck[seat]; h >= 0 {
				moshlas++
				row := sheet.Hands[h]
				if !p.Finished || row.Result[seat] == ResultKhishti || row.Points[seat] != best || -p.Moshla[seat] != best {
					t.Errorf("pulka %d seat %d: struck hand %d (%d %s) for moshla %d, best %d",
						pi, seat, h, row.Points[seat], row.Result[seat], p.Moshla[seat], best)
				}
				for e := p.First; e < h; e++ {
					if sheet.Hands[e].Result[seat] != ResultKhishti && sheet.Hands[e].Points[seat] == best {
						t.Errorf("pulka %d seat %d: struck hand %d, but hand %d scored the same earlier", pi, seat, h, e)
					}
				}
			}
		}
		docked := 0
		for seat := range Seats {
			if p.Moshla[seat] != 0 {
				docked++
			}
		}
		if docked > 0 && (earned == 0 || earned == Seats || !s.Moshla || (earned >= 2 && !s.RestDocked)) {
			t.Errorf("pulka %d: %d moshla with %d premia, settings %+v", pi, docked, earned, s)
		}
	}
	if covered != len(hands) {
		t.Errorf("pulkas cover %d hands of %d", covered, len(hands))
	}
	if grand != sheet.Total {
		t.Errorf("grand total %v, pulkas add up to %v", sheet.Total, grand)
	}
	return premias, moshlas
}
