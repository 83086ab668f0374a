package scenario

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/lab/faults"
	"github.com/percause/percause/lab/player"
)

// Missed is what a turn expects of its progress checks.
type Missed int

// Values of Missed.
const (
	MissedAny  Missed = iota // not judged
	MissedNone               // every check answered
	MissedSome               // at least one check missed its timeout
)

func (m Missed) String() string {
	return [...]string{"any", "none", "some"}[m]
}

// Expect is what a turn must show.
type Expect struct {
	// Cause is the primary cause the verdict must name ("" : not judged).
	Cause string
	// Link is a lost-link status the phone must have recorded during the
	// turn (a semconv.LinkStatus* value; "" : none required).
	Link string
	// Missed judges the turn's progress checks.
	Missed Missed
	// Waits are the wait lines (semconv.WaitStatuses) the phone must show
	// during the turn. The waits and the stale connection are held both
	// ways: each must show on the turns that expect it (in Waits, or in
	// Link for the stale connection) and never on any other.
	Waits []string
}

// Strict are the status lines a turn must show exactly when it expects
// them: the waits and the stale connection, the lines this lab shows only
// when their fault is injected.
var Strict = append([]string{semconv.LinkStatusStaleConnection}, semconv.WaitStatuses...)

// Shows reports whether the turn expects the status line s.
func (e Expect) Shows(s string) bool { return e.Link == s || slices.Contains(e.Waits, s) }

