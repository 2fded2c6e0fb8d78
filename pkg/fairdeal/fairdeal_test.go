package fairdeal

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/pulka/pulka/pkg/cards"
)

var update = flag.Bool("update", false, "rewrite testdata/vectors.json")

// Vector is one worked example of docs/fair-play.md. The web client's tests
// read the same file, so the Go and the browser implementations cannot
// drift.
type Vector struct {
	TableID     string   `json:"table_id"`
	GameID      string   `json:"game_id"`
	Hand        uint32   `json:"hand"`
	ServerSeed  string   `json:"server_seed"`
	ClientSeeds []string `json:"client_seeds"`
	Commitment  string   `json:"commitment"`
	Key         string   `json:"shuffle_key"`
	// Deck is the shuffled deck as card indexes 0..35 (proto Card − 1),
	// position 0 dealt first.
	Deck []int `json:"deck"`
	// Next4 is the stream's next IntN(4) after the shuffle (the first
	// dealer of a classic game when hand is 0).
	Next4 int `json:"next_int_n_4"`
}

func seedOf(b byte) (s [SeedSize]byte) {
	for i := range s {
		s[i] = b + byte(i)
	}
	return s
}

func makeVectors(t *testing.T) []Vector {
	t.Helper()
	cases := []struct {
		table, game string
		hand        uint32
		server      ServerSeed
		clients     []ClientSeed
	}{
		{"t1", "g1", 0, ServerSeed(seedOf(0)), []ClientSeed{ClientSeed(seedOf(0x40)), NoClientSeed, ClientSeed(seedOf(0x80)), NoClientSeed}},
		{"Zq4pL0mN2xYb", "Zq4pL0mN2xYb.9f3a61c2d0b7e845", 7, ServerSeed(seedOf(0xa0)), []ClientSeed{NoClientSeed, NoClientSeed, NoClientSeed, NoClientSeed}},
		{"jp-table", "jp-game", 2, ServerSeed(seedOf(0xf0)), []ClientSeed{ClientSeed(seedOf(0x11)), ClientSeed(seedOf(0x22))}},
	}
	out := make([]Vector, 0, len(cases))
	for _, c := range cases {
		h := Hand{TableID: c.table, GameID: c.game, Index: c.hand}
		cm, err := Commit(h, c.server)
		if err != nil {
			t.Fatal(err)
		}
		k, err := ShuffleKey(h, c.server, c.clients)
		if err != nil {
			t.Fatal(err)
		}
		d, st := Shuffle(k)
		v := Vector{TableID: c.table, GameID: c.game, Hand: c.hand, ServerSeed: Hex(c.server),
			Commitment: Hex(cm), Key: Hex(k), Next4: st.IntN(4)}
		for _, cs := range c.clients {
			v.ClientSeeds = append(v.ClientSeeds, Hex(cs))
		}
		for _, card := range d {
			v.Deck = append(v.Deck, int(card))
		}
		out = append(out, v)
	}
	return out
}

// TestVectors pins the byte-level protocol: a change to any tag, layout or
// the shuffle fails here (and in the web client's test of the same file).
func TestVectors(t *testing.T) {
	got, err := json.MarshalIndent(makeVectors(t), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", "vectors.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("vectors changed: the deal protocol is fixed forever (docs/fair-play.md)\n got %s", got)
	}
}

// TestCommitmentBindsEverything: changing the seed, the table, the game or
// the hand changes the commitment, so a revealed seed proves one hand only.
func TestCommitmentBindsEverything(t *testing.T) {
	h := Hand{TableID: "t", GameID: "g", Index: 3}
	s := ServerSeed(seedOf(1))
	c, err := Commit(h, s)
	if err != nil {
		t.Fatal(err)
	}
	if !Verify(h, s, c) {
		t.Fatal("a seed does not verify against its own commitment")
	}
	other := s
	other[31] ^= 1
	for name, ok := range map[string]bool{
		"another seed":  Verify(h, other, c),
		"another hand":  Verify(Hand{TableID: "t", GameID: "g", Index: 4}, s, c),
		"another game":  Verify(Hand{TableID: "t", GameID: "h", Index: 3}, s, c),
		"another table": Verify(Hand{TableID: "u", GameID: "g", Index: 3}, s, c),
		// lp() keeps "ab"+"c" apart from "a"+"bc".
		"ids shifted": Verify(Hand{TableID: "tg", GameID: "", Index: 3}, s, c),
	} {
		if ok {
			t.Errorf("%s verifies", name)
		}
	}
}

