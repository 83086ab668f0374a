package jsclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/linestest"
	"github.com/percause/percause/internal/testsupport/testenv"
	"github.com/percause/percause/lab/verdicts"
)

// TestJSClientGetsTheGoSDKsVerdicts: the Go SDK records one turn per cause
// (internal/testsupport/linestest) and sends it to the real collector binary; the
// OpenTelemetry JavaScript SDK (client.js, on node) records the same turns
// and sends every span in a request of its own, in a shuffled order, without
// pippa.turn.units and without any of the history the Go SDK adds
// (pippa.live.<kind>.before, pippa.pool.resets.before), each run a launch of
// its own. Every turn gets exactly the verdict the Go SDK's got: the pool
// and state turns read their launch's earlier turns from what the collector
// keeps of each launch. A control run sends the turns with pippa.turn.units:
// it holds whatever the collector's decision window.
func TestJSClientGetsTheGoSDKsVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary and node")
	}
	node := needNode(t)
	rec, err := linestest.Record(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	col := testenv.StartCollector(t, testenv.WithCollectorEnv("PERCAUSE_DECISION_WAIT", "1s"))
	reader := verdicts.NewReader(col.VerdictFile)

	// The Go SDK's own turns.
	for _, td := range rec.Traces {
		body, err := ptraceotlp.NewExportRequestFromTraces(td).MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Post(col.OTLPURL+"/v1/traces", "application/x-protobuf", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("HTTP %d", resp.StatusCode)
		}
	}
	goVerdicts := wait(t, reader, rec.Order)
	byName := map[string]verdicts.Verdict{}
	for id, v := range goVerdicts {
		byName[rec.Names[id]] = v
	}
	for id, want := range rec.Expect {
		if v := goVerdicts[id]; v.Cause != want {
			t.Fatalf("the Go SDK's %s turn: %s, the set expects %s", rec.Names[id], v.Cause, want)
		}
	}

	script := filepath.Join(t.TempDir(), "turns.json")
	writeScript(t, script, rec)
	seed := time.Now().UnixNano() % 1000003
	t.Logf("shuffle seed %d (node client.js %s %s %d)", seed, script, col.OTLPURL, seed)

	t.Run("with units", func(t *testing.T) {
		compare(t, byName, runClient(t, node, reader, script, col.OTLPURL, seed, "--with-units"))
	})
	// A turn without pippa.turn.units is decided once its trace has been
	// quiet for the processor's decision_wait, never at once: the spans
	// sent after the voice.turn are all read.
	t.Run("without units", func(t *testing.T) {
		compare(t, byName, runClient(t, node, reader, script, col.OTLPURL, seed+1))
	})
}

// needNode finds node and installs the client's packages (npm ci, pinned by
// package-lock.json) when they are not there yet.
func needNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is not installed (CI needs it: .ci/run)")
		}
		t.Skip("node is not installed")
	}
	if _, err := os.Stat(filepath.Join("node_modules", "@opentelemetry", "sdk-trace")); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Fatal("node_modules is missing and npm is not installed")
		}
		cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm ci: %v\n%s", err, out)
		}
	}
	return node
}

// runClient runs client.js and returns its turns' verdicts by turn name.
func runClient(t *testing.T, node string, reader *verdicts.Reader, script, otlp string, seed int64, flags ...string) map[string]verdicts.Verdict {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"client.js", script, otlp, fmt.Sprint(seed)}, flags...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client.js: %v\n%s", err, errb.String())
	}
	names := map[string]string{}
	var ids []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		name, id, ok := strings.Cut(l, " ")
		if !ok {
			t.Fatalf("client.js printed %q", l)
		}
		names[id] = name
		ids = append(ids, id)
	}
	if len(ids) != len(linestest.Turns) {
		t.Fatalf("client.js sent %d turns, want %d", len(ids), len(linestest.Turns))
	}
	got := map[string]verdicts.Verdict{}
	for id, v := range wait(t, reader, ids) {
		got[names[id]] = v
	}
	return got
}

func wait(t *testing.T, reader *verdicts.Reader, ids []string) map[string]verdicts.Verdict {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	vs, err := reader.Wait(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func compare(t *testing.T, want, got map[string]verdicts.Verdict) {
	t.Helper()
	for _, turn := range linestest.Turns {
		w, g := want[turn.Name], got[turn.Name]
		if g.Cause != w.Cause || strings.Join(g.Causes, ",") != strings.Join(w.Causes, ",") || g.Evidence != w.Evidence || g.Forced != w.Forced {
			t.Errorf("%s: the JavaScript client's turn got %s %v %q (forced %q); the Go SDK's %s %v %q (forced %q)",
				turn.Name, g.Cause, g.Causes, g.Evidence, g.Forced, w.Cause, w.Causes, w.Evidence, w.Forced)
		}
	}
}

// The script client.js reads: each turn's spans as the Go SDK made them.
type scriptAttr struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

type scriptEvent struct {
	Name       string       `json:"name"`
	Time       string       `json:"time"`
	Attributes []scriptAttr `json:"attributes"`
}

type scriptSpan struct {
	Name       string        `json:"name"`
	Start      string        `json:"start"`
	End        string        `json:"end"`
	Attributes []scriptAttr  `json:"attributes"`
	Events     []scriptEvent `json:"events,omitempty"`
}

type scriptTurn struct {
	Name  string       `json:"name"`
	Spans []scriptSpan `json:"spans"`
}

func writeScript(t *testing.T, path string, rec *linestest.Recorded) {
	t.Helper()
	byTrace := map[string][]scriptSpan{}
	res := map[string]map[string]any{}
	for _, td := range rec.Traces {
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			rs := rss.At(i)
			svc, _ := rs.Resource().Attributes().Get(semconv.ServiceName)
			res[svc.AsString()] = rs.Resource().Attributes().AsRaw()
			sss := rs.ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				spans := sss.At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					s := spans.At(k)
					ss := scriptSpan{Name: s.Name(), Start: fmt.Sprint(uint64(s.StartTimestamp())), End: fmt.Sprint(uint64(s.EndTimestamp())),
						Attributes: attrsOf(s.Attributes())}
					for e := 0; e < s.Events().Len(); e++ {
						ev := s.Events().At(e)
						ss.Events = append(ss.Events, scriptEvent{Name: ev.Name(), Time: fmt.Sprint(uint64(ev.Timestamp())), Attributes: attrsOf(ev.Attributes())})
					}
					byTrace[s.TraceID().String()] = append(byTrace[s.TraceID().String()], ss)
				}
			}
		}
	}
	doc := struct {
		Phone  map[string]any `json:"phone_resource"`
		Engine map[string]any `json:"engine_resource"`
		Turns  []scriptTurn   `json:"turns"`
	}{Phone: res[semconv.ServicePhone], Engine: res[semconv.ServiceEngine]}
	for _, id := range rec.Order {
		doc.Turns = append(doc.Turns, scriptTurn{Name: rec.Names[id], Spans: byTrace[id]})
	}
	b, err := json.MarshalIndent(doc, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// attrsOf writes attributes as JavaScript values: numbers, strings, bools
// and arrays (a whole-number double becomes a JavaScript number like any
// other, and the exporter sends it as an int, as every JavaScript client
// does).
func attrsOf(m pcommon.Map) []scriptAttr {
	var out []scriptAttr
	m.Range(func(k string, v pcommon.Value) bool {
		out = append(out, scriptAttr{Key: k, Value: v.AsRaw()})
		return true
	})
	return out
}
