package semconv

// RulesVersion names the edition of the verdict rules. It is carried on every
// verdict span so a dashboard can tell verdicts made by different rules apart.
const RulesVersion = "1"

// Service names (resource attribute service.name).
const (
	ServicePhone  = "pippa-phone"
	ServiceEngine = "pippa-engine"
)

// Resource attributes.
const (
	ServiceName       = "service.name"
	ServiceInstanceID = "service.instance.id" // one launch of the process
	AppInstallationID = "app.installation.id" // the phone's install, stable across launches
	ServiceVersion    = "service.version"
	// LinesAssumed is what the lines connector assumed of a turn its lines
	// left open (which launch it is of, which take joined it), on the
	// resource it gives the turn: sentences the verdict's evidence repeats.
	LinesAssumed = "percause.lines.assumed"
)

// Span names.
const (
	SpanVoiceTurn = "voice.turn" // the phone's root span of one voice turn
	SpanVoiceUnit = "voice.unit" // one unit read aloud
	SpanTTSTake   = "tts.take"   // the engine making one take
	SpanVerdict   = "percause.verdict"
	// SpanLinkStatus is a phone span recorded when the lost-link status changes.
	SpanLinkStatus = "pippa.link.status"
)

// Event names.
const (
	EventRouteChange  = "pippa.route_change"
	EventLinkStatus   = "pippa.link.status"
	EventReconnecting = "pippa.reconnecting"
	EventPoolReset    = "pippa.pool.reset"
	EventImplicated   = "percause.implicated" // one per implicated cause on a verdict span
	EventUnderrun     = "percause.underrun"   // one per unit that underran, on a verdict span: the readings rule 1 read
	EventTakeProgress = "pippa.take.progress"
)

// Link attributes (OpenTelemetry semantic conventions).
const (
	NetworkConnectionType    = "network.connection.type"
	NetworkConnectionSubtype = "network.connection.subtype"
)

// Values of network.connection.type.
const (
	LinkWifi        = "wifi"
	LinkCell        = "cell"
	LinkWired       = "wired"
	LinkUnavailable = "unavailable"
	LinkUnknown     = "unknown"
)

// LinkSubtypeLTE is the network.connection.subtype of an LTE link (the
// OpenTelemetry conventions' value).
const LinkSubtypeLTE = "lte"

// voice.turn attributes.
const (
	TurnIndex         = "pippa.turn.index"
	TurnStutter       = "pippa.turn.stutter"
	TurnSpeechEndPost = "pippa.turn.speech_end_to_post"
	TurnNotSent       = "pippa.turn.not_sent"
	TurnUnits         = "pippa.turn.units" // how many units the turn read aloud

	RouteInputs     = "pippa.route.inputs"
	RouteOutputs    = "pippa.route.outputs"
	RouteBluetooth  = "pippa.route.bluetooth"
	RouteSampleRate = "pippa.route.sample_rate"
	RouteCategory   = "pippa.route.category"
	RouteMode       = "pippa.route.mode"

	RouteChangeAt     = "pippa.route_change.at"
	RouteChangeReason = "pippa.route_change.reason"

	HealthDeviceUptime = "pippa.health.device_uptime"
	HealthAppUptime    = "pippa.health.app_uptime"
	HealthActivations  = "pippa.health.activations"
	HealthMemory       = "pippa.health.memory"

	PoolResets       = "pippa.pool.resets"
	PoolResetsBefore = "pippa.pool.resets.before"

	ListenGrant   = "pippa.listen.grant"
	ListenSession = "pippa.listen.session"
	ListenTotal   = "pippa.listen.total"

	RPMLoaded = "pippa.rpm.loaded"
	RPMFresh  = "pippa.rpm.fresh"
)

// Live-object counts on voice.turn: LivePrefix + kind, and that name +
// LiveBeforeSuffix for the same count at the end of up to 3 earlier turns of
// the launch, oldest first.
const (
	LivePrefix       = "pippa.live."
	LiveBeforeSuffix = ".before"
	// LiveHistory is how many earlier turns a turn report carries.
	LiveHistory = 3
)

// Live-object kinds (the value of pippa.live.kind, and the suffix of the
// pippa.live.<kind> turn attributes).
const (
	LivePlayers         = "players"
	LiveMicEngines      = "mic_engines"
	LiveAudioQueues     = "audio_queues"
	LiveTakes           = "takes"
	LiveByteStreams     = "byte_streams"
	LiveRepliesInFlight = "replies_in_flight"
)

// liveKinds is LiveKinds as an array, so that its length is a constant.
var liveKinds = [...]string{LivePlayers, LiveMicEngines, LiveAudioQueues, LiveTakes, LiveByteStreams, LiveRepliesInFlight}

// LiveKinds lists every live-object kind in the order reports print them.
var LiveKinds = liveKinds[:]

// NumLiveKinds is len(LiveKinds) as a constant, for arrays indexed by a
// kind's position in LiveKinds. Adding a kind to the list changes it.
const NumLiveKinds = len(liveKinds)

// LiveAttr is the voice.turn attribute holding the live count of kind now.
func LiveAttr(kind string) string { return LivePrefix + kind }

// LiveBeforeAttr is the voice.turn attribute holding the earlier turns' counts of kind.
func LiveBeforeAttr(kind string) string { return LivePrefix + kind + LiveBeforeSuffix }

