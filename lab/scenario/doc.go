// Package scenario is the lab's table of scenarios: for every cause of
// docs/domain.md, the fault that produces it and the primary cause the verdict of
// each turn must name; plus the lost-link scenarios (the engine restarting,
// the device offline, a stale connection), whose expectation is the status
// message the phone records; the burst that shows the six-connection
// starvation on one shared pool and its absence with the lanes split; the
// waits (a slow microphone stage, her voice late), each a status line the
// phone must show exactly where its fault is injected; and dictated turns
// on Wi-Fi and LTE whose posts leave within the done reading's budget, or
// do not: held behind the phone's own downloads on a shared pool, or
// written into a stale connection.
//
// A scenario is data: the lab runner (package lab) applies each turn's
// switches to the engine, the fault proxy and the phone, runs the turn, and
// compares what came back with Expect.
package scenario
