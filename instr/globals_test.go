package instr

import (
	"context"
	"slices"
	"testing"

	"github.com/percause/percause/instr/semconv"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestSetupLeavesGlobalsAlone: Setup installs no global propagator, tracer
// provider or meter provider (docs/decisions/0104-setup-leaves-globals-alone.md):
// what the app set before is what it finds after, for every SDK it sets up.
func TestSetupLeavesGlobalsAlone(t *testing.T) {
	prevProp, prevTP, prevMP := otel.GetTextMapPropagator(), otel.GetTracerProvider(), otel.GetMeterProvider()
	t.Cleanup(func() {
		otel.SetTextMapPropagator(prevProp)
		otel.SetTracerProvider(prevTP)
		otel.SetMeterProvider(prevMP)
	})
	// The app's own choices: a propagator percause would never pick, and
	// providers of its own.
	appProp := propagation.Baggage{}
	appTP := sdktrace.NewTracerProvider()
	appMP := sdkmetric.NewMeterProvider()
	t.Cleanup(func() { _ = appTP.Shutdown(context.Background()); _ = appMP.Shutdown(context.Background()) })
	otel.SetTextMapPropagator(appProp)
	otel.SetTracerProvider(appTP)
	otel.SetMeterProvider(appMP)

	for _, service := range []string{semconv.ServicePhone, semconv.ServiceEngine} {
		sdk, err := Setup(context.Background(), WithServiceName(service),
			WithSpanExporter(tracetest.NewInMemoryExporter()), WithMetricReader(sdkmetric.NewManualReader()))
		if err != nil {
			t.Fatal(err)
		}
		_, turn := sdk.StartTurn(context.Background())
		turn.End()
		_ = sdk.Shutdown(context.Background())
	}
	if got := otel.GetTextMapPropagator().Fields(); !slices.Equal(got, appProp.Fields()) {
		t.Errorf("the global propagator carries %v after Setup, want the app's %v", got, appProp.Fields())
	}
	if otel.GetTracerProvider() != appTP {
		t.Error("Setup replaced the global tracer provider")
	}
	if otel.GetMeterProvider() != appMP {
		t.Error("Setup replaced the global meter provider")
	}
	// What the SDK itself injects does not depend on the global.
	if got := Propagator().Fields(); !slices.Contains(got, "traceparent") {
		t.Errorf("instr.Propagator carries %v, want traceparent", got)
	}
}
