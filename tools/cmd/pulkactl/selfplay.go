package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/japanese"
	"github.com/pulka/pulka/pkg/scoring"
)

const selfplayHelp = `usage: pulkactl selfplay [--game classic|japanese] [--games N] [--seed S] [--vs random]

Plays N seeded games of bots on one goroutine and prints games per second and a
summary. By default every seat is the baseline bot; --vs random seats the
random-legal bot in every other seat (classic: seats 2 and 4; Japanese: seat
2), and the summary compares the two.

flags:
`

// runSelfplay is "pulkactl selfplay".
func runSelfplay(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("selfplay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	game := fs.String("game", "classic", "classic or japanese")
	games := fs.Int("games", 1000, "how many games to play")
	seed := fs.Uint64("seed", 1, "seed of the first game; game i uses seed+i")
	vs := fs.String("vs", "", `"random" seats the random-legal bot in every other seat`)
	variant := fs.String("variant", "standard", "classic variant: standard or nines")
	target := fs.Int("target", 21, "Japanese target score: 11, 15, 21 or 31")
	fs.Usage = func() {
		_, _ = io.WriteString(fs.Output(), selfplayHelp)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &ExitError{Code: exitUsage}
	}
	if *games < 1 {
		return usageError(fmt.Errorf("selfplay: --games must be at least 1"))
	}
	if *vs != "" && *vs != "random" {
		return usageError(fmt.Errorf("selfplay: --vs %q: only \"random\" is known", *vs))
	}
	switch *game {
	case "classic":
		v, err := classic.ParseVariant(*variant)
		if err != nil {
			return usageError(fmt.Errorf("selfplay: %w", err))
		}
		return selfplayClassic(ctx, stdout, v, *games, *seed, *vs == "random")
	case "japanese":
		s := japanese.Settings{Target: *target}
		if err := s.Validate(); err != nil {
			return usageError(fmt.Errorf("selfplay: %w", err))
		}
		return selfplayJapanese(ctx, stdout, s, *games, *seed, *vs == "random")
	}
	return usageError(fmt.Errorf("selfplay: --game %q: want classic or japanese", *game))
}

// classicStats sums what the summary reports, per kind of player.
type classicStats struct {
	seats, hands, exact, khishti int
	points                       int
}

func (s *classicStats) rate(n int) float64 {
	if s.hands == 0 {
		return 0
	}
	return 100 * float64(n) / float64(s.hands)
}

func selfplayClassic(ctx context.Context, w io.Writer, v classic.Variant, games int, seed uint64, vsRandom bool) error {
	settings := scoring.DefaultSettings()
	settings.Variant = v
	var stats [2]classicStats // 0 baseline, 1 random
	var moves int
	events := make([]classic.Event, 0, 16)
	hands := make([]scoring.HandResult, 0, 24)
	start := time.Now()
	for i := range games {
		if err := ctx.Err(); err != nil {
			return err
		}
		s := seed + uint64(i)
		g, err := classic.New(s, classic.Settings{Variant: v})
		if err != nil {
			return err
		}
		var players [classic.Seats]classic.Player
		kind := [classic.Seats]int{}
		for seat := range players {
			players[seat] = classic.Bot{}
			// Rotate which seats are random so no kind always sits after the dealer.
			if vsRandom && (seat+i)%2 == 1 {
				players[seat] = classic.NewRandomBot(s*4 + uint64(seat))
				kind[seat] = 1
			}
		}
		for !g.Over() {
			seat := g.ToMove()
			m, ok := players[seat].Choose(g, seat)
			if !ok {
				return fmt.Errorf("selfplay: game %d: seat %d made no move", i, seat)
			}
			if _, err := g.Apply(m, events[:0]); err != nil {
				return fmt.Errorf("selfplay: game %d: %w", i, err)
			}
			moves++
		}
		hands = hands[:0]
		for _, h := range g.HandResults() {
			hands = append(hands, scoring.HandResult{Bids: h.Bids, Tricks: h.Tricks})
		}
		sheet, err := scoring.Build(settings, hands)
		if err != nil {
			return fmt.Errorf("selfplay: game %d: %w", i, err)
		}
		for seat := range classic.Seats {
			st := &stats[kind[seat]]
			st.seats++
			st.points += sheet.Total[seat]
			for _, row := range sheet.Hands {
				st.hands++
				switch row.Result[seat] {
				case scoring.ResultMade:
					st.exact++
				case scoring.ResultKhishti:
					st.khishti++
				}
			}
		}
	}
	elapsed := time.Since(start)
	fmt.Fprintf(w, "classic %s: %d games, %d moves in %v: %.0f games/s, %.0f moves/s\n",
		v, games, moves, elapsed.Round(time.Millisecond), float64(games)/elapsed.Seconds(), float64(moves)/elapsed.Seconds())
	for k, name := range []string{"baseline bot", "random bot"} {
		st := stats[k]
		if st.seats == 0 {
			continue
		}
		fmt.Fprintf(w, "  %-12s exact bids %5.1f%%  khishti %5.1f%%  average final score %7.1f (%s)\n",
			name, st.rate(st.exact), st.rate(st.khishti), float64(st.points)/float64(st.seats),
			scoring.FormatPoints(st.points/st.seats))
	}
	return nil
}

func selfplayJapanese(ctx context.Context, w io.Writer, s japanese.Settings, games int, seed uint64, vsRandom bool) error {
	var wins [2]int   // by kind: 0 baseline, 1 random
	var bySeat [2]int // by seat
	var moves, hands int
	events := make([]japanese.Event, 0, 16)
	start := time.Now()
	for i := range games {
		if err := ctx.Err(); err != nil {
			return err
		}
		sd := seed + uint64(i)
		g, err := japanese.New(sd, s)
		if err != nil {
			return err
		}
		players := [japanese.Seats]japanese.Player{japanese.Bot{}, japanese.Bot{}}
		second := i % 2 // the random bot's seat alternates
		if vsRandom {
			players[second] = japanese.NewRandomBot(sd)
		}
		for !g.Over() {
			seat := g.ToMove()
			m, ok := players[seat].Choose(g, seat)
			if !ok {
				return fmt.Errorf("selfplay: match %d: seat %d made no move", i, seat)
			}
			if _, err := g.Apply(m, events[:0]); err != nil {
				return fmt.Errorf("selfplay: match %d: %w", i, err)
			}
			moves++
		}
		hands += g.Hand() + 1
		if w := g.Winner(); w >= 0 {
			bySeat[w]++
		}
		if g.Winner() == second {
			wins[1]++
		} else {
			wins[0]++
		}
	}
	elapsed := time.Since(start)
	fmt.Fprintf(w, "japanese to %d: %d matches (%d hands), %d moves in %v: %.0f matches/s, %.0f moves/s\n",
		s.Target, games, hands, moves, elapsed.Round(time.Millisecond), float64(games)/elapsed.Seconds(), float64(moves)/elapsed.Seconds())
	if vsRandom {
		fmt.Fprintf(w, "  baseline bot won %d (%.1f%%), random bot won %d\n", wins[0], 100*float64(wins[0])/float64(games), wins[1])
	} else {
		fmt.Fprintf(w, "  seat 1 won %d, seat 2 won %d\n", bySeat[0], bySeat[1])
	}
	return nil
}
