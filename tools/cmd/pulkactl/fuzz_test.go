package main

import (
	"bytes"
	"errors"
	"os"
	"testing"

	"github.com/pulka/pulka/pkg/scoring"
)

// FuzzScoreInput feeds arbitrary bytes to the score command's parser and
// Build: they never panic, and either return a sheet whose totals add up or a
// typed error with a message.
func FuzzScoreInput(f *testing.F) {
	if seed, err := os.ReadFile("testdata/seed_pulkas_I_II.json"); err == nil {
		f.Add(seed)
	}
	for _, s := range []string{
		`{}`, `{"hands":[]}`, `{"variant":"nines","hands":[{"bids":[9,0,0,0],"tricks":[9,0,0,0]}]}`,
		`{"khishti":500,"hands":[{"bids":[1,0,0,1],"tricks":[1,0,0,0]}]}`,
		`{"hands":[{"bids":[1,0,0],"tricks":[1,0,0,0]}]}`, `{"hands":[null]}`, `[`, `{"hands":{}}`,
		`{"premia":false,"moshla":false,"restDocked":false,"hands":[{"bids":[-1,0,0,0],"tricks":[1,0,0,0]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sheet, err := scoreSheet(data)
		if err != nil {
			var ie *scoring.InputError
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			if !errors.As(err, &ie) && !errors.Is(err, errMalformed) && !errors.Is(err, scoring.ErrSettings) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
			return
		}
		var grand [4]int
		for _, p := range sheet.Pulkas {
			for seat := range 4 {
				if p.Total[seat] != p.Sum[seat]+p.Premia[seat]+p.Moshla[seat] {
					t.Fatalf("pulka %d seat %d total %d ≠ %d%+d%+d", p.Index, seat, p.Total[seat], p.Sum[seat], p.Premia[seat], p.Moshla[seat])
				}
				if !p.Finished && (p.Premia[seat] != 0 || p.Moshla[seat] != 0) {
					t.Fatalf("premia or moshla in an unfinished pulka")
				}
				grand[seat] += p.Total[seat]
			}
		}
		if grand != sheet.Total {
			t.Fatalf("grand total %v, pulkas add up to %v", sheet.Total, grand)
		}
		var b bytes.Buffer
		writeSheetText(&b, sheet, textOptions{names: defaultNames(), color: true})
	})
}
