// Package server assembles the gateway: the HTTP API and the web client
// (gin), the WebSocket endpoint, the table fan-out hub, the lobby client and
// the sheet reader, around one Redis client; and runs it inside the daemon
// shell (health, readiness, metrics, graceful shutdown).
package server
