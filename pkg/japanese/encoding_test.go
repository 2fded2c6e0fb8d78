package japanese

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/pulka/pulka/pkg/cards"
)

func TestMove_TextAndJSONEncodings(t *testing.T) {
	cases := []struct {
		m    Move
		text string
		json string
	}{
		{TrumpMove(0, cards.Hearts), "0 trump H", `{"seat":0,"kind":"trump","suit":"H"}`},
		{TrumpMove(1, cards.NoSuit), "1 trump bezi", `{"seat":1,"kind":"trump","suit":"bezi"}`},
		{PlayMove(0, cards.New(cards.Diamonds, cards.Queen)), "0 play QD", `{"seat":0,"kind":"play","card":"QD"}`},
		{LeadJoker(1, cards.Joker2, cards.Spades), "1 play JK2 S", `{"seat":1,"kind":"play","card":"JK2","suit":"S"}`},
		{ResignMove(0), "0 resign", `{"seat":0,"kind":"resign"}`},
		{ForfeitMove(1), "1 forfeit", `{"seat":1,"kind":"forfeit"}`},
	}
	for _, c := range cases {
		txt, err := c.m.MarshalText()
		if err != nil || string(txt) != c.text {
			t.Errorf("%+v: text %q, %v; want %q", c.m, txt, err, c.text)
		}
		var back Move
		if err := back.UnmarshalText([]byte(c.text)); err != nil || back != c.m {
			t.Errorf("%q: read %+v, %v", c.text, back, err)
		}
		js, err := json.Marshal(c.m)
		if err != nil || string(js) != c.json {
			t.Errorf("%+v: JSON %s, %v; want %s", c.m, js, err, c.json)
		}
		back = Move{}
		if err := json.Unmarshal([]byte(c.json), &back); err != nil || back != c.m {
			t.Errorf("%s: read %+v, %v", c.json, back, err)
		}
	}
}

func TestMove_DecodersRejectGarbage(t *testing.T) {
	for _, s := range []string{"", "0", "2 play AS", "-1 resign", "0 play", "0 play 6S", "0 play AS X",
		"0 trump", "0 trump N", "0 resign now", "0 dance", "0 play JK1 H extra", "0 trump H S"} {
		var m Move
		if err := m.UnmarshalText([]byte(s)); !errors.Is(err, ErrBadMove) {
			t.Errorf("%q: %v, want ErrBadMove", s, err)
		}
	}
	for _, s := range []string{`{}`, `{"kind":"play","card":"AS"}`, `{"seat":3,"kind":"resign"}`,
		`{"seat":0,"kind":"trump","card":"AS","suit":"H"}`, `{"seat":0,"kind":"play"}`, `[1]`} {
		var m Move
		if err := json.Unmarshal([]byte(s), &m); !errors.Is(err, ErrBadMove) {
			t.Errorf("%s: %v, want ErrBadMove", s, err)
		}
	}
	if _, err := (Move{Kind: KindPlay, Seat: 0, Card: 99}).MarshalText(); !errors.Is(err, ErrBadMove) {
		t.Errorf("marshalling a bad move: %v", err)
	}
}

func TestEvent_JSONShowsTheFieldsOfItsKind(t *testing.T) {
	g := newGame(t, 4)
	ev := g.StartEvents(nil)
	ev = append(ev, mustApply(t, g, TrumpMove(g.Declarer(), cards.NoSuit))...)
	m, _ := Bot{}.Choose(g, g.ToMove())
	ev = append(ev, mustApply(t, g, m)...)
	want := map[EventKind]string{
		EventHandStarted:  `{"kind":"handStarted","hand":0,"seat":`,
		EventDealt:        `{"kind":"dealt","to":`,
		EventTrumpChosen:  `"trump":"bezi"`,
		EventColumnsDealt: `"columns":["`,
		EventCardPlayed:   `"column":-1`,
	}
	for _, e := range ev {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if w, ok := want[e.Kind]; ok && !strings.Contains(string(b), w) {
			t.Errorf("%v: %s lacks %s", e.Kind, b, w)
		}
		if e.To == Public && strings.Contains(string(b), `"to"`) {
			t.Errorf("public event %s names a recipient", b)
		}
	}
}

