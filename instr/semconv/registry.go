package semconv

// Kind says what a registered name names.
type Kind string

// Kinds of names.
const (
	KindResource  Kind = "resource attribute"
	KindSpan      Kind = "span"
	KindEvent     Kind = "span event"
	KindAttribute Kind = "attribute"
	KindMetric    Kind = "metric"
)

// Name documents one name on the wire. docs/semconv.md is generated from the
// Registry, and a test fails when a name constant of this package is missing
// from it, so the page a Swift client reads always matches the Go code.
type Name struct {
	Name    string
	Kind    Kind
	Type    string   // attributes: string, int, double, bool, string[], int[]; metrics: the instrument
	Unit    string   // metrics: the UCUM unit
	Where   []string // attributes: the spans/events/resource carrying it; metrics: their attributes
	Meaning string
	Values  []string // the bounded set of values, when there is one

	// Attributes and resource attributes: what the verdict needs of a
	// client (Levels), the condition under which it is needed, and whether
	// a number may be negative.
	Requirement Requirement
	When        string // the condition of a conditional requirement ("" : always)
	Signed      bool   // a number that may be negative (a lead, a time before reading)

	// Spans: the parent, the span kind a client uses, the timestamps the
	// verdict reads (Structure).
	Parent     string
	SpanKind   string
	Timestamps string
}

// Requirement is what the verdict needs of an attribute a client sends.
type Requirement string

// Requirement levels, in the manner of OpenTelemetry's semantic conventions,
// for the verdict: required means the turn cannot be read right without it
// (it waits, is decided unknown, or a rule misses what it would find);
// recommended means a rule reads it (without it that rule cannot fire);
// optional means no rule reads it (dashboards, the evidence or people do).
// Collector marks what the collector writes: a client never sends it.
const (
	Required    Requirement = "required"
	Recommended Requirement = "recommended"
	Optional    Requirement = "optional"
	Collector   Requirement = "collector"
)

// levels are the requirement levels of the attributes the verdict reads,
// with their conditions; every other client attribute is optional, and the
// verdict's own are the collector's (applied by withLevels).
var levels = map[string]struct {
	req    Requirement
	when   string
	signed bool
}{
	ServiceName:       {req: Required, when: "pippa-phone on the phone's spans, pippa-engine on the engine's"},
	AppInstallationID: {req: Recommended, when: "labels the verdict counters"},
	ServiceInstanceID: {req: Recommended, when: "tells launches apart"},

	NetworkConnectionType: {req: Recommended, when: "the verdict's link (unknown without it)"},
	TurnIndex:             {req: Recommended, when: "names the turn in the verdict"},
	TurnUnits:             {req: Required, when: "a turn without it is decided only after its trace has been quiet for the decision window"},
	TurnStutter:           {req: Recommended, when: "the Bluetooth rule"},
	RouteOutputs:          {req: Recommended, when: "the Bluetooth rule (a Bluetooth output)"},
	RouteBluetooth:        {req: Recommended, when: "the Bluetooth rule (derived from the outputs when absent)"},
	RouteChangeAt:         {req: Required, when: "on every pippa.route_change event (a change without it is not read)", signed: true},
	RouteChangeReason:     {req: Recommended, when: "named in the evidence"},
	PoolResets:            {req: Recommended, when: "the pool rule"},
	PoolResetsBefore:      {req: Optional, when: historyOptional},
	ListenGrant:           {req: Recommended, when: "the wait rule (microphone open)"},
	ListenSession:         {req: Recommended, when: "the wait rule (microphone open)"},
	ListenTotal:           {req: Recommended, when: "the wait rule (microphone open)"},

	UnitIndex:     {req: Required},
	UnitUnderruns: {req: Required, when: "a unit without it is bad input"},
	UnitSilent:    {req: Required, when: "when the unit underran"},
	UnitCushion:   {req: Required, when: "when the unit underran"},
	TakeID:        {req: Required, when: "on every tts.take; on voice.unit when the unit underran"},
	UnitLead:      {req: Recommended, when: "the wait rule (a late unit)", signed: true},

	TakeNeed: {req: Required, when: "a take without it cannot be read against its unit"},
}

