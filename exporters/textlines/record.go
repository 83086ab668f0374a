package textlines

import (
	"time"

	"github.com/percause/percause/instr/semconv"
)

// What a line read gives: its kind, the readings of a [voice-turn] or a
// [tts-take] line, and which of them it carried.

// Kind is what a line reports.
type Kind uint8

// Kinds of line.
const (
	KindTurn Kind = iota + 1 // [voice-turn]
	KindTake                 // [tts-take]
)

func (k Kind) String() string {
	switch k {
	case KindTurn:
		return PrefixTurn
	case KindTake:
		return PrefixTake
	}
	return "?"
}

// Limits of one line: past them the line is refused as too long, so a
// corrupt log cannot make a reader hold unbounded state.
const (
	MaxLineBytes   = 64 << 10
	MaxUnits       = 512
	MaxChanges     = 64
	MaxLiveKinds   = 32
	MaxUnknownKeys = 8 // unknown keys kept by name (all are counted)
	MaxFaults      = 8 // faults of a refused line kept (all are counted)
)

// Field bits: which readings a line carried.
type Fields uint64

// Fields of a [voice-turn] line.
const (
	FTurn Fields = 1 << iota
	FTrace
	FLink
	FUnits
	FUnderruns // the canonical total
	FSilent    // the canonical total
	FStutter
	FRoute
	FBluetooth
	FSampleRate
	FRouteChanges // the count
	FChanges      // each change: at, reason, outputs
	FListenGrant
	FListenSession
	FListenTotal
	FRPM
	FPost
	FNotSent
	FPool
	FLive
	FDeviceUptime
	FAppUptime
	FActivations
	FMemory
	FGaps
	FBroke
	FUnitUnderruns // the app's per-unit list
	// Fields of a [tts-take] line.
	FTake
	FFirstByte
	FTotal
	FAudio
	FRate
	FNeed
	FBeside
)

// Has reports whether every bit of f is set.
func (fs Fields) Has(f Fields) bool { return fs&f == f }

// RouteChange is one change of the audio route while she read.
type RouteChange struct {
	At      float64 // seconds since she began reading
	Reason  string
	Outputs []string
}

// UnitReading is one unit as a line reports it. A canonical line gives every
// unit its gap (and lead when negative) and the units that underran their
// underruns, silence, cushion and take.
type UnitReading struct {
	Index           int
	TakeID          string
	Gap, Lead       float64
	HasGap, HasLead bool
	Underruns       int
	HasUnderruns    bool
	Silent, Cushion float64
	HasBrokenUnit   bool // silent, cushion and take (from the broke= list of units that underran)
}

// TurnValues are the readings a [voice-turn] line prints and reads alike:
// the writer's Turn and the reader's TurnReading each carry them, so a
// reading of the line is declared here once.
type TurnValues struct {
	Index                 int
	LinkType, LinkSubtype string
	Inputs, Outputs       []string
	Bluetooth             bool
	SampleRate            float64
	// RouteChanges is the count the line gives (a reader: or len(Changes)).
	RouteChanges int
	// Changes are the route changes while she read, in order. The line
	// prints them (changes=…) only when given: a writer that knows only
	// the count keeps printing route_changes alone, as before.
	Changes                     []RouteChange
	Stutter                     bool
	ListenGrant, ListenSession  float64
	ListenTotal                 float64
	RPMLoaded, RPMFresh         float64
	SpeechEndToPost, NotSent    float64
	PoolResets                  int
	PoolResetsBefore            int
	HasPoolResets, HasPoolPrior bool
	Live                        []Live
	DeviceUptime, AppUptime     float64
	Activations                 int
	Memory                      int64
}

// TurnScalar is a reading of a [voice-turn] line that becomes one attribute
// of its voice.turn span as it is, when the line gives it: the lines
// connector puts each from this table, so a reading of this kind is added
// to the line (its field above, its TurnReading field) and here, and the
// connector is left as it is.
type TurnScalar struct {
	// Given is the bit that says the line gave it.
	Given Fields
	// Attr is its attribute (instr/semconv).
	Attr string
	// Count gives it as an int attribute; else Seconds gives it as a
	// double.
	Count   func(t *TurnReading) int64
	Seconds func(t *TurnReading) float64
}

// TurnScalars are the line's scalar readings, in the order the connector
// puts them (not changed at run time).
var TurnScalars = []TurnScalar{
	{Given: FTurn, Attr: semconv.TurnIndex, Count: func(t *TurnReading) int64 { return int64(t.Index) }},
	{Given: FNotSent, Attr: semconv.TurnNotSent, Seconds: func(t *TurnReading) float64 { return t.NotSent }},
	{Given: FDeviceUptime, Attr: semconv.HealthDeviceUptime, Seconds: func(t *TurnReading) float64 { return t.DeviceUptime }},
	{Given: FAppUptime, Attr: semconv.HealthAppUptime, Seconds: func(t *TurnReading) float64 { return t.AppUptime }},
	{Given: FActivations, Attr: semconv.HealthActivations, Count: func(t *TurnReading) int64 { return int64(t.Activations) }},
	{Given: FMemory, Attr: semconv.HealthMemory, Count: func(t *TurnReading) int64 { return t.Memory }},
	{Given: FListenGrant, Attr: semconv.ListenGrant, Seconds: func(t *TurnReading) float64 { return t.ListenGrant }},
	{Given: FListenSession, Attr: semconv.ListenSession, Seconds: func(t *TurnReading) float64 { return t.ListenSession }},
	{Given: FListenTotal, Attr: semconv.ListenTotal, Seconds: func(t *TurnReading) float64 { return t.ListenTotal }},
	{Given: FRPM, Attr: semconv.RPMLoaded, Seconds: func(t *TurnReading) float64 { return t.RPMLoaded }},
	{Given: FRPM, Attr: semconv.RPMFresh, Seconds: func(t *TurnReading) float64 { return t.RPMFresh }},
	{Given: FPost, Attr: semconv.TurnSpeechEndPost, Seconds: func(t *TurnReading) float64 { return t.SpeechEndToPost }},
}

// TurnReading is a [voice-turn] line's readings; Present says which were given.
type TurnReading struct {
	TurnValues
	// DeclaredUnits is units= (-1 when absent); Units are the units read.
	DeclaredUnits int
	Units         []UnitReading
	// Underruns and Silent are the canonical totals as given.
	Underruns int
	Silent    float64
}

// Record is one line read.
type Record struct {
	Kind    Kind
	TraceID string    // 32 lowercase hex digits, "" when the line has none
	Time    time.Time // a timestamp found in the prefix; zero when none
	// PID is the process ID an os_log or syslog prefix names (0: none).
	PID     int
	Present Fields
	Turn    TurnReading // Kind == KindTurn
	Take    Take        // Kind == KindTake (TraceID also here)
	// App is set when at least one reading was in the app's spelling.
	App bool
	// Unknown counts the fields this version does not know (ignored);
	// UnknownKeys names the first MaxUnknownKeys of them.
	Unknown     int
	UnknownKeys []string
}
