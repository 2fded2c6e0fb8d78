// Package presence counts a player's live connections to a table across every
// gateway instance, so the gateway can tell the table when a seated player's
// last connection drops (away) and when the first one comes back (back).
//
// Each connection is a member of a sorted set per (table, player) whose score
// is the connection's expiry; connections refresh it while they live, so a
// gateway that dies without saying goodbye stops counting after the TTL.
//
// Counting stops, but nobody would tell the tables, so each gateway also
// beats (Beat) and lists its connections under its instance; the others
// sweep the connections of an instance whose beat lapsed (Sweep) and report
// away every player left with none.
package presence
