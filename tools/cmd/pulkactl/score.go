package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/pulka/pulka/pkg/classic"
	"github.com/pulka/pulka/pkg/scoring"
)

// maxScoreInput bounds what score reads: a whole game is about 2 KB of JSON,
// so anything near this is not a score sheet.
const maxScoreInput = 1 << 20

const scoreHelp = `usage: pulkactl score [--text [--names A,B,C,D] [--color]] < game.json

Reads a classic game's scoring settings and the bids and tricks of the hands
played so far, and writes the score sheet: JSON by default, a paper sheet with
--text. Missing settings take the defaults (standard, khishti 200, premia and
moshla on, rest docked):

  {"variant":"standard","khishti":"per-card","premia":true,"moshla":true,
   "restDocked":true,"hands":[{"bids":[1,0,0,1],"tricks":[1,0,0,0]}]}

Bad input exits 2 with a message naming the hand (counted from 1).

flags:
`

// runScore is "pulkactl score".
func runScore(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("score", flag.ContinueOnError)
	fs.SetOutput(stderr)
	text := fs.Bool("text", false, "write a paper sheet instead of JSON")
	names := fs.String("names", "", "the four players' names for --text, comma-separated, in seat order")
	color := fs.Bool("color", false, "with --text, colour the sheet with ANSI escapes (made green, missed amber, khishti red)")
	fs.Usage = func() {
		_, _ = io.WriteString(fs.Output(), scoreHelp)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &ExitError{Code: exitUsage} // the flag package has printed why
	}
	if fs.NArg() > 0 {
		return usageError(fmt.Errorf("score: unexpected argument %q (the game is read from stdin)", fs.Arg(0)))
	}
	opts := textOptions{names: defaultNames(), color: *color}
	if *names != "" {
		parts := strings.Split(*names, ",")
		if len(parts) != classic.Seats {
			return usageError(fmt.Errorf("score: --names wants %d names, got %d", classic.Seats, len(parts)))
		}
		copy(opts.names[:], parts)
	}

	data, err := io.ReadAll(io.LimitReader(stdin, maxScoreInput+1))
	if err != nil {
		return fmt.Errorf("score: reading stdin: %w", err)
	}
	if len(data) > maxScoreInput {
		return usageError(fmt.Errorf("score: input larger than %d bytes", maxScoreInput))
	}
	sheet, err := scoreSheet(data)
	if err != nil {
		return usageError(fmt.Errorf("score: %w", err))
	}

	var out bytes.Buffer
	if *text {
		writeSheetText(&out, sheet, opts)
	} else {
		// One line of JSON: tools read it, and jq prints it for people.
		if err := json.NewEncoder(&out).Encode(sheet); err != nil {
			return fmt.Errorf("score: writing the sheet: %w", err)
		}
	}
	if _, err := stdout.Write(out.Bytes()); err != nil {
		return fmt.Errorf("score: writing the sheet: %w", err)
	}
	return nil
}

// scoreSheet parses the score command's input and builds its sheet.
func scoreSheet(data []byte) (scoring.Sheet, error) {
	settings, hands, err := parseScoreInput(data)
	if err != nil {
		return scoring.Sheet{}, err
	}
	return scoring.Build(settings, hands)
}

// parseScoreInput reads the score command's JSON: the scoring settings, each
// defaulting when absent, and the hands. It is strict (unknown fields and
// trailing data are errors) because a misspelt "restDocked" silently taking
// its default would give a wrong sheet. Hands are decoded one by one so that
// an error names the hand, and so that a hand with three or five seats is
// refused instead of being padded or cut to four.
func parseScoreInput(data []byte) (scoring.Settings, []scoring.HandResult, error) {
	in := struct {
		scoring.Settings
		Hands []json.RawMessage `json:"hands"`
	}{Settings: scoring.DefaultSettings()}
	if err := decodeStrict(data, &in); err != nil {
		return scoring.Settings{}, nil, err
	}
	hands := make([]scoring.HandResult, len(in.Hands))
	for i, raw := range in.Hands {
		var h struct {
			Bids   []int `json:"bids"`
			Tricks []int `json:"tricks"`
		}
		if err := decodeStrict(raw, &h); err != nil {
			return scoring.Settings{}, nil, &scoring.InputError{Hand: i, Err: err}
		}
		if len(h.Bids) != classic.Seats {
			return scoring.Settings{}, nil, &scoring.InputError{Hand: i, Err: fmt.Errorf(
				"%d bids, want one per seat (%d): %w", len(h.Bids), classic.Seats, scoring.ErrSeats)}
		}
		if len(h.Tricks) != classic.Seats {
			return scoring.Settings{}, nil, &scoring.InputError{Hand: i, Err: fmt.Errorf(
				"%d trick counts, want one per seat (%d): %w", len(h.Tricks), classic.Seats, scoring.ErrSeats)}
		}
		copy(hands[i].Bids[:], h.Bids)
		copy(hands[i].Tricks[:], h.Tricks)
	}
	return in.Settings, hands, nil
}

// errMalformed is any input that is not the JSON the command expects.
var errMalformed = errors.New("malformed input")

// decodeStrict decodes exactly one JSON value into v, refusing unknown fields
// and anything after the value.
func decodeStrict(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return fmt.Errorf("%w: no JSON given", errMalformed)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if se := (*json.SyntaxError)(nil); errors.As(err, &se) {
			return fmt.Errorf("%w: invalid JSON at byte %d: %w", errMalformed, se.Offset, err)
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: JSON ends too early", errMalformed)
		}
		return fmt.Errorf("%w: %w", errMalformed, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: data after the JSON value at byte %d", errMalformed, dec.InputOffset())
	}
	return nil
}
