//go:build !linux

package threadcpu

import "time"

var start = time.Now()

// Clock names what Now measures.
const Clock = "wall time"

// Now falls back to wall time where there is no per-thread CPU clock.
func Now() time.Duration { return time.Since(start) }

// Lock does nothing where Now is wall time.
func Lock() func() { return func() {} }
