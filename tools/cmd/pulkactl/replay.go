package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/pulka/pulka/tools/record"
)

const replayHelp = `usage: pulkactl replay [--text] [--color] [record.json]

Reads a whole game record (docs/game-record.md) from the file or stdin, checks
every move with the rules engine and prints the final score sheet (classic) or
match score (Japanese) as JSON, or with --text as a paper sheet.

An illegal move exits 1 naming the move, hand, trick, seat and rule; a record
that is not a record exits 2.

flags:
`

// runReplay is "pulkactl replay".
func runReplay(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	text := fs.Bool("text", false, "write a paper sheet instead of JSON")
	color := fs.Bool("color", false, "with --text, colour the sheet with ANSI escapes")
	fs.Usage = func() {
		_, _ = io.WriteString(fs.Output(), replayHelp)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &ExitError{Code: exitUsage}
	}
	in, closeIn, err := recordInput("replay", fs, stdin)
	if err != nil {
		return err
	}
	defer closeIn()

	rec, err := record.Parse(in)
	if err != nil {
		return usageError(fmt.Errorf("replay: %w", err))
	}
	res, err := record.Replay(rec)
	if err != nil {
		var me *record.MoveError
		if errors.As(err, &me) {
			return &ExitError{Code: exitFailure, Err: fmt.Errorf("replay: %w", err)}
		}
		return usageError(fmt.Errorf("replay: %w", err))
	}
	return writeResult(stdout, rec, res, *text, *color)
}

// replaySummary is the JSON of a replayed Japanese match.
type replaySummary struct {
	Game   record.Game `json:"game"`
	Over   bool        `json:"over"`
	Moves  int         `json:"moves"`
	Scores []int       `json:"scores"`
	Winner int         `json:"winner"`
	Target int         `json:"target"`
}

// writeResult prints a replayed (or self-played) game's outcome.
func writeResult(w io.Writer, rec *record.Record, res *record.Result, text, color bool) error {
	var out bytes.Buffer
	switch {
	case res.Sheet != nil && text:
		opts := textOptions{names: defaultNames(), color: color}
		if len(rec.Players) == len(opts.names) {
			copy(opts.names[:], rec.Players)
		}
		writeSheetText(&out, *res.Sheet, opts)
	case res.Sheet != nil:
		if err := json.NewEncoder(&out).Encode(res.Sheet); err != nil {
			return fmt.Errorf("writing the sheet: %w", err)
		}
	case text:
		fmt.Fprintf(&out, "Japanese joker to %d: %d – %d", rec.Japanese.Target, res.Scores[0], res.Scores[1])
		if res.Winner >= 0 {
			fmt.Fprintf(&out, ", seat %d wins", res.Winner+1)
		} else {
			out.WriteString(", match in progress")
		}
		out.WriteByte('\n')
	default:
		sum := replaySummary{Game: res.Game, Over: res.Over, Moves: res.Moves, Scores: res.Scores[:], Winner: res.Winner, Target: rec.Japanese.Target}
		if err := json.NewEncoder(&out).Encode(sum); err != nil {
			return fmt.Errorf("writing the result: %w", err)
		}
	}
	if _, err := w.Write(out.Bytes()); err != nil {
		return fmt.Errorf("writing the result: %w", err)
	}
	return nil
}

// writeRecordFile writes a game record to path.
func writeRecordFile(path string, rec *record.Record) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	return rec.Write(f)
}
