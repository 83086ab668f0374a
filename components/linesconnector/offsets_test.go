package linesconnector_test

import (
	"bufio"
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/percause/percause/internal/testsupport/testenv"
)

// The counters of what was read, as the collector serves them: the lines
// connector's own (every line it is handed, by outcome) and the receiver's
// (every log record the filelog receiver passed on).
const (
	linesReadMetric    = "otelcol_connector_lines_lines_total"
	receiverReadMetric = "otelcol_receiver_accepted_log_records_total"
	filelogReceiver    = "filelog/lines"
)

// TestFilelogReadsEachLineOnceAcrossARestart: the real binary on
// collector-config/lines.yaml reads a log, stops, and starts again on the
// same data folder after more lines were written; the filelog receiver
// resumes at the offset it kept in file_storage, so every line is read
// exactly once in all: the second process reads only the lines written
// after the first stopped. It counts what was read (the lines connector's
// telemetry and the receiver's), not the verdicts: a line read again makes
// a turn the processor has decided already, and its verdict is not written
// twice, so the verdict file cannot tell.
func TestFilelogReadsEachLineOnceAcrossARestart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	lines, ids := rounds(t, 2)
	logs, data := t.TempDir(), t.TempDir()
	app := filepath.Join(logs, "app.log")
	verdictFile := filepath.Join(data, "verdicts.jsonl")
	cfg := filepath.Join(testenv.RepoRoot(), "collector-config", "lines.yaml")
	start := func() *testenv.Collector {
		return testenv.StartCollector(t, testenv.WithCollectorConfig(cfg),
			testenv.WithCollectorEnv("PERCAUSE_LINES_INCLUDE", fmt.Sprintf("[%s]", app)),
			testenv.WithCollectorEnv(testenv.EnvDataDir, data),
			testenv.WithCollectorEnv(testenv.EnvVerdictFile, verdictFile),
			testenv.WithCollectorEnv("PERCAUSE_LINES_WAIT", "1s"),
			testenv.WithCollectorEnv(testenv.EnvVerdictWait, "1s"))
	}
	// readAll waits until the verdicts of round r are in the file: its last
	// line, a turn's, is then read, and with it every line before it in the
	// file (the receiver reads a file in order), so the counters are final.
	readAll := func(col *testenv.Collector, r int) (connector, receiver float64) {
		t.Helper()
		testenv.WaitFor(t, 60*time.Second, fmt.Sprintf("the verdicts of round %d", r+1), func() bool {
			n := countVerdicts(t, verdictFile)
			for _, id := range ids[r] {
				if n[id] == 0 {
					return false
				}
			}
			return true
		})
		tel := []byte(testenv.GetBody(t, col.TelemetryURL))
		return sumOf(tel, linesReadMetric, ""), sumOf(tel, receiverReadMetric, filelogReceiver)
	}

	appendLines(t, app, lines[0])
	col := start()
	conn1, recv1 := readAll(col, 0)
	col.Stop()
	appendLines(t, app, lines[1]) // written while it is down
	col = start()
	conn2, recv2 := readAll(col, 1)
	col.Stop()

	t.Logf("before the restart: %d lines written, the connector read %.0f, the receiver passed on %.0f; after: %d more written, %.0f and %.0f",
		len(lines[0]), conn1, recv1, len(lines[1]), conn2, recv2)
	if conn1 != float64(len(lines[0])) || recv1 != float64(len(lines[0])) {
		t.Errorf("the first process read %.0f lines (the receiver passed on %.0f), want the %d written", conn1, recv1, len(lines[0]))
	}
	if conn2 != float64(len(lines[1])) || recv2 != float64(len(lines[1])) {
		t.Errorf("after the restart the connector read %.0f lines and the receiver passed on %.0f, want only the %d written while it was down: "+
			"the receiver did not resume at its stored offset (filelog's storage: file_storage)", conn2, recv2, len(lines[1]))
	}
	n := countVerdicts(t, verdictFile)
	for r := range ids {
		for _, id := range ids[r] {
			if n[id] != 1 {
				t.Errorf("round %d trace %s: %d verdicts, want exactly 1", r+1, id, n[id])
			}
		}
	}
}

// sumOf adds up every series of metric in a Prometheus text exposition;
// with receiver set, only those of that receiver.
func sumOf(text []byte, metric, receiver string) float64 {
	var sum float64
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, metric)
		if !ok || rest == "" || (rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		if receiver != "" && !strings.Contains(rest, `receiver="`+receiver+`"`) {
			continue
		}
		f := strings.Fields(rest[strings.LastIndexByte(rest, '}')+1:])
		if len(f) == 0 {
			continue
		}
		if v, err := strconv.ParseFloat(f[0], 64); err == nil {
			sum += v
		}
	}
	return sum
}
