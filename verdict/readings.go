package verdict

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/instr/semconv"
)

// The readings are the only part of a span the processor keeps: what the rules
// read, already typed and checked, so a pending turn holds a few hundred bytes
// instead of its spans.

// MaxProblems bounds how many bad-input notes a turn keeps (the evidence names
// the first ones; a hostile trace cannot grow the state).
const MaxProblems = 8

// MaxUnits bounds how many units a turn keeps; a real turn reads tens.
const MaxUnits = 512

// MaxValueBytes bounds a string reading (a link, a take ID, a reason, a
// port kind): a longer one is bad input, so what a pending turn keeps, and
// stores, stays small and can always be read back.
const MaxValueBytes = 256

// MaxListLen bounds how many elements of a string array are read.
const MaxListLen = 64

// MaxLiveKinds bounds the live-count kinds a turn keeps (six are known).
const MaxLiveKinds = 32

// MaxRouteChanges bounds the route changes a turn keeps.
const MaxRouteChanges = 16

// TurnReadings is what the rules need from a voice.turn span.
type TurnReadings struct {
	SpanID   pcommon.SpanID
	Resource pcommon.Resource
	Index    int64
	Link     string

	Stutter      bool
	Bluetooth    bool
	BTOutput     string // the first Bluetooth output, for the evidence
	RouteChanges []RouteChange

	Live []LiveSeries

	PoolResets, PoolBefore       int64
	HasPoolResets, HasPoolBefore bool

	ListenGrant, ListenSession, ListenTotal float64
	HasGrant, HasSession, HasTotal          bool

	Units    int64 // how many units the turn says it read; -1 when not said
	Problems []string

	// Carried onto the verdict for a reader of verdicts alone (the done
	// reading, the route, when the turn happened); no rule reads them, but
	// a negative or wrong-typed speech_end_to_post or not_sent is bad
	// input all the same (the done reading would count it), and left out.
	EndTime                        pcommon.Timestamp
	Outputs                        []string
	SpeechEndToPost, NotSent       float64
	HasSpeechEndToPost, HasNotSent bool

	// AppUptime and DeviceUptime (seconds, at the turn): a holder of the
	// launch's turns reads a relaunch or a reboot in them dropping
	// (docs/decisions/0249). No rule reads them; a negative one is bad
	// input, as percause check says.
	AppUptime, DeviceUptime Opt[float64]
}

// TurnSecond is a reading of the voice.turn in seconds that the turn
// keeps as it is read: one row of TurnSeconds each. From the table, each
// is read from the span (ReadTurnUnder), put on the joined form and stored
// by the verdict processor's codec under its ID, so a reading of this kind
// is added here, a field above and a row below, and in none of those.
type TurnSecond struct {
	// ID names the reading in a stored turn: rows keep their IDs, and a
	// new row takes the next.
	ID uint8
	// Name is its attribute (instr/semconv).
	Name string
	// At is where a turn keeps it, and whether it was given.
	At func(t *TurnReadings) (v *float64, ok *bool)
}

// TurnSeconds are the turn's seconds readings, in the order the joined
// form puts them (not changed at run time).
var TurnSeconds = []TurnSecond{
	{1, semconv.ListenGrant, func(t *TurnReadings) (*float64, *bool) { return &t.ListenGrant, &t.HasGrant }},
	{2, semconv.ListenSession, func(t *TurnReadings) (*float64, *bool) { return &t.ListenSession, &t.HasSession }},
	{3, semconv.ListenTotal, func(t *TurnReadings) (*float64, *bool) { return &t.ListenTotal, &t.HasTotal }},
	{4, semconv.HealthAppUptime, func(t *TurnReadings) (*float64, *bool) { return &t.AppUptime.V, &t.AppUptime.OK }},
	{5, semconv.HealthDeviceUptime, func(t *TurnReadings) (*float64, *bool) { return &t.DeviceUptime.V, &t.DeviceUptime.OK }},
	{6, semconv.TurnSpeechEndPost, func(t *TurnReadings) (*float64, *bool) { return &t.SpeechEndToPost, &t.HasSpeechEndToPost }},
	{7, semconv.TurnNotSent, func(t *TurnReadings) (*float64, *bool) { return &t.NotSent, &t.HasNotSent }},
}

// TurnSecondOf is the row of a stored ID.
func TurnSecondOf(id uint8) (TurnSecond, bool) {
	for _, s := range TurnSeconds {
		if s.ID == id {
			return s, true
		}
	}
	return TurnSecond{}, false
}

// MaxOutputs bounds the route outputs a turn carries to its verdict.
const MaxOutputs = 8

type RouteChange struct {
	At     float64
	Reason string
}

// LiveSeries is one live-object count: the earlier turns' values, oldest
// first, then this turn's.
type LiveSeries struct {
	Kind   string
	Series []int64
}

// Unit is what the rules need from a voice.unit span.
type Unit struct {
	SpanID    pcommon.SpanID
	Index     int64
	TakeID    string
	Underruns int64
	Silent    float64
	Cushion   float64
	Lead      float64
	HasLead   bool
	Problems  []string
	// UnderrunBad: a reading rule 1 needs (index, take, underruns, silent,
	// cushion) is bad, so the unit's underrun cannot be read. A bad lead
	// alone leaves the underrun readable.
	UnderrunBad bool
}

// Take is what the rules need from a tts.take span.
type Take struct {
	SpanID  pcommon.SpanID
	ID      string
	Need    float64
	Problem string // why need cannot be read ("" when it can)
}
