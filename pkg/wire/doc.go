// Package wire is the gateway's WebSocket protocol (documented in
// docs/protocol.md) around its definition, proto/pulka/gateway/v1: the
// encodings a connection may speak (binary protobuf, or protobuf's JSON
// mapping), the checks of every client frame that the generated code cannot
// know (limits, required members: every client is hostile), the mapping of
// table commands to the pulka.table.v1 contract, and the server frames the
// gateway sends.
//
// Nothing here encodes or decodes by hand: frames are the generated
// pulka.gateway.v1 messages, written and read by the protobuf runtime. The
// gateway parses client frames and builds server frames with this package;
// Go clients (tools/wsclient, pulkactl play and load) use the same messages
// and names, so the two cannot drift apart.
//
// It is pure: no I/O, no clock, no randomness (command ids are passed in), so
// every frame a client can send is covered by table tests.
package wire
