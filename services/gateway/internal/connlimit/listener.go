package connlimit

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// Listener guards a listener before any HTTP is read: it closes at once a
// new connection while the process is past its hard descriptor line, or
// from an address that already holds PerIP connections. The WebSocket
// shedding (503) comes earlier and is what clients see; this is the floor
// under it, for connections that never make a request: without it a flood
// of bare TCP connections takes the last descriptors, and then even the
// admin port's /readyz cannot be accepted.
type Listener struct {
	net.Listener
	// Full, when set and true, closes new connections at once.
	Full func() bool
	// PerIP, when set, bounds the open connections of one address
	// (Group); Exempt addresses (trusted proxies, which carry many
	// clients) are not counted.
	PerIP  *Counter
	Exempt func(net.IP) bool
	// Refused, when set, is told of every connection closed at accept,
	// with the reason ("overloaded" or "ip"), before it is closed: whoever
	// sees the close (a client, a test) can count on the refusal being
	// recorded already.
	Refused func(reason string)

	open atomic.Int64
}

// Open is how many accepted connections are open (hijacked ones included,
// until they close).
func (l *Listener) Open() int { return int(l.open.Load()) }

// Accept returns the next connection the guards let through.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.Full != nil && l.Full() {
			l.refused("overloaded")
			_ = c.Close()
			continue
		}
		key := ""
		if l.PerIP != nil {
			ip := addrIP(c.RemoteAddr())
			if ip != nil && (l.Exempt == nil || !l.Exempt(ip)) {
				key = Group(ip.String())
				if !l.PerIP.Acquire(key) {
					l.refused("ip")
					_ = c.Close()
					continue
				}
			}
		}
		l.open.Add(1)
		return &trackedConn{Conn: c, l: l, key: key}, nil
	}
}

func (l *Listener) refused(reason string) {
	if l.Refused != nil {
		l.Refused(reason)
	}
}

func addrIP(a net.Addr) net.IP {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return nil
	}
	return net.ParseIP(host)
}

// trackedConn gives its place back when closed (once).
type trackedConn struct {
	net.Conn
	l    *Listener
	key  string
	once sync.Once
}

func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.open.Add(-1)
		if c.key != "" {
			c.l.PerIP.Release(c.key)
		}
	})
	return err
}

// ReadFrom keeps the TCP connection's fast path (sendfile for the web
// client's files) through the wrapper.
func (c *trackedConn) ReadFrom(r io.Reader) (int64, error) { return io.Copy(c.Conn, r) }

// CloseWrite passes a half-close through (net/http uses it when it can).
func (c *trackedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
