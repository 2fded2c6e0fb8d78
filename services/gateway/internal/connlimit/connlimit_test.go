package connlimit

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
)

func TestGroup_IPv6ByItsSlash64(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.7":            "192.0.2.7",
		"::ffff:192.0.2.7":     "192.0.2.7",
		"2001:db8:1:2:3:4:5:6": "2001:db8:1:2::/64",
		"2001:db8:1:2:ffff::1": "2001:db8:1:2::/64",
		"2001:db8:1:3::1":      "2001:db8:1:3::/64",
		"not an address":       "not an address",
	} {
		if got := Group(in); got != want {
			t.Errorf("Group(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCounter_LimitPerKeyAndRelease(t *testing.T) {
	c := NewCounter(2)
	if !c.Acquire("a") || !c.Acquire("a") {
		t.Fatal("within the limit refused")
	}
	if c.Acquire("a") {
		t.Fatal("over the limit accepted")
	}
	if !c.Acquire("b") {
		t.Fatal("another key refused")
	}
	c.Release("a")
	if !c.Acquire("a") {
		t.Fatal("a released place not given back")
	}
	c.Release("a")
	c.Release("a")
	c.Release("b")
	if c.Keys() != 0 {
		t.Fatalf("%d keys left after every release", c.Keys())
	}
}

func TestCounter_ConcurrentAcquiresNeverExceed(t *testing.T) {
	c := NewCounter(8)
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := 0
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if c.Acquire("p") {
				mu.Lock()
				got++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if got != 8 || c.Count("p") != 8 {
		t.Fatalf("%d acquired, count %d, want 8", got, c.Count("p"))
	}
}

func TestTooManyError_IsErrTooManyConnections(t *testing.T) {
	err := fmt.Errorf("ws: %w", &TooManyError{Scope: ScopeIP, Limit: 64})
	if !errors.Is(err, ErrTooManyConnections) {
		t.Fatal("not ErrTooManyConnections")
	}
}

func TestFDGauge_ShedsFromTheRatioCountingConnectionsSinceTheSample(t *testing.T) {
	live := 0
	g := &FDGauge{ratio: 0.9, live: func() int { return live },
		count: func() (int, error) { return 80, nil }, limit: func() (uint64, error) { return 100, nil }}
	g.Sample()
	if g.Overloaded() {
		t.Fatal("80 of 100 (threshold 90) shed")
	}
	live = 9 // nine upgrades since the sample
	if g.Overloaded() {
		t.Fatal("89 of 100 shed")
	}
	live = 10
	if !g.Overloaded() {
		t.Fatal("90 of 100 not shed")
	}
	g.limit = func() (uint64, error) { return 1000, nil } // raised on the running process
	g.Sample()
	if g.Overloaded() {
		t.Fatal("still shedding after the limit was raised")
	}
	g.count = func() (int, error) { return 0, errors.New("no /proc") }
	g.Sample()
	if g.Overloaded() || g.InUse() != -1 {
		t.Fatal("shedding on an unknown count")
	}
}

func TestFDGauge_ReadsThisProcess(t *testing.T) {
	g := NewFDGauge(0.9, func() int { return 0 })
	if n := g.InUse(); n <= 0 || g.Threshold() <= 0 || g.Overloaded() {
		t.Fatalf("in use %d, threshold %d, overloaded %v", n, g.Threshold(), g.Overloaded())
	}
}

// Every address of one /64 counts as one; any input is a key, never a panic.
func FuzzGroup(f *testing.F) {
	for _, s := range []string{"192.0.2.1", "2001:db8::1", "::ffff:10.0.0.1", "", "x", "fe80::1%eth0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g := Group(s)
		a := net.ParseIP(s)
		if a == nil {
			if g != s {
				t.Fatalf("Group(%q) = %q: a non-address is its own key", s, g)
			}
			return
		}
		if a.To4() == nil {
			other := make(net.IP, 16)
			copy(other, a)
			other[15] ^= 0xff // another address of the same /64
			if Group(other.String()) != g {
				t.Fatalf("%s and %s are in one /64 but grouped apart", a, other)
			}
		}
	})
}
