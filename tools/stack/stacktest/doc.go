// Package stacktest is the full-stack test harness: the one way tests start
// all of Pulka. e2e/, pulkactl's and pulka-local's tests use it.
//
// It builds pulka-local and every service binary (tools/stack.Services)
// once per test binary, with one go build at the repository root, and
// starts stacks in one of two ways:
//
//   - Start and New run each service process itself (tools/stack's plan:
//     the processes pulka-local would run, wired the same way) with a
//     redis-server of the stack's own (pkg/redistest) on free loopback
//     ports, for tests that look at a process — its log, its /metrics — or
//     kill, restart or add one (Stack.Start), or restart Redis; with
//     Options.Cluster the Redis is a multi-node Redis Cluster
//     (redistest.LaunchCluster) whose every node each service is given, and
//     Stack.RedisCluster fails a master over; a stack of no runners
//     (Options.Runners 0) leaves them to the test, which starts each with
//     Stack.StartRunner (the runner of a pod an operator created, with the
//     pod's environment, in the pod's network namespace), and
//     Stack.StartProgram runs a program that is not a service of the stack
//     (the operator) beside it;
//   - StartLocal and SharedLocal run pulka-local itself, which starts its
//     own Redis and services, for tests of what a person runs.
//
// Either waits until every process is ready, gives the test the gateway's
// URL (and the Redis and the processes, for Start), and tears everything
// down: a test's stack in t.Cleanup, a stack shared by the tests of a
// package by Main after them. Every process it starts has its own process
// group and, on Linux, is sent SIGTERM when the test binary dies, so none
// outlives a test binary killed by a time-out. Logs live in a temporary
// directory removed with the stack, kept (and printed) when a test failed
// or PULKA_E2E_KEEP_LOGS is set.
//
// Every stack lifts the gateway's per-address limits (all clients of a
// test come from 127.0.0.1); a test adds its own settings (Options.Settings,
// LocalOptions.Settings) by the names in pkg/envnames.
package stacktest
