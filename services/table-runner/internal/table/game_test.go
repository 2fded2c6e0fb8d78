package table

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/pulka/pulka/pkg/classic"
	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/scoring"
)

func TestJapaneseMatch_TwoHumansPlayingRandomLegalCommandsReachTheTarget(t *testing.T) {
	for seed := range uint64(5) {
		h := newHarness(t, japaneseSet(11), seed, humans(2))
		rng := rand.New(rand.NewPCG(seed, 1))
		for moves := 0; !h.t.Over(); moves++ {
			if moves > 5000 {
				t.Fatal("the match does not end")
			}
			h.now = h.now.Add(time.Duration(rng.IntN(5000)) * time.Millisecond)
			s := h.t.eng.toMove()
			cs := legalCommands(h.t, s)
			evs := h.mustCmd(player(s), cs[rng.IntN(len(cs))])
			if n, _ := serverMoves(evs); n != 0 {
				t.Fatalf("the server moved for a player in time: %v", kinds(evs))
			}
		}
		all := flatten(h.log)
		ended, _ := find(all, (*tablev1.Event).GetGameEnded)
		if ended.GetReason() != tablev1.GameEndReason_GAME_END_REASON_COMPLETED || ended.GetPlacings()[0].GetScore() < 11 {
			t.Fatalf("seed %d: game ended %v", seed, ended)
		}
		hands := count(all, "hand_ended")
		in := h.t.ScoringInputs(append(h.start, all...))
		if got := ended.GetHandsPlayed(); got != uint32(hands) {
			t.Fatalf("seed %d: GameEnded.hands_played = %d, want %d hands ended", seed, got, hands)
		}
		if len(in) != hands+2 || in[0].GetGameStarted() == nil || in[len(in)-1].GetGameEnded().GetCompleted() != true ||
			in[len(in)-1].GetGameEnded().GetHandsPlayed() != uint32(hands) {
			t.Fatalf("seed %d: %d scoring inputs for %d hands", seed, len(in), hands)
		}
		for i, x := range in[1 : len(in)-1] {
			hr := x.GetHandResult()
			if hr.GetHandIndex() != uint32(i) || hr.GetCardsPerSeat() != 18 || hr.GetSeats()[0].GetTricks()+hr.GetSeats()[1].GetTricks() != 18 {
				t.Fatalf("seed %d: hand result %v", seed, hr)
			}
		}
	}
}

func TestClassicGame_ScoringInputsAndTheFinalPlacingsAgreeWithTheSheet(t *testing.T) {
	seats := []SeatInfo{{PlayerID: "ana", Name: "Ana"}, {Bot: true, Name: "B1"}, {Bot: true, Name: "B2"}, {Bot: true, Name: "B3"}}
	s := classicSet(classic.Standard, 0)
	s.Classic.Khishti = scoring.KhishtiPerCard
	h := newHarness(t, s, 77, seats)
	if _, err := h.apply(Away("ana", t0)); err != nil {
		t.Fatal(err)
	}
	h.tick(t0.Add(time.Hour)) // the grace runs out and the bots finish the game
	if !h.t.Over() {
		t.Fatal("game not over")
	}
	in := h.t.ScoringInputs(append(h.start, flatten(h.log)...))
	var hands []scoring.HandResult
	for _, x := range in {
		if hr := x.GetHandResult(); hr != nil {
			if x.GetGameId() != h.t.GameID() || x.GetTableId() != "t1" ||
				hr.GetCardsPerSeat() != uint32(classic.Standard.CardsInHand(int(hr.GetHandIndex()))) {
				t.Fatalf("hand result %v", x)
			}
			var r scoring.HandResult
			for _, st := range hr.GetSeats() {
				r.Bids[st.GetSeat()], r.Tricks[st.GetSeat()] = int(st.GetBid()), int(st.GetTricks())
			}
			hands = append(hands, r)
		}
	}
	if len(hands) != 24 || in[0].GetGameStarted().GetSettings().GetKhishti() != lobbyv1.KhishtiPenalty_KHISHTI_PENALTY_PER_CARD {
		t.Fatalf("%d hands, start %v", len(hands), in[0])
	}
	sheet, err := scoring.Build(s.Classic, hands)
	if err != nil {
		t.Fatal(err)
	}
	pulkas := 0
	for _, e := range flatten(h.log) {
		pe := e.GetPulkaEnded()
		if pe == nil {
			continue
		}
		pt := sheet.Pulkas[pe.GetPulkaIndex()]
		for _, r := range pe.GetResults() {
			s := r.GetSeat()
			if r.GetPremia() != int64(pt.Premia[s]) || r.GetMoshla() != int64(pt.Moshla[s]) || r.GetTotal() != int64(pt.Total[s]) {
				t.Fatalf("pulka %d seat %d: %v, sheet %+v", pe.GetPulkaIndex(), s, r, pt)
			}
		}
		pulkas++
	}
	if pulkas != classic.Pulkas {
		t.Fatalf("%d pulkas ended", pulkas)
	}
	ended, _ := find(flatten(h.log), (*tablev1.Event).GetGameEnded)
	if ended.GetHandsPlayed() != uint32(len(sheet.Hands)) {
		t.Fatalf("GameEnded.hands_played = %d, want %d", ended.GetHandsPlayed(), len(sheet.Hands))
	}
	prev := int64(1 << 62)
	for _, p := range ended.GetPlacings() {
		if p.GetScore() != int64(sheet.Total[p.GetSeat()]) || p.GetScore() > prev || p.GetPlayerId() != "" {
			t.Fatalf("placing %v, sheet total %d", p, sheet.Total[p.GetSeat()])
		}
		prev = p.GetScore()
	}
}

