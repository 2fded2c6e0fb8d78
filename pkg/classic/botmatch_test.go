package classic_test

import (
	"flag"
	"sort"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/internal/threadcpu"
	"github.com/pulka/pulka/pkg/scoring"
)

// The match measures the bot levels in seeded self-play (docs/benchmarks.md,
// "Bots (issue 23)"): go test ./pkg/classic -run TestBotMatch -botmatch.games 10000 -v
var (
	matchGames    = flag.Int("botmatch.games", 0, "games per line-up in TestBotMatch (0: a short check)")
	matchRollouts = flag.Int("botmatch.rollouts", classic.StrongRollouts, "the strong bot's budget in TestBotMatch")
	matchOnly     = flag.Bool("botmatch.mixed", false, "TestBotMatch plays only the strong-vs-baseline line-up")
)

// seatStats adds up what one kind of player did.
type seatStats struct {
	games, hands, exact, khishti, premia int
	score, place                         float64
}

func (s *seatStats) add(sheet *scoring.Sheet, seat int, place float64) {
	s.games++
	s.score += float64(sheet.Total[seat])
	s.place += place
	for _, r := range sheet.Hands {
		s.hands++
		switch r.Result[seat] {
		case scoring.ResultMade:
			s.exact++
		case scoring.ResultKhishti:
			s.khishti++
		}
	}
	for _, p := range sheet.Pulkas {
		if p.Premia[seat] > 0 {
			s.premia++
		}
	}
}

func (s *seatStats) log(t *testing.T, name string) {
	t.Helper()
	if s.games == 0 {
		return
	}
	t.Logf("  %-8s exact bids %5.1f%%  khishti %4.2f%% of hands  premia %.2f/game  final score %6.0f  placing %.2f",
		name, 100*float64(s.exact)/float64(s.hands), 100*float64(s.khishti)/float64(s.hands),
		float64(s.premia)/float64(s.games), s.score/float64(s.games), s.place/float64(s.games))
}

// playMatch plays one standard game, returns its sheet (default settings:
// khishti 200, premia and moshla on) and every seat's placing (ties share).
func playMatch(t *testing.T, seed uint64, players [classic.Seats]classic.Player, cpu *[]time.Duration, timed [classic.Seats]bool) (scoring.Sheet, [classic.Seats]float64) {
	t.Helper()
	g, err := classic.New(seed, classic.Settings{Variant: classic.Standard})
	if err != nil {
		t.Fatal(err)
	}
	evs := make([]classic.Event, 0, 16)
	for !g.Over() {
		seat := g.ToMove()
		start := threadcpu.Now()
		m, ok := players[seat].Choose(g, seat)
		if timed[seat] && cpu != nil {
			*cpu = append(*cpu, threadcpu.Now()-start)
		}
		if !ok {
			t.Fatalf("seed %d: seat %d to move but its player says not", seed, seat)
		}
		if evs, err = g.Apply(m, evs[:0]); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	var hands []scoring.HandResult
	for _, r := range g.HandResults() {
		hands = append(hands, scoring.HandResult{Bids: r.Bids, Tricks: r.Tricks})
	}
	sheet, err := scoring.Build(scoring.DefaultSettings(), hands)
	if err != nil {
		t.Fatal(err)
	}
	var place [classic.Seats]float64
	for s := range classic.Seats {
		place[s] = 1
		for o := range classic.Seats {
			switch {
			case o == s:
			case sheet.Total[o] > sheet.Total[s]:
				place[s]++
			case sheet.Total[o] == sheet.Total[s]:
				place[s] += 0.5
			}
		}
	}
	return sheet, place
}

// TestBotMatch plays the line-ups the issue asks for: the strong bot against
// three baseline bots (its seat rotating), four strong bots, and four
// baseline bots for reference. Without -botmatch.games it plays a few games
// and checks only the clearest goal: the strong bot outscores the baseline.
func TestBotMatch(t *testing.T) {
	games := *matchGames
	short := games == 0
	if short {
		games = 12
		if testing.Short() {
			games = 4
		}
	}
	strong := func(seed uint64) classic.Player {
		return classic.StrongBot{Seed: seed, Rollouts: *matchRollouts}
	}
	var mixedStrong, mixedBase, allStrong, allBase, mixedNormal, normalsBase seatStats
	defer threadcpu.Lock()()
	var cpu, cpuNormal []time.Duration
	if short {
		t.Logf("a short check; the measure: -botmatch.games 10000")
	}
	for i := range games {
		seed := uint64(i)*104729 + 11
		hero := i % classic.Seats
		var players [classic.Seats]classic.Player
		for s := range classic.Seats {
			players[s] = classic.Bot{}
		}
		players[hero] = strong(seed)
		sheet, place := playMatch(t, seed, players, &cpu, [classic.Seats]bool{hero == 0, hero == 1, hero == 2, hero == 3})
		for s := range classic.Seats {
			if s == hero {
				mixedStrong.add(&sheet, s, place[s])
			} else {
				mixedBase.add(&sheet, s, place[s])
			}
		}
		if (short && i >= 4) || *matchOnly {
			continue
		}
		players[hero] = classic.BotFor(classic.LevelNormal)
		sheet, place = playMatch(t, seed, players, &cpuNormal, [classic.Seats]bool{hero == 0, hero == 1, hero == 2, hero == 3})
		for s := range classic.Seats {
			if s == hero {
				mixedNormal.add(&sheet, s, place[s])
			} else {
				normalsBase.add(&sheet, s, place[s])
			}
		}
		for s := range classic.Seats {
			players[s] = strong(seed + uint64(s))
		}
		sheet, place = playMatch(t, seed, players, nil, [classic.Seats]bool{})
		for s := range classic.Seats {
			allStrong.add(&sheet, s, place[s])
		}
		for s := range classic.Seats {
			players[s] = classic.Bot{}
		}
		sheet, place = playMatch(t, seed, players, nil, [classic.Seats]bool{})
		for s := range classic.Seats {
			allBase.add(&sheet, s, place[s])
		}
	}
	t.Logf("%d games per line-up (standard, khishti 200, premia and moshla on):", games)
	t.Logf("strong vs three baseline:")
	mixedStrong.log(t, "strong")
	mixedBase.log(t, "baseline")
	t.Logf("normal vs three baseline:")
	mixedNormal.log(t, "normal")
	normalsBase.log(t, "baseline")
	t.Logf("four strong:")
	allStrong.log(t, "strong")
	t.Logf("four baseline:")
	allBase.log(t, "baseline")
	for _, c := range []struct {
		name  string
		moves []time.Duration
	}{{"strong", cpu}, {"normal", cpuNormal}} {
		sort.Slice(c.moves, func(i, j int) bool { return c.moves[i] < c.moves[j] })
		if n := len(c.moves); n > 0 {
			var sum time.Duration
			for _, d := range c.moves {
				sum += d
			}
			t.Logf("%s bot per move (%s): mean %v p50 %v p99 %v max %v over %d moves",
				c.name, threadcpu.Clock, sum/time.Duration(n), c.moves[n/2], c.moves[n*99/100], c.moves[n-1], n)
		}
	}
	if mixedStrong.score/float64(mixedStrong.games) <= mixedBase.score/float64(mixedBase.games) {
		t.Errorf("the strong bot does not outscore the baseline in mixed games")
	}
}
