package linkstatus

import "strconv"

// Probes are the readings that choose the lost-link message.
type Probes struct {
	// Probed is true once the probes have completed; until then the line
	// says "Connection lost. Checking why…".
	Probed bool
	// DeviceOnline: the device has a usable network path.
	DeviceOnline bool
	// FrontStatus is the HTTP status the engine's front answered a probe on a
	// fresh connection with (0: no answer at all).
	FrontStatus int
	// OtherAnswered: the engine was heard recently on another lane (or a
	// fresh connection): streamed words, bulk bytes, any answer.
	OtherAnswered bool
	// Lane is the lane whose calls are failing; InFlight the calls open on it
	// and Limit its connections per host.
	Lane     string
	InFlight int
	Limit    int
	// PoolProbed: the failing lane's own pool was probed (a kept-alive
	// connection of it, not a fresh one), which is asked only once a fresh
	// connection answered and the lane has room; PoolStatus is what that
	// connection answered with (0: nothing within the probe's timeout).
	PoolProbed bool
	PoolStatus int
}

// Saturated reports whether the failing lane has every connection busy.
func (p Probes) Saturated() bool { return p.Limit > 0 && p.InFlight >= p.Limit }

// Restarting reports a front that answers for an engine that is down (502,
// 503 or 504).
func Restarting(status int) bool { return status == 502 || status == 503 || status == 504 }

// Diagnose chooses the lost-link message from the probes, as a pure
// function: "Connection lost. Checking why…" until the probes are in, then
// exactly one of offline, restarting, saturated lane, stale connection or
// unreachable — or nothing (OK) when the engine answers, the lane has room
// and its own connection answers too, since then the link is not lost.
//
// The order matters: an offline device explains everything after it; a
// front answering 502/503/504 is the engine restarting; an engine that
// answers anywhere is present, so a full lane is the client's own congestion
// and must never read as the engine's absence; a fresh connection answering
// while the lane's kept-alive connection hangs is a stale connection, which
// the pool's heal replaces; only a device that is online and hears nothing
// at all is told the engine cannot be reached
// (docs/decisions/0106-a-stale-connection-is-said.md).
func Diagnose(p Probes) Line {
	w, args := diagnose(p)
	if w == nil {
		return OK
	}
	return w.line(args)
}

func diagnose(p Probes) (*Warnable, Args) {
	switch {
	case !p.Probed:
		return ConnectionLost, nil
	case !p.DeviceOnline:
		return DeviceOffline, nil
	case Restarting(p.FrontStatus):
		return EngineRestarting, nil
	}
	answered := p.OtherAnswered || p.FrontStatus != 0
	switch {
	case answered && p.Saturated():
		return LaneSaturated, Args{ArgLane: p.Lane, ArgInFlight: strconv.Itoa(p.InFlight), ArgLimit: strconv.Itoa(p.Limit)}
	case p.FrontStatus != 0 && p.PoolProbed && p.PoolStatus == 0:
		return StaleConnection, nil
	case answered:
		return nil, nil
	default:
		return Unreachable, nil
	}
}
