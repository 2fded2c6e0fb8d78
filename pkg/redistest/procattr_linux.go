package redistest

import "syscall"

// procAttr gives the server its own process group (a Ctrl-C of `go test`
// must not race our Stop) and has the kernel send it SIGTERM when the test
// binary dies without stopping it (a -timeout panic), so no server outlives
// the tests.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
