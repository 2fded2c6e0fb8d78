package scorer

import (
	"github.com/pulka/pulka/pkg/scoringclient"
	"github.com/pulka/pulka/pkg/streams"
)

// OrderKey is the consumer's order key for HandsStream: the input's table.
// The one stream carries every table's inputs; ordered by stream (the
// consumer's default) they were handled one at a time, and under load a
// game's end waited behind every other table's hands — each input several
// round trips, each waiting for Redis's fsync with appendfsync always —
// for up to seconds before its standings went to the wallet. By table,
// tables run on all the workers at once while one table's inputs keep their
// order (which the scorer does not need, every step being idempotent in any
// order, but which spares it rebuilding a sheet for inputs not yet stored).
// An input whose table it cannot read keeps its stream as key: the handler
// refuses it all the same.
func OrderKey(m streams.Message) string {
	if t, ok := scoringclient.TableOf(m.Data); ok {
		return t
	}
	return m.Stream
}
