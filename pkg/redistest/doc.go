// Package redistest starts a real, throw-away redis-server for tests and
// measurements.
//
// Every module's integration tests use it, so it stays small: one server per
// call on a free loopback port, no persistence unless asked for, its own
// temporary directory, and helpers to kill (SIGKILL) and restart it on the
// same port so that reconnect behaviour can be tested against the real
// thing rather than a mock.
//
// For Redis Cluster there are two shapes: WithCluster makes one server a
// one-node cluster owning every slot (it refuses cross-slot commands as a
// real cluster does, at the price of one process), and StartCluster /
// LaunchCluster form a real cluster of several masters, each with its
// replicas, one process per node, with MasterOf and Failover (kill a
// master, wait for its replica to take over) for fault tests.
package redistest
