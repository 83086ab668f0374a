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
}

// Saturated reports whether the failing lane has every connection busy.
func (p Probes) Saturated() bool { return p.Limit > 0 && p.InFlight >= p.Limit }

// restarting reports a front that answers for an engine that is down.
func restarting(status int) bool { return status == 502 || status == 503 || status == 504 }

// Diagnose chooses the lost-link message from the probes, as a pure
// function: "Connection lost. Checking why…" until the probes are in, then
// exactly one of offline, restarting, saturated lane or unreachable — or
// nothing (OK) when the engine answers and the lane has room, since then the
// link is not lost.
//
// The order matters: an offline device explains everything after it; a
// front answering 502/503/504 is the engine restarting; an engine that
// answers anywhere is present, so a full lane is the client's own congestion
// and must never read as the engine's absence; only a device that is online
// and hears nothing at all is told the engine cannot be reached.
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
	case restarting(p.FrontStatus):
		return EngineRestarting, nil
	}
	answered := p.OtherAnswered || p.FrontStatus != 0
	switch {
	case answered && p.Saturated():
		return LaneSaturated, Args{ArgLane: p.Lane, ArgInFlight: strconv.Itoa(p.InFlight), ArgLimit: strconv.Itoa(p.Limit)}
	case answered:
		return nil, nil
	default:
		return Unreachable, nil
	}
}
