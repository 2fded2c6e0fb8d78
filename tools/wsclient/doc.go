// Package wsclient is a Go client of the gateway (docs/protocol.md): the
// session calls of the HTTP API, the table actions of the lobby, and the
// WebSocket — join a table, send table commands with idempotency keys,
// receive decoded frames, follow the last event id of every joined table
// and, when asked to, reconnect and resume from it without gaps.
//
// It also holds Model, what one seat (or a watcher) knows of a table folded
// from the events it receives, with the legal moves of that seat and a
// baseline choice among them, so that programs (pulkactl play and load, the
// end-to-end tests) can play real games through the whole stack.
//
// The frames are the pulka.gateway.v1 messages generated from
// proto/pulka/gateway/v1 (binary protobuf, the pulka.v1.proto subprotocol),
// with pkg/wire's names and checks: the gateway and this client share one
// definition of the protocol.
package wsclient
