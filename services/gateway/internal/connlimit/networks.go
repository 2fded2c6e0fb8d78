package connlimit

import (
	"fmt"
	"net"
	"strings"
)

// Networks is a parsed list of addresses and networks, such as the trusted
// proxies. Parse it once at startup; Contains is then a plain scan.
type Networks []*net.IPNet

// ParseNetworks parses IPs (a host network each) and CIDRs. A bad entry is
// an error: a proxy silently dropped from the list would make every client
// behind it one address.
func ParseNetworks(entries []string) (Networks, error) {
	out := make(Networks, 0, len(entries))
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if ip := net.ParseIP(e); ip != nil {
			bits := 128
			if v4 := ip.To4(); v4 != nil {
				ip, bits = v4, 32
			}
			out = append(out, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
			continue
		}
		_, n, err := net.ParseCIDR(e)
		if err != nil {
			return nil, fmt.Errorf("connlimit: %q is neither an IP nor a CIDR", e)
		}
		out = append(out, n)
	}
	return out, nil
}

// Contains reports whether ip is in one of the networks.
func (ns Networks) Contains(ip net.IP) bool {
	if ip == nil {
		return false
	}
	for _, n := range ns {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// Strings are the networks in CIDR form.
func (ns Networks) Strings() []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.String()
	}
	return out
}
