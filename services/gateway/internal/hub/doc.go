// Package hub is the gateway's fan-out: one reader per table per gateway
// instance (a streams.Tailer over the tables' event and sheet streams),
// shared by every local connection watching the table, each of which gets
// only the events its player may see.
//
// Who may see a seat's events depends on who holds the seat at that point of
// the table's history, so a feed folds the seating events of its table
// (visibility.Seats) from the first entry of the stream and remembers the
// seating after each change. A client resuming after event X is replayed
// the entries after X (streams.ReadAfter) with the seating as of X, while
// live entries that arrive meanwhile are held for it; the held entries the
// replay did not already cover follow, and then the client is live — no
// gap and no duplicate at the seam. Everything is derived from Redis, so a
// client may resume on any gateway instance.
package hub
