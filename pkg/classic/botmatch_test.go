package classic_test

import (
	"flag"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/internal/threadcpu"
	"github.com/pulka/pulka/pkg/scoring"
)

// The match measures the bot levels in seeded self-play (docs/benchmarks.md,
// "Bots (issue 23)"): go test ./pkg/classic -run 'TestBotMatch$' -botmatch.games 10000 -v
var (
	matchGames    = flag.Int("botmatch.games", 0, "games per line-up in TestBotMatch (0: a short check)")
	matchRollouts = flag.Int("botmatch.rollouts", classic.StrongRollouts, "the strong bot's budget in TestBotMatch")
	matchLineups  = flag.String("botmatch.lineups", "mixed,normal,strong,baseline", "the line-ups TestBotMatch plays: mixed (strong + 3 baseline), normal (normal + 3 baseline), strong (4 strong), baseline (4 baseline)")
	matchWorkers  = flag.Int("botmatch.workers", 0, "games TestBotMatch plays at once (0: GOMAXPROCS); the figures do not depend on it")
)

// seatStats adds up what one kind of player did. Every field is a whole
// number (the placing in halves: ties share), so adding up the games in any
// order gives the same totals: the figures cannot depend on how many games
// ran at once.
type seatStats struct {
	games, hands, exact, khishti, premia int
	score                                int64
	halfPlaces                           int
	// By cards dealt: hands, khishti, and the khishti of a dealer that the
	// rule forced off a pass (the others' bids added up to the cards dealt).
	handsBy, khishtiBy, forcedBy [classic.MaxCards + 1]int
	// forced counts the hands where the seat was such a dealer.
	forced int
	// By how far the hand's four bids fell from the cards dealt (clamped to
	// ±maxSumOff, at [off+maxSumOff]): the seat's hands, and its exact ones.
	handsBySum, exactBySum [2*maxSumOff + 1]int
	// The seat's passes (bids of nothing), and those made.
	passes, passesMade int
}

// maxSumOff clamps how far the bids' sum strays from the cards dealt in
// seatStats: a sum one off is the closest the dealer's rule allows.
const maxSumOff = 3

func (s *seatStats) add(sheet *scoring.Sheet, seat int, halfPlace int, forced *[24][classic.Seats]bool) {
	s.games++
	s.score += int64(sheet.Total[seat])
	s.halfPlaces += halfPlace
	for h, r := range sheet.Hands {
		if forced[h][seat] {
			s.forced++
		}
		s.hands++
		s.handsBy[r.Cards]++
		off := -r.Cards
		for o := range classic.Seats {
			off += r.Bids[o]
		}
		off = min(max(off, -maxSumOff), maxSumOff) + maxSumOff
		s.handsBySum[off]++
		if r.Bids[seat] == 0 {
			s.passes++
		}
		switch r.Result[seat] {
		case scoring.ResultMade:
			s.exact++
			s.exactBySum[off]++
			if r.Bids[seat] == 0 {
				s.passesMade++
			}
		case scoring.ResultKhishti:
			s.khishti++
			s.khishtiBy[r.Cards]++
			if forced[h][seat] {
				s.forcedBy[r.Cards]++
			}
		}
	}
	for _, p := range sheet.Pulkas {
		if p.Premia[seat] > 0 {
			s.premia++
		}
	}
}

func (s *seatStats) merge(o *seatStats) {
	s.games += o.games
	s.hands += o.hands
	s.exact += o.exact
	s.khishti += o.khishti
	s.premia += o.premia
	s.score += o.score
	s.halfPlaces += o.halfPlaces
	for n := range s.handsBy {
		s.handsBy[n] += o.handsBy[n]
		s.khishtiBy[n] += o.khishtiBy[n]
		s.forcedBy[n] += o.forcedBy[n]
	}
	s.forced += o.forced
	for i := range s.handsBySum {
		s.handsBySum[i] += o.handsBySum[i]
		s.exactBySum[i] += o.exactBySum[i]
	}
	s.passes += o.passes
	s.passesMade += o.passesMade
}

