package classic

import (
	"bytes"
	"testing"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/fairdeal"
)

// fuzzMove reads a move from raw bytes: as text when it parses, else field
// by field, so both well-formed and absurd moves are tried.
func fuzzMove(raw []byte) Move {
	var m Move
	if m.UnmarshalText(raw) == nil {
		return m
	}
	var b [6]byte
	copy(b[:], raw)
	return Move{Seat: int8(b[0]), Kind: MoveKind(b[1]), Card: cards.Card(b[2]),
		Joker: JokerMode(b[3]), Suit: cards.Suit(b[4]), Bid: int8(b[5])}
}

// FuzzApply plays steps random legal moves of a seeded game, then applies an
// arbitrary move: it must not panic, must be rejected with the state
// byte-identical unless Legal lists it, and accepted if it does.
func FuzzApply(f *testing.F) {
	f.Add(uint64(1), uint16(0), []byte("0 bid 0"))
	f.Add(uint64(2), uint16(3), []byte("1 play JK1 highest S"))
	f.Add(uint64(3), uint16(40), []byte("2 play AH"))
	f.Add(uint64(4), uint16(700), []byte("3 trump NT"))
	f.Add(uint64(5), uint16(9), []byte{1, 3, 0, 1, 4, 0})
	f.Add(uint64(6), uint16(250), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, seed uint64, steps uint16, raw []byte) {
		g, err := New(seed, Settings{Variant: Variant(seed % 2)})
		if err != nil {
			t.Fatal(err)
		}
		r := cards.NewRNG(seed, 5)
		var legal []Move
		for range int(steps) % 800 {
			if g.Over() {
				break
			}
			legal = g.Legal(g.ToMove(), legal[:0])
			if _, err := g.Apply(legal[r.IntN(len(legal))], nil); err != nil {
				t.Fatal(err)
			}
		}
		m := fuzzMove(raw)
		legal = g.Legal(g.ToMove(), legal[:0])
		before, _ := g.MarshalBinary()
		_, err = g.Apply(m, nil)
		after, _ := g.MarshalBinary()
		switch {
		case err != nil && !bytes.Equal(before, after):
			t.Fatalf("rejected %+v (%v) but the state changed", m, err)
		case err != nil && containsMove(legal, m):
			t.Fatalf("legal move %+v rejected: %v", m, err)
		case err == nil && !containsMove(legal, m):
			t.Fatalf("move %+v not in Legal %v accepted", m, legal)
		}
		if err != nil {
			_ = err.Error()
		}
	})
}

// FuzzUnmarshal feeds arbitrary bytes to UnmarshalBinary: no panic; what it
// accepts encodes back to the same bytes and can be played on.
func FuzzUnmarshal(f *testing.F) {
	// A live game waiting for hand 0's deal, and just dealt.
	live, _ := NewLive(Settings{Variant: Standard})
	b, _ := live.MarshalBinary()
	f.Add(b)
	_, _ = live.Deal(fairdeal.LocalKey(9, 0), nil)
	b, _ = live.MarshalBinary()
	f.Add(b)
	for _, seed := range []uint64{1, 2, 3} {
		g, _ := New(seed, Settings{Variant: Variant(seed % 2)})
		r := cards.NewRNG(seed, 6)
		for step := 0; !g.Over(); step++ {
			if step%150 == 0 {
				b, _ := g.MarshalBinary()
				f.Add(b)
			}
			legal := g.Legal(g.ToMove(), nil)
			_, _ = g.Apply(legal[r.IntN(len(legal))], nil)
		}
		b, _ := g.MarshalBinary()
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{binaryVersion, 1, 2, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		var g Game
		if err := g.UnmarshalBinary(data); err != nil {
			return
		}
		b, _ := g.MarshalBinary()
		if !bytes.Equal(b, data) {
			t.Fatalf("accepted state encodes differently")
		}
		var viaState Game
		if err := viaState.SetState(g.State()); err != nil || viaState != g {
			t.Fatalf("an accepted state does not round-trip through State: %v", err)
		}
		_ = g.View(g.ToMove())
		var legal []Move
		for range 50 {
			if g.Over() {
				return
			}
			if g.AwaitingDeal() { // a live game waits for its next key
				if _, err := g.Deal(fairdeal.LocalKey(1, uint32(g.HandIndex())), nil); err != nil {
					t.Fatalf("restored state refuses its deal: %v", err)
				}
				continue
			}
			legal = g.Legal(g.ToMove(), legal[:0])
			if len(legal) == 0 {
				t.Fatalf("restored state: seat %d to move has no legal move", g.ToMove())
			}
			if _, err := g.Apply(legal[0], nil); err != nil {
				t.Fatalf("restored state rejects its legal move: %v", err)
			}
		}
	})
}
