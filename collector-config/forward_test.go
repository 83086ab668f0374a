package collectorconfig_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	collectorconfig "github.com/percause/percause/collector-config"
	"github.com/percause/percause/internal/testsupport/testenv"
)

// One span as OTLP JSON: not a voice turn, so the verdict processor passes it
// straight on.
const probeSpan = `{"resourceSpans":[{"resource":{},"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c",` +
	`"spanId":"eee19b7ec3c1b174","name":"queued-on-disk","kind":1,"startTimeUnixNano":"1","endTimeUnixNano":"2"}]}]}]}`

// TestLocalForwardingQueueSurvivesARestart: with forwarding switched on, a
// trace the backend refused while it was down is kept in the sending queue
// under the data folder, and a collector started again on that folder
// delivers it once the backend is back. Nothing is sent after the restart, so
// what arrives can only come from the queue on disk.
func TestLocalForwardingQueueSurvivesARestart(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts the collector twice")
	}
	var up atomic.Bool
	var refused, delivered atomic.Int64
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			refused.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		body := io.Reader(r.Body)
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				t.Errorf("gzip: %v", err)
				return
			}
			body = zr
		}
		b, _ := io.ReadAll(body)
		if bytes.Contains(b, []byte("queued-on-disk")) {
			delivered.Add(1)
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	defer backend.Close()

	dataDir := t.TempDir()
	opts := []testenv.CollectorOption{
		testenv.WithCollectorEnv(collectorconfig.EnvDataDir, dataDir),
		testenv.WithCollectorEnv(collectorconfig.EnvVerdictFile, filepath.Join(dataDir, "verdicts.jsonl")),
		testenv.WithCollectorEnv(collectorconfig.EnvForwardExporters, "[otlphttp/traces]"),
		testenv.WithCollectorEnv(collectorconfig.EnvTracesForward, backend.URL+"/v1/traces"),
	}

	first := testenv.StartCollector(t, opts...)
	resp, err := http.Post(first.OTLPURL+"/v1/traces", "application/json", strings.NewReader(probeSpan))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("collector answered %s", resp.Status)
	}
	testenv.WaitFor(t, 30*time.Second, "the backend to refuse the trace once", func() bool { return refused.Load() > 0 })
	first.Stop()

	up.Store(true)
	testenv.StartCollector(t, opts...)
	testenv.WaitFor(t, 60*time.Second, "the queued trace to arrive after the restart", func() bool { return delivered.Load() > 0 })
}
