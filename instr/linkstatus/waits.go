package linkstatus

import (
	"fmt"
	"strconv"
	"time"

	"github.com/percause/percause/instr/semconv"
)

// The arguments the waits' texts use.
const (
	ArgStage    Arg = "stage"     // the microphone's stage: semconv.StageSession, StageGrant or StageSocket
	ArgFor      Arg = "for"       // how long it has waited ("3 s"; "not sent": whole seconds, "20")
	ArgOthers   Arg = "others"    // other calls open on the waiting call's lane
	ArgProbe    Arg = "probe"     // what the bulk lane's own probe found: a semconv.Probe* value
	ArgProbeRTT Arg = "probe_rtt" // how long that probe took ("0.2 s")
)

// Times to visible of the waits, person-time. A wait shorter than its time
// never reaches the screen: a healthy microphone opens in well under a
// second, a healthy take's first byte comes in a fraction of one.
const (
	// DefaultMicOpeningVisible: "Opening the microphone…" shows once the
	// microphone has taken the wait rule's limit (1.5 s, where it feels
	// broken rather than slow), so the line names the stage exactly when
	// the turn's verdict will read the microphone as the wait.
	DefaultMicOpeningVisible = semconv.DefaultMicOpenLimit
	// DefaultVoiceLateVisible: "Getting her voice ready…" shows once the
	// turn's first take has had no audio byte for 3 s.
	DefaultVoiceLateVisible = 3 * time.Second
)

// The waits, registered like the link's warnings and shown on the same line
// (Monitor.Show and Monitor.Clear): each names what the phone is waiting
// on. The link's warnings outrank them (a lost link explains a wait), and
// each hides while the device is offline.
var (
	// StaleConnection: the lost link's last cause. A fresh connection
	// answers while the failing lane's kept-alive connection hangs; shown
	// while the pool heals, instead of "Checking why…" (Diagnose).
	StaleConnection = Register(&Warnable{
		Code: "stale-connection", Status: semconv.LinkStatusStaleConnection, Title: "Reconnecting this device",
		Text:      StaticText("Pippa is answering on a fresh connection; this device's open connections to her stopped answering. Opening fresh ones…"),
		DependsOn: []*Warnable{DeviceOffline},
		rank:      35,
	})
	// NotSent: the turn's post (what she said) is still on the phone,
	// waiting for a connection or for the engine to say it has the request
	// (instr/lanes counts a call as not sent after 2 s of that).
	NotSent = Register(&Warnable{
		Code: "not-sent", Status: semconv.LinkStatusNotSent, Title: "Not sent yet",
		Text: func(a Args) string {
			return fmt.Sprintf("Your words are still on this phone: %s.", NotSentText(arg(a, ArgFor), arg(a, ArgOthers)))
		},
		DependsOn: []*Warnable{DeviceOffline},
		rank:      70,
	})
	// MicOpening: the microphone takes long to open; the line names the
	// stage it is waiting for.
	MicOpening = Register(&Warnable{
		Code: "mic-opening", Status: semconv.LinkStatusMicOpening, Title: "Opening the microphone",
		Text:          micText,
		DependsOn:     []*Warnable{DeviceOffline},
		TimeToVisible: DefaultMicOpeningVisible,
		Changes:       []Arg{ArgStage},
		rank:          80,
	})
	// VoiceLate: the turn's first take has no audio yet. The line names what
	// a probe of the bulk lane itself found (the control lane answering
	// says nothing about a stale bulk connection).
	VoiceLate = Register(&Warnable{
		Code: "voice-late", Status: semconv.LinkStatusVoiceLate, Title: "Getting her voice ready",
		Text:          voiceText,
		DependsOn:     []*Warnable{DeviceOffline},
		TimeToVisible: DefaultVoiceLateVisible,
		Changes:       []Arg{ArgProbe},
		rank:          90,
	})
)

// NotSentText renders a not-sent wait the way the status line speaks: "not
// sent for 20s (4 other calls open)". seconds and others are numbers as
// text (a missing one reads "?").
func NotSentText(seconds, others string) string {
	calls := "calls"
	if others == "1" {
		calls = "call"
	}
	return fmt.Sprintf("not sent for %ss (%s other %s open)", seconds, others, calls)
}

// NotSentArgs are NotSent's arguments for a call waiting d (person-time)
// with others open on its lane.
func NotSentArgs(d time.Duration, others int) Args {
	return Args{ArgFor: strconv.FormatInt(int64(d/time.Second), 10), ArgOthers: strconv.Itoa(others)}
}

func micText(a Args) string {
	switch a[ArgStage] {
	case semconv.StageSession:
		return "Opening the microphone… waiting for the audio session."
	case semconv.StageGrant:
		return fmt.Sprintf("Opening the microphone… waiting for Pippa's listening grant (%s).", arg(a, ArgFor))
	case semconv.StageSocket:
		return "Opening the microphone… waiting for the listening socket."
	}
	return "Opening the microphone…"
}

func voiceText(a Args) string {
	const lead = "Getting her voice ready…"
	switch a[ArgProbe] {
	case semconv.ProbeAnswered:
		return fmt.Sprintf("%s Pippa is still making it (her audio connection answered in %s).", lead, arg(a, ArgProbeRTT))
	case semconv.ProbeNoAnswer:
		return lead + " This device's audio connection is not answering; opening a fresh one."
	case semconv.ProbeRestarting:
		return lead + " Pippa is restarting, back in a few seconds."
	case semconv.ProbeBusy:
		return lead + " This device's audio lane is busy; waiting for it to clear."
	}
	return lead
}

// ProbeSeconds renders a probe's round trip the way the line speaks it,
// to a tenth of a second ("0.2 s").
func ProbeSeconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// BulkFinding reads a probe of the bulk lane itself (its status, 0 when it
// did not answer) into a semconv.Probe* value.
func BulkFinding(status int) string {
	switch {
	case status == 0:
		return semconv.ProbeNoAnswer
	case Restarting(status):
		return semconv.ProbeRestarting
	}
	return semconv.ProbeAnswered
}
