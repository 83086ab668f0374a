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
