package japanese

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/fairdeal"
)

// fuzzGame plays `prefix` random legal moves of the match of seed.
func fuzzGame(t testing.TB, seed uint64, prefix uint16) *Game {
	g, err := New(seed, Settings{Target: targets[seed%uint64(len(targets))]})
	if err != nil {
		t.Fatal(err)
	}
	r := NewRandomBot(seed)
	buf := make([]Event, 0, 16)
	for range prefix {
		if g.Over() {
			break
		}
		m, _ := r.Choose(g, g.ToMove())
		if buf, err = g.Apply(m, buf[:0]); err != nil {
			t.Fatal(err)
		}
	}
	return g
}

// FuzzApply sends arbitrary moves (4 bytes each: kind, seat, card, suit) at
// an arbitrary point of a seeded match: nothing panics, a rejected move
// leaves the state byte-identical, an accepted one was listed by Legal (or
// is a resignation).
func FuzzApply(f *testing.F) {
	f.Add(uint64(1), uint16(0), []byte{byte(KindTrump), 0, 255, 1})
	f.Add(uint64(2), uint16(1), []byte{byte(KindPlay), 1, 10, 4, byte(KindPlay), 0, 0, 2})
	f.Add(uint64(3), uint16(40), []byte{byte(KindResign), 1, 255, 4})
	f.Add(uint64(4), uint16(300), []byte{200, 255, 255, 255, 0, 0, 0, 0})
	f.Add(uint64(5), uint16(17), []byte{byte(KindPlay), 0, 35, 7, byte(KindForfeit), 0, 255, 4})
	f.Fuzz(func(t *testing.T, seed uint64, prefix uint16, raw []byte) {
		g := fuzzGame(t, seed, prefix%400)
		var legal []Move
		for len(raw) >= 4 {
			m := Move{Kind: MoveKind(raw[0]), Seat: int(int8(raw[1])), Card: cards.Card(raw[2]), Suit: cards.Suit(raw[3])}
			raw = raw[4:]
			before := *g
			enc, _ := g.MarshalBinary()
			legal = before.Legal(before.ToMove(), legal[:0])
			_, err := g.Apply(m, nil)
			if err != nil {
				var me *MoveError
				if !errors.As(err, &me) || me.Err == nil {
					t.Fatalf("%v: error %v is not a *MoveError", m, err)
				}
				after, _ := g.MarshalBinary()
				if *g != before || !bytes.Equal(enc, after) {
					t.Fatalf("%v rejected (%v) but the state changed", m, err)
				}
				_ = err.Error()
				continue
			}
			if m.Kind != KindResign && m.Kind != KindForfeit && !slices.Contains(legal, m) {
				t.Fatalf("%v accepted but not in Legal %v", m, legal)
			}
		}
	})
}

// FuzzUnmarshal feeds arbitrary bytes to both decoders: no panic, and a state
// they accept is canonical and playable (the seat to move has a legal move
// that Apply accepts).
func FuzzUnmarshal(f *testing.F) {
	for i, prefix := range []uint16{0, 1, 2, 37, 120, 500} {
		g := fuzzGame(f, uint64(i)+1, prefix)
		b, _ := g.MarshalBinary()
		f.Add(b)
		j, _ := json.Marshal(g)
		f.Add(j)
	}
	// A live match waiting for hand 0's deal, and just dealt.
	live, _ := NewLive(Settings{})
	for range 2 {
		b, _ := live.MarshalBinary()
		f.Add(b)
		j, _ := json.Marshal(live)
		f.Add(j)
		_, _ = live.Deal(fairdeal.LocalKey(9, 0), nil)
	}
	f.Add([]byte{})
	f.Add([]byte{stateVersion})
	f.Add([]byte("{\"version\":1}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var g Game
		if err := g.UnmarshalBinary(data); err == nil {
			again, _ := g.MarshalBinary()
			if !bytes.Equal(again, data) {
				t.Fatalf("accepted a non-canonical encoding")
			}
			var viaState Game
			if err := viaState.SetState(g.State()); err != nil || viaState != g {
				t.Fatalf("an accepted state does not round-trip through State: %v", err)
			}
			playOn(t, &g)
		} else if !errors.Is(err, ErrBadState) {
			t.Fatalf("error %v is not ErrBadState", err)
		}
		var h Game
		if err := h.UnmarshalJSON(data); err == nil {
			playOn(t, &h)
		} else if !errors.Is(err, ErrBadState) {
			t.Fatalf("JSON error %v is not ErrBadState", err)
		}
	})
}

// playOn finishes the match of a decoded state with random players.
func playOn(t *testing.T, g *Game) {
	r := NewRandomBot(g.localSeed)
	for n := 0; !g.Over(); n++ {
		if n > 10000 {
			t.Fatal("a decoded match does not end")
		}
		if g.AwaitingDeal() { // a live match waits for its next key
			if _, err := g.Deal(fairdeal.LocalKey(1, uint32(g.Hand())), nil); err != nil {
				t.Fatalf("decoded state refuses its deal: %v", err)
			}
			continue
		}
		m, ok := r.Choose(g, g.ToMove())
		if !ok {
			t.Fatalf("decoded state: seat %d has no legal move", g.ToMove())
		}
		if _, err := g.Apply(m, nil); err != nil {
			t.Fatalf("decoded state: %v", err)
		}
		_ = g.View(0)
	}
}

// FuzzMoveText: the move decoders never panic and what they accept encodes
// back to an equivalent move.
func FuzzMoveText(f *testing.F) {
	for _, s := range []string{"0 trump H", "1 trump bezi", "0 play 10H", "1 play JK2 S", "0 resign", "1 forfeit",
		`{"seat":1,"kind":"play","card":"JK2","suit":"S"}`, `{"seat":0,"kind":"trump","suit":"bezi"}`, "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, dec := range []func(*Move, []byte) error{(*Move).UnmarshalText, (*Move).UnmarshalJSON} {
			var m Move
			if err := dec(&m, []byte(s)); err != nil {
				if !errors.Is(err, ErrBadMove) {
					t.Fatalf("%q: error %v is not ErrBadMove", s, err)
				}
				continue
			}
			txt, err := m.MarshalText()
			if err != nil {
				t.Fatalf("%q decoded to %+v which does not encode: %v", s, m, err)
			}
			var back Move
			if err := back.UnmarshalText(txt); err != nil || back != m {
				t.Fatalf("%q: %+v → %q → %+v, %v", s, m, txt, back, err)
			}
		}
	})
}