// String is the expectation as the demo prints it.
func (e Expect) String() string {
	var parts []string
	if e.Cause != "" {
		parts = append(parts, e.Cause)
	}
	if e.Link != "" {
		parts = append(parts, "link "+e.Link)
	}
	if e.Missed != MissedAny {
		parts = append(parts, "missed checks "+e.Missed.String())
	}
	if len(e.Waits) > 0 {
		parts = append(parts, "shows "+strings.Join(e.Waits, "+"))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

// Links of a turn.
const (
	LinkWifi = ""    // hotel Wi-Fi: the lab's link as it is
	LinkLTE  = "lte" // LTE: network.connection.type cell, subtype lte, with LTEShape
)

// LTEShape is an LTE link: 30 ms each way, 1.5 MB/s up. A turn on LTE gets
// it under its own shape's limits.
var LTEShape = faults.Shape{Latency: 0.03, Uplink: 1.5 * (1 << 20)}

// ShapeOf is the link's shape for the turn: its own, on LTE with LTEShape's
// latency and uplink where its own sets none.
func (t Turn) ShapeOf() faults.Shape {
	sh := t.Shape
	if t.Link == LinkLTE {
		if sh.Latency == 0 {
			sh.Latency = LTEShape.Latency
		}
		if sh.Uplink == 0 {
			sh.Uplink = LTEShape.Uplink
		}
	}
	return sh
}

// Lanes arrangements of the phone.
const (
	LanesSplit  = "split"  // control, bulk and the line stream apart (the fix)
	LanesShared = "shared" // one pool of six for everything (what starved control)
)

// Line is one unit of a reply: its words, and how long after the previous
// line the engine sends them (person-seconds).
type Line struct {
	Text  string
	After float64
}

// Turn is one voice turn and its switches. Zero values are a healthy turn.
type Turn struct {
	Expect Expect

	// Reply is what the engine says (default: DefaultReply).
	Reply []Line
	// LinesOpen keeps the turn's line stream open this long after its last
	// line (person-seconds): her words still streaming beside the takes.
	LinesOpen float64
	// Rate is the engine's synthesis rate against real time (0: healthy).
	Rate float64
	// FirstByte is the engine's delay to a take's first byte (0: healthy),
	// person-seconds.
	FirstByte float64
	// Shape is the link's bandwidth and latency while the turn runs.
	Shape faults.Shape
	// StaleAfterTakes makes every open connection stale once the turn's
	// takes have all arrived, while she reads.
	StaleAfterTakes bool
	// RestartFor stops the engine for this many person-seconds once the
	// turn's takes have all arrived (0: no restart).
	RestartFor float64
	// OfflineFor takes the device offline for this many person-seconds once
	// the turn's takes have all arrived (0: stays online).
	OfflineFor float64
	// Leak is a live-object kind the phone leaks one of this turn ("": none).
	Leak string
	// Bluetooth scripts a route change away from the earbuds and back while
	// she reads, and the listener's stutter mark.
	Bluetooth bool
	// Lanes is the phone's arrangement ("": LanesSplit). A turn whose
	// arrangement differs from the previous one's starts a new launch.
	Lanes string
	// Upload is the bytes of the microphone-rate copy posted with the turn
	// (0: DefaultUpload); it rides the bulk lane beside the takes.
	Upload int

	// Speech is how long she speaks, person-seconds (0: the phone's 3 s).
	// The turn starts from it: at its end (and the end-of-speech window)
	// the phone posts her recording, Speech seconds of 16 kHz 16-bit mono
	// PCM (32 KB/s: a minute is about 2 MB), over the link.
	Speech float64
	// Link is the network path: LinkWifi or LinkLTE.
	Link string
	// Session, Grant and Socket slow the microphone's stages by this many
	// person-seconds: the audio session's activation, the engine's
	// listening grant, the listening socket (0: healthy).
	Session, Grant, Socket float64
	// Media is how many downloads of the phone's own start as she begins to
	// speak, each streaming MediaFor person-seconds on the bulk lane.
	Media    int
	MediaFor float64
	// StaleWhileSpeaking makes every open connection stale halfway through
	// her speech, before her post.
	StaleWhileSpeaking bool
}

// Scenario is a named run of turns.
type Scenario struct {
	Name    string
	Summary string
	Turns   []Turn
	// EngineTelemetryLost cuts the engine's export: its takes are made and
	// streamed, but their spans never reach the collector.
	EngineTelemetryLost bool
}

// Defaults of a turn.
const (
	// DefaultUpload is the microphone-rate copy of a few seconds of speech.
	DefaultUpload = 256 << 10
	// audioBytes is one person-second of the take's audio.
	audioBytes = player.DefaultBytesPerSecond
)

// DefaultReply is a three-unit reply: 3.6 s, 6.0 s and 3.6 s of audio.
var DefaultReply = []Line{
	{Text: "The train leaves at nine from platform four."},
	{Text: "It reaches the coast a little after noon, in time for lunch by the harbour."},
	{Text: "Shall I remind you an hour before it leaves?"},
}

// longReply reads for about half a minute: long enough for two progress
// checks on stale connections to time out one after the other.
var longReply = []Line{
	{Text: "Here is the plan for tomorrow, starting with the morning."},
	{Text: "The train leaves at nine from platform four, so leave the hotel by half past eight."},
	{Text: "It reaches the coast a little after noon, in time for lunch by the harbour."},
	{Text: "In the afternoon the museum is open until five, and the walk along the cliffs takes an hour."},
	{Text: "The last train back leaves at seven, and I will remind you an hour before it does."},
}

// lateReply's later units come after the earlier ones have finished playing:
// her words were late (the pipeline), not the network.
var lateReply = []Line{
	{Text: "Let me look that up for you."},
	{Text: "The museum is open until five and the entry is twelve euros.", After: 6},
	{Text: "The cliffs walk starts right behind it.", After: 6},
}

// burstReply is a tool's result read in four units at once: four prepares
// and four take streams in the same second beside the turn's stream and the
// upload (docs/domain.md: one pool of six starves the progress check). Its
// 40.4 s of audio made at twice real time after burstFirstByte keep the take
// streams on their connections for 14 to 18 s (docs/queueing.md's model: 14
// to 30 s), with the line stream and the upload holding the other two.
//
// The starvation must not depend on when a check happens to be asked: a
// check answered just before the pool fills asks again 3.2 s later, and
// must still wait past its 5 s timeout. So the pool stays full for a whole
// check cycle (answer, rest, timeout: 8.2 s) plus burstMargin, which at
// the demo's scale is a wall second of scheduling slack on a loaded
// machine; TestBurstOutlastsACheckCycle holds the table to it.
var burstReply = []Line{
	{Text: words(20)},
	{Text: words(24)},
	{Text: words(27)},
	{Text: words(30)},
}

// The burst's switches: the engine's delay to each take's first byte and
// its rate (person-seconds; audio seconds per second of making), the upload
// and the link's uplink that keeps it on its connection, the time the line
// stream stays open after its last line; and the slack the starvation keeps
// beyond one check cycle.
const (
	burstFirstByte = 10.0
	burstRate      = 2.0
	burstUpload    = 2 << 20
	burstUplink    = 80 << 10
	burstLinesOpen = 30.0
	burstMargin    = 5.0
)

func words(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = "word"
	}
	return strings.Join(w, " ")
}

// All is the scenario table, in the order the demo runs it.
var All = []Scenario{
	{
		Name:    "healthy",
		Summary: "a healthy engine over a clean link, on Wi-Fi then on LTE: no rule fires",
		Turns: []Turn{
			{Expect: Expect{Cause: semconv.CauseNone, Missed: MissedNone}},
			{Expect: Expect{Cause: semconv.CauseNone, Missed: MissedNone}, Link: LinkLTE},
		},
	},
	{
		Name:    "network",
		Summary: "the LTE link carries audio slower than it plays (half the byte rate): underruns on takes made in time",
		Turns: repeat(2, Turn{
			Expect: Expect{Cause: semconv.CauseNetwork},
			Shape:  faults.Shape{Bandwidth: 0.5 * audioBytes},
			Link:   LinkLTE,
		}),
	},
	{
		Name:    "synthesis",
		Summary: "the engine makes audio at 0.3 of real time: underruns on takes that needed more than the cushion",
		Turns:   repeat(2, Turn{Expect: Expect{Cause: semconv.CauseSynthesis}, Rate: 0.3}),
	},
	{
		Name:    "bluetooth",
		Summary: "the route leaves the earbuds and comes back while she reads; the listener marks a stutter; no underrun",
		Turns: []Turn{
			{Expect: Expect{Cause: semconv.CauseNone}},
			{Expect: Expect{Cause: semconv.CauseBluetooth}, Bluetooth: true},
		},
	},
	{
		Name:    "leak",
		Summary: "the phone keeps one player per turn: state from the turn where three rises in a row are first seen",
		Turns: []Turn{
			{Expect: Expect{Cause: semconv.CauseNone}, Leak: semconv.LivePlayers},
			{Expect: Expect{Cause: semconv.CauseNone}, Leak: semconv.LivePlayers},
			{Expect: Expect{Cause: semconv.CauseNone}, Leak: semconv.LivePlayers},
			{Expect: Expect{Cause: semconv.CauseState}, Leak: semconv.LivePlayers},
			{Expect: Expect{Cause: semconv.CauseState}, Leak: semconv.LivePlayers},
		},
	},
	{
		Name:    "stale-pool",
		Summary: "kept-alive connections go stale while she reads: a check times out, a fresh connection answers and the pool's does not (\"Pippa is answering on a fresh connection…\"), the pool heals, the tally moves",
		Turns: []Turn{
			{Expect: Expect{Cause: semconv.CauseNone}},
			{Expect: Expect{Cause: semconv.CausePool, Link: semconv.LinkStatusStaleConnection, Missed: MissedSome}, StaleAfterTakes: true, Reply: longReply},
			{Expect: Expect{Cause: semconv.CauseNone}},
		},
	},
	{
		Name:    "late-words",
		Summary: "the reply's later units are queued after the previous one ended, on LTE: negative leads",
		Turns:   repeat(2, Turn{Expect: Expect{Cause: semconv.CauseWait}, Reply: lateReply, Link: LinkLTE}),
	},
	{
		Name:    "engine-restart",
		Summary: "the engine restarts while she reads; its front answers 503: \"Pippa is restarting\"",
		Turns: []Turn{{
			Expect:     Expect{Link: semconv.LinkStatusEngineRestarting, Missed: MissedSome},
			RestartFor: 12, Reply: longReply,
		}},
	},
	{
		Name:    "offline",
		Summary: "the device goes offline while she reads: \"This device is offline.\"",
		Turns: []Turn{{
			Expect:     Expect{Link: semconv.LinkStatusDeviceOffline, Missed: MissedSome},
			OfflineFor: 12, Reply: longReply,
		}},
	},
	{
		Name:    "lost-takes",
		Summary: "underruns on a slow link while the engine's telemetry never arrives: the verdict says which takes are missing",
		Turns: []Turn{{
			Expect: Expect{Cause: semconv.CauseUnknown},
			Shape:  faults.Shape{Bandwidth: 0.5 * audioBytes},
		}},
		EngineTelemetryLost: true,
	},
	{
		Name:    "burst",
		Summary: "four take streams, the upload and the line stream fill one shared pool of six and the check starves; with the lanes split it never waits",
		Turns: []Turn{
			{Expect: Expect{Missed: MissedSome, Waits: []string{semconv.LinkStatusVoiceLate}}, Lanes: LanesShared, Rate: burstRate, FirstByte: burstFirstByte,
				Reply: burstReply, LinesOpen: burstLinesOpen, Upload: burstUpload, Shape: faults.Shape{Uplink: burstUplink}},
			{Expect: Expect{Cause: semconv.CauseNone, Missed: MissedNone, Waits: []string{semconv.LinkStatusVoiceLate}}, Lanes: LanesSplit, Rate: burstRate, FirstByte: burstFirstByte,
				Reply: burstReply, LinesOpen: burstLinesOpen, Upload: burstUpload, Shape: faults.Shape{Uplink: burstUplink}},
		},
	},
	{
		Name:    "slow-mic",
		Summary: "the microphone waits 2.5 s on one stage a turn (the audio session, the engine's listening grant, the listening socket): \"Opening the microphone…\" names it",
		Turns: []Turn{
			{Expect: Expect{Cause: semconv.CauseWait, Waits: []string{semconv.LinkStatusMicOpening}}, Session: slowStage},
			{Expect: Expect{Cause: semconv.CauseWait, Waits: []string{semconv.LinkStatusMicOpening}}, Grant: slowStage},
			{Expect: Expect{Cause: semconv.CauseWait, Waits: []string{semconv.LinkStatusMicOpening}}, Socket: slowStage},
		},
	},
	{
		Name:    "voice-late",
		Summary: "the engine takes 6 s to a take's first byte: \"Getting her voice ready…\", and the bulk lane's own probe answers, so Pippa is still making it",
		Turns:   []Turn{{Expect: Expect{Cause: semconv.CauseNone, Waits: []string{semconv.LinkStatusVoiceLate}}, FirstByte: 6}},
	},
	{
		Name:    "dictation",
		Summary: "she dictates for half a minute on Wi-Fi (a 0.9 MB post): it leaves within the end-of-speech window",
		Turns:   []Turn{{Expect: Expect{Cause: semconv.CauseNone}, Speech: 30}},
	},
	{
		Name:    "dictation-lte",
		Summary: "she dictates for a minute on LTE (a 1.8 MB post at 1.5 MB/s up): it leaves within the end-of-speech window plus the upload",
		Turns:   []Turn{{Expect: Expect{Cause: semconv.CauseNone}, Speech: 60, Link: LinkLTE}},
	},
	{
		Name: "held-post",
		Summary: "six downloads of the phone's own fill one shared pool while she dictates: her post waits behind them (\"not sent for …\"), over the done reading's budget; " +
			"with the lanes split it leaves at once and the takes wait on the busy bulk lane instead (\"Getting her voice ready…\")",
		Turns: []Turn{
			{Expect: Expect{Cause: semconv.CauseNone, Waits: []string{semconv.LinkStatusNotSent}}, Lanes: LanesShared, Speech: heldSpeech, Media: heldMedia, MediaFor: heldMediaFor},
			{Expect: Expect{Cause: semconv.CauseNone, Waits: []string{semconv.LinkStatusVoiceLate}}, Lanes: LanesSplit, Speech: heldSpeech, Media: heldMedia, MediaFor: heldMediaFor},
		},
	},
	{
		Name:    "stale-post",
		Summary: "the kept-alive connection goes stale while she dictates: her post is written into it and never arrives (\"not sent for …\") until it is posted again on a fresh one",
		Turns:   []Turn{{Expect: Expect{Cause: semconv.CauseNone, Waits: []string{semconv.LinkStatusNotSent}}, Speech: 6, StaleWhileSpeaking: true}},
	},
}

// The waits' switches: a microphone stage slow enough for the wait rule and
// its line (over 1.5 s); a dictation held behind a pool's
// worth of the phone's own downloads that end about 8 s after she stops: the
// post's "not sent" line shows about 4 s after her end of speech, so the
// downloads must outlast it by a margin a busy machine keeps (ending at 5 s,
// two of six had ended when a CI run's line showed).
const (
	slowStage    = 2.5
	heldSpeech   = 10.0
	heldMedia    = 6
	heldMediaFor = heldSpeech + 8
)

func repeat(n int, t Turn) []Turn {
	ts := make([]Turn, n)
	for i := range ts {
		ts[i] = t
	}
	return ts
}

// Names lists the scenarios in table order.
func Names() []string {
	ns := make([]string, len(All))
	for i, s := range All {
		ns[i] = s.Name
	}
	return ns
}

// Lookup returns the named scenario, or every scenario for "all".
func Lookup(name string) ([]Scenario, error) {
	if name == "all" {
		return All, nil
	}
	for _, s := range All {
		if s.Name == name {
			return []Scenario{s}, nil
		}
	}
	ns := Names()
	sort.Strings(ns)
	return nil, fmt.Errorf("scenario: no scenario %q (have: all, %s)", name, strings.Join(ns, ", "))
}

// Validate reports the first thing in the scenario that cannot be run.
func (s Scenario) Validate() error {
	if s.Name == "" {
		return fmt.Errorf("scenario: no name")
	}
	if len(s.Turns) == 0 {
		return fmt.Errorf("scenario %s: no turns", s.Name)
	}
	for i, t := range s.Turns {
		if err := t.validate(); err != nil {
			return fmt.Errorf("scenario %s, turn %d: %w", s.Name, i+1, err)
		}
	}
	return nil
}

func (t Turn) validate() error {
	if t.Expect.Cause != "" && !contains(semconv.Causes, t.Expect.Cause) {
		return fmt.Errorf("expected cause %q is not one of %v", t.Expect.Cause, semconv.Causes)
	}
	if t.Expect.Link != "" && !contains(semconv.LinkStatuses, t.Expect.Link) {
		return fmt.Errorf("expected link status %q is not one of %v", t.Expect.Link, semconv.LinkStatuses)
	}
	if t.Leak != "" && !contains(semconv.LiveKinds, t.Leak) {
		return fmt.Errorf("leaked kind %q is not one of %v", t.Leak, semconv.LiveKinds)
	}
	switch t.Lanes {
	case "", LanesSplit, LanesShared:
	default:
		return fmt.Errorf("lanes %q is not %s or %s", t.Lanes, LanesSplit, LanesShared)
	}
	if t.Rate < 0 || t.FirstByte < 0 || t.RestartFor < 0 || t.OfflineFor < 0 || t.Upload < 0 || t.LinesOpen < 0 {
		return fmt.Errorf("negative rate, restart, offline or upload")
	}
	if t.Speech < 0 || t.Session < 0 || t.Grant < 0 || t.Socket < 0 || t.Media < 0 || t.MediaFor < 0 {
		return fmt.Errorf("negative speech, microphone stage or media")
	}
	if t.Link != LinkWifi && t.Link != LinkLTE {
		return fmt.Errorf("link %q is not wifi (\"\") or %s", t.Link, LinkLTE)
	}
	for _, w := range t.Expect.Waits {
		if !contains(semconv.WaitStatuses, w) {
			return fmt.Errorf("expected wait %q is not one of %v", w, semconv.WaitStatuses)
		}
	}
	if err := t.Shape.Validate(); err != nil {
		return err
	}
	for i, l := range t.Reply {
		if strings.TrimSpace(l.Text) == "" || l.After < 0 {
			return fmt.Errorf("reply line %d: empty or negative delay", i+1)
		}
	}
	return nil
}

func contains(set []string, v string) bool {
	for _, s := range set {
		if s == v {
			return true
		}
	}
	return false
}