func (s *seatStats) log(t *testing.T, name string) {
	t.Helper()
	if s.games == 0 {
		return
	}
	t.Logf("  %-8s exact bids %5.1f%%  khishti %4.2f%% of hands  premia %.2f/game  final score %6.0f  placing %.2f",
		name, 100*float64(s.exact)/float64(s.hands), 100*float64(s.khishti)/float64(s.hands),
		float64(s.premia)/float64(s.games), float64(s.score)/float64(s.games), float64(s.halfPlaces)/2/float64(s.games))
	var b strings.Builder
	forced := 0
	for n := 1; n <= classic.MaxCards; n++ {
		if s.handsBy[n] > 0 {
			fmt.Fprintf(&b, " %d:%.1f%%", n, 100*float64(s.khishtiBy[n])/float64(s.handsBy[n]))
		}
		forced += s.forcedBy[n]
	}
	t.Logf("  %-8s khishti by cards dealt%s", "", b.String())
	t.Logf("  %-8s forced off a pass (dealer, the others' bids add up to the cards) in %.2f%% of hands, %.0f%% of them a khishti: %d of the %d khishti, %.2f%% of hands; the rest %.2f%% of hands",
		"", 100*float64(s.forced)/float64(s.hands), 100*float64(forced)/float64(max(s.forced, 1)), forced, s.khishti,
		100*float64(forced)/float64(s.hands), 100*float64(s.khishti-forced)/float64(s.hands))
	b.Reset()
	for i, n := range s.handsBySum {
		if n > 0 {
			sign := "" // the clamped ends: this far off or more
			switch i {
			case 0:
				sign = "≤"
			case len(s.handsBySum) - 1:
				sign = "≥"
			}
			fmt.Fprintf(&b, " %s%+d: %.1f%% (%.1f%% exact)", sign, i-maxSumOff, pct(n, s.hands), pct(s.exactBySum[i], n))
		}
	}
	t.Logf("  %-8s the four bids less the cards, in hands (and the seat's exact bids there):%s", "", b.String())
	t.Logf("  %-8s passes %.1f%% of bids, %.1f%% of them made", "", pct(s.passes, s.hands), pct(s.passesMade, s.passes))
}

// matchTotals are the line-ups' figures.
type matchTotals struct {
	mixedStrong, mixedBase, mixedNormal, normalsBase, allStrong, allBase seatStats
}

func (m *matchTotals) merge(o *matchTotals) {
	m.mixedStrong.merge(&o.mixedStrong)
	m.mixedBase.merge(&o.mixedBase)
	m.mixedNormal.merge(&o.mixedNormal)
	m.normalsBase.merge(&o.normalsBase)
	m.allStrong.merge(&o.allStrong)
	m.allBase.merge(&o.allBase)
}

// matchConfig chooses what runMatches plays.
type matchConfig struct {
	games, rollouts int
	// workers play games at once (0: GOMAXPROCS).
	workers int
	// The line-ups to play: strong vs three baseline, normal vs three
	// baseline, four strong, four baseline.
	mixed, normal, strong, baseline bool
	// short plays the line-ups other than mixed only for the first four
	// games.
	short bool
	// progress, when set, is called (one call at a time) with the totals of
	// the games done so far every progressEvery games: a long run stopped
	// early still says what it measured.
	progress      func(done int, m *matchTotals)
	progressEvery int
}

// parseLineups sets cfg's line-ups from a comma list of their names.
func (cfg *matchConfig) parseLineups(list string) error {
	for _, name := range strings.Split(list, ",") {
		switch strings.TrimSpace(name) {
		case "mixed":
			cfg.mixed = true
		case "normal":
			cfg.normal = true
		case "strong":
			cfg.strong = true
		case "baseline":
			cfg.baseline = true
		default:
			return fmt.Errorf("-botmatch.lineups: %q (mixed, normal, strong, baseline)", name)
		}
	}
	return nil
}

// matchCPU is the CPU each timed decision took.
type matchCPU struct{ strong, normal []time.Duration }