// liveLevel is the level of every pippa.live.<kind> count; its history
// (pippa.live.<kind>.before) is optional, as pippa.pool.resets.before is.
var liveLevel = struct {
	req  Requirement
	when string
}{Recommended, "the state rule"}

// historyOptional is why the .before attributes are optional: the
// collector keeps each launch's recent turns, so the pool and state rules
// read movement across a launch's turns without a client sending it.
const historyOptional = "the collector keeps each launch's recent turns itself; a client need not send the history"

// withLevels gives every attribute its requirement level.
func withLevels(names []Name) []Name {
	for i := range names {
		n := &names[i]
		if n.Kind != KindAttribute && n.Kind != KindResource {
			continue
		}
		if l, ok := levels[n.Name]; ok {
			n.Requirement, n.When, n.Signed = l.req, l.when, l.signed
			continue
		}
		switch {
		case len(n.Where) > 0 && n.Where[0] == onVerd:
			n.Requirement = Collector
		case len(n.Name) > len(LivePrefix) && n.Name[:len(LivePrefix)] == LivePrefix && n.Name != LiveKind &&
			n.Name[len(n.Name)-len(LiveBeforeSuffix):] == LiveBeforeSuffix:
			n.Requirement, n.When = Optional, historyOptional
		case len(n.Name) > len(LivePrefix) && n.Name[:len(LivePrefix)] == LivePrefix && n.Name != LiveKind:
			n.Requirement, n.When = liveLevel.req, liveLevel.when
		default:
			n.Requirement = Optional
		}
	}
	return names
}

// spanStructure is the shape of each span: its parent, kind and the
// timestamps that matter.
var spanStructure = map[string][3]string{
	SpanVoiceTurn: {"none: the root of the turn's trace (one turn, one trace)", "internal",
		"none for the rules (a turn is decided from its readings; ages count from arrival); start and end for people"},
	SpanVoiceUnit: {"voice.turn", "internal", "none for the rules; start and end: when the unit played"},
	SpanTTSTake: {"the span that carried the phone's traceparent (any span of the turn's trace: the engine continues it)", "server or internal",
		"none for the rules; start and end: when the take was made"},
	SpanVerdict:    {"voice.turn (written by the collector)", "internal", "end: when the turn was decided"},
	SpanLinkStatus: {"the span current when the status changed", "internal", "none for the rules"},
}

// withStructure gives every span its structure.
func withStructure(names []Name) []Name {
	for i := range names {
		if s, ok := spanStructure[names[i].Name]; ok && names[i].Kind == KindSpan {
			names[i].Parent, names[i].SpanKind, names[i].Timestamps = s[0], s[1], s[2]
		}
	}
	return names
}

// CarriedBy reports whether the registry puts the name on carrier: a span,
// an event or the resource.
func (n Name) CarriedBy(carrier string) bool {
	for _, w := range n.Where {
		if w == carrier || w == carrier+" event" {
			return true
		}
	}
	return false
}

// Lookup returns the registered attribute (or resource attribute) name.
func Lookup(name string) (Name, bool) {
	for _, n := range Registry {
		if n.Name == name && (n.Kind == KindAttribute || n.Kind == KindResource) {
			return n, true
		}
	}
	return Name{}, false
}

const (
	onTurn     = SpanVoiceTurn
	onUnit     = SpanVoiceUnit
	onTake     = SpanTTSTake
	onRes      = "resource"
	onCall     = "HTTP client spans of the lanes"
	onLink     = SpanLinkStatus + " span"
	onVerd     = SpanVerdict
	onUnderrun = EventUnderrun + " event"
	onRC       = EventRouteChange + " event"
	onReset    = EventPoolReset + " event"
	onLinkEv   = EventLinkStatus + " event"
)

