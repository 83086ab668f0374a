// Package freeport finds free TCP ports on loopback, for the collectors the
// commands and tests start. It imports nothing but the standard library, so
// the light tools (the load tool, the lab) can use it.
package freeport

import (
	"fmt"
	"net"
	"sync"
)

// Ports returns n distinct ports that were free on 127.0.0.1 a moment ago
// and that no earlier call in this process returned. Every listener stays
// open until all n are found, so no port is given twice in one call; a
// port an earlier call gave is held open too while the search goes on, so
// the kernel, which soon hands out a port just closed again, moves on to
// another. Callers ask for ports well before anything listens on them (a
// collector's, then its profiler's): without the memory two of them could
// be given the same port.
func Ports(n int) ([]int, error) {
	given.mu.Lock()
	defer given.mu.Unlock()
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		ls = append(ls, l)
		if p := l.Addr().(*net.TCPAddr).Port; !given.set[p] {
			ports = append(ports, p)
		}
	}
	for _, p := range ports {
		given.set[p] = true
	}
	return ports, nil
}

// given are the ports Ports returned in this process.
var given = struct {
	mu  sync.Mutex
	set map[int]bool
}{set: map[int]bool{}}

// Port returns one port that was free on 127.0.0.1 a moment ago.
func Port() (int, error) {
	ps, err := Ports(1)
	if err != nil {
		return 0, err
	}
	return ps[0], nil
}
