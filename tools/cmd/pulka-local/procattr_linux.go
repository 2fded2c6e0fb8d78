package main

import "syscall"

// childProcAttr puts a child in its own process group (a terminal's Ctrl-C
// reaches only the launcher, which stops the children in order) and has the
// kernel send it SIGTERM if the launcher dies without stopping it (kill -9),
// so no service outlives the launcher.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