func TestView_JSONHasClearFieldNamesAndNoFaceDownCards(t *testing.T) {
	g := newGame(t, 6)
	mustApply(t, g, TrumpMove(g.Declarer(), cards.Spades))
	b, err := json.Marshal(g.View(g.Declarer()))
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"seat"`, `"phase":"play"`, `"trump":"S"`, `"myCards":[`, `"legalCards":[`,
		`"handSizes":[8,8]`, `"columns":[[{"column":0,"up":`, `"currentTrick":[]`, `"scores":[0,0]`, `"target":21`,
		`"winner":-1`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("view JSON lacks %s: %s", key, b)
		}
	}
	for s := range Seats {
		for _, c := range g.down[s] {
			if strings.Contains(string(b), `"`+c.String()+`"`) {
				t.Errorf("view JSON shows face-down %v", c)
			}
		}
	}
}

func TestHandResults_KeepTheMostRecentHands(t *testing.T) {
	g := newGame(t, 1)
	// 200 drawn hands (9-9): nothing scored, the record keeps the last 128.
	g.hand, g.finished = 200, 200
	for h := range MaxRecordedHands {
		g.results[h] = packResult(9, cards.Clubs)
	}
	g.startHand()
	hr := g.HandResults()
	if len(hr) != MaxRecordedHands || hr[0].Hand != 200-MaxRecordedHands || hr[len(hr)-1].Hand != 199 {
		t.Fatalf("%d results from hand %d", len(hr), hr[0].Hand)
	}
	if hr[5].Tricks != [Seats]int{9, 9} || hr[5].Points != [Seats]int{} || hr[5].Trump != "C" {
		t.Fatalf("result %+v", hr[5])
	}
	b, _ := g.MarshalBinary()
	var back Game
	if err := back.UnmarshalBinary(b); err != nil || back != *g {
		t.Fatalf("a long match does not round-trip: %v", err)
	}
}

func TestState_UnmarshalRejectsTamperedStates(t *testing.T) {
	// Early in a hand, while the columns still pin the deal to the seed.
	// Layout: version 0, key 1-32, local 33, seed 34-41, hand 42-45,
	// finished 46-49, target 50, ..., scores 64-65, hands 66-73 and 74-81.
	g := fuzzGame(t, 9, 5)
	good, _ := g.MarshalBinary()
	tamper := map[string]func(b []byte) []byte{
		"empty":           func([]byte) []byte { return nil },
		"unknown version": func(b []byte) []byte { b[0] = 9; return b },
		"trailing byte":   func(b []byte) []byte { return append(b, 0) },
		"short":           func(b []byte) []byte { return b[:len(b)-1] },
		"key changed":     func(b []byte) []byte { b[1] ^= 1; return b },
		"seed changed":    func(b []byte) []byte { b[34] ^= 1; return b },
		"made live":       func(b []byte) []byte { b[33] = 0; return b },
		"bad local flag":  func(b []byte) []byte { b[33] = 2; return b },
		"bad target":      func(b []byte) []byte { b[50] = 20; return b },
		"score forged":    func(b []byte) []byte { b[64] = 5; return b },
		"card duplicated": func(b []byte) []byte {
			for k := range 8 {
				b[66+k] |= b[74+k] // hands[0] gets the cards of hands[1]
			}
			return b
		},
		"card lost": func(b []byte) []byte { b[66] &= b[66] - 1; return b },
	}
	for name, f := range tamper {
		b := f(append([]byte(nil), good...))
		h := *g
		if err := h.UnmarshalBinary(b); !errors.Is(err, ErrBadState) || h != *g {
			t.Errorf("%s: %v, want ErrBadState and no change", name, err)
		}
	}
	var j Game
	if err := j.UnmarshalJSON([]byte(`{"version":2}`)); !errors.Is(err, ErrBadState) {
		t.Errorf("empty JSON state: %v", err)
	}
}
