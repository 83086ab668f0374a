package linesconnector_test

import (
	"bytes"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/percause/percause/internal/testsupport/testenv"
	"github.com/percause/percause/lab/verdicts"
)

// TestHeldLinesOutliveAKillOfTheCollector: the real binary on
// collector-config/lines.yaml answers 200 to a turn line sent over OTLP
// that waits for its take (the lines connector's wait is an hour), and is
// killed (SIGKILL: nothing of it shuts down). Started again on the same
// data folder, it holds the turn again: the take sent then joins it, and
// the verdict file has one verdict for the turn, decided with its take.
// Before the held lines were stored, the kill lost the turn: the take
// waited alone and no verdict came.
func TestHeldLinesOutliveAKillOfTheCollector(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	const trace = "7d3efff798038103d269b633813fc60d"
	data := t.TempDir()
	verdictFile := filepath.Join(data, "verdicts.jsonl")
	cfg := filepath.Join(testenv.RepoRoot(), "collector-config", "lines.yaml")
	start := func() *testenv.Collector {
		return testenv.StartCollector(t, testenv.WithCollectorConfig(cfg),
			testenv.WithCollectorEnv("PERCAUSE_LINES_INCLUDE", "["+filepath.Join(t.TempDir(), "none.log")+"]"),
			testenv.WithCollectorEnv(testenv.EnvDataDir, data),
			testenv.WithCollectorEnv(testenv.EnvVerdictFile, verdictFile),
			testenv.WithCollectorEnv("PERCAUSE_LINES_WAIT", "1h"),
			testenv.WithCollectorEnv(testenv.EnvVerdictWait, "1s"))
	}

	col := start()
	postLines(t, col.OTLPURL, "[voice-turn] turn=1 trace="+trace+" link=wifi units=2 gaps=0.10,0.10 broke=2:1/0.50/1.50@t2")
	col.Kill()
	if n := countVerdicts(t, verdictFile)[trace]; n != 0 {
		t.Fatalf("%d verdicts before the take came: the turn did not wait for it, no test", n)
	}

	col = start()
	postLines(t, col.OTLPURL, "[tts-take] take=t2 trace="+trace+" need=2.00")
	var got []verdicts.Verdict
	testenv.WaitFor(t, 30*time.Second, "the turn's verdict", func() bool {
		got = verdictsOf(t, verdictFile, trace)
		return len(got) > 0
	})
	time.Sleep(time.Second) // a second verdict would come at once
	col.Stop()
	if got = verdictsOf(t, verdictFile, trace); len(got) != 1 {
		t.Fatalf("%d verdicts for the turn, want 1", len(got))
	}
	if got[0].Cause != "synthesis" {
		t.Fatalf("the turn was decided %s (%s), want synthesis: its take (need 2.00 s against a 1.50 s cushion) joined it", got[0].Cause, got[0].Evidence)
	}
}

// postLines sends lines as one OTLP/HTTP logs request and wants a 200.
func postLines(t *testing.T, base string, lines ...string) {
	t.Helper()
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for _, l := range lines {
		lrs.AppendEmpty().Body().SetStr(l)
	}
	body, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(base+"/v1/logs", "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the lines were answered %s, want 200", resp.Status)
	}
}

// verdictsOf reads the verdicts of one trace in the verdict file.
func verdictsOf(t *testing.T, path, trace string) []verdicts.Verdict {
	t.Helper()
	var out []verdicts.Verdict
	for _, v := range verdictsIn(t, path) {
		if v.TraceID == trace {
			out = append(out, v)
		}
	}
	return out
}
