package main

import (
	"fmt"
	"io"
	"os"

	tablev1 "github.com/pulka/pulka/pkg/gen/pulka/table/v1"
	"github.com/pulka/pulka/pkg/wire"
	"github.com/pulka/pulka/tools/record"
	"github.com/pulka/pulka/tools/wsclient"
)

// gameRecorder keeps the events of one table a client receives, to write
// the game's record (play --record): every player holds the public events
// a record is made of (docs/game-record.md).
type gameRecorder struct {
	path, table string
	events      []*tablev1.Event
}

// add keeps fr when it is an event of the table.
func (g *gameRecorder) add(fr wsclient.Frame) {
	if g.path != "" && fr.Type == wire.TypeEvent && fr.Table == g.table && fr.Event != nil {
		g.events = append(g.events, fr.Event)
	}
}

// write writes the record of the events kept to the file, if one was asked
// for, and says so on out.
func (g *gameRecorder) write(out io.Writer) error {
	if g.path == "" {
		return nil
	}
	rec, err := record.FromEvents(g.events)
	if err != nil {
		return fmt.Errorf("play: the game's record: %w", err)
	}
	f, err := os.Create(g.path)
	if err != nil {
		return fmt.Errorf("play: %w", err)
	}
	if err := rec.Write(f); err != nil {
		_ = f.Close()
		return fmt.Errorf("play: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("play: %w", err)
	}
	_, err = fmt.Fprintf(out, "record of %d hands and %d moves written to %s (pulkactl verify %s)\n", len(rec.Hands), len(rec.Moves), g.path, g.path)
	return err
}
