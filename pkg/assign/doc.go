// Package assign decides which table-runner owns which table.
//
// The decision is one pure function, Plan, over a snapshot of the runner
// pool (Members) and the current ownership (Assignments). Where the members
// come from is behind the Membership interface: Redis heartbeats for
// docker-compose and the local mode, Kubernetes pods for the operator. The
// same Plan runs in both, so a table migrates for the same reasons and to the
// same place whoever drives it.
//
// Rules Plan follows:
//   - a table whose owner is not a live, ready member is orphaned and moves;
//   - a table whose owner is draining moves too (drain before termination);
//   - new and orphaned tables go to the least-loaded live member that is
//     neither draining nor full, ties broken by member ID so the result is
//     deterministic;
//   - a table that has a healthy owner never moves (no rebalancing churn: a
//     migration costs a snapshot restore, so Plan only moves what must move).
package assign
