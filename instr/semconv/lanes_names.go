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
	// CallNotSent is how long the call waited for a connection, in seconds
	// (person-time).
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
)

// LinkStatuses lists every pippa.link.status value.
var LinkStatuses = []string{
	LinkStatusOK, LinkStatusReconnecting, LinkStatusConnectionLost, LinkStatusEngineRestarting,
	LinkStatusDeviceOffline, LinkStatusUnreachable, LinkStatusLaneSaturated,
}

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
)

// Metric units of the lanes' and link status' instruments.
const (
	UnitResets  = "{reset}"
	UnitReplies = "{reply}"
	UnitChanges = "{change}"
)
