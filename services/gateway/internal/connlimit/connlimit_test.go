package connlimit

import (
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
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
	first, second := c.Acquire("a"), c.Acquire("a")
	if !first || !second {
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
	if g.Overloaded() || g.Full() {
		t.Fatal("80 of 100 (threshold 90) shed")
	}
	live = 9 // nine upgrades since the sample
	if g.Overloaded() {
		t.Fatal("89 of 100 shed")
	}
	live = 10
	if !g.Overloaded() || g.Full() {
		t.Fatal("90 of 100: want shed, not full (95)")
	}
	live = 15
	if !g.Full() {
		t.Fatal("95 of 100 not full")
	}
	live = -20 // twenty closed since the sample
	if g.Overloaded() || g.InUse() != 60 {
		t.Fatalf("in use %d after closes, want 60 and no shedding", g.InUse())
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

// Counting /proc/self/fd costs a microsecond a descriptor: far from the
// threshold the gauge counts every recountEvery intervals, past half of it
// every interval, and it reads the limit every interval either way.
func TestFDGauge_CountsRarelyFarFromTheThresholdButReadsTheLimitEveryInterval(t *testing.T) {
	counts, inUse, lim := 0, 10, uint64(1000)
	g := &FDGauge{ratio: 0.9, live: func() int { return 0 }, recountEvery: 4,
		count: func() (int, error) { counts++; return inUse, nil },
		limit: func() (uint64, error) { return lim, nil }}
	g.Sample()
	for i := 1; i <= 8; i++ {
		g.step()
		if want := 1 + i/4; counts != want {
			t.Fatalf("after %d intervals far from the threshold (10 of 900): %d counts, want %d", i, counts, want)
		}
	}
	lim = 2000 // raised on the running process: read without a count
	g.step()
	if counts != 3 || g.Threshold() != 1800 {
		t.Fatalf("after the limit was raised: %d counts (want 3), threshold %d (want 1800)", counts, g.Threshold())
	}
	lim = 20 // lowered: threshold 18, and 10 in use is past half of it
	g.step()
	if g.Threshold() != 18 || g.Overloaded() {
		t.Fatalf("threshold %d (want 18), overloaded %v with 10 in use", g.Threshold(), g.Overloaded())
	}
	before := counts
	inUse = 18 // descriptors the live term does not see (Redis, files)
	for range 2 {
		g.step()
	}
	if counts != before+2 || !g.Overloaded() {
		t.Fatalf("%d counts in 2 intervals past half the threshold (want 2); overloaded %v with 18 of threshold 18", counts-before, g.Overloaded())
	}
	g.limit = func() (uint64, error) { return 0, errors.New("no getrlimit") }
	g.step()
	if g.Overloaded() || g.InUse() != -1 {
		t.Fatal("shedding on an unknown limit")
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

func TestListener_ClosesAtAcceptWhenFullOrOverTheAddressLimit(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var full atomic.Bool
	var refused []string
	var mu sync.Mutex
	l := &Listener{Listener: inner, Full: full.Load, PerIP: NewCounter(2),
		Refused: func(r string) { mu.Lock(); refused = append(refused, r); mu.Unlock() }}
	defer l.Close()
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	// closedByServer reports whether the server closed c at once.
	closedByServer := func(c net.Conn) bool {
		_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
		_, err := c.Read(make([]byte, 1))
		return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
	}
	a, b := dial(), dial()
	sa, sb := <-accepted, <-accepted
	if c := dial(); !closedByServer(c) {
		t.Fatal("a third connection from the address was not closed")
	}
	if l.Open() != 2 {
		t.Fatalf("open = %d, want 2", l.Open())
	}
	_ = sa.Close()
	_ = sa.Close() // twice: one place back only
	if c := dial(); closedByServer(c) {
		t.Fatal("a connection after one closed was refused")
	}
	<-accepted
	full.Store(true)
	_ = sb.Close()
	if c := dial(); !closedByServer(c) {
		t.Fatal("a connection while full was not closed")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(refused) != 2 || refused[0] != "ip" || refused[1] != "overloaded" {
		t.Fatalf("refusals %v", refused)
	}
	_, _ = a, b
}

func TestListener_ExemptAddressesAreNotCounted(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &Listener{Listener: inner, PerIP: NewCounter(1), Exempt: func(ip net.IP) bool { return ip.IsLoopback() }}
	defer l.Close()
	go func() {
		for {
			if _, err := l.Accept(); err != nil {
				return
			}
		}
	}()
	for range 3 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	deadline := time.Now().Add(2 * time.Second)
	for l.Open() != 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if l.Open() != 3 || l.PerIP.Keys() != 0 {
		t.Fatalf("open %d, counted addresses %d: a trusted proxy's connections are not limited", l.Open(), l.PerIP.Keys())
	}
}

func TestParseNetworks_RefusesBadEntriesAndMatchesHostsAndCIDRs(t *testing.T) {
	ns, err := ParseNetworks([]string{"10.0.0.1", " 192.168.0.0/16", "2001:db8::1", "fd00::/8"})
	if err != nil {
		t.Fatal(err)
	}
	for ip, want := range map[string]bool{"10.0.0.1": true, "10.0.0.2": false, "192.168.7.7": true,
		"2001:db8::1": true, "2001:db8::2": false, "fd12::1": true, "::ffff:10.0.0.1": true} {
		if got := ns.Contains(net.ParseIP(ip)); got != want {
			t.Errorf("Contains(%s) = %v, want %v", ip, got, want)
		}
	}
	if ns.Contains(nil) {
		t.Error("nil is contained")
	}
	for _, bad := range []string{"10.0.0", "proxy.local", "10.0.0.0/33", ""} {
		if _, err := ParseNetworks([]string{"10.0.0.1", bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// What one count of /proc/self/fd costs with a gateway's worth of sockets
// open (issue 24: why the gauge counts rarely far from its threshold).
func BenchmarkOpenFDs_5000(b *testing.B) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil || lim.Cur < 6000 {
		b.Skipf("RLIMIT_NOFILE %d: 5,000 descriptors do not fit", lim.Cur)
	}
	for range 2500 {
		r, w, err := os.Pipe()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = r.Close(); _ = w.Close() })
	}
	for b.Loop() {
		if n, err := openFDs(); err != nil || n < 5000 {
			b.Fatalf("%d descriptors, %v", n, err)
		}
	}
}
