// Package redistest starts a real, throw-away redis-server for tests and
// measurements.
//
// Every module's integration tests use it, so it stays small: one server per
// call on a free loopback port, no persistence unless asked for, its own
// temporary directory, and helpers to kill (SIGKILL) and restart it on the
// same port so that reconnect behaviour can be tested against the real
// thing rather than a mock.
package redistest
