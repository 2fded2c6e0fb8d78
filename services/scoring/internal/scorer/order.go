package scorer

import (
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/pulka/pulka/pkg/streams"
)

// tableIDField is ScoringInput.table_id's field number.
const tableIDField = 1

// OrderKey is the consumer's order key for HandsStream: the input's table.
// The one stream carries every table's inputs; ordered by stream (the
// consumer's default) they were handled one at a time, and under load a
// game's end waited behind every other table's hands — each input several
// round trips, each waiting for Redis's fsync with appendfsync always —
// for up to seconds before its standings went to the wallet. By table,
// tables run on all the workers at once while one table's inputs keep their
// order (which the scorer does not need, every step being idempotent in any
// order, but which spares it rebuilding a sheet for inputs not yet stored).
//
// It reads only the table id from the payload. An input it cannot read
// keeps its stream as key: the handler refuses it all the same.
func OrderKey(m streams.Message) string {
	b := m.Data
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return m.Stream
		}
		b = b[n:]
		if num == tableIDField && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return m.Stream
			}
			return string(v)
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return m.Stream
		}
		b = b[n:]
	}
	return m.Stream
}
