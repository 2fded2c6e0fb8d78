package classic

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/pulka/pulka/pkg/cards"
)

// propertyGames is how many seeded random games the property test plays.
const propertyGames = 10_000

// randomMove is a move with every field drawn at random, legal or not
// (including seats, kinds, cards and suits that do not exist).
func randomMove(r *cards.RNG) Move {
	x := r.Uint64()
	return Move{
		Seat:  int8(x%6) - 1,
		Kind:  MoveKind(x >> 8 % 5),
		Card:  cards.Card(x >> 16 % 40),
		Joker: JokerMode(x >> 24 % 6),
		Suit:  cards.Suit(x >> 32 % 6),
		Bid:   int8(x>>40%12) - 1,
	}
}

// mutate changes one field of m at random.
func mutate(m Move, r *cards.RNG) Move {
	x := r.Uint64()
	switch x % 6 {
	case 0:
		m.Seat = int8(x >> 8 % Seats)
	case 1:
		m.Kind = MoveKind(x >> 8 % 4)
	case 2:
		m.Card = cards.Card(x >> 8 % cards.DeckSize)
	case 3:
		m.Joker = JokerMode(x >> 8 % 5)
	case 4:
		m.Suit = cards.Suit(x >> 8 % 5)
	default:
		m.Bid = int8(x >> 8 % (MaxCards + 1))
	}
	return m
}

// TestProperties_RandomGames plays seeded games with random legal players and
// checks the engine's invariants on the way. Every step checks that the
// seat to move has a legal move and nobody else does, that every legal move is
// accepted and that random illegal ones are rejected without a trace; hidden
// cards, snapshots and validation are checked at sampled steps.
func TestProperties_RandomGames(t *testing.T) {
	games := propertyGames
	if testing.Short() {
		games = 1_000
	}
	var (
		legal  = make([]Move, 0, 32)
		other  = make([]Move, 0, 32)
		evs    = make([]Event, 0, 32)
		moves  = make([]Move, 0, 1024)
		tested = 0
	)
	for i := range games {
		seed := uint64(i)*0x9E3779B97F4A7C15 + 1
		v := Standard
		if i%4 == 3 {
			v = Nines
		}
		g, err := New(seed, Settings{Variant: v})
		if err != nil {
			t.Fatal(err)
		}
		// Under the race detector (see raceOn) only every eighth game gets
		// the expensive checks; every game still gets the cheap ones.
		full := !raceOn || i%8 == 0
		r := cards.NewRNG(seed, 7)
		moves = moves[:0]
		snapAt, viewAt := r.IntN(400), r.IntN(61)
		var snap []byte
		for step := 0; !g.Over(); step++ {
			if step > 2000 {
				t.Fatalf("game %d: no end after %d moves", i, step)
			}
			seat := g.ToMove()
			legal = g.Legal(seat, legal[:0])
			if len(legal) == 0 {
				t.Fatalf("game %d step %d: seat %d to move has no legal move", i, step, seat)
			}
			for s := range Seats {
				if full && s != seat && len(g.Legal(s, other[:0])) != 0 {
					t.Fatalf("game %d step %d: seat %d has moves out of turn", i, step, s)
				}
			}
			for k, m := range legal {
				if !full && k > 0 {
					break
				}
				c := *g
				if _, err := c.Apply(m, evs[:0]); err != nil {
					t.Fatalf("game %d step %d: legal move %v rejected: %v", i, step, m, err)
				}
			}
			// One move with random fields and one legal move with a field
			// changed: neither may be accepted unless Legal lists it.
			for k := range 2 {
				if !full && (step+k)%4 != 0 {
					continue
				}
				var m Move
				if k == 0 {
					m = randomMove(&r)
				} else {
					m = mutate(legal[int(r.Uint64()%uint64(len(legal)))], &r)
				}
				if containsMove(legal, m) {
					continue
				}
				before := *g
				_, err := g.Apply(m, evs[:0])
				var moveErr *MoveError
				if !errors.As(err, &moveErr) {
					t.Fatalf("game %d step %d: move %v not in Legal %v accepted (err %v)", i, step, m, legal, err)
				}
				if *g != before {
					t.Fatalf("game %d step %d: rejected move %v changed the state", i, step, m)
				}
				tested++
			}
			if full && step%61 == viewAt {
				checkViews(t, g, i%8 == 0 && step < 61)
				if err := g.validate(); err != nil {
					t.Fatalf("game %d step %d: reachable state fails validation: %v", i, step, err)
				}
			}
			if full && step == snapAt {
				snap, _ = g.MarshalBinary()
			}
			m := legal[r.IntN(len(legal))]
			moves = append(moves, m)
			evs, err = g.Apply(m, evs[:0])
			if err != nil {
				t.Fatalf("game %d: %v", i, err)
			}
			for _, e := range evs {
				if e.Kind == EventHandEnded {
					sum := 0
					for _, n := range e.Tricks {
						sum += int(n)
					}
					if sum != int(e.N) || int(e.N) != v.CardsInHand(int(e.Hand)) {
						t.Fatalf("game %d hand %d: tricks total %d, cards dealt %d", i, e.Hand, sum, e.N)
					}
				}
			}
		}
		if g.ToMove() != -1 {
			t.Fatalf("game %d: over but ToMove = %d", i, g.ToMove())
		}
		res := g.HandResults()
		if len(res) != v.Hands() {
			t.Fatalf("game %d: %d results, want %d", i, len(res), v.Hands())
		}
		for h, hr := range res {
			sum := 0
			for _, n := range hr.Tricks {
				sum += n
			}
			if sum != hr.Cards || hr.Cards != v.CardsInHand(h) {
				t.Fatalf("game %d hand %d: tricks total %d of %d", i, h, sum, hr.Cards)
			}
		}

		if !full {
			continue
		}
		// Same seed, same moves: same game.
		again, _ := New(seed, Settings{Variant: v})
		for _, m := range moves {
			if _, err := again.Apply(m, evs[:0]); err != nil {
				t.Fatalf("game %d replay: %v", i, err)
			}
		}
		if *again != *g {
			t.Fatalf("game %d: replay from the seed differs", i)
		}
		// A snapshot restored and continued ends where the game ended.
		if snap != nil {
			var restored Game
			if err := restored.UnmarshalBinary(snap); err != nil {
				t.Fatalf("game %d: restore snapshot of step %d: %v", i, snapAt, err)
			}
			for _, m := range moves[snapAt:] {
				if _, err := restored.Apply(m, evs[:0]); err != nil {
					t.Fatalf("game %d: continue restored game: %v", i, err)
				}
			}
			if restored != *g {
				t.Fatalf("game %d: restored and continued game differs", i)
			}
		}
	}
	if tested == 0 {
		t.Fatal("no illegal move was tried")
	}
}

