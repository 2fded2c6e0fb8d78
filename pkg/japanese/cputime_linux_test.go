//go:build linux

package japanese

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

// threadCPU returns the CPU time the calling goroutine's OS thread has used;
// lockThread keeps the goroutine on one thread, so the difference around a
// move is that move's CPU, whatever else the machine runs.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0
	}
	return time.Duration(ts.Nano())
}

func lockThread() func() {
	runtime.LockOSThread()
	return runtime.UnlockOSThread
}

const cpuClock = "CPU time of the thread, CLOCK_THREAD_CPUTIME_ID"
