package collectorconfig_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	collectorconfig "github.com/percause/percause/collector-config"
	loadtool "github.com/percause/percause/internal/command/load"
	"github.com/percause/percause/internal/testsupport/testenv"
	"github.com/percause/percause/lab/verdicts"
)

// TestLocalKeepsWhatFileStorageHeld: a data folder the verdict processor
// kept in file_storage (local.yaml with the processor's storage set back
// to file_storage, as it was before shared_storage) holds the engine's
// takes of turns whose phone spans have not come; the collector is killed.
// The embedded default started on that folder reads the processor's state
// in, so when the phone's spans come every turn gets its verdict, the
// one it was built for, once, and none is forced for a missing take.
func TestLocalKeepsWhatFileStorageHeld(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary twice")
	}
	const processorLine = "    storage: shared_storage\n"
	// The first such line is the verdict processor's (processors come
	// before the count connector, which shares the storage too).
	at, connectors := bytes.Index(collectorconfig.Local, []byte(processorLine)), bytes.Index(collectorconfig.Local, []byte("\nconnectors:"))
	if at < 0 || connectors < 0 || at > connectors || bytes.LastIndex(collectorconfig.Local[:at], []byte("\n  verdict:\n")) < 0 {
		t.Fatalf("local.yaml's verdict processor has no line %q", processorLine)
	}
	old := filepath.Join(t.TempDir(), "file-storage.yaml")
	if err := os.WriteFile(old, bytes.Replace(collectorconfig.Local, []byte(processorLine), []byte("    storage: file_storage\n"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	// Nothing is decided before the kill: the turns wait for their phone
	// spans far longer than the test takes.
	first := testenv.StartCollector(t, testenv.WithCollectorConfig(old),
		testenv.WithCollectorEnv(collectorconfig.EnvVerdictWait, "2m"))
	ctx := context.Background()
	fleet := loadtool.NewFleet(4, 0, 17)
	var turns []*loadtool.Turn
	send := loadtool.NewSender(first.OTLPURL+"/v1/traces", 4)
	for range 2 * len(loadtool.Causes) {
		tr := fleet.Next()
		if tr.Engine.SpanCount() == 0 {
			t.Fatalf("turn %s has no takes", tr.TraceID)
		}
		if err := send.Send(ctx, tr.Engine); err != nil {
			t.Fatal(err)
		}
		turns = append(turns, tr)
	}
	if got := readVerdicts(t, first.VerdictFile); len(got) != 0 {
		t.Fatalf("%d turns were decided before their phone spans came", len(got))
	}
	if _, err := os.Stat(filepath.Join(first.DataDir, "processor_verdict_")); err != nil {
		t.Fatalf("the processor kept nothing in file_storage: %v", err)
	}
	_ = syscall.Kill(-first.Cmd.Process.Pid, syscall.SIGKILL)
	testenv.WaitFor(t, 10*time.Second, "the first collector to die", first.Exited)

	// A turn whose takes were lost would wait this long for them, then be
	// decided without them (forced).
	second := testenv.StartCollector(t,
		testenv.WithCollectorEnv(collectorconfig.EnvDataDir, first.DataDir),
		testenv.WithCollectorEnv(collectorconfig.EnvVerdictFile, first.VerdictFile),
		testenv.WithCollectorEnv(collectorconfig.EnvVerdictWait, "10s"))
	send = loadtool.NewSender(second.OTLPURL+"/v1/traces", 4)
	for _, tr := range turns {
		if err := send.Send(ctx, tr.Phone); err != nil {
			t.Fatal(err)
		}
	}
	var got map[string][]verdicts.Verdict
	testenv.WaitFor(t, 60*time.Second, "a verdict for every turn", func() bool {
		got = readVerdicts(t, second.VerdictFile)
		return len(got) >= len(turns)
	})
	for _, tr := range turns {
		vs := got[tr.TraceID.String()]
		switch {
		case len(vs) != 1:
			t.Errorf("turn %s: %d verdicts, want 1", tr.TraceID, len(vs))
		case vs[0].Cause != tr.Cause || vs[0].Forced != "":
			t.Errorf("turn %s: verdict %s (forced %q: %s), want %s decided with its takes", tr.TraceID, vs[0].Cause, vs[0].Forced, vs[0].Evidence, tr.Cause)
		}
	}
	if out := second.Output(); !strings.Contains(out, "read in what file_storage kept for a client") {
		t.Errorf("the second collector did not say it read file_storage's data in:\n%s", out)
	}
}

// readVerdicts reads the verdict file: each trace's verdicts, in file
// order.
func readVerdicts(t *testing.T, path string) map[string][]verdicts.Verdict {
	t.Helper()
	out := map[string][]verdicts.Verdict{}
	b, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	// A running gateway may be writing the last line: only whole lines
	// (ended by their newline) are read.
	b = b[:bytes.LastIndexByte(b, '\n')+1]
	for line := range bytes.Lines(b) {
		vs, err := verdicts.Parse(bytes.TrimSuffix(line, []byte("\n")))
		if err != nil {
			t.Fatalf("a line of the verdict file is not OTLP/JSON: %v", err)
		}
		for _, v := range vs {
			out[v.TraceID] = append(out[v.TraceID], v)
		}
	}
	return out
}

// TestReadVerdictsLeavesALineBeingWritten: a gateway still running may be
// writing the verdict file's last line; read then, it is left for the
// next read, not taken for a bad line (the fleet test once failed so).
func TestReadVerdictsLeavesALineBeingWritten(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verdicts.jsonl")
	if err := os.WriteFile(path, []byte(`{"resourceSpans":[{"resource":{"attributes":[{"key":"service.na`), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := readVerdicts(t, path); len(got) != 0 {
		t.Errorf("read %d traces from a file holding only a line being written", len(got))
	}
}
