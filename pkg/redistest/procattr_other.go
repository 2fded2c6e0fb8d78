//go:build !linux

package redistest

import "syscall"

// procAttr gives the server its own process group: a Ctrl-C of `go test`
// must not race our Stop. (Only Linux can also tie the server's life to
// the test binary's.)
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
