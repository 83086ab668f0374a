// Package loopback tells whether a listener is reachable from this machine
// only: the one test behind "loopback unless configured" for the
// collector's listeners, the page and percause up's children.
package loopback

import (
	"net"
	"strings"

	"go.opentelemetry.io/collector/config/confignet"
)

// Host reports whether host (no port) names this machine only: localhost
// or a loopback address (an IPv6 zone is ignored). An empty host listens
// on every interface.
func Host(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Split(host, "%")[0])
	return ip != nil && ip.IsLoopback()
}

// Addr reports whether a listener's address is reachable from this machine
// only: a loopback host over TCP, or a Unix socket. An empty host
// (":4318") listens on every interface.
func Addr(a confignet.AddrConfig) bool {
	if a.Transport == confignet.TransportTypeUnix || a.Transport == confignet.TransportTypeUnixgram {
		return true
	}
	host, _, err := net.SplitHostPort(a.Endpoint)
	return err == nil && Host(host)
}
