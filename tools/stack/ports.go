package stack

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"slices"
	"strconv"
)

// FreePorts returns n distinct free loopback ports, none of them in except
// (the gateway's port, chosen by the user or a test, which may be free just
// now because it was released a moment ago). All are held open until every
// one is found, so none is returned twice; another program may still take
// one before the service binds it, which the service then reports.
func FreePorts(n int, except ...int) ([]int, error) {
	ports := make([]int, 0, n)
	var held []net.Listener
	defer func() {
		for _, l := range held {
			_ = l.Close()
		}
	}()
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find a free port: %w", err)
		}
		held = append(held, l) // an excepted port stays held too: it is not drawn again
		if p := l.Addr().(*net.TCPAddr).Port; !slices.Contains(except, p) {
			ports = append(ports, p)
		}
	}
	return ports, nil
}

// PortOf is the port of a host:port address, or 0 when it has none.
func PortOf(addr string) int {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return 0
	}
	return p
}

// NewSecret makes a session secret for one stack: sessions do not outlive
// it, which is what a local run or a test wants (and no secret is ever
// written to disk).
func NewSecret() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("session secret: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}
