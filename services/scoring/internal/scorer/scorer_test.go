package scorer_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/proto"

	lobbyv1 "github.com/pulka/pulka/pkg/gen/pulka/lobby/v1"
	scoringv1 "github.com/pulka/pulka/pkg/gen/pulka/scoring/v1"
	"github.com/pulka/pulka/pkg/redistest"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
	"github.com/pulka/pulka/services/scoring/internal/sheets"
	"github.com/pulka/pulka/services/scoring/internal/sheetstore"
)

// shuffledTwice returns every input twice, in a random order in which the
// GameStarted comes after some hands (inputs delivered out of order).
func shuffledTwice(rng *rand.Rand, inputs []*scoringv1.ScoringInput) []*scoringv1.ScoringInput {
	all := append(append([]*scoringv1.ScoringInput{}, inputs...), inputs...)
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	for i, in := range all {
		if in.GetGameStarted() != nil && i < 5 {
			all[i], all[5] = all[5], all[i]
		}
	}
	return all
}

// expectedSheet is scoring.Build of the game's hands, the reference the
// stored sheet must equal.
func expectedSheet(t *testing.T, inputs []*scoringv1.ScoringInput) (*scoringv1.Sheet, scoring.Sheet) {
	t.Helper()
	g := sheets.Game{TableID: inputs[0].GetTableId(), GameID: inputs[0].GetGameId(), Hands: map[uint32]*scoringv1.HandResult{}}
	var raw []scoring.HandResult
	for _, in := range inputs {
		switch {
		case in.GetGameStarted() != nil:
			g.Start = in.GetGameStarted()
		case in.GetHandResult() != nil:
			h := in.GetHandResult()
			g.Hands[h.GetHandIndex()] = h
			var hr scoring.HandResult
			for _, s := range h.GetSeats() {
				hr.Bids[s.GetSeat()], hr.Tricks[s.GetSeat()] = int(s.GetBid()), int(s.GetTricks())
			}
			raw = append(raw, hr)
		case in.GetGameEnded() != nil:
			g.End = in.GetGameEnded()
		}
	}
	r, err := sheets.Build(g)
	if err != nil || !r.Final {
		t.Fatalf("reference sheet: final=%v %v", r.Final, err)
	}
	settings, _ := sheets.ClassicSettings(g.Start.GetSettings())
	ref, err := scoring.Build(settings, raw)
	if err != nil {
		t.Fatal(err)
	}
	return r.Sheet, ref
}

