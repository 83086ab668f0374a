// Package faults holds the lab's fault injectors that live on the wire: a
// loopback TCP proxy between the phone and the engine that shapes bandwidth
// and latency, stalls every byte for a while, lets kept-alive connections go
// stale (they stay open and swallow what is written to them, as a pooled
// connection does after the network changed under it), silently holds new
// connections (an engine that cannot be reached), and takes the device
// offline (connections refused and cut).
//
// The proxy works on bytes, not on requests: what it does to the phone's calls
// is whatever TCP and HTTP make of it, as on a real link. Durations and rates
// are given in person-seconds and scaled to wall time by the proxy's time
// scale, like every other time in the lab.
//
// The faults that are not on the wire (a synthesis rate below real time, a
// Bluetooth route change, a leaked object, words queued late, an engine
// restart) are switches of the engine and the phone; see package scenario.
package faults
