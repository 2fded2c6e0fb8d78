package connlimit

import (
	"errors"
	"fmt"
	"net"
	"sync"
)

// ErrTooManyConnections means a client already holds as many connections as
// it may (TooManyError says which limit). ErrOverloaded means the instance
// is near its file-descriptor limit and takes no new connection.
var (
	ErrTooManyConnections = errors.New("connlimit: too many connections")
	ErrOverloaded         = errors.New("connlimit: overloaded: near the file-descriptor limit")
)

// Scopes of TooManyError, in metrics and messages.
const (
	ScopePlayer = "player"
	ScopeIP     = "ip"
)

// TooManyError is a refused connection: Scope's limit of Limit is reached.
type TooManyError struct {
	Scope string
	Limit int
}

func (e *TooManyError) Error() string {
	return fmt.Sprintf("connlimit: at most %d connections per %s", e.Limit, e.Scope)
}

// Is makes errors.Is(err, ErrTooManyConnections) hold.
func (e *TooManyError) Is(target error) bool { return target == ErrTooManyConnections }

// Group is the key an address is counted under: an IPv4 address itself, an
// IPv6 address its /64 (one subscriber usually gets a whole /64, so single
// IPv6 addresses would be free for the taking). Anything else is its own key.
func Group(ip string) string {
	a := net.ParseIP(ip)
	if a == nil {
		return ip
	}
	if v4 := a.To4(); v4 != nil {
		return v4.String()
	}
	return (&net.IPNet{IP: a.Mask(net.CIDRMask(64, 128)), Mask: net.CIDRMask(64, 128)}).String()
}

// Counter counts holders per key, at most Limit each. The zero value is not
// usable; make one with NewCounter.
type Counter struct {
	limit int
	mu    sync.Mutex
	n     map[string]int
}

// NewCounter allows limit holders per key.
func NewCounter(limit int) *Counter { return &Counter{limit: limit, n: map[string]int{}} }

// Limit is the per-key limit.
func (c *Counter) Limit() int { return c.limit }

// Acquire takes a place for key; false when key already has Limit.
func (c *Counter) Acquire(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[key] >= c.limit {
		return false
	}
	c.n[key]++
	return true
}

// Release gives back a place Acquire took.
func (c *Counter) Release(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n[key] <= 1 {
		delete(c.n, key) // no entry outlives its last holder
		return
	}
	c.n[key]--
}

// Count is how many places key holds.
func (c *Counter) Count(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[key]
}

// Keys is how many keys hold a place.
func (c *Counter) Keys() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.n)
}