func TestScorer_WholeGameTwiceOutOfOrderWithCrashesBetweenEffectAndAck(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	players := []string{"p-giorgi", "p-ana", "", "p-nika"} // Levan's seat is a bot
	inputs := ninesInputs("t1", "g1", players)
	publish(t, rdb, shuffledTwice(rand.New(rand.NewPCG(3, 4)), inputs)...)

	// Consumer A handles every entry once, but "dies" after the effect of
	// every third one: those stay pending with their effect done. (A never
	// reclaims them itself: its reclaim idle time is an hour.)
	s := newScorer(t, rdb)
	h, crashes := crashing(s.Handle, func(n int) bool { return n%3 == 0 })
	stopA := runConsumer(t, rdb, "scoring-a", h, streams.WithMinIdle(time.Hour))
	eventually(t, 20*time.Second, "consumer A to see every entry", func() bool {
		groups, _ := rdb.XInfoGroups(ctx, scoringclient.HandsStream).Result()
		return len(groups) == 1 && groups[0].Lag == 0 && groups[0].Pending == int64(crashes()) && crashes() > 0
	})
	stopA()

	// A replacement (another pod, or A restarted under a new name) reclaims
	// the entries A left pending and handles them again.
	runConsumer(t, rdb, "scoring-b", newScorer(t, rdb).Handle)
	eventually(t, 20*time.Second, "every entry acknowledged", func() bool { return settled(context.Background(), rdb) })
	if crashes() < 5 {
		t.Fatalf("only %d crashes injected", crashes())
	}

	want, ref := expectedSheet(t, inputs)
	reader := sheetstore.NewReader(rdb)
	got, version, err := reader.Sheet(ctx, "t1", "g1")
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, want) {
		t.Fatalf("stored sheet differs from the sheet of the hands:\n got %v\nwant %v", got, want)
	}
	if version != 1+2*16+1 {
		t.Fatalf("final version %d, want 34", version)
	}
	// Premia and moshla once per pulka: 4 × (+250) for Giorgi, the others
	// docked once per pulka — and the grand totals are scoring.Build's.
	for p, sp := range got.GetPulkas() {
		for seat, tot := range sp.GetTotals() {
			if tot.GetPremia() != int64(ref.Pulkas[p].Premia[seat]) || tot.GetMoshla() != int64(ref.Pulkas[p].Moshla[seat]) {
				t.Fatalf("pulka %d seat %d: premia %d moshla %d, want %d %d", p, seat,
					tot.GetPremia(), tot.GetMoshla(), ref.Pulkas[p].Premia[seat], ref.Pulkas[p].Moshla[seat])
			}
		}
		if sp.GetTotals()[0].GetPremia() != 250 || sp.GetTotals()[3].GetMoshla() != -300 {
			t.Fatalf("pulka %d: %v", p, sp.GetTotals())
		}
	}
	for seat, tot := range got.GetTotals() {
		if tot.GetTotal() != int64(ref.Total[seat]) {
			t.Fatalf("seat %d total %d, want %d", seat, tot.GetTotal(), ref.Total[seat])
		}
	}

	// Every published sheet version is new; the last is the final sheet.
	updates := xrange(t, rdb, scoringclient.SheetStream("t1"))
	var last uint64
	for _, m := range updates {
		u, err := scoringclient.DecodeUpdate(m)
		if err != nil {
			t.Fatal(err)
		}
		if u.GetVersion() <= last {
			t.Fatalf("sheet versions not strictly increasing: %d after %d", u.GetVersion(), last)
		}
		last = u.GetVersion()
		if last == version && !proto.Equal(u.GetSheet(), want) {
			t.Fatal("the last update is not the final sheet")
		}
	}
	if last != version {
		t.Fatalf("last published version %d, want %d", last, version)
	}

	// The standings were published exactly once.
	standings := xrange(t, rdb, scoringclient.StandingsStream)
	if len(standings) != 1 {
		t.Fatalf("%d standings entries, want exactly 1", len(standings))
	}
	fs, err := scoringclient.DecodeStandings(standings[0])
	if err != nil {
		t.Fatal(err)
	}
	if fs.GetGameId() != "g1" || fs.GetTableId() != "t1" || len(fs.GetStandings()) != 4 {
		t.Fatalf("standings %v", fs)
	}
	if w := fs.GetStandings()[0]; w.GetSeat() != 0 || w.GetPlace() != 1 || w.GetPlayerId() != "p-giorgi" || w.GetTotal() != int64(ref.Total[0]) {
		t.Fatalf("winner %v", w)
	}

	// The finished game is in its human players' history, with its sheet.
	for _, p := range []string{"p-giorgi", "p-ana", "p-nika"} {
		hist, err := scoringclient.NewReader(rdb).History(ctx, p, scoringclient.Page{})
		if err != nil || len(hist) != 1 || hist[0].GameID != "g1" || !proto.Equal(hist[0].Sheet, want) {
			t.Fatalf("history of %s: %v %v", p, hist, err)
		}
		if len(hist[0].Standings.GetStandings()) != 4 || hist[0].EndedAt.IsZero() {
			t.Fatalf("history record of %s: %+v", p, hist[0])
		}
	}
	if n, _ := rdb.Exists(ctx, scoringclient.PlayerGamesKey("")).Result(); n != 0 {
		t.Fatal("a bot got a history list")
	}
}

