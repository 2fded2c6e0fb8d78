// Package lobbyclient is what a gateway uses to talk to the lobby service:
//
//   - Client.Do sends a LobbyCommand on pulka:lobby:cmd and waits for its
//     LobbyCommandResult on this gateway instance's reply stream;
//   - View keeps a local copy of the public table list: it loads the lobby's
//     snapshot (a LobbyView) and then applies the LobbyUpdates of
//     pulka:{lobby}:view after its version, reloading when it sees a gap, and
//     tells subscribers what changed so they can push it to WebSocket
//     clients;
//   - Fetch reads any table's summary by id, private ones included (a
//     private table's id is its link);
//   - Match applies a TableFilter.
//
// The names of the lobby's streams and read models (its contract, see
// proto/pulka/lobby/v1/lobby.proto) are defined here and nowhere else; the
// lobby's working keys are its own. See docs/lobby.md for the protocol.
package lobbyclient
