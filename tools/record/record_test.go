package record

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/pulka/pulka/pkg/cards"
	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/scoring"
)

// randomClassic plays uniformly among the legal moves.
type randomClassic struct {
	rng cards.RNG
	buf []classic.Move
}

func (p *randomClassic) Choose(g *classic.Game, seat int) (classic.Move, bool) {
	p.buf = g.Legal(seat, p.buf[:0])
	if len(p.buf) == 0 {
		return classic.Move{}, false
	}
	return p.buf[p.rng.IntN(len(p.buf))], true
}

func classicPlayers(seed uint64) [classic.Seats]ClassicPlayer {
	var ps [classic.Seats]ClassicPlayer
	for i := range ps {
		ps[i] = &randomClassic{rng: cards.NewRNG(seed, uint64(100+i))}
	}
	return ps
}

func japanesePlayers(seed uint64) [japanese.Seats]JapanesePlayer {
	return [japanese.Seats]JapanesePlayer{japanese.NewRandomBot(seed), japanese.NewRandomBot(seed + 1)}
}

func roundTrip(t *testing.T, rec *Record) *Record {
	t.Helper()
	var buf bytes.Buffer
	if err := rec.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Parse(&buf)
	if err != nil {
		t.Fatalf("parse what Write wrote: %v", err)
	}
	return back
}

func TestReplay_ReproducesAPlayedClassicGame(t *testing.T) {
	for _, settings := range []scoring.Settings{
		scoring.DefaultSettings(),
		{Variant: classic.Nines, Khishti: scoring.KhishtiPerCard, Premia: true, Moshla: false},
	} {
		for seed := range uint64(30) {
			rec, err := PlayClassic(seed, settings, classicPlayers(seed))
			if err != nil {
				t.Fatal(err)
			}
			res, err := Replay(roundTrip(t, rec))
			if err != nil {
				t.Fatalf("seed %d: replay: %v", seed, err)
			}
			if !res.Over || res.Moves != len(rec.Moves) {
				t.Fatalf("seed %d: replay over=%v moves=%d, want a finished game of %d moves", seed, res.Over, res.Moves, len(rec.Moves))
			}
			want, err := scoring.Build(settings, sheetHands(res.Classic.HandResults()))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*res.Sheet, want) || !res.Sheet.Finished {
				t.Fatalf("seed %d: replayed sheet differs from the sheet of its hands", seed)
			}
			again, _ := Replay(rec)
			if *again.Classic != *res.Classic {
				t.Fatalf("seed %d: two replays of one record differ", seed)
			}
		}
	}
}

func TestReplay_ReproducesAPlayedJapaneseMatch(t *testing.T) {
	for seed := range uint64(30) {
		rec, err := PlayJapanese(seed, japanese.Settings{Target: 11}, japanesePlayers(seed))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Replay(roundTrip(t, rec))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !res.Over || res.Winner < 0 || res.Scores[res.Winner] < 11 {
			t.Fatalf("seed %d: replay ended over=%v winner=%d scores=%v", seed, res.Over, res.Winner, res.Scores)
		}
	}
}

func TestReplay_IllegalMoveNamesHandTrickSeatAndRule(t *testing.T) {
	rec, err := PlayClassic(7, scoring.DefaultSettings(), classicPlayers(7))
	if err != nil {
		t.Fatal(err)
	}
	// Move 0 is the first bid of hand 1 (a one-card hand). Make the wrong seat bid.
	var first classic.Move
	if err := first.UnmarshalText([]byte(rec.Moves[0])); err != nil {
		t.Fatal(err)
	}
	wrong := (int(first.Seat) + 1) % classic.Seats
	bad := *rec
	bad.Moves = append([]string{classic.BidMove(wrong, 0).String()}, rec.Moves[1:]...)
	_, err = Replay(&bad)
	var me *MoveError
	if !errors.As(err, &me) || !errors.Is(err, classic.ErrNotYourTurn) || !errors.Is(err, ErrIllegalMove) {
		t.Fatalf("err = %v, want a MoveError for ErrNotYourTurn", err)
	}
	if me.Index != 0 || me.Hand != 0 || me.Seat != wrong {
		t.Fatalf("MoveError = %+v, want index 0, hand 0, seat %d", me, wrong)
	}
	for _, word := range []string{"move 1", "hand 1", "seat"} {
		if !strings.Contains(err.Error(), word) {
			t.Errorf("message %q lacks %q", err, word)
		}
	}

	// A card the seat does not hold, late in the game.
	late := *rec
	late.Moves = append([]string(nil), rec.Moves...)
	i := len(late.Moves) - 1
	var last classic.Move
	if err := last.UnmarshalText([]byte(late.Moves[i])); err != nil {
		t.Fatal(err)
	}
	other := classic.PlayMove(int(last.Seat), cards.New(cards.Hearts, cards.Ace))
	if last.Card == other.Card {
		other = classic.PlayMove(int(last.Seat), cards.New(cards.Spades, cards.Ace))
	}
	late.Moves[i] = other.String()
	_, err = Replay(&late)
	if !errors.As(err, &me) || me.Index != i || me.Hand != classic.Standard.Hands()-1 {
		t.Fatalf("err = %v, want move %d of the last hand rejected", err, i+1)
	}
	if !errors.Is(err, classic.ErrNotInHand) {
		t.Fatalf("err = %v, want ErrNotInHand", err)
	}

	// Text that is no move at all.
	junk := *rec
	junk.Moves = []string{"lay down and cry"}
	if _, err := Replay(&junk); !errors.As(err, &me) || me.Index != 0 {
		t.Fatalf("err = %v, want a MoveError at move 1", err)
	}
}