// voice.unit attributes.
const (
	UnitIndex     = "pippa.unit.index"
	UnitGap       = "pippa.unit.gap"
	UnitLead      = "pippa.unit.lead"
	UnitUnderruns = "pippa.unit.underruns"
	UnitSilent    = "pippa.unit.silent"
	UnitLongest   = "pippa.unit.longest"
	UnitCushion   = "pippa.unit.cushion"
	UnitPlayer    = "pippa.unit.player"
)

// tts.take attributes (TakeID also on voice.unit: the take it played).
const (
	TakeID        = "pippa.take.id"
	TakeFirstByte = "pippa.take.first_byte"
	TakeTotal     = "pippa.take.total"
	TakeAudio     = "pippa.take.audio"
	TakeRate      = "pippa.take.rate"
	TakeNeed      = "pippa.take.need"
	TakeBeside    = "pippa.take.beside"
)

// HTTP call attributes recorded by the client's lanes.
const (
	Lane       = "pippa.lane"
	CallKind   = "pippa.call.kind"
	HTTPMethod = "http.request.method"
	HTTPStatus = "http.response.status_code"
	HTTPRoute  = "http.route"
	ServerAddr = "server.address"
	URLPath    = "url.path"
)

// Lanes (the value of pippa.lane).
const (
	LaneControl = "control"
	LaneBulk    = "bulk"
	LaneStream  = "stream" // the turn's line stream, a connection of its own
	LaneShared  = "shared" // one pool for everything: the arrangement that starved control traffic
)

// Link-status attributes (the lost-link status and the Reconnecting verdict).
const (
	LinkStatus        = "pippa.link.status"
	LinkStatusMessage = "pippa.link.message"
	LinkCheck         = "pippa.link.check"
	LinkFailingFor    = "pippa.link.failing_for"
	LinkQuietFor      = "pippa.link.quiet_for"
)

// Verdict attributes.
const (
	VerdictCause        = "percause.cause"
	VerdictCauses       = "percause.causes"
	VerdictEvidence     = "percause.evidence"
	VerdictRulesVersion = "percause.rules.version"
	VerdictForced       = "percause.forced"   // why a turn was decided before all its takes arrived ("" when not)
	VerdictScenario     = "percause.scenario" // lab only: the scenario that produced the turn
	VerdictUnderruns    = "percause.underruns"
	VerdictSilent       = "percause.silent"
	// VerdictTurnTime is when the turn ended (its voice.turn span's end),
	// Unix nanoseconds: the verdict span itself is stamped with the
	// decision's time.
	VerdictTurnTime = "percause.turn.time"
)

// Causes (the value of percause.cause).
const (
	CauseNetwork   = "network"
	CauseSynthesis = "synthesis"
	CauseBluetooth = "bluetooth"
	CauseWait      = "wait"
	CausePool      = "pool"
	CauseState     = "state"
	CauseNone      = "none"
	CauseUnknown   = "unknown"
)

// Causes lists every cause value.
var Causes = []string{CauseNetwork, CauseSynthesis, CauseBluetooth, CauseWait, CausePool, CauseState, CauseNone, CauseUnknown}

// Metric names (OpenTelemetry names; the Prometheus names follow from them).
const (
	MetricUnderruns       = "pippa.voice.underruns"
	MetricSilence         = "pippa.voice.silence"
	MetricUnitLead        = "pippa.voice.unit.lead"
	MetricTakeFirstByte   = "pippa.tts.take.first_byte"
	MetricTakeNeed        = "pippa.tts.take.need"
	MetricTakeRate        = "pippa.tts.take.rate"
	MetricLiveObjects     = "pippa.live.objects"
	MetricPoolResets      = "pippa.pool.resets"
	MetricRepliesInFlight = "pippa.pool.replies_in_flight"
	MetricRouteChanges    = "pippa.route.changes"
	MetricListenOpen      = "pippa.listen.open"
	MetricTurns           = "pippa.voice.turns"
	MetricSpeechEndToPost = "pippa.voice.speech_end_to_post"
	MetricNotSent         = "pippa.voice.not_sent"
	MetricDeviceUptime    = "pippa.health.device_uptime"
	MetricAppUptime       = "pippa.health.app_uptime"
	MetricMemory          = "pippa.health.memory"
	MetricCushion         = "pippa.voice.cushion"
	MetricTakeBeside      = "pippa.tts.take.beside"
	MetricLinkStatus      = "pippa.link.status_changes"
)

// Metric attributes (bounded sets only: never a turn id or a take id).
const (
	LiveKind    = "pippa.live.kind"
	ListenStage = "pippa.listen.stage"
	// RouteChangeReason is also the metric attribute of pippa.route.changes.
)

// Listen-open stages (the value of pippa.listen.stage).
const (
	StageGrant   = "grant"
	StageSession = "session"
	StageTotal   = "total"
)

// Units (UCUM, as OpenTelemetry metric units).
const (
	UnitSeconds = "s"
	UnitBytes   = "By"
	UnitCount   = "{underrun}"
	UnitRatio   = "1"
)

// Prometheus names of the verdict counters the count connector produces; the
// dashboards and the alerts depend on them.
const (
	PromTurnsTotal      = "percause_turns_total"
	PromImplicatedTotal = "percause_cause_implicated_total"
)
