package dashboards

import (
	"strings"

	"github.com/percause/percause/instr/semconv"
)

// kind is how an OpenTelemetry instrument reaches Prometheus; it decides the
// suffixes the collector's Prometheus exporter adds to the name.
type kind int

const (
	kindCounter   kind = iota // monotonic sum: _total
	kindGauge                 // gauge or non-monotonic sum: no suffix
	kindHistogram             // _bucket, _sum, _count
)

// instrument is one instrument of instr/semconv with what the Prometheus name
// depends on: its unit and its kind.
type instrument struct {
	otel string
	unit string
	kind kind
}

// prom is the name the Prometheus exporter gives the metric (the
// "underscore escaping with suffixes" translation): dots become
// underscores, a unit in braces is dropped, s becomes _seconds and By
// _bytes unless the name already ends so, a gauge of unit 1 gets _ratio,
// and a monotonic counter gets _total. Histograms are named without their
// _bucket/_sum/_count suffix; see bucket, sum and count.
func (m instrument) prom() string {
	name := escape(m.otel)
	if u := promUnit(m.unit, m.kind); u != "" && !strings.HasSuffix(name, "_"+u) {
		name += "_" + u
	}
	if m.kind == kindCounter {
		name += "_total"
	}
	return name
}

func (m instrument) bucket() string { return m.prom() + "_bucket" }
func (m instrument) sum() string    { return m.prom() + "_sum" }
func (m instrument) count() string  { return m.prom() + "_count" }

func promUnit(unit string, k kind) string {
	switch {
	case unit == "", strings.HasPrefix(unit, "{"):
		return ""
	case unit == semconv.UnitSeconds:
		return "seconds"
	case unit == semconv.UnitBytes:
		return "bytes"
	case unit == semconv.UnitRatio:
		if k == kindGauge {
			return "ratio"
		}
		return ""
	default:
		return escape(unit)
	}
}

// escape maps an OpenTelemetry name or attribute key to a Prometheus
// metric or label name: every character outside [a-zA-Z0-9_:] becomes an
// underscore, and runs of underscores collapse to one.
func escape(s string) string {
	var b strings.Builder
	last := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c == '_' || c == ':' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9' && i > 0)
		if !ok {
			c = '_'
		}
		if c == '_' && last == '_' {
			continue
		}
		b.WriteByte(c)
		last = c
	}
	return b.String()
}

// label is the Prometheus label name of an attribute key.
func label(key string) string { return escape(key) }

// The instruments the dashboards and alerts read. Units and kinds follow the
// SDK (instr); a Prometheus name that no longer matches what the collector
// exports fails the end-to-end test, which reads every query against a real
// Prometheus fed by the real pipeline.
var (
	mUnderruns       = instrument{semconv.MetricUnderruns, semconv.UnitCount, kindCounter}
	mSilence         = instrument{semconv.MetricSilence, semconv.UnitSeconds, kindHistogram}
	mUnitLead        = instrument{semconv.MetricUnitLead, semconv.UnitSeconds, kindHistogram}
	mCushion         = instrument{semconv.MetricCushion, semconv.UnitSeconds, kindHistogram}
	mTakeFirstByte   = instrument{semconv.MetricTakeFirstByte, semconv.UnitSeconds, kindHistogram}
	mTakeNeed        = instrument{semconv.MetricTakeNeed, semconv.UnitSeconds, kindHistogram}
	mTakeRate        = instrument{semconv.MetricTakeRate, semconv.UnitRatio, kindHistogram}
	mTakeBeside      = instrument{semconv.MetricTakeBeside, semconv.UnitTakes, kindHistogram}
	mLiveObjects     = instrument{semconv.MetricLiveObjects, semconv.UnitObjects, kindGauge}
	mPoolResets      = instrument{semconv.MetricPoolResets, semconv.UnitResets, kindCounter}
	mRepliesInFlight = instrument{semconv.MetricRepliesInFlight, semconv.UnitReplies, kindGauge}
	mRouteChanges    = instrument{semconv.MetricRouteChanges, semconv.UnitChanges, kindCounter}
	mListenOpen      = instrument{semconv.MetricListenOpen, semconv.UnitSeconds, kindHistogram}
	mTurns           = instrument{semconv.MetricTurns, semconv.UnitTurns, kindCounter}
	mSpeechEndToPost = instrument{semconv.MetricSpeechEndToPost, semconv.UnitSeconds, kindHistogram}
	mNotSent         = instrument{semconv.MetricNotSent, semconv.UnitSeconds, kindHistogram}
	mDeviceUptime    = instrument{semconv.MetricDeviceUptime, semconv.UnitSeconds, kindGauge}
	mAppUptime       = instrument{semconv.MetricAppUptime, semconv.UnitSeconds, kindGauge}
	mMemory          = instrument{semconv.MetricMemory, semconv.UnitBytes, kindGauge}
	mLinkStatus      = instrument{semconv.MetricLinkStatus, semconv.UnitChanges, kindCounter}
)

// Labels the queries select and group by.
var (
	lInstallation = label(semconv.AppInstallationID)
	lLaunch       = label(semconv.ServiceInstanceID)
	lService      = label(semconv.ServiceName)
	lLink         = label(semconv.NetworkConnectionType)
	lCause        = label(semconv.VerdictCause)
	lLane         = label(semconv.Lane)
	lLiveKind     = label(semconv.LiveKind)
	lReason       = label(semconv.RouteChangeReason)
	lStage        = label(semconv.ListenStage)
	lBluetooth    = label(semconv.RouteBluetooth)
	lLinkStatus   = label(semconv.LinkStatus)
)

// The verdict counters of the verdict count connector (names fixed by the
// architecture).
const (
	promTurns      = semconv.PromTurnsTotal
	promImplicated = semconv.PromImplicatedTotal
)
