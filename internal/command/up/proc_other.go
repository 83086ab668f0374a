//go:build !linux

package up

import "syscall"

// childAttr puts a child in a process group of its own. Without Linux's
// parent-death signal, a child of an `up` killed with SIGKILL keeps
// running; `up` prints every child's process ID for that case.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