// TestEveryClientSeedCounts: flipping one bit of any seat's client seed, or
// the server seed, gives another key.
func TestEveryClientSeedCounts(t *testing.T) {
	h := Hand{TableID: "t", GameID: "g", Index: 0}
	s := ServerSeed(seedOf(9))
	cs := []ClientSeed{ClientSeed(seedOf(1)), ClientSeed(seedOf(2)), ClientSeed(seedOf(3)), ClientSeed(seedOf(4))}
	base, err := ShuffleKey(h, s, cs)
	if err != nil {
		t.Fatal(err)
	}
	for seat := range cs {
		mod := append([]ClientSeed(nil), cs...)
		mod[seat][0] ^= 0x80
		k, _ := ShuffleKey(h, s, mod)
		if k == base {
			t.Errorf("seat %d's client seed does not change the key", seat)
		}
	}
	s2 := s
	s2[0] ^= 1
	if k, _ := ShuffleKey(h, s2, cs); k == base {
		t.Error("the server seed does not change the key")
	}
	if _, err := ShuffleKey(h, s, nil); !errors.Is(err, ErrBadHand) {
		t.Errorf("no seats: %v", err)
	}
	if _, err := Commit(Hand{GameID: "g"}, s); !errors.Is(err, ErrBadHand) {
		t.Errorf("empty table id: %v", err)
	}
}

// TestShuffleIsAPermutationAndUniform: every key gives all 36 cards once, and
// over many keys each card lands in each position about equally often.
func TestShuffleIsAPermutationAndUniform(t *testing.T) {
	const n = 20000
	var counts [cards.DeckSize][cards.DeckSize]int
	for i := range n {
		d, _ := Shuffle(LocalKey(uint64(i), 0))
		var seen cards.Set
		for pos, c := range d {
			if !c.Valid() || seen.Has(c) {
				t.Fatalf("key %d: position %d holds %v twice or invalid", i, pos, c)
			}
			seen = seen.With(c)
			counts[pos][c]++
		}
	}
	// Expected n/36 ≈ 556 per cell, sd ≈ 23: 6 sd either way.
	for pos := range counts {
		for c, k := range counts[pos] {
			if k < 420 || k > 690 {
				t.Errorf("card %d at position %d %d times of %d", c, pos, k, n)
			}
		}
	}
}

func TestIntNRejectsTheBiasedTail(t *testing.T) {
	st := NewStream(LocalKey(1, 1))
	var hist [3]int
	for range 30000 {
		hist[st.IntN(3)]++
	}
	for v, k := range hist {
		if k < 9500 || k > 10500 {
			t.Errorf("IntN(3) gave %d %d times of 30000", v, k)
		}
	}
	if NewStream(Key{}).IntN(1) != 0 || NewStream(Key{}).IntN(0) != 0 {
		t.Error("IntN(≤1) must be 0")
	}
}

func TestParseSeed(t *testing.T) {
	s := seedOf(0x3c)
	got, err := ParseSeed(Hex(s))
	if err != nil || got != s {
		t.Fatalf("round trip: %v %x", err, got)
	}
	for _, bad := range []string{"", "00", Hex(s) + "00", Hex(s)[:63] + "g"} {
		if _, err := ParseSeed(bad); !errors.Is(err, ErrBadSeed) {
			t.Errorf("ParseSeed(%q) = %v", bad, err)
		}
	}
}

func FuzzParseSeed(f *testing.F) {
	f.Add(Hex(seedOf(0)))
	f.Add("zz")
	f.Fuzz(func(t *testing.T, s string) {
		b, err := ParseSeed(s)
		if err != nil {
			return
		}
		if back, err := ParseSeed(Hex(b)); err != nil || back != b {
			t.Fatalf("%q parsed to %x, which does not round-trip", s, b)
		}
	})
}

func BenchmarkShuffle(b *testing.B) {
	h := Hand{TableID: "Zq4pL0mN2xYb", GameID: "Zq4pL0mN2xYb.9f3a61c2d0b7e845", Index: 5}
	s := ServerSeed(seedOf(7))
	cs := []ClientSeed{NoClientSeed, NoClientSeed, NoClientSeed, NoClientSeed}
	b.ReportAllocs()
	for b.Loop() {
		k, _ := ShuffleKey(h, s, cs)
		Shuffle(k)
	}
}
