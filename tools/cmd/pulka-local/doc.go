// Command pulka-local runs all of Pulka on one machine, for development and
// for trying it out: `make run`.
//
// It starts Redis (a real redis-server on a free loopback port when one is
// installed, otherwise an embedded Redis-compatible server; or it uses the
// one -redis names), then every service as a child process from the bin
// directory — the lobby, scoring, the wallet, two table runners (so that a table can be
// seen moving when one is stopped) and the gateway on http://localhost:8080 —
// each with its own admin port and a session secret made for this run. It
// prints every service's log lines under its name, waits until each one's
// /readyz answers, and says what it started.
//
// Ctrl-C (or SIGTERM) stops the services gracefully (SIGTERM, then SIGKILL
// after -stop-timeout) and Redis, and exits 0. If a service ends by itself,
// the launcher stops everything and exits 1 naming it.
//
// docs/local.md describes it, and docker-compose.yml runs the same set of
// services in containers.
package main
