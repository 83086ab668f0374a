// Package instr is percause's instrumentation SDK: what phone and engine code
// call to record one measurement per cause of "it breaks up".
//
// Setup builds a tracer and a meter provider with the resource of
// docs/architecture.md (service.name, service.instance.id per launch,
// app.installation.id) and the exporters of package exporters: every batch is
// encoded as OTLP protobuf, kept in a crash-safe disk spool and sent over
// OTLP/HTTP on a client of its own. Recording never waits for the network.
//
// The phone records one voice turn as one trace: StartTurn opens the root span
// voice.turn, Turn.Unit records each unit read aloud as a voice.unit child,
// the setters record the link, the route, health, the listen-open stages and
// so on, and Turn.End adds the live-object counts (from Live) with the history
// the verdict rules need (the counts at the end of up to 3 earlier turns of
// the launch, the pool-reset tally at the end of the previous turn), records
// the metrics and writes the [voice-turn] line. The SDK keeps that per-launch
// history itself, so each turn's trace is decidable alone.
//
// The engine records each take with StartTake (continuing the phone's trace
// from the request's traceparent, see Extract), FirstByte, Progress and
// End, which computes need (the cushion this take alone needed) and beside
// (the most other takes in flight at once during it).
//
// Setup installs no OpenTelemetry global: several SDKs can share a process
// (the lab runs a phone and an engine side by side), and the app owns its
// globals. Calls carry the turn's W3C traceparent through Inject, the lanes
// (instr/lanes) and, for an app's own otelhttp clients and handlers,
// otelhttp.WithPropagators(Propagator())
// (docs/decisions/0104-setup-leaves-globals-alone.md).
//
// Durations the SDK measures itself are multiplied by the time scale
// (WithTimeScale) so a lab run at scale 20 reports person-seconds; values
// passed in are taken as given. The recording calls return nothing, as
// OpenTelemetry's setters do: bad input (NaN, negative durations, a unit
// before its turn started, a report ended twice) is refused with an error
// wrapping ErrInvalid or ErrEnded, counted in percause.sdk.rejected and
// handed to the error handler (WithErrorHandler; by default the SDK's
// logger). Nothing panics, and a refused reading leaves the report as it was
// (docs/decisions/0105-recording-calls-return-nothing.md).
package instr
