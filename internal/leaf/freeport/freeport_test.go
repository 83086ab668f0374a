package freeport

import (
	"net"
	"strconv"
	"testing"
)

// TestPortsDistinctAndFree: the ports given are distinct and can be
// listened on.
func TestPortsDistinctAndFree(t *testing.T) {
	ps, err := Ports(16)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ps {
		if seen[p] {
			t.Fatalf("port %d given twice in %v", p, ps)
		}
		seen[p] = true
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("port %d is not free: %v", p, err)
		}
		l.Close()
	}
}

// TestPortNeverTwice: the ports a process is given are distinct however
// many are asked for one call at a time. A caller asks for a collector's
// ports, and for its profiler's, before anything listens on them, and the
// kernel soon hands out a port just closed again: a port given twice made
// two listeners of one collector collide ("bind: address already in use").
func TestPortNeverTwice(t *testing.T) {
	seen := map[int]int{}
	for i := range 500 {
		p, err := Port()
		if err != nil {
			t.Fatal(err)
		}
		if j, ok := seen[p]; ok {
			t.Fatalf("port %d given at call %d and again at call %d", p, j, i)
		}
		seen[p] = i
	}
}
