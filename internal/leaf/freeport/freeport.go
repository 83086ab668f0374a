// Package freeport finds free TCP ports on loopback, for the collectors the
// commands and tests start. It imports nothing but the standard library, so
// the light tools (the load tool, the lab) can use it.
package freeport

import (
	"fmt"
	"net"
)

// Ports returns n distinct ports that were free on 127.0.0.1 a moment ago.
// Every listener stays open until all n are found, so no port is given twice.
func Ports(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// Port returns one port that was free on 127.0.0.1 a moment ago.
func Port() (int, error) {
	ps, err := Ports(1)
	if err != nil {
		return 0, err
	}
	return ps[0], nil
}
