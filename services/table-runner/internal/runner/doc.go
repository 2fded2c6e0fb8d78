// Package runner is the table-runner service: it owns live tables.
//
// Each table the assignment gives this runner has one goroutine that owns
// its table state (internal/table). A single shared reader (a streams.Tailer over every
// owned table's command stream, reading the streams whose bell rang) hands entries to the
// tables' bounded inboxes; a full inbox switches that table to catch-up
// (the reader stops following its stream; the table reads its backlog from
// Redis when it has room), so nothing is dropped and no table blocks
// another. A table sleeps until its next deadline (timer, bot, grace) and
// applies a tick then.
//
// Every step — the input and the events it caused — is appended to the
// table's event stream with a fenced append under the table's lease epoch,
// so the event stream is the log (internal/tablelog); a snapshot follows at
// every hand boundary. A new owner restores the snapshot, re-applies the
// inputs logged after it and resumes reading commands after the last
// command entry the log records.
//
// The runner also heartbeats into the Redis membership and, unless
// disabled, takes part in electing the pkg/assign Assigner that places new
// tables and moves the tables of dead runners. docs/table-runner.md
// describes the design.
package runner
