// Package streams is Pulka's messaging layer on Redis streams: the only way
// services talk to each other.
//
// It provides
//   - key helpers that put every key of a table under one hash tag
//     ({t:<id>}) so that the same code runs on Redis Cluster;
//   - a Publisher (approximate MAXLEN retention per stream, pipelined
//     PublishBatch, and a Batcher that coalesces concurrent publishes);
//   - a consumer-group Consumer with at-least-once delivery over thousands of
//     streams from one loop (multi-key XREADGROUP batches, streams added and
//     removed at run time), reclaim of messages a dead consumer left pending
//     (XAUTOCLAIM), a dead-letter stream after a delivery limit, and removal
//     of dead consumers;
//   - a fan-out Tailer (XREAD, no group) and ReadAfter for "everything after
//     event X" with detection of trimmed history;
//   - Once / OnceScript: effects applied exactly once per message key over
//     at-least-once delivery (dedupe key and effect in one Lua script);
//   - Leases with monotonically increasing epochs and AppendFenced, which
//     appends only while the writer's epoch is current, checked atomically.
//
// Every entry carries the W3C trace context of its publisher; consumers
// continue that trace. Metrics use the OpenTelemetry metric API. Providers
// are options; the defaults are no-ops, so the package has no global state.
//
// See docs/streams.md for the key layout, the delivery guarantees and their
// limits.
package streams
