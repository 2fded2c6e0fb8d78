// Package e2e holds the end-to-end tests of the Pulka services: real
// redis-server, real service processes (gateway, lobby, scoring, two
// table-runners) built from this repository, real WebSocket and HTTP clients.
// Everything is in the _test.go files; docs/e2e.md says what each test proves,
// how to run one and how long they take.
package e2e
