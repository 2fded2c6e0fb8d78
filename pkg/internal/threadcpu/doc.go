// Package threadcpu measures the CPU time of one goroutine's work (a bot's
// move) on a shared machine: the calling thread's CPU clock, with the
// goroutine locked to its thread. The bots' measurements (pkg/classic,
// pkg/japanese) use it.
package threadcpu
