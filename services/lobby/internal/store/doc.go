// Package store keeps the lobby's state in Redis and changes it atomically.
//
// Every table is a hash (summary, revision, password hash). A command is
// applied optimistically: the service loads the table and its revision,
// decides with the pure domain, and Commit writes the result in one Lua
// script that first checks the command was not applied already (result key)
// and that the revision is unchanged, and then — all or nothing — writes the
// table, its summary for readers (lobbyclient.SummaryKey), the public list, the next LobbyUpdate (version from a counter in the
// same script, so stream order and version order agree), a TableStarted, a
// forwarded table command and the command's result. A revision mismatch is
// ErrConflict and the service retries with fresh state; a repeated command
// gets the stored result. This is what makes several lobby replicas safe.
package store