// playMatch plays one standard game, returns its sheet (default settings:
// khishti 200, premia and moshla on), every seat's placing in halves (ties
// share) and which hands' dealer the rule forced off a pass. timed seats'
// decisions are appended to cpu.
func playMatch(seed uint64, players [classic.Seats]classic.Player, cpu *[]time.Duration, timed int) (scoring.Sheet, [classic.Seats]int, *[24][classic.Seats]bool, error) {
	var place [classic.Seats]int
	forced := new([24][classic.Seats]bool)
	g, err := classic.New(seed, classic.Settings{Variant: classic.Standard})
	if err != nil {
		return scoring.Sheet{}, place, forced, err
	}
	evs := make([]classic.Event, 0, 16)
	for !g.Over() {
		seat := g.ToMove()
		if g.Phase() == classic.PhaseBid && seat == g.Dealer() {
			rest := 0
			for o := range classic.Seats {
				if o != seat {
					rest += g.Bid(o)
				}
			}
			forced[g.HandIndex()][seat] = rest == g.CardsDealt()
		}
		start := threadcpu.Now()
		m, ok := players[seat].Choose(g, seat)
		if seat == timed && cpu != nil {
			*cpu = append(*cpu, threadcpu.Now()-start)
		}
		if !ok {
			return scoring.Sheet{}, place, forced, fmt.Errorf("seed %d: seat %d to move but its player says not", seed, seat)
		}
		if evs, err = g.Apply(m, evs[:0]); err != nil {
			return scoring.Sheet{}, place, forced, fmt.Errorf("seed %d: %w", seed, err)
		}
	}
	var hands []scoring.HandResult
	for _, r := range g.HandResults() {
		hands = append(hands, scoring.HandResult{Bids: r.Bids, Tricks: r.Tricks})
	}
	sheet, err := scoring.Build(scoring.DefaultSettings(), hands)
	if err != nil {
		return sheet, place, forced, err
	}
	for s := range classic.Seats {
		place[s] = 2
		for o := range classic.Seats {
			switch {
			case o == s:
			case sheet.Total[o] > sheet.Total[s]:
				place[s] += 2
			case sheet.Total[o] == sheet.Total[s]:
				place[s]++
			}
		}
	}
	return sheet, place, forced, nil
}

// playLineups plays game i of every line-up into m.
func playLineups(cfg matchConfig, i int, m *matchTotals, cpu *matchCPU) error {
	seed := uint64(i)*104729 + 11
	hero := i % classic.Seats
	strong := func(seed uint64) classic.Player {
		return classic.StrongBot{Seed: seed, Rollouts: cfg.rollouts}
	}
	var players [classic.Seats]classic.Player
	for s := range classic.Seats {
		players[s] = classic.Bot{}
	}
	// addAll adds a game of one line-up: the hero's seat to one side, the
	// others to the other.
	addAll := func(hs, others *seatStats, cpu *[]time.Duration, timed int) error {
		sheet, place, forced, err := playMatch(seed, players, cpu, timed)
		if err != nil {
			return err
		}
		for s := range classic.Seats {
			if s == hero {
				hs.add(&sheet, s, place[s], forced)
			} else {
				others.add(&sheet, s, place[s], forced)
			}
		}
		return nil
	}
	if cfg.mixed {
		players[hero] = strong(seed)
		if err := addAll(&m.mixedStrong, &m.mixedBase, &cpu.strong, hero); err != nil {
			return err
		}
	}
	if cfg.short && i >= 4 {
		return nil
	}
	if cfg.normal {
		players[hero] = classic.BotFor(classic.LevelNormal)
		if err := addAll(&m.mixedNormal, &m.normalsBase, &cpu.normal, hero); err != nil {
			return err
		}
	}
	if cfg.strong {
		for s := range classic.Seats {
			players[s] = strong(seed + uint64(s))
		}
		if err := addAll(&m.allStrong, &m.allStrong, nil, -1); err != nil {
			return err
		}
	}
	if cfg.baseline {
		for s := range classic.Seats {
			players[s] = classic.Bot{}
		}
		return addAll(&m.allBase, &m.allBase, nil, -1)
	}
	return nil
}

// runMatches plays cfg.games games of every line-up on cfg.workers
// goroutines. Games are independent and each is deterministic from its
// index, and the totals are sums of whole numbers, so the result does not
// depend on the workers or GOMAXPROCS (TestBotMatch_SameOnAnyNumberOfCores);
// only the CPU timings do.
func runMatches(cfg matchConfig) (matchTotals, matchCPU, error) {
	workers := cfg.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, cfg.games)
	var (
		next  atomic.Int64
		mu    sync.Mutex
		total matchTotals
		cpu   matchCPU
		first error
		wg    sync.WaitGroup
	)
	done := 0
	for range workers {
		wg.Go(func() {
			defer threadcpu.Lock()() // each decision timed on its own thread's clock
			var myCPU matchCPU
			var err error
			for err == nil {
				i := int(next.Add(1)) - 1
				if i >= cfg.games {
					break
				}
				var game matchTotals
				err = playLineups(cfg, i, &game, &myCPU)
				mu.Lock()
				total.merge(&game)
				if done++; cfg.progress != nil && cfg.progressEvery > 0 && done%cfg.progressEvery == 0 && done < cfg.games {
					cfg.progress(done, &total)
				}
				mu.Unlock()
			}
			mu.Lock()
			defer mu.Unlock()
			cpu.strong = append(cpu.strong, myCPU.strong...)
			cpu.normal = append(cpu.normal, myCPU.normal...)
			if err != nil && first == nil {
				first = err
			}
		})
	}
	wg.Wait()
	return total, cpu, first
}

