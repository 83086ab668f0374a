// Package dayreport is a day of turns with their verdicts, read from the
// traces the collector wrote (OTLP JSON lines, one export request a line),
// and its renderings: the per-turn table, the day's summary (turns by cause
// and the "done" reading) and one JSON object per turn. `percause lines`
// prints them; the verdict page (internal/page/verdictpage) renders the same
// Day, from the verdict spans alone: a Turn is what its verdict says
// (TurnFromVerdict), a LinkChange what a pippa.link.status span says.
package dayreport

import (
	"sort"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// JudgedTurn is one turn judged: its readings from voice.turn and its verdict.
type JudgedTurn struct {
	Trace    string   `json:"trace"`
	Turn     int64    `json:"turn"`
	Link     string   `json:"link"`
	Cause    string   `json:"cause"` // "" when no verdict was found
	Causes   []string `json:"causes"`
	Evidence string   `json:"evidence"`
	Forced   string   `json:"forced,omitempty"`
	// The done reading's readings; nil when the turn did not report them.
	SpeechEndToPost *float64 `json:"speech_end_to_post,omitempty"`
	NotSent         *float64 `json:"not_sent,omitempty"`
	PoolResets      *int64   `json:"pool_resets,omitempty"`
	// Start orders the turns of a day (the voice.turn span's end).
	Start pcommon.Timestamp `json:"-"`

	// What the page shows besides (none of it in the JSON form, whose
	// fields are fixed): the phone's resource, the verdict's other
	// readings, and what rule 1 read of each unit that underran.
	Installation     string            `json:"-"`
	Launch           string            `json:"-"`
	Version          string            `json:"-"`
	Rules            string            `json:"-"`
	Outputs          []string          `json:"-"`
	Bluetooth        *bool             `json:"-"`
	PoolResetsBefore *int64            `json:"-"`
	Underruns        int64             `json:"-"`
	Silent           float64           `json:"-"`
	Underran         []Underrun        `json:"-"`
	Decided          pcommon.Timestamp `json:"-"`
}

// Underrun is one unit that underran, as the verdict's percause.underrun
// event gives it: the unit, its take, the take's need against the unit's
// cushion, and the cause rule 1 read.
type Underrun struct {
	Unit      int64
	Take      string
	Underruns int64
	Silent    float64
	Cushion   float64
	// Need is nil when the take never came.
	Need  *float64
	Cause string
}

// LinkChange is one change of the phone's lost-link status, as its
// pippa.link.status span gives it.
type LinkChange struct {
	Time         pcommon.Timestamp
	Trace        string
	Span         string
	Installation string
	Launch       string
	Status       string
	Previous     string
	Message      string
	Check        string
	// FailingFor and QuietFor are nil when not reported.
	FailingFor *float64
	QuietFor   *float64
}

// Day is the turns read, in the order they happened.
type Day struct {
	Turns []JudgedTurn
	// Links are the lost-link status changes read, in the order they
	// happened.
	Links []LinkChange
	// Broken counts lines of the traces file that could not be read.
	Broken int
}

// SortTurns orders turns as they happened: by time, then turn index, then
// trace.
func SortTurns(turns []JudgedTurn) {
	sort.Slice(turns, func(i, j int) bool {
		a, b := turns[i], turns[j]
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		if a.Turn != b.Turn {
			return a.Turn < b.Turn
		}
		return a.Trace < b.Trace
	})
}

// SortLinks orders link status changes as they happened.
func SortLinks(links []LinkChange) {
	sort.SliceStable(links, func(i, j int) bool {
		if links[i].Time != links[j].Time {
			return links[i].Time < links[j].Time
		}
		return links[i].Span < links[j].Span
	})
}
