//go:build !linux

package classic_test

import "time"

var start = time.Now()

// threadCPU falls back to wall time where there is no per-thread CPU clock.
func threadCPU() time.Duration { return time.Since(start) }

func lockThread() func() { return func() {} }

const cpuClock = "wall time"