// TestBotMatch plays the line-ups the issue asks for: the strong bot against
// three baseline bots (its seat rotating), four strong bots, and four
// baseline bots for reference. Without -botmatch.games it plays a few games
// and checks only the clearest goal: the strong bot outscores the baseline.
func TestBotMatch(t *testing.T) {
	cfg := matchConfig{games: *matchGames, rollouts: *matchRollouts, workers: *matchWorkers}
	if err := cfg.parseLineups(*matchLineups); err != nil {
		t.Fatal(err)
	}
	if cfg.games == 0 {
		cfg.short, cfg.games = true, 12
		if testing.Short() {
			cfg.games = 4
		}
		t.Logf("a short check; the measure: -botmatch.games 10000")
	}
	start := time.Now()
	if !cfg.short {
		cfg.progressEvery = max(cfg.games/20, 100)
		cfg.progress = func(done int, m *matchTotals) {
			var b strings.Builder
			if cfg.mixed {
				fmt.Fprintf(&b, "; strong + 3 baseline: strong %.1f%% exact, %.2f%% khishti, %.0f points vs the baseline's %.0f",
					pct(m.mixedStrong.exact, m.mixedStrong.hands), pct(m.mixedStrong.khishti, m.mixedStrong.hands),
					avg(m.mixedStrong.score, m.mixedStrong.games), avg(m.mixedBase.score, m.mixedBase.games))
			}
			if cfg.strong {
				fmt.Fprintf(&b, "; four strong: %.1f%% exact, %.2f%% khishti",
					pct(m.allStrong.exact, m.allStrong.hands), pct(m.allStrong.khishti, m.allStrong.hands))
			}
			t.Logf("after %d games (%v)%s", done, time.Since(start).Round(time.Second), b.String())
		}
	}
	m, cpu, err := runMatches(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d games per line-up (standard, khishti 200, premia and moshla on), %d at once, in %v:",
		cfg.games, min(orElse(cfg.workers, runtime.GOMAXPROCS(0)), cfg.games), time.Since(start).Round(time.Second))
	t.Logf("strong vs three baseline:")
	m.mixedStrong.log(t, "strong")
	m.mixedBase.log(t, "baseline")
	t.Logf("normal vs three baseline:")
	m.mixedNormal.log(t, "normal")
	m.normalsBase.log(t, "baseline")
	t.Logf("four strong:")
	m.allStrong.log(t, "strong")
	t.Logf("four baseline:")
	m.allBase.log(t, "baseline")
	for _, c := range []struct {
		name  string
		moves []time.Duration
	}{{"strong", cpu.strong}, {"normal", cpu.normal}} {
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
	if cfg.mixed && m.mixedStrong.score*int64(m.mixedBase.games) <= m.mixedBase.score*int64(m.mixedStrong.games) {
		t.Errorf("the strong bot does not outscore the baseline in mixed games")
	}
}

func pct(n, of int) float64 { return 100 * float64(n) / float64(max(of, 1)) }

func avg(sum int64, n int) float64 { return float64(sum) / float64(max(n, 1)) }

// orElse is a unless it is zero, else b.
func orElse(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// TestBotMatch_SameOnAnyNumberOfCores: the match's figures are the same
// whether its games run one at a time or several at once.
func TestBotMatch_SameOnAnyNumberOfCores(t *testing.T) {
	cfg := matchConfig{games: 6, rollouts: 8, short: true, mixed: true, normal: true, strong: true, baseline: true}
	if testing.Short() {
		cfg.games = 4
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	one, _, err := runMatches(cfg)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GOMAXPROCS(4)
	four, _, err := runMatches(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if one.mixedStrong.games != cfg.games || one.allStrong.games != 4*min(cfg.games, 4) {
		t.Fatalf("played %d mixed and %d strong seats, want %d and %d", one.mixedStrong.games, one.allStrong.games, cfg.games, 4*min(cfg.games, 4))
	}
	if one != four {
		t.Fatalf("one core:\n%+v\nfour cores:\n%+v", one, four)
	}
}