func TestScorer_ConcurrentReplicasManyGames(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	var all []*scoringv1.ScoringInput
	games := map[string][]*scoringv1.ScoringInput{}
	for i := range 12 {
		tid, gid := fmt.Sprint("t", i%4), fmt.Sprint("g", i)
		in := ninesInputs(tid, gid, []string{fmt.Sprint("a", i), fmt.Sprint("b", i%3), "", "nika"})
		games[gid] = in
		all = append(all, shuffledTwice(rng, in)...)
	}
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	publish(t, rdb, all...)

	for _, name := range []string{"r1", "r2", "r3"} {
		h, _ := crashing(newScorer(t, rdb).Handle, func(n int) bool { return n%4 == 1 })
		runConsumer(t, rdb, name, h)
	}
	eventually(t, 30*time.Second, "every entry acknowledged", func() bool { return settled(context.Background(), rdb) })

	standings := xrange(t, rdb, scoringclient.StandingsStream)
	if len(standings) != len(games) {
		t.Fatalf("%d standings for %d games", len(standings), len(games))
	}
	seen := map[string]bool{}
	for _, m := range standings {
		fs, err := scoringclient.DecodeStandings(m)
		if err != nil {
			t.Fatal(err)
		}
		if seen[fs.GetGameId()] {
			t.Fatalf("standings of %s published twice", fs.GetGameId())
		}
		seen[fs.GetGameId()] = true
	}
	reader := sheetstore.NewReader(rdb)
	for gid, in := range games {
		want, _ := expectedSheet(t, in)
		got, _, err := reader.Sheet(ctx, in[0].GetTableId(), gid)
		if err != nil || !proto.Equal(got, want) {
			t.Fatalf("game %s: stored sheet differs (%v)", gid, err)
		}
	}
	if n, _ := scoringclient.NewReader(rdb).HistoryCount(ctx, "nika"); n != int64(len(games)) {
		t.Fatalf("nika played %d games, history has %d", len(games), n)
	}
}

func TestScorer_HandsBeforeTheStartWaitForIt(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	inputs := ninesInputs("t1", "g1", names)
	runConsumer(t, rdb, "c", newScorer(t, rdb).Handle)
	publish(t, rdb, inputs[1:5]...) // hands 0..3, no start
	eventually(t, 10*time.Second, "hands handled", func() bool { return settled(context.Background(), rdb) })
	if n := rdb.XLen(ctx, scoringclient.SheetStream("t1")).Val(); n != 0 {
		t.Fatalf("%d sheet updates before the game started", n)
	}
	publish(t, rdb, inputs[0])
	eventually(t, 10*time.Second, "start handled", func() bool { return settled(context.Background(), rdb) })
	got, version, err := sheetstore.NewReader(rdb).Sheet(ctx, "t1", "g1")
	if err != nil || version != 9 || len(got.GetPulkas()) != 1 || !got.GetPulkas()[0].GetFinished() {
		t.Fatalf("after the start: version %d sheet %v %v", version, got, err)
	}
	if got.GetTotals()[0].GetTotal() != 950 {
		t.Fatalf("Giorgi's pulka I with premia: %d, want 950", got.GetTotals()[0].GetTotal())
	}
}

func TestScorer_ConflictingDuplicateKeepsTheFirst(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	inputs := ninesInputs("t1", "g1", names)
	changed := proto.Clone(inputs[1]).(*scoringv1.ScoringInput)
	changed.GetHandResult().Seats[0].Tricks, changed.GetHandResult().Seats[1].Tricks = 3, 2
	runConsumer(t, rdb, "c", newScorer(t, rdb).Handle)
	publish(t, rdb, inputs[0], inputs[1], changed)
	eventually(t, 10*time.Second, "handled", func() bool { return settled(context.Background(), rdb) })
	got, _, err := sheetstore.NewReader(rdb).Sheet(context.Background(), "t1", "g1")
	if err != nil {
		t.Fatal(err)
	}
	if c := got.GetPulkas()[0].GetHands()[0].GetCells()[0]; c.GetTricks() != 2 || c.GetPoints() != 150 {
		t.Fatalf("hand 0 seat 0: %v, want the first delivery's 2 tricks (150)", c)
	}
}

