// Package wire is the JSON protocol of the gateway's WebSocket: the frames a
// client sends and receives (documented in docs/protocol.md), their
// validation, and their mapping to and from the pulka.table.v1 contracts.
//
// It is the one definition both sides share: the gateway parses client
// frames and writes server frames with it, and Go clients (tools/wsclient,
// pulkactl play and load) use the same names, types and card notation, so
// the two cannot drift apart.
//
// It is pure: no I/O, no clock, no randomness (command ids are passed in), so
// every frame a client can send is covered by table tests.
package wire
