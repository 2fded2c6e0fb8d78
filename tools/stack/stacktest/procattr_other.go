//go:build unix && !linux

package stacktest

import "syscall"

// procAttr puts a process in its own process group, so a Ctrl-C of go test
// reaches the test binary, which stops its stacks in order. (Only Linux can
// also tie the process's life to the test binary's.)
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
