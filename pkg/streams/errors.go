package streams

import "errors"

var (
	// ErrStaleEpoch means the writer's lease epoch is no longer the current
	// one (another owner took the table, or the lease expired): the fenced
	// append or renewal was refused and nothing was written.
	ErrStaleEpoch = errors.New("streams: stale lease epoch")

	// ErrLeaseHeld means another owner holds a live lease.
	ErrLeaseHeld = errors.New("streams: lease held by another owner")

	// ErrTrimmed means entries after the requested ID were already removed by
	// retention: the reader missed events and must resynchronise from a
	// snapshot instead of replaying.
	ErrTrimmed = errors.New("streams: entries after the requested ID were trimmed")

	// ErrClosed means the publisher/batcher was closed.
	ErrClosed = errors.New("streams: closed")
)
