// Package ports names what the gateway needs from the rest of Pulka — the
// lobby (commands with a reply, the cached table list) and the finished
// games' sheets — as small interfaces, so the HTTP and WebSocket layers are
// tested with in-memory fakes and wired to pkg/lobbyclient and pkg/scoringclient
// by the server package.
package ports
