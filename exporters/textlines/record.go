package textlines

import "time"

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

// TurnReading is a [voice-turn] line's readings; Present says which were given.
type TurnReading struct {
	Index                       int
	LinkType, LinkSubtype       string
	Stutter, Bluetooth          bool
	Inputs, Outputs             []string
	SampleRate                  float64
	RouteChanges                int // the count the line gives (or len(Changes))
	Changes                     []RouteChange
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
