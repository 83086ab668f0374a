package instr

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
)

var propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// Propagator is the W3C Trace Context (and Baggage) propagator the phone and
// the engine agree on. Setup does not install it as the global propagator
// (docs/decisions/0104-setup-leaves-globals-alone.md): Inject, Extract and
// the lanes use it explicitly, and otelhttp transports and handlers need it
// given, with otelhttp.WithPropagators(instr.Propagator()), or installed once
// by the app: otel.SetTextMapPropagator(instr.Propagator()).
func Propagator() propagation.TextMapPropagator { return propagator }

// Inject writes ctx's traceparent into h (an outgoing call of the turn).
func Inject(ctx context.Context, h http.Header) { propagator.Inject(ctx, propagation.HeaderCarrier(h)) }

// Extract returns ctx carrying the remote span context from h (an incoming
// call), so StartTake continues the phone's trace.
func Extract(ctx context.Context, h http.Header) context.Context {
	return propagator.Extract(ctx, propagation.HeaderCarrier(h))
}