func TestPlacings_TiedSeatsShareAPlace(t *testing.T) {
	ps := placings([]int64{50, 120, 50, -30}, func(s int) string { return "" })
	want := [][2]uint32{{1, 1}, {2, 0}, {2, 2}, {4, 3}} // {place, seat}
	for i, p := range ps {
		if p.GetPlace() != want[i][0] || p.GetSeat() != want[i][1] {
			t.Fatalf("placings %v", ps)
		}
	}
}

func TestInput_MarshalRoundTripAndRejectsGarbage(t *testing.T) {
	cmd := bidCmd(3)
	cmd.CommandId, cmd.PlayerId, cmd.TableId = "c1", "p1", "t1"
	for _, in := range []Input{CommandInput(cmd, "17-3", t0), Tick(t0), Away("p1", t0), Back("p2", t0.Add(time.Nanosecond))} {
		b, err := MarshalInput(in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := UnmarshalInput(b)
		if err != nil || got.Kind != in.Kind || !got.At.Equal(in.At) || got.EntryID != in.EntryID ||
			got.PlayerID != in.PlayerID || !proto.Equal(got.Command, in.Command) {
			t.Fatalf("round trip of %v: %v, %v", in, got, err)
		}
		for n := range len(b) {
			if _, err := UnmarshalInput(b[:n]); !errors.Is(err, ErrBadInput) {
				t.Fatalf("truncated to %d: %v", n, err)
			}
		}
	}
	for name, in := range map[string]Input{
		"no kind":          {At: t0},
		"no command":       {Kind: InputCommand, At: t0},
		"bad entry":        CommandInput(cmd, "17", t0),
		"zero entry":       CommandInput(cmd, "0-0", t0),
		"tick with entry":  {Kind: InputTick, At: t0, EntryID: "1-1"},
		"away, no player":  Away("", t0),
		"time before 1970": Tick(time.Time{}),
	} {
		if _, err := MarshalInput(in); !errors.Is(err, ErrBadInput) {
			t.Errorf("%s: MarshalInput %v", name, err)
		}
		h := newHarness(t, japaneseSet(11), 1, humans(2))
		before := state(t, h.t)
		if evs, err := h.t.Apply(in); !errors.Is(err, ErrBadInput) || len(evs) != 0 || !bytes.Equal(before, state(t, h.t)) {
			t.Errorf("%s: Apply %v %v", name, kinds(evs), err)
		}
	}
}

func TestSnapshot_RejectsDamagedData(t *testing.T) {
	d := newDriver(t, 3)
	d.run(300)
	good := state(t, d.h.t)
	if _, err := Restore(good); err != nil {
		t.Fatal(err)
	}
	for n := range len(good) {
		if _, err := Restore(good[:n]); !errors.Is(err, ErrBadSnapshot) {
			t.Fatalf("truncated to %d bytes: %v", n, err)
		}
	}
	if _, err := Restore(append(good, 0)); !errors.Is(err, ErrBadSnapshot) {
		t.Fatal("a trailing byte was accepted")
	}
	// Flipped bytes must never panic; most are refused.
	rng := rand.New(rand.NewPCG(1, 2))
	refused := 0
	for range 2000 {
		bad := bytes.Clone(good)
		bad[rng.IntN(len(bad))] ^= byte(1 + rng.IntN(255))
		var tb Table
		if err := tb.UnmarshalBinary(bad); err != nil {
			refused++
			if !errors.Is(err, ErrBadSnapshot) {
				t.Fatalf("error %v does not wrap ErrBadSnapshot", err)
			}
		}
	}
	t.Logf("%d of 2000 damaged snapshots refused", refused)
}

func BenchmarkClassicGameOfBots_Apply(b *testing.B) {
	seats := make([]SeatInfo, 4)
	for i := range seats {
		seats[i] = SeatInfo{Bot: true, Name: "Bot"}
	}
	s := classicSet(classic.Standard, 0)
	b.ReportAllocs()
	events := 0
	for i := range b.N {
		t, evs, err := New("bench", "g", s, seats, t0, entropyOf(uint64(i), 0))
		if err != nil {
			b.Fatal(err)
		}
		tick := Tick(t0)
		tick.Entropy = entropyOf(uint64(i), 1)
		more, err := t.Apply(tick)
		if err != nil || !t.Over() {
			b.Fatalf("game not over: %v", err)
		}
		events += len(evs) + len(more)
	}
	b.ReportMetric(float64(events)/float64(b.N), "events/game")
}

func BenchmarkClassicGameOfHumans_ApplyCommands(b *testing.B) {
	b.ReportAllocs()
	for i := range b.N {
		h := newHarness(b, classicSet(classic.Standard, 0), uint64(i), humans(4))
		for !h.t.Over() {
			s := h.t.eng.toMove()
			h.now = h.now.Add(time.Second)
			if _, err := h.cmd(player(s), legalCommands(h.t, s)[0]); err != nil {
				b.Fatal(err)
			}
		}
	}
}
