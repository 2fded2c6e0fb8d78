// Package connlimit bounds the WebSocket connections one client can hold on
// a gateway instance: counts per key (a player, a client address grouped as
// Group says) and a gauge of the process's file descriptors against its
// RLIMIT_NOFILE, so that new upgrades are shed before the process runs out
// and can no longer answer its players, its HTTP API or its probes; and a
// Listener that closes connections at accept past a harder line or over a
// per-address count, the floor for connections that never make a request.
package connlimit