// checkViews checks every seat's View (and a spectator's) for hidden cards:
// the structure always, the JSON text when deep.
func checkViews(t *testing.T, g *Game, deep bool) {
	t.Helper()
	for seat := -1; seat < Seats; seat++ {
		v := g.View(seat)
		var hidden cards.Set
		for s := range Seats {
			if s != seat {
				hidden |= g.hands[s]
			}
		}
		var seen cards.Set
		for _, c := range v.MyCards {
			seen = seen.With(c)
		}
		want := cards.Set(0)
		switch {
		case seat < 0:
		case g.phase == PhaseTrump:
			if seat == (g.Dealer()+1)%Seats {
				_, first, _ := deal(g.key, MaxCards, g.Dealer())
				want = first[seat]
			}
		default:
			want = g.hands[seat]
		}
		if seen != want {
			t.Fatalf("seat %d in phase %v sees own cards %v, want %v", seat, g.phase, seen, want)
		}
		for _, p := range v.Trick {
			seen = seen.With(p.Card)
		}
		for _, c := range v.Played {
			seen = seen.With(c)
		}
		if v.Turned != nil {
			seen = seen.With(*v.Turned)
		}
		if leak := seen & hidden; leak != 0 && g.phase != PhaseTrump {
			t.Fatalf("seat %d sees hidden cards %v", seat, leak)
		}
		if g.phase == PhaseTrump && seat >= 0 && seen&^want != 0 {
			t.Fatalf("seat %d sees %v before trump is named", seat, seen&^want)
		}
		if !deep {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("view JSON: %v", err)
		}
		text := string(b)
		for c := range cards.DeckSize {
			cc := cards.Card(c)
			if (hidden | g.hands[max(seat, 0)]&^want).Has(cc) && strings.Contains(text, fmt.Sprintf("%q", cc.String())) {
				t.Fatalf("seat %d view JSON names hidden card %v: %s", seat, cc, text)
			}
		}
	}
}