func at(w ...string) []string { return w }

func attr(name, typ string, where []string, meaning string, values ...string) Name {
	return Name{Name: name, Kind: KindAttribute, Type: typ, Where: where, Meaning: meaning, Values: values}
}

func met(name, instrument, unit string, attrs []string, meaning string) Name {
	return Name{Name: name, Kind: KindMetric, Type: instrument, Unit: unit, Where: attrs, Meaning: meaning}
}

// liveNames registers pippa.live.<kind> and pippa.live.<kind>.before.
func liveNames() []Name {
	meaning := map[string]string{
		LivePlayers:         "audio players alive",
		LiveMicEngines:      "microphone engines alive",
		LiveAudioQueues:     "audio queues alive",
		LiveTakes:           "takes alive",
		LiveByteStreams:     "open byte streams",
		LiveRepliesInFlight: "replies in flight",
	}
	var out []Name
	for _, k := range LiveKinds {
		out = append(out,
			attr(LiveAttr(k), "int", at(onTurn), "live objects now: "+meaning[k]),
			attr(LiveBeforeAttr(k), "int[]", at(onTurn), "the same count at the end of up to 3 earlier turns of the launch, oldest first (absent on the first turn)"))
	}
	return out
}

// Registry lists every name percause puts on the wire, in the order the
// reference page shows them.
var Registry = withStructure(withLevels(concat(
	[]Name{
		// Resource.
		{Name: ServiceName, Kind: KindResource, Type: "string", Where: at(onRes), Meaning: "which program", Values: []string{ServicePhone, ServiceEngine}},
		{Name: ServiceInstanceID, Kind: KindResource, Type: "string", Where: at(onRes), Meaning: "one launch of the process (a UUID per launch)"},
		{Name: AppInstallationID, Kind: KindResource, Type: "string", Where: at(onRes), Meaning: "the phone's install: a UUID made once and kept, no hardware identifier"},
		{Name: ServiceVersion, Kind: KindResource, Type: "string", Where: at(onRes), Meaning: "the program's version, when given"},
		{Name: LinesAssumed, Kind: KindResource, Type: "string[]", Where: at(onRes), Meaning: "set by the lines connector on a turn it made from a line: what it assumed where the lines left it open (the turn's launch, the take that joined it); the verdict's evidence repeats it"},

		// Spans.
		{Name: SpanVoiceTurn, Kind: KindSpan, Where: at(ServicePhone), Meaning: "root span of one voice turn: the turn's readings; one turn is one trace"},
		{Name: SpanVoiceUnit, Kind: KindSpan, Where: at(ServicePhone), Meaning: "one unit read aloud, child of voice.turn"},
		{Name: SpanTTSTake, Kind: KindSpan, Where: at(ServiceEngine), Meaning: "the engine making one take, in the phone's turn trace (traceparent)"},
		{Name: SpanVerdict, Kind: KindSpan, Where: at("collector (verdict processor)"), Meaning: "the turn's per-cause verdict, child of voice.turn"},
		{Name: SpanLinkStatus, Kind: KindSpan, Where: at(ServicePhone), Meaning: "the lost-link status changed"},

		// Events.
		{Name: EventRouteChange, Kind: KindEvent, Where: at(onTurn), Meaning: "the audio route changed while she read"},
		{Name: EventLinkStatus, Kind: KindEvent, Where: at("the span current when the link status changed"), Meaning: "the status line changed"},
		{Name: EventReconnecting, Kind: KindEvent, Where: at(ServicePhone), Meaning: "the Reconnecting verdict was shown"},
		{Name: EventPoolReset, Kind: KindEvent, Where: at(onCall), Meaning: "the pool healed: the call whose failure completed the streak"},
		{Name: EventImplicated, Kind: KindEvent, Where: at(onVerd), Meaning: "one per implicated cause (carries percause.cause), so the verdict count connector counts each cause"},
		{Name: EventUnderrun, Kind: KindEvent, Where: at(onVerd), Meaning: "one per unit that underran: the unit's index, its take, underruns, silent seconds and cushion, the take's need when it came, and the cause rule 1 read"},
		{Name: SpanVerdict, Kind: KindEvent, Where: at(onVerd), Meaning: "one per verdict (carries the primary percause.cause), stamped with the processor's start so the verdict count connector's counts add up into percause_turns_total"},
		{Name: EventTakeProgress, Kind: KindEvent, Where: at(onTake), Meaning: "reserved: a take's progress mark (the SDK computes need from marks without recording them)"},

		// Link.
		attr(NetworkConnectionType, "string", at(onTurn, "metrics"), "the link", Links...),
		attr(NetworkConnectionSubtype, "string", at(onTurn), "the radio technology: lte, nr, …"),

		// voice.turn.
		attr(TurnIndex, "int", at(onTurn), "turn number within the launch, from 1"),
		attr(TurnStutter, "bool", at(onTurn), "the listener marked this turn as breaking up"),
		attr(TurnSpeechEndPost, "double", at(onTurn, onVerd), "seconds from the end of speech to the post leaving the phone"),
		attr(TurnNotSent, "double", at(onTurn, onVerd), "the longest \"not sent for N s\" wait shown during this turn (0: none)"),
		attr(TurnUnits, "int", at(onTurn), "how many units the turn read aloud"),
		attr(RouteInputs, "string[]", at(onTurn), "input port kinds of the audio route",
			PortBluetoothHFP, PortBluetoothLE, PortBuiltinMic, PortHeadphones, PortCarAudio),
		attr(RouteOutputs, "string[]", at(onTurn, onRC, onVerd), "output port kinds of the audio route (on the event: the new outputs)",
			PortBluetoothA2DP, PortBluetoothHFP, PortBluetoothLE, PortBuiltinSpeaker, PortBuiltinReceiver, PortHeadphones, PortCarAudio),
		attr(RouteBluetooth, "bool", at(onTurn, onVerd), "any output is a Bluetooth port (its kind starts with "+BluetoothPortPrefix+")"),
		attr(RouteSampleRate, "double", at(onTurn), "the route's sample rate, Hz"),
		attr(RouteCategory, "string", at(onTurn), "the audio session's category"),
		attr(RouteMode, "string", at(onTurn), "the audio session's mode"),
		attr(RouteChangeAt, "double", at(onRC), "seconds since she began reading"),
		attr(RouteChangeReason, "string", at(onRC, "metrics"), "why the route changed (other reasons are kept on the event and counted as other)", RouteReasons...),
		attr(HealthDeviceUptime, "double", at(onTurn), "device uptime, seconds (goes down on a reboot)"),
		attr(HealthAppUptime, "double", at(onTurn), "app uptime, seconds"),
		attr(HealthActivations, "int", at(onTurn), "audio-session activations since launch"),
		attr(HealthMemory, "int", at(onTurn), "the app's memory, bytes"),
		attr(PoolResets, "int", at(onTurn, onVerd), "the launch's pool-reset tally now (never counted down; 0 on a new launch)"),
		attr(PoolResetsBefore, "int", at(onTurn, onVerd), "the tally at the end of the launch's previous turn (absent on its first turn)"),
		attr(ListenGrant, "double", at(onTurn), "microphone open: the engine's listening grant, seconds"),
		attr(ListenSession, "double", at(onTurn), "microphone open: the audio session, seconds"),
		attr(ListenTotal, "double", at(onTurn), "microphone open: in all, seconds"),
		attr(RPMLoaded, "double", at(onTurn), "control round trip on the loaded lane, seconds"),
		attr(RPMFresh, "double", at(onTurn), "control round trip on a fresh connection, seconds"),
	},
	liveNames(),
	[]Name{
		// voice.unit.
		attr(UnitIndex, "int", at(onUnit, onUnderrun), "which unit of the turn, from 1"),
		attr(TakeID, "string", at(onUnit, onTake, onUnderrun), "the take (on voice.unit: the take it played)"),
		attr(UnitGap, "double", at(onUnit), "silence before the unit, seconds"),
		attr(UnitLead, "double", at(onUnit), "when the unit was queued relative to the previous unit's end, seconds (negative: late)"),
		attr(UnitUnderruns, "int", at(onUnit, onUnderrun), "underruns while it played"),
		attr(UnitSilent, "double", at(onUnit, onUnderrun), "silent seconds from underruns"),
		attr(UnitLongest, "double", at(onUnit), "the longest silence, seconds"),
		attr(UnitCushion, "double", at(onUnit, onUnderrun), "seconds buffered ahead of the play head"),
		attr(UnitPlayer, "string", at(onUnit), "the player that read it"),

		// tts.take.
		attr(TakeFirstByte, "double", at(onTake), "seconds to the first audio byte"),
		attr(TakeTotal, "double", at(onTake), "seconds to make the whole take"),
		attr(TakeAudio, "double", at(onTake), "audio seconds made"),
		attr(TakeRate, "double", at(onTake), "audio seconds per second of making"),
		attr(TakeNeed, "double", at(onTake, onUnderrun), "the cushion this take alone needed: the worst lag of production behind real-time playback from the first byte, seconds"),
		attr(TakeBeside, "int", at(onTake), "the most other takes in flight at once during it"),

		// Calls.
		attr(Lane, "string", at(onCall, onLink, "metrics"), "the lane that carried the call", LaneControl, LaneBulk, LaneStream, LaneShared, LaneFresh),
		attr(CallKind, "string", at(onCall, onLink), "the kind of call (check, read, grant, prepare, take, upload, …)"),
		attr(HTTPMethod, "string", at(onCall), "HTTP method"),
		attr(HTTPStatus, "int", at(onCall), "HTTP status code (absent when no answer came)"),
		attr(HTTPRoute, "string", at("server spans"), "the route template"),
		attr(ServerAddr, "string", at(onCall), "the engine's host"),
		attr(URLPath, "string", at(onCall), "the request path"),
		attr(PoolSession, "int", at(onCall, onReset), "the lane's session that carried the call: 1 at launch, one more per reset"),
		attr(CallSeq, "int", at(onCall), "the call's number within its session (recorded, never used to route a reply)"),
		attr(CallOutcome, "string", at(onCall), "how the call ended",
			CallOutcomeOK, CallOutcomeTimeout, CallOutcomeStalled, CallOutcomeLost, CallOutcomeCanceled, CallOutcomeError),
		attr(CallNotSent, "double", at(onCall), "seconds the call was not sent: until it had a connection, or, with a body, until the engine answered its Expect: 100-continue"),
		attr(CallFresh, "bool", at(onCall), "made on a fresh connection of its own"),
		attr(CallOthers, "int", at(onCall), "other calls open on the lane when it started"),
		attr(PoolResetsTally, "int", at(onReset), "the lane's tally after this reset"),
		attr(PoolOldInFlight, "int", at(onReset), "calls left to finish on the old session"),
		attr(PoolResetTrigger, "string", at(onReset), "the outcome that completed the streak"),

		// Link status.
		attr(LinkStatus, "string", at(onLink, onLinkEv, "metrics"), "the status line shown", LinkStatuses...),
		attr(LinkStatusMessage, "string", at(onLink, onLinkEv), "the message shown"),
		attr(LinkCheck, "string", at(onLink), "the failing check"),
		attr(LinkFailingFor, "double", at(onLink), "seconds the check has been failing"),
		attr(LinkQuietFor, "double", at(onLink), "seconds since anything was heard from the engine"),
		attr(LinkCode, "string", at(onLink), "the warning's code"),
		attr(LinkPrevious, "string", at(onLink), "the status before this change"),
		attr(LinkFailures, "int", at(onLink), "check failures in a row"),
		attr(LinkProbed, "bool", at(onLink), "the probes have completed"),
		attr(LinkDeviceOnline, "bool", at(onLink), "the device has a usable network path"),
		attr(LinkFrontStatus, "int", at(onLink), "HTTP status of the engine's front (0: no answer)"),
		attr(LinkOtherAnswered, "bool", at(onLink), "the engine answered on another lane or a fresh connection"),
		attr(LinkLaneInFlight, "int", at(onLink), "replies in flight on the failing lane"),
		attr(LinkLaneLimit, "int", at(onLink), "the failing lane's connections per host"),
		attr(LinkAdvice, "string", at(onLink), "the advice shown with the message (the tailnet advice)"),
		attr(LinkPoolProbed, "bool", at(onLink), "the failing lane's own pool was probed (after a fresh connection answered and the lane had room)"),
		attr(LinkPoolStatus, "int", at(onLink), "HTTP status the failing lane's kept-alive connection answered that probe with (0: no answer: a stale connection)"),
		attr(LinkPreviousMessage, "string", at(onLink), "the message the line last showed before this change"),
		attr(WaitFor, "double", at(onLink), "a wait's line: seconds waited so far"),
		attr(WaitStage, "string", at(onLink), "\"Opening the microphone…\": the stage waited on", StageSession, StageGrant, StageSocket),
		attr(WaitOthers, "int", at(onLink), "\"not sent\": other calls open on the waiting call's lane"),
		attr(WaitProbe, "string", at(onLink), "\"Getting her voice ready…\": what the bulk lane's own probe found", ProbeFindings...),
		attr(WaitProbeStatus, "int", at(onLink), "\"Getting her voice ready…\": HTTP status of that probe (0: no answer)"),
		attr(WaitProbeRTT, "double", at(onLink), "\"Getting her voice ready…\": seconds that probe took"),

		// Verdict.
		attr(VerdictCause, "string", at(onVerd, EventImplicated+" event", onUnderrun), "the primary cause (on an event: the implicated cause, the cause the underrun was read as)", Causes...),
		attr(VerdictCauses, "string[]", at(onVerd), "every implicated cause"),
		attr(VerdictEvidence, "string", at(onVerd), "a short sentence with the readings and the rule"),
		attr(VerdictRulesVersion, "string", at(onVerd), "the rules' version ("+RulesVersion+")"),
		attr(VerdictForced, "string", at(onVerd), "why the turn was decided before all its takes arrived (empty when not)"),
		attr(VerdictScenario, "string", at(onVerd), "lab only: the scenario that produced the turn"),
		attr(VerdictUnderruns, "int", at(onVerd), "the turn's underruns"),
		attr(VerdictSilent, "double", at(onVerd), "the turn's silent seconds"),
		attr(VerdictTurnTime, "int", at(onVerd), "when the turn ended (its voice.turn span's end), Unix nanoseconds"),

		// Metric attributes.
		attr(LiveKind, "string", at("metrics"), "live-object kind", LiveKinds...),
		attr(ListenStage, "string", at("metrics"), "microphone-open stage", StageGrant, StageSession, StageTotal),
		attr(ExporterReason, "string", at("metrics"), "why an export batch was dropped", DropFull, DropTorn, DropRejected),
		attr(SDKCall, "string", at("metrics"), "the recording call that refused bad input"),
	},
	[]Name{
		// Metrics.
		met(MetricUnderruns, "counter", UnitCount, at(NetworkConnectionType), "underruns while reading units aloud"),
		met(MetricSilence, "histogram", UnitSeconds, at(NetworkConnectionType), "silent seconds per unit"),
		met(MetricUnitLead, "histogram", UnitSeconds, at(NetworkConnectionType), "unit lead (negative: her words were late)"),
		met(MetricCushion, "histogram", UnitSeconds, at(NetworkConnectionType), "cushion per unit"),
		met(MetricTurns, "counter", UnitTurns, at(NetworkConnectionType, RouteBluetooth), "voice turns ended, by link and whether the route was Bluetooth"),
		met(MetricSpeechEndToPost, "histogram", UnitSeconds, at(NetworkConnectionType), "end of speech to the post leaving the phone"),
		met(MetricNotSent, "histogram", UnitSeconds, at(NetworkConnectionType), "the longest not-sent wait per turn (0: none)"),
		met(MetricListenOpen, "histogram", UnitSeconds, at(ListenStage), "microphone-open stages"),
		met(MetricRouteChanges, "counter", UnitChanges, at(RouteChangeReason), "route changes while she reads"),
		met(MetricDeviceUptime, "gauge", UnitSeconds, nil, "device uptime at the last turn"),
		met(MetricAppUptime, "gauge", UnitSeconds, nil, "app uptime at the last turn"),
		met(MetricMemory, "gauge", UnitBytes, nil, "the app's memory at the last turn"),
		met(MetricLiveObjects, "gauge", UnitObjects, at(LiveKind), "live objects now"),
		met(MetricTakeFirstByte, "histogram", UnitSeconds, nil, "time to a take's first byte"),
		met(MetricTakeNeed, "histogram", UnitSeconds, nil, "the cushion a take alone needed"),
		met(MetricTakeRate, "histogram", UnitRatio, nil, "audio seconds per second of making"),
		met(MetricTakeBeside, "histogram", UnitTakes, nil, "the most other takes in flight during a take"),
		met(MetricPoolResets, "counter", UnitResets, at(Lane), "pool resets, cumulative from the launch (start time = the launch)"),
		met(MetricRepliesInFlight, "updowncounter", UnitReplies, at(Lane), "replies in flight"),
		met(MetricLinkStatus, "counter", UnitChanges, at(LinkStatus), "link status changes, by the status shown"),
		met(MetricExporterQueued, "gauge", UnitBatches, nil, "export batches on disk, not yet accepted"),
		met(MetricExporterQueuedBytes, "gauge", UnitBytes, nil, "their bytes on disk"),
		met(MetricExporterSent, "counter", UnitBatches, nil, "export batches the collector accepted"),
		met(MetricExporterDropped, "counter", UnitBatches, at(ExporterReason), "export batches dropped (spool full oldest-first, torn, refused)"),
		met(MetricExporterFailures, "counter", UnitCalls, nil, "failed send attempts (retried)"),
		met(MetricExporterDeferred, "counter", UnitCalls, nil, "times sending waited while the voice lane was busy"),
		met(MetricExporterSuperseded, "counter", UnitBatches, nil, "queued metric batches replaced by a newer cumulative collection (not lost data)"),
		met(MetricSDKRejected, "counter", UnitCalls, at(SDKCall), "recordings refused as bad input"),
		met(PromTurnsTotal, "counter (Prometheus, verdict count connector)", "", at(VerdictCause, AppInstallationID, NetworkConnectionType), "one per decided turn, by its primary cause"),
		met(PromImplicatedTotal, "counter (Prometheus, verdict count connector)", "", at(VerdictCause, AppInstallationID, NetworkConnectionType), "one per implicated cause per turn"),
	},
)))

func concat(parts ...[]Name) []Name {
	var out []Name
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// CarriedOnVerdict names the voice.turn readings the verdict span carries
// (the registry puts them on both), so a reader of verdicts alone has them:
// every place a turn passes through on its way to a verdict must carry
// each of them, which TestEveryCarriedReadingArrives holds to, place by
// place (verdict/readings.go's checklist).
func CarriedOnVerdict() []string {
	var out []string
	for _, n := range Registry {
		if n.Kind == KindAttribute && n.CarriedBy(SpanVoiceTurn) && n.CarriedBy(SpanVerdict) {
			out = append(out, n.Name)
		}
	}
	return out
}
