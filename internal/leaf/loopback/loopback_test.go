package loopback

import (
	"testing"

	"go.opentelemetry.io/collector/config/confignet"
)

func TestAddr(t *testing.T) {
	for endpoint, want := range map[string]bool{
		"127.0.0.1:4318": true, "localhost:4318": true, "LocalHost:1": true, "[::1]:9465": true, "[::1%lo]:9465": true,
		"127.0.0.2:1": true, "0.0.0.0:4318": false, ":4318": false, "[::]:1": false, "192.0.2.7:4318": false,
		"example.com:4318": false, "127.0.0.1": false, "": false,
	} {
		if got := Addr(confignet.AddrConfig{Endpoint: endpoint, Transport: confignet.TransportTypeTCP}); got != want {
			t.Errorf("%q: %v, want %v", endpoint, got, want)
		}
	}
	if !Addr(confignet.AddrConfig{Endpoint: "/run/percause.sock", Transport: confignet.TransportTypeUnix}) {
		t.Error("a Unix socket is not loopback")
	}
}
