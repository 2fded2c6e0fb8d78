package scoring

import (
	"math/rand/v2"
	"testing"

	"github.com/pulka/pulka/pkg/classic"
)

// A whole 24-hand standard sheet: the server rebuilds it after every hand.
func BenchmarkBuild_Standard24Hands(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	s, hands := randomGame(r)
	for s.Variant != classic.Standard || len(hands) != classic.Standard.Hands() {
		s, hands = randomGame(r)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(s, hands); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFormatPoints(b *testing.B) {
	b.ReportAllocs()
	buf := make([]byte, 0, 32)
	for i := 0; b.Loop(); i++ {
		buf = AppendPoints(buf[:0], i*10-5000)
	}
}
