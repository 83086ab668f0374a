package up

import "syscall"

// childAttr puts a child in a process group of its own and has the kernel
// send it SIGTERM if `up` dies without stopping it (a kill -9), so no
// child outlives it. The signal is tied to the thread that started the
// child; the Go runtime ends a thread only when a goroutine locked to it
// exits, which nothing in `up` does.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
