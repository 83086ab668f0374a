package semconv

// Names added by the client's networking (instr/lanes) and the link status
// (instr/linkstatus). Constants only.

// Call attributes on the lanes' HTTP client spans (besides Lane and CallKind).
const (
	// PoolSession is the session (generation) of its lane that carried the
	// call: 1 at launch, one more after each pool reset.
	PoolSession = "pippa.pool.session"
	// CallSeq is the call's number within its session. It is recorded so a
	// reader can see two calls share a number across sessions; it is never
	// used to route a reply (replies are routed by the call itself).
	CallSeq = "pippa.call.seq"
	// CallOutcome is how the call ended: one of the CallOutcome* values.
	CallOutcome = "pippa.call.outcome"
	// CallNotSent is how long the call was not sent, in seconds
	// (person-time): until it had a connection, or, for a call with a body,
	// until the engine answered (docs/decisions/0107-sent-when-the-engine-hears-it.md).
	CallNotSent = "pippa.call.not_sent"
	// CallFresh marks a call made on a fresh connection of its own (the
	// responsiveness probe, the turn's line stream).
	CallFresh = "pippa.call.fresh"
	// CallOthers is how many other calls were open on the lane when the call
	// started.
	CallOthers = "pippa.call.others"
)

// Values of pippa.call.outcome.
const (
	CallOutcomeOK       = "ok"
	CallOutcomeTimeout  = "timeout"  // a buffered reply exceeded its kind's timeout
	CallOutcomeStalled  = "stalled"  // a byte or line stream went silent beyond its idle limit
	CallOutcomeLost     = "lost"     // a stream's connection broke mid-reply
	CallOutcomeCanceled = "canceled" // the caller gave up
	CallOutcomeError    = "error"    // any other failure (refused, DNS, …)
)

// Pool-reset event attributes (on EventPoolReset, recorded on the span of
// the call whose failure triggered the heal).
const (
	PoolResetsTally  = "pippa.pool.resets.tally"  // the lane's tally after this reset
	PoolOldInFlight  = "pippa.pool.old_in_flight" // calls left to finish on the old session
	PoolResetTrigger = "pippa.pool.reset.trigger" // the outcome that completed the streak
)

// Lane value for calls made on a fresh connection of their own outside any
// pool (the responsiveness probe's fresh round trip).
const LaneFresh = "fresh"

// Values of pippa.link.status (the counter MetricLinkStatus and the
// pippa.link.status span).
const (
	LinkStatusOK               = "ok"
	LinkStatusReconnecting     = "reconnecting"
	LinkStatusConnectionLost   = "connection_lost"
	LinkStatusEngineRestarting = "engine_restarting"
	LinkStatusDeviceOffline    = "device_offline"
	LinkStatusUnreachable      = "unreachable"
	LinkStatusLaneSaturated    = "lane_saturated"
	// LinkStatusStaleConnection: a fresh connection answers while the
	// failing lane's pooled connection hangs; shown while the pool heals.
	LinkStatusStaleConnection = "stale_connection"

	// The waits: what the phone is waiting on, said on the same line.
	LinkStatusMicOpening = "mic_opening" // "Opening the microphone…", naming the stage
	LinkStatusNotSent    = "not_sent"    // the turn's post not sent yet
	LinkStatusVoiceLate  = "voice_late"  // "Getting her voice ready…": the first unit's audio is late
)

// LinkStatuses lists every pippa.link.status value.
var LinkStatuses = []string{
	LinkStatusOK, LinkStatusReconnecting, LinkStatusConnectionLost, LinkStatusEngineRestarting,
	LinkStatusDeviceOffline, LinkStatusUnreachable, LinkStatusLaneSaturated, LinkStatusStaleConnection,
	LinkStatusMicOpening, LinkStatusNotSent, LinkStatusVoiceLate,
}

// WaitStatuses are the pippa.link.status values of the waits (the rest are
// the link's).
var WaitStatuses = []string{LinkStatusMicOpening, LinkStatusNotSent, LinkStatusVoiceLate}

// Probe readings recorded with each link-status change.
const (
	LinkCode          = "pippa.link.code"           // the warning's code
	LinkPrevious      = "pippa.link.previous"       // the status before this change
	LinkFailures      = "pippa.link.failures"       // check failures in a row
	LinkProbed        = "pippa.link.probed"         // the probes have completed
	LinkDeviceOnline  = "pippa.link.device_online"  // the device has a usable network path
	LinkFrontStatus   = "pippa.link.front_status"   // HTTP status of the engine's front (0: no answer)
	LinkOtherAnswered = "pippa.link.other_answered" // the engine answered on another lane or a fresh connection
	LinkLaneInFlight  = "pippa.link.lane_in_flight" // replies in flight on the failing lane
	LinkLaneLimit     = "pippa.link.lane_limit"     // the failing lane's connections per host
	LinkAdvice        = "pippa.link.advice"         // the advice shown with the message (tailnet advice)
	LinkPoolProbed    = "pippa.link.pool_probed"    // the failing lane's own pool was probed
	LinkPoolStatus    = "pippa.link.pool_status"    // HTTP status that pool's kept-alive connection answered with (0: no answer)
	// LinkPreviousMessage is the message the line showed last before this
	// change (a wait's message grows while it lasts: "not sent for 20s").
	LinkPreviousMessage = "pippa.link.previous_message"
)

// Readings recorded with each change of a wait's line (on the
// pippa.link.status span, besides pippa.lane and pippa.call.kind).
const (
	WaitFor         = "pippa.wait.for"          // seconds waited so far
	WaitStage       = "pippa.wait.stage"        // the microphone's stage waited on (a Stage* value)
	WaitOthers      = "pippa.wait.others"       // other calls open on the waiting call's lane
	WaitProbe       = "pippa.wait.probe"        // what the bulk lane's own probe found (a Probe* value)
	WaitProbeStatus = "pippa.wait.probe_status" // HTTP status of that probe (0: no answer)
	WaitProbeRTT    = "pippa.wait.probe_rtt"    // seconds that probe took
)

// StageSocket is the microphone's last stage: opening the listening socket
// (the other stages are StageSession and StageGrant).
const StageSocket = "socket"

// Values of pippa.wait.probe.
const (
	ProbeAnswered   = "answered"   // the bulk lane's pooled connection answered
	ProbeNoAnswer   = "no_answer"  // it did not answer within the probe's timeout
	ProbeRestarting = "restarting" // the engine's front answered 502, 503 or 504
	ProbeBusy       = "busy"       // every connection of the bulk lane is busy: not probed
)

// ProbeFindings lists every pippa.wait.probe value.
var ProbeFindings = []string{ProbeAnswered, ProbeNoAnswer, ProbeRestarting, ProbeBusy}

// Metric units of the lanes' and link status' instruments.
const (
	UnitResets  = "{reset}"
	UnitReplies = "{reply}"
	UnitChanges = "{change}"
)
