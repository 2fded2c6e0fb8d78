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
// the server. The protocol is documented in docs/protocol.md.
package ws
