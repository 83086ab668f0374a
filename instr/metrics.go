package instr

import (
	"context"
	"errors"

	"github.com/percause/percause/exporters/spool"
	"github.com/percause/percause/instr/semconv"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Histogram bucket boundaries, chosen around the thresholds the rules and the
// dashboards read (0.10 s lead, 1.5 s mic open, cushions of a second or two).
var (
	bucketsSeconds = []float64{0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10, 20, 30, 60}
	bucketsLead    = []float64{-5, -2, -1, -0.5, -0.3, -0.1, 0, 0.1, 0.3, 0.5, 1, 2, 5}
	bucketsRate    = []float64{0.25, 0.5, 0.75, 1, 1.25, 1.5, 2, 3, 5, 10, 20}
	bucketsBeside  = []float64{0, 1, 2, 3, 4, 6, 8, 12, 16}
)

// attrOpts is a precomputed attribute set in both option forms, so recording
// on a hot path allocates nothing for its attributes.
type attrOpts struct {
	add []metric.AddOption
	rec []metric.RecordOption
}

func newAttrOpts(kvs ...attribute.KeyValue) attrOpts {
	o := metric.WithAttributeSet(attribute.NewSet(kvs...))
	return attrOpts{add: []metric.AddOption{o}, rec: []metric.RecordOption{o}}
}

type instruments struct {
	underruns       metric.Int64Counter
	silence         metric.Float64Histogram
	unitLead        metric.Float64Histogram
	cushion         metric.Float64Histogram
	turns           metric.Int64Counter
	speechEndToPost metric.Float64Histogram
	notSent         metric.Float64Histogram
	listenOpen      metric.Float64Histogram
	routeChanges    metric.Int64Counter
	deviceUptime    metric.Float64Gauge
	appUptime       metric.Float64Gauge
	memory          metric.Int64Gauge
	takeFirstByte   metric.Float64Histogram
	takeNeed        metric.Float64Histogram
	takeRate        metric.Float64Histogram
	takeBeside      metric.Int64Histogram
	rejected        metric.Int64Counter
	// onError is the error handler every refusal is handed to.
	onError func(error)

	byLink map[string]attrOpts // network.connection.type
	// byLinkRoute labels pippa.voice.turns by link and by whether the route
	// was Bluetooth, so a dashboard can show the share of turns on one.
	byLinkRoute map[string][2]attrOpts
	byReason    map[string]attrOpts // pippa.route_change.reason
	byStage     [3]attrOpts         // grant, session, total
	byCall      map[string]attrOpts // percause.sdk.call
	none        attrOpts
}

// The recording calls whose refusals are counted (percause.sdk.call values).
var sdkCalls = []string{
	"Turn.Unit", "Turn.RouteChange", "Turn.SetRoute", "Turn.SetHealth", "Turn.SetListen", "Turn.SetRPM",
	"Turn.SetSpeechEndToPost", "Turn.SetNotSent", "Turn.SetPoolResets", "Turn.SetLink", "Turn.End", "Turn.MarkStutter",
	"StartTake", "Take.FirstByte", "Take.Progress", "Take.End", "Live.Add",
}

func newInstruments(m metric.Meter, live *Live, sp func() *spool.Spool) (*instruments, error) {
	var errs []error
	chk := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	in := &instruments{byLink: map[string]attrOpts{}, byLinkRoute: map[string][2]attrOpts{}, byReason: map[string]attrOpts{}, byCall: map[string]attrOpts{}}
	var err error
	in.underruns, err = m.Int64Counter(semconv.MetricUnderruns, metric.WithUnit(semconv.UnitCount),
		metric.WithDescription("Underruns while reading units aloud, by link."))
	chk(err)
	in.silence, err = m.Float64Histogram(semconv.MetricSilence, metric.WithUnit(semconv.UnitSeconds),
		metric.WithDescription("Silent seconds per unit read aloud (underruns), by link."),
		metric.WithExplicitBucketBoundaries(append([]float64{0}, bucketsSeconds...)...))
	chk(err)
	in.unitLead, err = m.Float64Histogram(semconv.MetricUnitLead, metric.WithUnit(semconv.UnitSeconds),
		metric.WithDescription("When each unit was queued relative to the previous unit's end (negative: late)."),
		metric.WithExplicitBucketBoundaries(bucketsLead...))
	chk(err)
	in.cushion, err = m.Float64Histogram(semconv.MetricCushion, metric.WithUnit(semconv.UnitSeconds),
		metric.WithDescription("Seconds buffered ahead of the play head per unit."),
		metric.WithExplicitBucketBoundaries(bucketsSeconds...))
	chk(err)
	in.turns, err = m.Int64Counter(semconv.MetricTurns, metric.WithUnit(semconv.UnitTurns),
		metric.WithDescription("Voice turns ended, by link."))
	chk(err)
	in.speechEndToPost, err = m.Float64Histogram(semconv.MetricSpeechEndToPost, metric.WithUnit(semconv.UnitSeconds),
		metric.WithDescription("End of speech to the post leaving the phone."),
		metric.WithExplicitBucketBoundaries(bucketsSeconds...))
	chk(err)
	in.notSent, err = m.Float64Histogram(semconv.MetricNotSent, metric.WithUnit(semconv.UnitSeconds),
		metric.WithDescription("The longest not-sent wait shown per turn (0: none)."),
		metric.WithExplicitBucketBoundaries(append([]float64{0}, bucketsSeconds...)...))
	chk(err)
	in.listenOpen, err = m.Float64Histogram(semconv.MetricListenOpen, metric.WithUnit(semconv.UnitSeconds),
		metric.WithDescription("Microphone-open stages, by pippa.listen.stage."),
		metric.WithExplicitBucketBoundaries(bucketsSeconds...))
	chk(err)
	in.routeChanges, err = m.Int64Counter(semconv.MetricRouteChanges, metric.WithUnit(semconv.UnitChanges),
		metric.WithDescription("Audio route changes while she reads, by reason."))
	chk(err)
	in.deviceUptime, err = m.Float64Gauge(semconv.MetricDeviceUptime, metric.WithUnit(semconv.UnitSeconds),
		metric.WithDescription("Device uptime at the last turn (goes down on a reboot)."))
	chk(err)
	in.appUptime, err = m.Float64Gauge(semconv.MetricAppUptime, metric.WithUnit(semconv.UnitSeconds),
		metric.WithDescription("App uptime at the last turn."))
	chk(err)
	in.memory, err = m.Int64Gauge(semconv.MetricMemory, metric.WithUnit(semconv.UnitBytes),
		metric.WithDescription("The app's memory at the last turn."))
	chk(err)
	in.takeFirstByte, err = m.Float64Histogram(semconv.MetricTakeFirstByte, metric.WithUnit(semconv.UnitSeconds),
		metric.WithDescription("Time to a take's first audio byte."),
		metric.WithExplicitBucketBoundaries(bucketsSeconds...))
	chk(err)
	in.takeNeed, err = m.Float64Histogram(semconv.MetricTakeNeed, metric.WithUnit(semconv.UnitSeconds),
		metric.WithDescription("The cushion a take alone needed to play without a gap."),
		metric.WithExplicitBucketBoundaries(append([]float64{0}, bucketsSeconds...)...))
	chk(err)
	in.takeRate, err = m.Float64Histogram(semconv.MetricTakeRate, metric.WithUnit(semconv.UnitRatio),
		metric.WithDescription("Audio seconds made per second of making."),
		metric.WithExplicitBucketBoundaries(bucketsRate...))
	chk(err)
	in.takeBeside, err = m.Int64Histogram(semconv.MetricTakeBeside, metric.WithUnit(semconv.UnitTakes),
		metric.WithDescription("The most other takes in flight at once during a take."),
		metric.WithExplicitBucketBoundaries(bucketsBeside...))
	chk(err)
	in.rejected, err = m.Int64Counter(semconv.MetricSDKRejected, metric.WithUnit(semconv.UnitCalls),
		metric.WithDescription("Recordings refused as bad input, by call."))
	chk(err)

	for _, l := range semconv.Links {
		in.byLink[l] = newAttrOpts(attribute.String(semconv.NetworkConnectionType, l))
		in.byLinkRoute[l] = [2]attrOpts{
			newAttrOpts(attribute.String(semconv.NetworkConnectionType, l), attribute.Bool(semconv.RouteBluetooth, false)),
			newAttrOpts(attribute.String(semconv.NetworkConnectionType, l), attribute.Bool(semconv.RouteBluetooth, true)),
		}
	}
	for _, r := range semconv.RouteReasons {
		in.byReason[r] = newAttrOpts(attribute.String(semconv.RouteChangeReason, r))
	}
	for i, s := range []string{semconv.StageGrant, semconv.StageSession, semconv.StageTotal} {
		in.byStage[i] = newAttrOpts(attribute.String(semconv.ListenStage, s))
	}
	for _, c := range sdkCalls {
		in.byCall[c] = newAttrOpts(attribute.String(semconv.SDKCall, c))
	}
	in.none = newAttrOpts()

	// Live objects: read when metrics are collected.
	kindOpts := make([]metric.ObserveOption, numKinds)
	for i, k := range semconv.LiveKinds {
		kindOpts[i] = metric.WithAttributeSet(attribute.NewSet(attribute.String(semconv.LiveKind, k)))
	}
	_, err = m.Int64ObservableGauge(semconv.MetricLiveObjects, metric.WithUnit(semconv.UnitObjects),
		metric.WithDescription("Live objects by pippa.live.kind (a count that only grows is the process holding something)."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			s := live.snapshot()
			for i, v := range s {
				o.Observe(v, kindOpts[i])
			}
			return nil
		}))
	chk(err)

	// The exporter's own telemetry, read from the spool.
	queued, err1 := m.Int64ObservableGauge(semconv.MetricExporterQueued, metric.WithUnit(semconv.UnitBatches),
		metric.WithDescription("Export batches on disk, not yet accepted by the collector."))
	queuedBytes, err2 := m.Int64ObservableGauge(semconv.MetricExporterQueuedBytes, metric.WithUnit(semconv.UnitBytes),
		metric.WithDescription("Bytes of the export batches on disk."))
	sent, err3 := m.Int64ObservableCounter(semconv.MetricExporterSent, metric.WithUnit(semconv.UnitBatches),
		metric.WithDescription("Export batches the collector accepted."))
	dropped, err4 := m.Int64ObservableCounter(semconv.MetricExporterDropped, metric.WithUnit(semconv.UnitBatches),
		metric.WithDescription("Export batches dropped, by percause.exporter.reason (full, torn, rejected)."))
	failures, err5 := m.Int64ObservableCounter(semconv.MetricExporterFailures, metric.WithUnit(semconv.UnitCalls),
		metric.WithDescription("Failed send attempts (retried later)."))
	deferred, err6 := m.Int64ObservableCounter(semconv.MetricExporterDeferred, metric.WithUnit(semconv.UnitCalls),
		metric.WithDescription("Times sending waited because the voice lane was busy."))
	superseded, err7 := m.Int64ObservableCounter(semconv.MetricExporterSuperseded, metric.WithUnit(semconv.UnitBatches),
		metric.WithDescription("Queued metric batches replaced by a newer cumulative collection (not lost data)."))
	errs = append(errs, err1, err2, err3, err4, err5, err6, err7)
	reasons := map[string]metric.ObserveOption{}
	for _, r := range []string{semconv.DropFull, semconv.DropTorn, semconv.DropRejected} {
		reasons[r] = metric.WithAttributeSet(attribute.NewSet(attribute.String(semconv.ExporterReason, r)))
	}
	_, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		s := sp()
		if s == nil {
			return nil
		}
		st := s.Stats()
		o.ObserveInt64(queued, int64(st.Queued))
		o.ObserveInt64(queuedBytes, st.QueuedBytes)
		o.ObserveInt64(sent, int64(st.Sent))
		o.ObserveInt64(dropped, int64(st.Dropped), reasons[semconv.DropFull])
		o.ObserveInt64(dropped, int64(st.Torn), reasons[semconv.DropTorn])
		o.ObserveInt64(dropped, int64(st.Rejected), reasons[semconv.DropRejected])
		o.ObserveInt64(failures, int64(st.Failures))
		o.ObserveInt64(deferred, int64(st.Deferred))
		o.ObserveInt64(superseded, int64(st.Superseded))
		return nil
	}, queued, queuedBytes, sent, dropped, failures, deferred, superseded)
	chk(err)
	return in, errors.Join(errs...)
}

func (in *instruments) link(typ string) attrOpts {
	if o, ok := in.byLink[typ]; ok {
		return o
	}
	return in.byLink[semconv.LinkUnknown]
}

// turnAttrs is the attribute set of pippa.voice.turns: the link and whether
// the route was Bluetooth.
func (in *instruments) turnAttrs(typ string, bluetooth bool) attrOpts {
	sets, ok := in.byLinkRoute[typ]
	if !ok {
		sets = in.byLinkRoute[semconv.LinkUnknown]
	}
	if bluetooth {
		return sets[1]
	}
	return sets[0]
}

func (in *instruments) reason(r string) attrOpts {
	if o, ok := in.byReason[r]; ok {
		return o
	}
	return in.byReason[semconv.RouteReasonOther]
}

// refuse reports a refused recording: counted by call in
// percause.sdk.rejected, then handed to the error handler.
func (in *instruments) refuse(call string, err error) {
	if o, ok := in.byCall[call]; ok {
		in.rejected.Add(context.Background(), 1, o.add...)
	}
	if in.onError != nil {
		in.onError(err)
	}
}
