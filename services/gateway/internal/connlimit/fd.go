package connlimit

import (
	"context"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/pulka/pulka/pkg/periodic"
)

// FDGauge tells whether the process is near its file-descriptor limit. It
// reads RLIMIT_NOFILE every interval (an operator may lower or raise it on a
// running process) and counts the descriptors in use (/proc/self/fd), and
// between counts adds the connections opened since the last one (live), so a
// burst of upgrades cannot overshoot a stale count.
//
// Counting is not cheap: the kernel makes up a directory entry per
// descriptor, about a microsecond each on an EPYC — 5 ms a count at 5,000
// connections, 6 % of a gateway's CPU at 1,000 moves/s when it counted every
// 250 ms (issue 24). So while the estimate is under half the threshold it
// counts only every recountEvery intervals; from there on, every interval.
// What the live term does not see between counts (Redis connections, files)
// is small against the half of the threshold left.
type FDGauge struct {
	ratio float64
	live  func() int
	count func() (int, error)
	limit func() (uint64, error)

	recountEvery int // intervals between counts while far from the threshold
	sinceCount   int // intervals since the last count; Run's goroutine only

	sampled   atomic.Int64 // descriptors in use at the last sample, -1: unknown
	liveThen  atomic.Int64 // live() at the last sample
	threshold atomic.Int64 // descriptors in use from which to shed
	hard      atomic.Int64 // … and from which to close at accept (Full)
}

// NewFDGauge sheds from ratio (e.g. 0.9) of the limit in use; live is the
// number of connections open now (ws.Server.Open).
func NewFDGauge(ratio float64, live func() int) *FDGauge {
	g := &FDGauge{ratio: ratio, live: live, count: openFDs, limit: nofile, recountEvery: 40}
	g.sampled.Store(-1)
	g.Sample()
	return g
}

// Sample counts the descriptors in use and reads the limit now.
func (g *FDGauge) Sample() {
	g.sinceCount = 0
	n, err := g.count()
	if err != nil || !g.relimit() {
		g.sampled.Store(-1) // unknown: never shed on a guess
		return
	}
	g.liveThen.Store(int64(g.live()))
	g.sampled.Store(int64(n))
}

// relimit reads the limit and sets the lines from it; false if it is unknown.
func (g *FDGauge) relimit() bool {
	lim, err := g.limit()
	if err != nil || lim == 0 {
		return false
	}
	g.threshold.Store(int64(float64(lim) * g.ratio))
	g.hard.Store(int64(float64(lim) * (1 + g.ratio) / 2))
	return true
}

// step is one interval of Run: the limit always, the count when the
// estimate is unknown or past half the threshold, or when recountEvery
// intervals have gone by.
func (g *FDGauge) step() {
	g.sinceCount++
	if n := g.InUse(); n < 0 || n >= g.threshold.Load()/2 || g.sinceCount >= g.recountEvery {
		g.Sample()
		return
	}
	if !g.relimit() {
		g.sampled.Store(-1)
	}
}

// Run reads the limit every interval, and counts as step says, until ctx
// ends.
func (g *FDGauge) Run(ctx context.Context, interval time.Duration) {
	periodic.Every(ctx, interval, func(context.Context) { g.step() })
}

// InUse estimates the descriptors in use now; -1 when unknown.
func (g *FDGauge) InUse() int64 {
	s := g.sampled.Load()
	if s < 0 {
		return -1
	}
	// Connections closed since the sample freed their descriptors too.
	return max(0, s+int64(g.live())-g.liveThen.Load())
}

// Overloaded reports whether new WebSocket upgrades should be shed.
func (g *FDGauge) Overloaded() bool {
	n := g.InUse()
	return n >= 0 && n >= g.threshold.Load()
}

// Full reports whether the process is past its hard line, halfway from the
// shedding threshold to the limit: new connections are closed at accept,
// so that what is left stays for the connections already open, Redis and
// the admin listener.
func (g *FDGauge) Full() bool {
	n := g.InUse()
	return n >= 0 && n >= g.hard.Load()
}

// Threshold is the descriptor count from which Overloaded holds.
func (g *FDGauge) Threshold() int64 { return g.threshold.Load() }

// HardLine is the descriptor count from which Full holds.
func (g *FDGauge) HardLine() int64 { return g.hard.Load() }

func openFDs() (int, error) {
	f, err := os.Open("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	for {
		names, err := f.Readdirnames(1024)
		n += len(names)
		if err != nil || len(names) == 0 {
			break
		}
	}
	return n - 1, nil // not counting the descriptor reading the directory
}

func nofile() (uint64, error) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, err
	}
	return r.Cur, nil
}
