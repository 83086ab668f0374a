package verdictcountconnector

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/exporter/prometheusexporter"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.uber.org/zap"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/testenv"
	"github.com/percause/percause/verdict"
)

// TestEveryCountReachesPrometheus: many requests' verdicts counted at once
// into the real Prometheus exporter, all on one series: its scrape shows
// every one. (Handed on concurrently, the exporter's read-then-store of
// each delta loses some.)
func TestEveryCountReachesPrometheus(t *testing.T) {
	exp, cfg := startPrometheus(t, nil)
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

// TestQuietInstallationsKeepOnlyTheirOwnCounts: the Prometheus exporter
// keeps, for each series, the resource of the delivery that last changed it,
// and with it everything that resource holds. Deliveries come from the real
// hand-on into the real exporter (resource attributes made labels, as in
// local.yaml): each one counts a turn of one installation that then goes
// quiet, beside turns of busy installations that every later delivery
// counts again. What the exporter still holds must grow with the series,
// not with every delivery's points that a quiet installation's series was
// handed on with.
func TestQuietInstallationsKeepOnlyTheirOwnCounts(t *testing.T) {
	exp, _ := startPrometheus(t, []string{semconv.AppInstallationID, "service.name", "service.instance.id", "service.version"})
	counts := newCommittedCounts(0, exp.ConsumeMetrics, zap.NewNop())

	const quiet, busy = 300, 400
	res := pcommon.NewResource()
	res.Attributes().PutStr("service.name", "pippa-phone")
	res.Attributes().PutStr("service.version", "1.0.0")
	delivery := func(d int) []resourceCounts {
		rc := resourceCounts{res: pcommon.NewResource(), ts: pcommon.Timestamp(1)}
		res.CopyTo(rc.res)
		rc.points = append(rc.points, point{metric: MetricTurns, attrs: [3]string{"network", "wifi", fmt.Sprintf("quiet-%d", d)}, count: 1})
		for b := range busy {
			rc.points = append(rc.points, point{metric: MetricTurns, attrs: [3]string{"none", "wifi", fmt.Sprintf("busy-%d", b)}, count: 1})
		}
		return []resourceCounts{rc}
	}
	counts.add(delivery(0)) // the exporter's own first-use allocations
	held := func() uint64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := held()
	for d := 1; d <= quiet; d++ {
		counts.add(delivery(d))
	}
	after := held()
	perSeries := int64(after-before) / quiet
	t.Logf("the exporter holds %d bytes more for %d more series (%d a series)", after-before, quiet, perSeries)
	// A series of its own costs the exporter about 2 KB, and the rest of
	// its entry (at most pointsPerEntry points) about 3 KB more; one that
	// kept its whole delivery alive costs that delivery's 401 points, about
	// 168 KB. The bound leaves room for what else the process allocates
	// meanwhile.
	if perSeries > 16<<10 {
		t.Errorf("each series holds %d bytes: the quiet installations' series keep their whole deliveries", perSeries)
	}
	runtime.KeepAlive(counts)
}

// startPrometheus starts the real Prometheus exporter on a free loopback
// port, the resource attributes named in labels made labels
// (resource_constant_labels), and shuts it down when the test ends.
func startPrometheus(t *testing.T, labels []string) (exporter.Metrics, *prometheusexporter.Config) {
	t.Helper()
	f := prometheusexporter.NewFactory()
	cfg := f.CreateDefaultConfig().(*prometheusexporter.Config)
	cfg.ServerConfig.NetAddr.Endpoint = fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	cfg.ResourceConstantLabels.Included = labels
	exp, err := f.CreateMetrics(context.Background(), exportertest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exp.Shutdown(context.Background()) })
	return exp, cfg
}
