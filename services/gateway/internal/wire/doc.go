// Package wire is the gateway's WebSocket protocol: the JSON frames a browser
// sends and receives (documented in docs/protocol.md), their validation, and
// their mapping to and from the pulka.table.v1 contracts.
//
// It is pure: no I/O, no clock, no randomness (command ids are passed in), so
// every frame a client can send is covered by table tests.
package wire
