//go:build linux

package threadcpu

import (
	"runtime"
	"syscall"
	"time"
	"unsafe"
)

// clockThreadCPUTime is Linux's CLOCK_THREAD_CPUTIME_ID: the CPU time of the
// calling thread, in nanoseconds (getrusage counts in scheduler ticks, too
// coarse for a move).
const clockThreadCPUTime = 3

// Clock names what Now measures.
const Clock = "CPU time of the thread, CLOCK_THREAD_CPUTIME_ID"

// Now is the CPU time the calling goroutine's OS thread has used; with Lock
// the goroutine stays on one thread, so the difference around a move is that
// move's CPU, whatever else the machine runs.
func Now() time.Duration {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}

// Lock keeps the calling goroutine on its OS thread until the returned
// function is called.
func Lock() func() {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}
