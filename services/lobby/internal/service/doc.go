// Package service is the lobby service: it consumes pulka:lobby:cmd as a
// member of the "lobby" consumer group, applies each command with the pure
// domain and commits the effect with the store (exactly once per
// command_id), answers on the sender's reply stream, and keeps the LobbyView
// snapshot fresh. It holds no state of its own between commands, so any
// number of replicas (and several consumers per replica) can run at once.
package service
