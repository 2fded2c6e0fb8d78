//go:build unix && !linux

package main

import "syscall"

// childProcAttr puts a child in its own process group, so a terminal's
// Ctrl-C reaches only the launcher, which stops the children in order.
// (Only Linux can also tie the child's life to the launcher's.)
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
