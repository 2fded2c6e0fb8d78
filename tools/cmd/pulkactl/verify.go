package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/pulka/pulka/pkg/fairdeal"
	"github.com/pulka/pulka/tools/record"
)

const verifyHelp = `usage: pulkactl verify [record.json]

Checks that every hand of a game record (docs/game-record.md) was dealt
fairly, as docs/fair-play.md specifies: for a table's game, each hand's
revealed server seed against the commitment published before the deal; then
the shuffle key from the server seed, the client seeds and the hand's
identity; then the hand re-dealt from that key and its moves replayed. It
prints one line per hand.

A local game (self play, the demo: a "seed" instead of a table's hands) is
not fair-dealt: verify refuses it ("not a fair-dealt record (local seed)",
exit 1), so that a table's record stripped of its hands cannot pass for a
verified one. -local replays a local game's deals from its seed instead.

Any mismatch (a seed that is not the committed one, a deal the moves do not
fit, a seed missing) exits 1 after the lines of the hands that held; a file
that is not a record exits 2.

flags:
`

// runVerify is "pulkactl verify".
func runVerify(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		_, _ = io.WriteString(fs.Output(), verifyHelp)
		fs.PrintDefaults()
	}
	local := fs.Bool("local", false, "accept a local game's record (dealt from its seed, not fair-dealt) and replay its deals")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return &ExitError{Code: exitUsage}
	}
	in, closeIn, err := recordInput("verify", fs, stdin)
	if err != nil {
		return err
	}
	defer closeIn()
	rec, err := record.Parse(in)
	if err != nil {
		if errors.Is(err, record.ErrDeal) { // a seed that is not even a seed: a mismatch
			return &ExitError{Code: exitFailure, Err: fmt.Errorf("verify: %w", err)}
		}
		return usageError(fmt.Errorf("verify: %w", err))
	}
	if !rec.Table() && !*local {
		return &ExitError{Code: exitFailure, Err: errors.New("verify: not a fair-dealt record (local seed); -local replays its deals")}
	}
	hands, err := record.Verify(rec)
	for _, h := range hands {
		how := "commitment ok"
		if h.Local {
			how = fmt.Sprintf("local deal of seed %d", rec.Seed)
		}
		if _, werr := fmt.Fprintf(stdout, "hand %d: %s, key %s, %d moves replayed\n", h.Index+1, how, fairdeal.Hex(h.Key), h.Moves); werr != nil {
			return werr
		}
	}
	if err != nil {
		var me *record.MoveError
		if errors.As(err, &me) {
			err = fmt.Errorf("hand %d does not replay from its seeds: %w", me.Hand+1, err)
		}
		return &ExitError{Code: exitFailure, Err: fmt.Errorf("verify: %w", err)}
	}
	_, err = fmt.Fprintf(stdout, "ok: %d hands verified, %d moves\n", len(hands), len(rec.Moves))
	return err
}
