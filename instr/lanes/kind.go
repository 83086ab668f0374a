package lanes

import (
	"fmt"
	"time"

	"github.com/percause/percause/instr/semconv"
)

// Kind is the kind of a call. The kind picks the lane that carries the call
// and the timeouts it runs under; it is recorded on the call's span as
// pippa.call.kind.
type Kind string

// The kinds of call the phone makes (docs/domain.md, "What was learned about
// the connections": traffic is split by kind).
const (
	// Control lane: short replies that must never queue behind audio.
	KindCheck   Kind = "check"   // the progress check, every 3 s, 5 s timeout
	KindRead    Kind = "read"    // reads and polls
	KindGrant   Kind = "grant"   // the listening grant
	KindPost    Kind = "post"    // the turn's post (what was said)
	KindPrepare Kind = "prepare" // a take ticket (/api/tts/prepare)
	KindEnsure  Kind = "ensure"  // make a take whole first (/api/tts/ensure)
	KindRTT     Kind = "rtt"     // the responsiveness round trip

	// Bulk lane: transfers that may take a while and must not hold up control.
	KindTake     Kind = "take"     // a take's byte stream
	KindUpload   Kind = "upload"   // speech and the microphone-rate copy (~2 MB)
	KindDownload Kind = "download" // media, video
	KindProbe    Kind = "probe"    // the quiet probe of the bulk lane itself

	// A connection of its own on every turn: the turn's line stream, and the
	// microphone's listening socket.
	KindLines  Kind = "lines"
	KindListen Kind = "listen"
)

// Default timeouts, in person-time (scaled by WithTimeScale).
const (
	DefaultCheckTimeout   = 5 * time.Second
	DefaultReadTimeout    = 10 * time.Second
	DefaultGrantTimeout   = 20 * time.Second
	DefaultPostTimeout    = 20 * time.Second
	DefaultPrepareTimeout = 30 * time.Second
	DefaultEnsureTimeout  = 60 * time.Second
	DefaultRTTTimeout     = 5 * time.Second
	DefaultProbeTimeout   = 5 * time.Second
	DefaultUploadTimeout  = 120 * time.Second

	// Streams: how long until the reply's headers, and the longest silence
	// between two reads once it streams.
	DefaultStreamHeaderTimeout = 20 * time.Second
	DefaultTakeIdle            = 10 * time.Second
	DefaultDownloadIdle        = 20 * time.Second
	DefaultLinesIdle           = 60 * time.Second
	DefaultListenIdle          = 60 * time.Second
)

// Policy is how one kind of call is carried.
type Policy struct {
	// Lane is semconv.LaneControl, semconv.LaneBulk or semconv.LaneStream.
	Lane string
	// Timeout bounds a buffered reply as a whole: from the call's start to
	// the end of its body. Unused for streams.
	Timeout time.Duration
	// Stream marks a byte or line stream: instead of one deadline it gets
	// HeaderTimeout until the reply's headers and Idle between reads.
	Stream        bool
	HeaderTimeout time.Duration
	Idle          time.Duration
}

// Validate reports a policy that cannot carry a call.
func (p Policy) Validate() error {
	switch p.Lane {
	case semconv.LaneControl, semconv.LaneBulk, semconv.LaneStream:
	default:
		return fmt.Errorf("lane %q is not %s, %s or %s", p.Lane, semconv.LaneControl, semconv.LaneBulk, semconv.LaneStream)
	}
	if p.Stream {
		if p.HeaderTimeout <= 0 || p.Idle <= 0 {
			return fmt.Errorf("a stream needs a positive HeaderTimeout and Idle, got %s and %s", p.HeaderTimeout, p.Idle)
		}
		return nil
	}
	if p.Lane == semconv.LaneStream {
		return fmt.Errorf("the %s lane carries streams only", semconv.LaneStream)
	}
	if p.Timeout <= 0 {
		return fmt.Errorf("a buffered reply needs a positive Timeout, got %s", p.Timeout)
	}
	return nil
}

// DefaultPolicies returns the policy of every built-in kind.
func DefaultPolicies() map[Kind]Policy {
	ctl := func(d time.Duration) Policy { return Policy{Lane: semconv.LaneControl, Timeout: d} }
	return map[Kind]Policy{
		KindCheck:    ctl(DefaultCheckTimeout),
		KindRead:     ctl(DefaultReadTimeout),
		KindGrant:    ctl(DefaultGrantTimeout),
		KindPost:     ctl(DefaultPostTimeout),
		KindPrepare:  ctl(DefaultPrepareTimeout),
		KindEnsure:   ctl(DefaultEnsureTimeout),
		KindRTT:      ctl(DefaultRTTTimeout),
		KindTake:     {Lane: semconv.LaneBulk, Stream: true, HeaderTimeout: DefaultStreamHeaderTimeout, Idle: DefaultTakeIdle},
		KindUpload:   {Lane: semconv.LaneBulk, Timeout: DefaultUploadTimeout},
		KindDownload: {Lane: semconv.LaneBulk, Stream: true, HeaderTimeout: DefaultStreamHeaderTimeout, Idle: DefaultDownloadIdle},
		KindProbe:    {Lane: semconv.LaneBulk, Timeout: DefaultProbeTimeout},
		KindLines:    {Lane: semconv.LaneStream, Stream: true, HeaderTimeout: DefaultStreamHeaderTimeout, Idle: DefaultLinesIdle},
		KindListen:   {Lane: semconv.LaneStream, Stream: true, HeaderTimeout: DefaultStreamHeaderTimeout, Idle: DefaultListenIdle},
	}
}
