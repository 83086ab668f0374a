package semconv

import (
	"slices"
	"strings"
)

// Route-change reasons (the value of pippa.route_change.reason, after the
// audio session's own route-change reasons). The pippa.route.changes metric
// carries only these; any other reason is counted as RouteReasonOther while
// the span event keeps it as given.
const (
	RouteReasonNewDevice    = "new_device_available"
	RouteReasonOldDevice    = "old_device_unavailable"
	RouteReasonCategory     = "category_change"
	RouteReasonOverride     = "override"
	RouteReasonWake         = "wake_from_sleep"
	RouteReasonNoSuitable   = "no_suitable_route"
	RouteReasonConfigChange = "route_config_change"
	RouteReasonUnknown      = "unknown"
	RouteReasonOther        = "other"
)

// RouteReasons lists every route-change reason a metric may carry.
var RouteReasons = []string{RouteReasonNewDevice, RouteReasonOldDevice, RouteReasonCategory, RouteReasonOverride,
	RouteReasonWake, RouteReasonNoSuitable, RouteReasonConfigChange, RouteReasonUnknown, RouteReasonOther}

// Links lists every value of network.connection.type a metric may carry;
// anything else is counted as LinkUnknown.
var Links = []string{LinkWifi, LinkCell, LinkWired, LinkUnavailable, LinkUnknown}

// BluetoothPortPrefix marks a Bluetooth port kind (bluetooth_a2dp,
// bluetooth_hfp, bluetooth_le): pippa.route.bluetooth is true when any output
// starts with it.
const BluetoothPortPrefix = "bluetooth"

// IsBluetoothPort reports whether a port kind is a Bluetooth one.
func IsBluetoothPort(kind string) bool { return strings.HasPrefix(kind, BluetoothPortPrefix) }

// Bluetooth reports whether any of outputs is a Bluetooth port: the value
// of pippa.route.bluetooth when the route does not say.
func Bluetooth(outputs []string) bool { return slices.ContainsFunc(outputs, IsBluetoothPort) }

// Port kinds (values of pippa.route.inputs and pippa.route.outputs).
const (
	PortBluetoothA2DP   = "bluetooth_a2dp"
	PortBluetoothHFP    = "bluetooth_hfp"
	PortBluetoothLE     = "bluetooth_le"
	PortBuiltinSpeaker  = "builtin_speaker"
	PortBuiltinReceiver = "builtin_receiver"
	PortBuiltinMic      = "builtin_mic"
	PortHeadphones      = "headphones"
	PortCarAudio        = "car_audio"
)

// The exporter's and the SDK's own telemetry (self-telemetry), so an offline
// stretch, a full spool or rejected recordings show on a dashboard.
const (
	MetricExporterQueued      = "percause.exporter.queued"       // gauge: batches on disk, not yet accepted
	MetricExporterQueuedBytes = "percause.exporter.queued_bytes" // gauge: their bytes
	MetricExporterSent        = "percause.exporter.sent"         // counter: batches the collector accepted
	MetricExporterDropped     = "percause.exporter.dropped"      // counter by percause.exporter.reason
	MetricExporterFailures    = "percause.exporter.failures"     // counter: failed send attempts (retried)
	MetricExporterDeferred    = "percause.exporter.deferred"     // counter: waits while the voice lane was busy
	MetricExporterSuperseded  = "percause.exporter.superseded"   // counter: metric batches replaced by a newer collection while queued
	MetricSDKRejected         = "percause.sdk.rejected"          // counter by percause.sdk.call: recordings refused as bad input

	ExporterReason = "percause.exporter.reason"
	SDKCall        = "percause.sdk.call"
)

// Values of percause.exporter.reason.
const (
	DropFull     = "full"     // the spool's size bound dropped it, oldest first
	DropTorn     = "torn"     // a torn or corrupt file, skipped
	DropRejected = "rejected" // the collector refused it permanently
)

// Units of the SDK's own metrics.
const (
	UnitBatches = "{batch}"
	UnitTurns   = "{turn}"
	UnitObjects = "{object}"
	// UnitChanges ({change}) is declared with the lanes' names.
	UnitTakes = "{take}"
	UnitCalls = "{call}"
)
