package linkstatus

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/percause/percause/instr/semconv"
)

// Code identifies a Warnable; it is stable (recorded as pippa.link.code).
type Code string

// Arg names one argument of a warning's text.
type Arg string

// Args are a warning's named arguments.
type Args map[Arg]string

// The arguments the registered texts use.
const (
	ArgCheck      Arg = "check"       // the failing check ("progress check")
	ArgFailingFor Arg = "failing_for" // how long it has failed ("16 s")
	ArgFailures   Arg = "failures"    // how many times in a row
	ArgLane       Arg = "lane"        // the saturated lane
	ArgInFlight   Arg = "in_flight"   // calls open on it
	ArgLimit      Arg = "limit"       // its connections per host
)

// Warnable is one condition the status line can show, registered once, in
// the manner of Tailscale's health package.
type Warnable struct {
	Code Code
	// Status is its pippa.link.status value.
	Status string
	Title  string
	// Text renders the message from named arguments.
	Text func(Args) string
	// Advice is shown with the message (only "cannot be reached" has one:
	// the tailnet advice).
	Advice string
	// DependsOn: while any of these is visible, this one is hidden (an
	// offline device hides "cannot be reached"; a saturated lane hides
	// "Reconnecting").
	DependsOn []*Warnable
	// TimeToVisible: shown only once it has been unhealthy this long
	// (person-time), so a blip never reaches the screen.
	TimeToVisible time.Duration
	// Changes are the arguments whose change is a change of the line,
	// recorded like a change of status: what a wait is on (the microphone's
	// stage), what its probe found. A change of the others (the seconds
	// waited) only updates the message shown.
	Changes []Arg
	// rank orders visible warnings: the lowest rank is the one the line shows.
	rank int
}

var (
	registryMu sync.Mutex
	registry   = map[Code]*Warnable{}
)

// Register adds w to the registry once. Registering a code twice is a
// programming error, reported when the package initializes.
func Register(w *Warnable) *Warnable {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[w.Code]; dup {
		panic(fmt.Sprintf("linkstatus: warnable %q registered twice", w.Code))
	}
	registry[w.Code] = w
	return w
}

// Warnables lists every registered warning, in the order the line prefers
// them.
func Warnables() []*Warnable {
	registryMu.Lock()
	defer registryMu.Unlock()
	out := make([]*Warnable, 0, len(registry))
	for _, w := range registry {
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].rank != out[j].rank {
			return out[i].rank < out[j].rank
		}
		return out[i].Code < out[j].Code
	})
	return out
}

// StaticText is a Text that needs no arguments.
func StaticText(s string) func(Args) string { return func(Args) string { return s } }

// Render returns the warning's message for args; a missing argument reads
// as "?" rather than failing.
func (w *Warnable) Render(args Args) string {
	if w.Text == nil {
		return w.Title
	}
	return w.Text(args)
}

func arg(a Args, k Arg) string {
	if v, ok := a[k]; ok && v != "" {
		return v
	}
	return "?"
}

// The tailnet advice: only "cannot be reached" carries it, since only there
// is the tailnet the likely culprit.
const TailnetAdvice = "Check that Tailscale is connected on this device and that the Pippa machine is online in the tailnet."

// The registered warnings. Messages are the ones docs/domain.md fixes.
var (
	// DeviceOffline: the device has no usable network path.
	DeviceOffline = Register(&Warnable{
		Code: "device-offline", Status: semconv.LinkStatusDeviceOffline, Title: "Offline",
		Text:          StaticText("This device is offline."),
		TimeToVisible: 2 * time.Second, // a Wi-Fi to LTE handover is not "offline"
		rank:          10,
	})
	// EngineRestarting: the engine's front answers 502, 503 or 504.
	EngineRestarting = Register(&Warnable{
		Code: "engine-restarting", Status: semconv.LinkStatusEngineRestarting, Title: "Pippa is restarting",
		Text:      StaticText("Pippa is restarting, back in a few seconds."),
		DependsOn: []*Warnable{DeviceOffline},
		rank:      20,
	})
	// LaneSaturated: the engine answers elsewhere while this lane is full —
	// the client's own congestion, never the engine's absence.
	LaneSaturated = Register(&Warnable{
		Code: "lane-saturated", Status: semconv.LinkStatusLaneSaturated, Title: "Busy on this device",
		Text: func(a Args) string {
			return fmt.Sprintf("Pippa is answering; this device's %s lane is busy (%s of %s calls open). Waiting for it to clear.",
				arg(a, ArgLane), arg(a, ArgInFlight), arg(a, ArgLimit))
		},
		DependsOn: []*Warnable{DeviceOffline},
		rank:      30,
	})
	// Unreachable: online, no answer from the engine on any path.
	Unreachable = Register(&Warnable{
		Code: "unreachable", Status: semconv.LinkStatusUnreachable, Title: "Pippa cannot be reached",
		Text:      StaticText("Pippa cannot be reached from this device."),
		Advice:    TailnetAdvice,
		DependsOn: []*Warnable{DeviceOffline},
		rank:      40,
	})
	// ConnectionLost: the first word of a lost link, while the probes run.
	ConnectionLost = Register(&Warnable{
		Code: "connection-lost", Status: semconv.LinkStatusConnectionLost, Title: "Connection lost",
		Text:      StaticText("Connection lost. Checking why…"),
		DependsOn: []*Warnable{DeviceOffline},
		rank:      50,
	})
	// ReconnectingWarnable: the Reconnecting verdict holds.
	ReconnectingWarnable = Register(&Warnable{
		Code: "reconnecting", Status: semconv.LinkStatusReconnecting, Title: "Reconnecting",
		Text: func(a Args) string {
			return fmt.Sprintf("Reconnecting: the %s has failed for %s (%s times in a row).",
				arg(a, ArgCheck), arg(a, ArgFailingFor), arg(a, ArgFailures))
		},
		DependsOn: []*Warnable{DeviceOffline, LaneSaturated},
		rank:      60,
	})
)

// lostLink are the warnings Diagnose chooses between.
var lostLink = []*Warnable{ConnectionLost, EngineRestarting, DeviceOffline, Unreachable, LaneSaturated, StaleConnection}

// Line is what the status line shows: one warning's message, or nothing.
type Line struct {
	// Status is the pippa.link.status value (semconv.LinkStatusOK: nothing shown).
	Status  string
	Code    Code
	Title   string
	Message string
	Advice  string
	// on is the warning's Changes arguments' values: a line whose on
	// differs is a change of the line.
	on string
}

// OK is the line when nothing is wrong.
var OK = Line{Status: semconv.LinkStatusOK}

func (w *Warnable) line(args Args) Line {
	l := Line{Status: w.Status, Code: w.Code, Title: w.Title, Message: w.Render(args), Advice: w.Advice}
	for _, a := range w.Changes {
		l.on += string(a) + "=" + args[a] + ";"
	}
	return l
}

// changed reports whether the line shown differs from prev in more than its
// message's seconds: another status, or what a wait is on.
func (l Line) changed(prev Line) bool { return l.Status != prev.Status || l.on != prev.on }

// String renders the line as shown, advice included.
func (l Line) String() string {
	if l.Advice == "" {
		return l.Message
	}
	return strings.TrimSpace(l.Message + " " + l.Advice)
}