func TestParse_RejectsWhatIsNotARecord(t *testing.T) {
	good := `{"format":"pulka-game-record/2","game":"classic","seed":"5","classic":{"variant":"nines","khishti":"500","premia":true,"moshla":true,"restDocked":false},"moves":[]}`
	if _, err := Parse(strings.NewReader(good)); err != nil {
		t.Fatalf("good record rejected: %v", err)
	}
	cases := map[string]struct {
		in   string
		want error
	}{
		"not json":               {`moves: 1`, ErrFormat},
		"wrong format":           {strings.Replace(good, "record/2", "record/9", 1), ErrFormat},
		"unknown field":          {strings.Replace(good, `"moves"`, `"extra":1,"moves"`, 1), ErrFormat},
		"unknown game":           {strings.Replace(good, `"classic","seed"`, `"poker","seed"`, 1), ErrFormat},
		"trailing data":          {good + `{}`, ErrFormat},
		"negative seed":          {strings.Replace(good, `"5"`, `"-5"`, 1), ErrFormat},
		"bad variant":            {strings.Replace(good, "nines", "tens", 1), ErrFormat},
		"classic without rules":  {`{"format":"pulka-game-record/2","game":"classic","seed":1,"moves":[]}`, ErrSettings},
		"japanese bad target":    {`{"format":"pulka-game-record/2","game":"japanese","seed":1,"japanese":{"target":12},"moves":[]}`, ErrSettings},
		"mixed settings":         {`{"format":"pulka-game-record/2","game":"japanese","seed":1,"classic":{"variant":"standard"},"moves":[]}`, ErrSettings},
		"wrong player count":     {strings.Replace(good, `"moves"`, `"players":["a","b"],"moves"`, 1), ErrFormat},
		"too large":              {`{"format":"` + strings.Repeat("x", MaxRecordSize) + `"}`, ErrTooLarge},
		"version 1":              {strings.Replace(good, "record/2", "record/1", 1), ErrFormat},
		"table game with a seed": {strings.Replace(good, `"moves"`, `"tableId":"t","gameId":"g","moves"`, 1), ErrFormat},
		"table game without ids": {strings.Replace(good, `"seed":"5",`, `"hands":[],"tableId":"t",`, 1), ErrFormat},
		"short server seed": {strings.Replace(good, `"seed":"5",`, `"tableId":"t","gameId":"g","hands":[{"commitment":"`+strings.Repeat("0", 64)+
			`","serverSeed":"00","clientSeeds":["","","",""]}],`, 1), ErrDeal},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse(strings.NewReader(c.in)); !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
		})
	}
}

func TestSeed_AcceptsNumberAndStringWritesString(t *testing.T) {
	in := `{"format":"pulka-game-record/2","game":"japanese","seed":18446744073709551615,"moves":[]}`
	rec, err := Parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if rec.Seed != Seed(^uint64(0)) {
		t.Fatalf("seed = %d, want 2^64-1 exactly", rec.Seed)
	}
	var buf bytes.Buffer
	if err := rec.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"seed": "18446744073709551615"`) {
		t.Fatalf("seed not written as a string:\n%s", buf.String())
	}
}

func FuzzParseAndReplay(f *testing.F) {
	rec, err := PlayClassic(3, scoring.DefaultSettings(), classicPlayers(3))
	if err != nil {
		f.Fatal(err)
	}
	rec.Moves = rec.Moves[:40]
	var buf bytes.Buffer
	if err := rec.Write(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"format":"pulka-game-record/2","game":"japanese","seed":"1","japanese":{"target":21},"moves":["0 trump S","0 play AS"]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		rec, err := Parse(bytes.NewReader(data))
		if err != nil {
			return
		}
		res, err := Replay(rec)
		if err != nil {
			var me *MoveError
			if !errors.As(err, &me) && !errors.Is(err, ErrSettings) {
				t.Fatalf("replay error of unknown kind: %v", err)
			}
			return
		}
		if res.Moves != len(rec.Moves) {
			t.Fatalf("replay applied %d of %d moves without an error", res.Moves, len(rec.Moves))
		}
	})
}

func BenchmarkReplayClassic(b *testing.B) {
	rec, err := PlayClassic(11, scoring.DefaultSettings(), classicPlayers(11))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Replay(rec); err != nil {
			b.Fatal(err)
		}
	}
}

// TestVerify_ATableRecordChecksEveryHandAgainstItsCommitment: a table's
// record replays hand by hand from its seeds; a server seed that is not the
// committed one stops it with ErrDeal before that hand, the hands before
// it reported.
func TestVerify_ATableRecordChecksEveryHandAgainstItsCommitment(t *testing.T) {
	s := scoring.DefaultSettings()
	bot := classic.Bot{}
	rec, err := PlayClassicTable("t", "g", rand.NewChaCha8([32]byte{1}), s, [classic.Seats]ClassicPlayer{bot, bot, bot, bot})
	if err != nil {
		t.Fatal(err)
	}
	hands, err := Verify(rec)
	if err != nil || len(hands) != s.Variant.Hands() || hands[0].Local || hands[23].Moves == 0 {
		t.Fatalf("%d hands, %v", len(hands), err)
	}
	res, err := Replay(rec)
	if err != nil || !res.Over || len(res.Hands) != len(hands) {
		t.Fatalf("replay: %v", err)
	}
	bad := *rec
	bad.Hands = append([]HandSeeds(nil), rec.Hands...)
	bad.Hands[5].ServerSeed = rec.Hands[6].ServerSeed
	hands, err = Verify(&bad)
	if !errors.Is(err, ErrDeal) || len(hands) != 5 {
		t.Fatalf("another hand's seed in hand 6: %d hands, %v; want 5 and ErrDeal", len(hands), err)
	}
}
