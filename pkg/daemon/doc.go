// Package daemon is the shell every Pulka service runs in, so that a
// service's main is a few lines and every service starts, reports its health
// and stops the same way.
//
// Main (for a main function) and Run (for tests and the local mode, which
// runs several services in one process) do, in order:
//
//   - read the configuration from flags whose defaults come from environment
//     variables (Flags, Base, Config) and validate it;
//   - set up logs, traces and metrics (pkg/telemetry);
//   - connect to Redis (one node, or a cluster when several addresses are
//     given or -redis-cluster is set; a cluster client reloads the slot map
//     every second, so it finds a failed-over master's replica within a
//     second of its promotion);
//   - serve the admin endpoints on their own port: /healthz (the process is
//     alive), /readyz (every readiness check passes and the service is not
//     shutting down; Redis PING is always one of the checks) and /metrics;
//   - run the service until SIGINT or SIGTERM (Main) or until the context is
//     cancelled (Run), then shut down in reverse order of start-up: report
//     not-ready, wait the drain delay so load balancers notice, cancel the
//     service's context and wait for it to drain, run the service's shutdown
//     hooks (last registered first), stop the admin server, close Redis and
//     flush telemetry — all bounded by the shutdown timeout.
//
// Errors are returned, never turned into an exit: only Main's caller (the
// main function) exits, with the code Main returns.
package daemon
