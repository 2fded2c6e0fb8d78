package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/scoring"
	"github.com/pulka/pulka/tools/record"
)

const demoHelp = `usage: pulkactl demo [--seed S] [--variant standard|nines] [--record file]

Plays one whole classic game of four baseline bots and prints the score sheet
as it looks on paper. --record also writes the game record, which
'pulkactl replay' turns back into the same sheet.

flags:
`

// runDemo is "pulkactl demo".
func runDemo(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	seed := fs.Uint64("seed", 2026, "the game's seed")
	variant := fs.String("variant", "standard", "standard or nines")
	recordTo := fs.String("record", "", "also write the game record to this file")
	color := fs.Bool("color", false, "colour the sheet with ANSI escapes")
	fs.Usage = func() {
		_, _ = io.WriteString(fs.Output(), demoHelp)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &ExitError{Code: exitUsage}
	}
	v, err := classic.ParseVariant(*variant)
	if err != nil {
		return usageError(fmt.Errorf("demo: %w", err))
	}
	settings := scoring.DefaultSettings()
	settings.Variant = v
	bot := classic.Bot{}
	rec, err := record.PlayClassic(*seed, settings, [classic.Seats]record.ClassicPlayer{bot, bot, bot, bot})
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	rec.Players = []string{"Giorgi", "Ana", "Levan", "Nika"}
	res, err := record.Replay(rec)
	if err != nil {
		return fmt.Errorf("demo: the bots' own game does not replay: %w", err)
	}
	if *recordTo != "" {
		if err := writeRecordFile(*recordTo, rec); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	fmt.Fprintf(stdout, "Four baseline bots played classic joker (%s, seed %d, %d moves):\n\n", v, *seed, len(rec.Moves))
	return writeResult(stdout, rec, res, true, *color)
}
