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
//
// Around Plan, for Redis (docker-compose, the local mode):
//
//   - Heartbeats is the Redis Membership: runners Beat into a sorted set of
//     deadlines taken from the Redis server's clock, and Leave on a clean
//     stop;
//   - Store is the assignment: table → runner plus a set per runner, changed
//     by scripts that compare-and-set the current owner and check the
//     assigner's leader lease;
//   - Assigner is the loop: leader election (a streams lease), placing the
//     tables of the lobby's start stream with PlaceNew, and reconciling with
//     Plan, taking over each moved table's lease for its new owner so the old
//     owner is fenced first. It works with any Membership, so the operator can
//     run it too. Its passes come at least every interval and, besides, at
//     the soonest end of a live member's liveness (Member.LiveFor: its
//     heartbeat's deadline; NextExpiry) and on Wake;
//   - every placement and move rings the runners' bells (RunnerBell), so a
//     runner that watches its own (Store.Watch) opens a table moved to it
//     at once rather than at its next poll of its set.
//
// docs/table-runner.md describes the keys and the timing.
package assign