func TestScorer_InvalidInputIsDeadLettered(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	runConsumer(t, rdb, "c", newScorer(t, rdb).Handle, streams.WithMaxDeliveries(2))
	pub := streams.NewPublisher(rdb)
	if _, err := pub.Publish(ctx, streams.Entry{Stream: scoringclient.HandsStream, Data: []byte("not a protobuf \xff\xff")}); err != nil {
		t.Fatal(err)
	}
	bad := ninesInputs("t1", "g1", names)[3]
	bad.GetHandResult().CardsPerSeat = 4 // tricks add up to 9
	publish(t, rdb, bad)
	eventually(t, 15*time.Second, "both dead-lettered", func() bool {
		return rdb.XLen(ctx, streams.DeadLetter("scoring")).Val() == 2 && settled(ctx, rdb)
	})
	for _, m := range xrangeRaw(t, rdb, streams.DeadLetter("scoring")) {
		if reason, _ := m["error"].(string); reason == "" {
			t.Fatalf("dead letter without a reason: %v", m)
		}
	}
	if n, _ := rdb.Exists(ctx, sheetstore.HandsKey("t1", "g1")).Result(); n != 0 {
		t.Fatal("an invalid hand was stored")
	}
}

func xrangeRaw(t *testing.T, rdb redis.UniversalClient, stream string) []map[string]interface{} {
	t.Helper()
	xs, err := rdb.XRange(context.Background(), stream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]map[string]interface{}, len(xs))
	for i, x := range xs {
		out[i] = x.Values
	}
	return out
}

func TestScorer_JapaneseResignationEndsTheMatch(t *testing.T) {
	srv := redistest.Start(t)
	rdb := srv.Client(t)
	ctx := context.Background()
	loser := uint32(0)
	mk := func(x *scoringv1.ScoringInput) *scoringv1.ScoringInput { x.TableId, x.GameId = "j1", "m1"; return x }
	start := mk(&scoringv1.ScoringInput{Input: &scoringv1.ScoringInput_GameStarted{GameStarted: &scoringv1.GameStarted{
		Settings: &lobbyv1.TableSettings{Game: lobbyv1.Game_GAME_JAPANESE, JapaneseTarget: 11},
		Players:  []*scoringv1.SheetPlayer{{Seat: 0, PlayerId: "u0"}, {Seat: 1, PlayerId: "u1"}},
	}}})
	handIn := func(i int, t0, t1 uint32) *scoringv1.ScoringInput {
		return mk(&scoringv1.ScoringInput{Input: &scoringv1.ScoringInput_HandResult{HandResult: &scoringv1.HandResult{
			HandIndex: uint32(i), CardsPerSeat: 18,
			Seats: []*scoringv1.SeatTricks{{Seat: 0, Tricks: t0}, {Seat: 1, Tricks: t1}}}}})
	}
	end := mk(&scoringv1.ScoringInput{Input: &scoringv1.ScoringInput_GameEnded{GameEnded: &scoringv1.GameEnded{LoserSeat: &loser}}})
	runConsumer(t, rdb, "c", newScorer(t, rdb).Handle)
	// The resignation overtakes hand 1 (hand 2 is stored, hand 1 missing):
	// the match must not close without it.
	publish(t, rdb, start, handIn(0, 10, 8), handIn(2, 12, 6), end)
	eventually(t, 10*time.Second, "handled", func() bool { return settled(context.Background(), rdb) })
	if n := rdb.XLen(ctx, scoringclient.StandingsStream).Val(); n != 0 {
		t.Fatalf("standings published with hand 1 missing")
	}
	publish(t, rdb, handIn(1, 8, 10))
	eventually(t, 10*time.Second, "handled", func() bool { return settled(context.Background(), rdb) })
	fs := xrange(t, rdb, scoringclient.StandingsStream)
	if len(fs) != 1 {
		t.Fatalf("%d standings", len(fs))
	}
	st := mustUnmarshal(t, fs[0].Data, &scoringv1.FinalStandings{})
	if st.GetStandings()[0].GetPlayerId() != "u1" || st.GetStandings()[1].GetPlayerId() != "u0" || st.GetStandings()[1].GetTotal() != 8 {
		t.Fatalf("the resigner (8–2 up) must be last: %v", st.GetStandings())
	}
	g, err := scoringclient.NewReader(rdb).Game(ctx, "m1")
	if err != nil || !g.Sheet.GetPulkas()[0].GetFinished() {
		t.Fatalf("history: %+v %v", g, err)
	}
}
