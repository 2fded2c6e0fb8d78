package japanese

import (
	"testing"
)

// benchPositions walks a baseline-vs-baseline match and keeps every position
// with the move the bot makes there, so the benchmarks cover trump choices,
// leads, answers, column plays, trick and hand ends.
func benchPositions(b testing.TB) ([]Game, []Move) {
	g, err := New(2024, Settings{})
	if err != nil {
		b.Fatal(err)
	}
	var pos []Game
	var moves []Move
	for !g.Over() {
		m, _ := Bot{}.Choose(g, g.ToMove())
		pos, moves = append(pos, *g), append(moves, m)
		if _, err := g.Apply(m, nil); err != nil {
			b.Fatal(err)
		}
	}
	return pos, moves
}

func BenchmarkLegal(b *testing.B) {
	pos, _ := benchPositions(b)
	buf := make([]Move, 0, MaxLegal)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		g := &pos[i%len(pos)]
		buf = g.Legal(g.ToMove(), buf[:0])
	}
}

func BenchmarkApply(b *testing.B) {
	pos, moves := benchPositions(b)
	buf := make([]Event, 0, 16)
	var work Game
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		k := i % len(pos)
		work = pos[k]
		var err error
		if buf, err = work.Apply(moves[k], buf[:0]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBotChoose(b *testing.B) {
	pos, _ := benchPositions(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		g := &pos[i%len(pos)]
		Bot{}.Choose(g, g.ToMove())
	}
}

// BenchmarkWholeGame is a whole match (to 21) of two baseline bots.
func BenchmarkWholeGame(b *testing.B) {
	buf := make([]Event, 0, 16)
	moves := 0
	b.ReportAllocs()
	for i := range b.N {
		g, err := New(uint64(i), Settings{})
		if err != nil {
			b.Fatal(err)
		}
		for !g.Over() {
			m, _ := Bot{}.Choose(g, g.ToMove())
			if buf, err = g.Apply(m, buf[:0]); err != nil {
				b.Fatal(err)
			}
			moves++
		}
	}
	b.ReportMetric(float64(moves)/float64(b.N), "moves/match")
}

func BenchmarkView(b *testing.B) {
	pos, _ := benchPositions(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		g := &pos[i%len(pos)]
		_ = g.View(g.ToMove())
	}
}

func BenchmarkMarshalBinary(b *testing.B) {
	pos, _ := benchPositions(b)
	buf := make([]byte, 0, binarySize)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		buf, _ = pos[i%len(pos)].AppendBinary(buf[:0])
	}
}

func BenchmarkUnmarshalBinary(b *testing.B) {
	pos, _ := benchPositions(b)
	enc := make([][]byte, len(pos))
	for i := range pos {
		enc[i], _ = pos[i].MarshalBinary()
	}
	var g Game
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := g.UnmarshalBinary(enc[i%len(enc)]); err != nil {
			b.Fatal(err)
		}
	}
}
