// Package ws is the gateway's WebSocket endpoint (coder/websocket): it
// authenticates a connection (session cookie, bearer header or a first
// hello frame), checks the origin, bounds what a client may send (frame size,
// a token bucket, a strike count for refused frames) and what it may make the
// server hold (a bounded outbound queue: a client that cannot keep up is
// disconnected with 4008, never allowed to block anybody else), keeps the
// connection alive with pings, maps frames to table commands on the tables'
// command streams, and follows tables through the hub.
//
// Every refused frame gets an error frame; nothing a client sends can stop
// the server. What one client may hold is bounded too: sockets per player
// and per address (connlimit), a short hello deadline, new upgrades shed
// near the descriptor limit; a join only of a table the lobby knows, a
// command only from a player seated at the table (gate.go); a socket lives
// no longer than its session (session.go). The protocol is documented in
// docs/protocol.md, the limits in docs/limits.md.
package ws
