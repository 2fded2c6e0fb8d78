package japanese

import "testing"

func TestSmoke(t *testing.T) {
	for seed := range uint64(200) {
		g := newGame(t, seed)
		n := playMatch(t, g, [Seats]Player{NewRandomBot(seed), Bot{}})
		b, _ := g.MarshalBinary()
		var g2 Game
		if err := g2.UnmarshalBinary(b); err != nil {
			t.Fatal(seed, err)
		}
		if seed < 3 {
			t.Log(seed, n, g.Scores(), g.Winner(), g.HandResults())
		}
	}
}
