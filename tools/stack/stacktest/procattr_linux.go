package stacktest

import "syscall"

// procAttr puts a process in its own process group (a Ctrl-C of go test
// reaches the test binary, which stops its stacks in order) and has the
// kernel send it SIGTERM when the test binary dies without stopping it (a
// time-out's panic, kill -9), so no process outlives the tests.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
