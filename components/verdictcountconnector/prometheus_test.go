package verdictcountconnector

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusexporter"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/testenv"
	"github.com/percause/percause/verdict"
)

// TestEveryCountReachesPrometheus: many requests' verdicts counted at once
// into the real Prometheus exporter, all on one series: its scrape shows
// every one. (Handed on concurrently, the exporter's read-then-store of
// each delta loses some.)
func TestEveryCountReachesPrometheus(t *testing.T) {
	f := prometheusexporter.NewFactory()
	cfg := f.CreateDefaultConfig().(*prometheusexporter.Config)
	cfg.ServerConfig.NetAddr.Endpoint = fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	exp, err := f.CreateMetrics(context.Background(), exportertest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	c := newCounter(t, exp)

	// One golden verdict, sent again under new span IDs: every copy counts
	// on the same series.
	var one ptrace.Traces
	for _, td := range verdictBatches(t) {
		if td.SpanCount() == 1 {
			one = td
			break
		}
	}
	const senders, each = 16, 200
	var wg sync.WaitGroup
	for g := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				td := ptrace.NewTraces()
				one.CopyTo(td)
				verdict.Each(td, func(_ pcommon.Resource, s ptrace.Span) {
					s.SetSpanID(pcommon.SpanID{byte(g), 1, 2, 3, byte(i >> 8), byte(i)})
				})
				if err := c.ConsumeTraces(context.Background(), td); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	resp, err := http.Get("http://" + cfg.ServerConfig.NetAddr.Endpoint + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var got float64
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, semconv.PromTurnsTotal+"{") {
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			got += v
		}
	}
	if want := float64(senders * each); got != want {
		t.Errorf("the scrape counts %v turns of %v counted", got, want)
	}
}
