package verdictexporter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/confmap/confmaptest"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/components/verdictexporter/internal/metadata"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/leaf/vfs"
	"github.com/percause/percause/verdict"
)

// verdictBatch is a batch like the verdict processor's: one verdict span per
// turn n, under the phone's resource, with its events.
func verdictBatch(ns ...byte) ptrace.Traces {
	td := ptrace.NewTraces()
	for _, n := range ns {
		rs := td.ResourceSpans().AppendEmpty()
		rs.Resource().Attributes().PutStr(semconv.ServiceName, semconv.ServicePhone)
		rs.Resource().Attributes().PutStr(semconv.AppInstallationID, "install-1")
		ss := rs.ScopeSpans().AppendEmpty()
		ss.Scope().SetName("github.com/percause/percause/processors/verdictprocessor")
		ss.Scope().SetVersion("1")
		s := ss.Spans().AppendEmpty()
		s.SetTraceID(pcommon.TraceID{0xAA, 15: n})
		s.SetSpanID(pcommon.SpanID{0xBB, 7: n})
		s.SetParentSpanID(pcommon.SpanID{0xCC, 7: n})
		s.SetName(semconv.SpanVerdict)
		s.SetKind(ptrace.SpanKindInternal)
		ts := pcommon.NewTimestampFromTime(time.Date(2026, 12, 1, 8, 0, 0, int(n), time.UTC))
		s.SetStartTimestamp(ts)
		s.SetEndTimestamp(ts)
		a := s.Attributes()
		a.PutStr(semconv.VerdictCause, semconv.CauseSynthesis)
		causes := a.PutEmptySlice(semconv.VerdictCauses)
		causes.AppendEmpty().SetStr(semconv.CauseSynthesis)
		causes.AppendEmpty().SetStr(semconv.CauseWait)
		a.PutStr(semconv.VerdictEvidence, "unit 3: 2 underruns, 1.40 s silent; take t3 need 2.10 s > cushion 1.50 s \"quoted\" ≤ ünïcode\n")
		a.PutInt(semconv.TurnIndex, int64(n))
		a.PutDouble(semconv.VerdictSilent, 1.4)
		ev := s.Events().AppendEmpty()
		ev.SetName(semconv.SpanVerdict)
		ev.SetTimestamp(ts)
		ev.Attributes().PutStr(semconv.VerdictCause, semconv.CauseSynthesis)
	}
	return td
}

func start(t *testing.T, cfg *Config) *verdictExporter {
	t.Helper()
	e, err := newExporter(exportertest.NewNopSettings(metadata.Type), cfg, vfs.OS)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Shutdown(context.Background()) })
	return e
}

func config(path string) *Config {
	c := createDefaultConfig().(*Config)
	c.Path = path
	return c
}

// verdictIDs reads the file the way readers do (OTLP/JSON, one batch a
// line) and returns the verdict span IDs in order.
func verdictIDs(t *testing.T, path string) []pcommon.SpanID {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []pcommon.SpanID
	for _, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(line)
		if err != nil {
			t.Fatalf("a line of %s is not OTLP/JSON: %v\n%s", path, err, line)
		}
		verdict.Each(td, func(_ pcommon.Resource, s ptrace.Span) { out = append(out, s.SpanID()) })
	}
	return out
}

// TestWritesEachVerdictOnce: verdict spans are appended, other spans are
// not, and a verdict sent again (its span ID already written) is not
// written twice, within a batch or across batches.
func TestWritesEachVerdictOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v", "verdicts.jsonl")
	e := start(t, config(path))
	mixed := verdictBatch(1, 2)
	other := mixed.ResourceSpans().At(0).ScopeSpans().At(0).Spans().AppendEmpty()
	other.SetName(semconv.SpanVoiceTurn)
	other.SetSpanID(pcommon.SpanID{9})
	for _, td := range []ptrace.Traces{mixed, verdictBatch(2, 3), verdictBatch(3, 3), ptrace.NewTraces()} {
		if err := e.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
	}
	got := verdictIDs(t, path)
	want := []pcommon.SpanID{{0xBB, 7: 1}, {0xBB, 7: 2}, {0xBB, 7: 3}}
	if len(got) != len(want) {
		t.Fatalf("file holds verdicts %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("file holds verdicts %v, want %v", got, want)
		}
	}
}

// TestRecoversAfterACrash: a line a crash left half written is cut off at
// start, and the verdicts of the complete lines before it are known, so a
// verdict sent again after the restart is not written twice.
func TestRecoversAfterACrash(t *testing.T) {
	path := filepath.Join(t.TempDir(), "verdicts.jsonl")
	e := start(t, config(path))
	if err := e.ConsumeTraces(context.Background(), verdictBatch(1, 2)); err != nil {
		t.Fatal(err)
	}
	_ = e.Shutdown(context.Background())
	whole, _ := os.ReadFile(path)
	torn, _ := appendJSON(nil, verdictBatch(3))
	if err := os.WriteFile(path, append(whole, torn[:len(torn)/2]...), 0o644); err != nil {
		t.Fatal(err)
	}

	e2 := start(t, config(path))
	if b, _ := os.ReadFile(path); !bytes.Equal(b, whole) {
		t.Fatalf("the torn line was not cut off:\n%s", b)
	}
	// Verdict 2 again (decided again after the restart), and verdict 3, whose
	// line was torn (never acknowledged, so sent again).
	if err := e2.ConsumeTraces(context.Background(), verdictBatch(2, 3)); err != nil {
		t.Fatal(err)
	}
	got := verdictIDs(t, path)
	if len(got) != 3 || got[2] != (pcommon.SpanID{0xBB, 7: 3}) {
		t.Fatalf("file holds %v, want verdicts 1, 2, 3 once each", got)
	}
}

// TestRotates: past max_megabytes the file moves to PATH.1 and a new one
// starts; only max_backups old files are kept.
func TestRotates(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "verdicts.jsonl")
	foreign := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(foreign, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config(path)
	cfg.Rotation = RotationConfig{MaxMegabytes: 1, MaxBackups: 2}
	e := start(t, cfg)
	line, _ := appendJSON(nil, verdictBatch(1))
	per := (1 << 20) / (len(line) + 1)
	n := 0
	for i := 0; i < 4*per; i++ {
		n++
		td := verdictBatch(1)
		td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).SetSpanID(pcommon.SpanID{byte(n >> 16), byte(n >> 8), byte(n), 1})
		if err := e.ConsumeTraces(context.Background(), td); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{path, path + ".1", path + ".2"} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if st.Size() > 1<<20 {
			t.Errorf("%s is %d bytes, past the 1 MiB limit", p, st.Size())
		}
	}
	if _, err := os.Stat(path + ".3"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s.3 kept beyond max_backups 2", path)
	}
	if _, err := os.Stat(foreign); err != nil {
		t.Errorf("a file the exporter did not write was touched: %v", err)
	}
}

// TestJSONMatchesMarshaler: the exporter's own encoding reads back, with
// the OTLP/JSON unmarshaler every reader uses, to exactly the batch the
// collector's marshaller would have written; a shape it does not handle is
// left to the marshaller.
func TestJSONMatchesMarshaler(t *testing.T) {
	td := verdictBatch(1, 2)
	a := td.ResourceSpans().At(0).Resource().Attributes()
	a.PutBool("b", true)
	a.PutInt("i", -42)
	a.PutDouble("d", 1e-9)
	a.PutEmptyBytes("raw").FromRaw([]byte{0, 1, 254})
	m := a.PutEmptyMap("m")
	m.PutStr("k", "v\t\x01")
	m.PutEmptySlice("empty")
	a.PutEmpty("nothing")
	s := td.ResourceSpans().At(1).ScopeSpans().At(0).Spans().At(0)
	s.Status().SetCode(ptrace.StatusCodeError)
	s.Status().SetMessage("bad input")

	b, ok := appendJSON(nil, td)
	if !ok {
		t.Fatal("the exporter's encoding refused a verdict batch")
	}
	if !json.Valid(b) {
		t.Fatalf("not JSON:\n%s", b)
	}
	got, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(b)
	if err != nil {
		t.Fatal(err)
	}
	std, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	again, _ := (&ptrace.JSONMarshaler{}).MarshalTraces(got)
	if !bytes.Equal(std, again) {
		t.Fatalf("read back differs:\n got  %s\n want %s", again, std)
	}

	link := verdictBatch(3)
	link.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).Links().AppendEmpty()
	if _, ok := appendJSON(nil, link); ok {
		t.Error("a span with a link was encoded; it is left to the marshaller")
	}
}

// FuzzAppendString: any string encodes to a JSON string that decodes back to
// it (invalid UTF-8 as U+FFFD, as encoding/json does).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "\"\\\n\r\t\x00\x1f", "ünïcode ≤ 😀", "\xff\xfe", "a\u2028b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := appendString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q encodes to invalid JSON %s: %v", s, b, err)
		}
		want := string([]rune(s)) // an invalid byte reads back as U+FFFD
		if got != want {
			t.Fatalf("%q encodes to %s, which reads back as %q", s, b, got)
		}
	})
}

// TestLoadConfig: the defaults, a full configuration, and each way one can
// be wrong.
func TestLoadConfig(t *testing.T) {
	cm, err := confmaptest.LoadConf(filepath.Join("testdata", "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	with := func(f func(*Config)) *Config {
		c := createDefaultConfig().(*Config)
		f(c)
		return c
	}
	for _, tc := range []struct {
		name    string
		want    *Config
		wantErr error
	}{
		{name: "verdicts", want: with(func(c *Config) { c.Path = "./percause-data/verdicts.jsonl" })},
		{name: "verdicts/custom", want: with(func(c *Config) {
			c.Path, c.Rotation, c.Recent = "/var/lib/percause/v.jsonl", RotationConfig{MaxMegabytes: 10, MaxBackups: 0}, 50
		})},
		{name: "verdicts/page", want: with(func(c *Config) {
			c.Path, c.HTTP = "v.jsonl", configoptional.Some(defaultServerConfig())
		})},
		{name: "verdicts/page_custom", want: with(func(c *Config) {
			sc := defaultServerConfig()
			sc.NetAddr.Endpoint = "[::1]:9999"
			c.Path, c.HTTP = "v.jsonl", configoptional.Some(sc)
			c.Keep = KeepConfig{Age: 48 * time.Hour, Turns: 100, LinkChanges: 10}
			c.Page = PageConfig{PostBudget: 2 * time.Second, Refresh: 0, Turns: 5, Alertmanager: "http://127.0.0.1:9093/am"}
		})},
		// local.yaml's ${env:PERCAUSE_ALERTMANAGER_URL:-} when unset.
		{name: "verdicts/page_no_alertmanager", want: with(func(c *Config) {
			c.Path, c.HTTP = "v.jsonl", configoptional.Some(defaultServerConfig())
		})},
		{name: "verdicts/no_path", wantErr: ErrNoPath},
		{name: "verdicts/bad_rotation", wantErr: ErrRotationNegative},
		{name: "verdicts/bad_recent", wantErr: ErrRecentNotPositive},
		{name: "verdicts/exposed", wantErr: ErrExposedWithoutToken},
		{name: "verdicts/exposed_no_host", wantErr: ErrExposedWithoutToken},
		{name: "verdicts/bad_keep", wantErr: ErrKeepNotPositive},
		{name: "verdicts/bad_page", wantErr: ErrPageSettings},
		{name: "verdicts/bad_alertmanager_scheme", wantErr: ErrAlertmanagerURL},
		{name: "verdicts/bad_alertmanager_user", wantErr: ErrAlertmanagerURL},
		{name: "verdicts/bad_alertmanager_query", wantErr: ErrAlertmanagerURL},
		{name: "verdicts/bad_alertmanager_host", wantErr: ErrAlertmanagerURL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sub, err := cm.Sub(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			cfg := createDefaultConfig().(*Config)
			if err := sub.Unmarshal(cfg); err != nil {
				t.Fatal(err)
			}
			err = cfg.Validate()
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Validate() = %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg, tc.want) {
				t.Fatalf("config %+v, want %+v", *cfg, *tc.want)
			}
		})
	}
	// The page's store has no storage of its own: a configuration naming
	// one is refused, naming the key.
	sub, _ := cm.Sub("verdicts/storage")
	if err := sub.Unmarshal(createDefaultConfig().(*Config)); err == nil || !strings.Contains(err.Error(), "storage") {
		t.Errorf("storage: is not refused: %v", err)
	}
	// Exposed with a token is valid, and without http there is no page.
	sub, _ = cm.Sub("verdicts/exposed_with_token")
	cfg := createDefaultConfig().(*Config)
	if err := sub.Unmarshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("a page behind an authenticator: %v", err)
	}
	if createDefaultConfig().(*Config).HTTP.HasValue() {
		t.Error("the page is on without http")
	}
}

// TestRotationFailureIsNotPermanent: a rotation that fails (PATH.1 taken by
// a directory that is not empty) refuses the batch; once the obstacle is
// gone, the next batch rotates and is written.
func TestRotationFailureIsNotPermanent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "verdicts.jsonl")
	cfg := config(path)
	cfg.Rotation = RotationConfig{MaxMegabytes: 1, MaxBackups: 1}
	e := start(t, cfg)
	line, _ := appendJSON(nil, verdictBatch(1))
	per := (1 << 20) / (len(line) + 1)
	n := 0
	write := func() error {
		n++
		td := verdictBatch(1)
		td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).SetSpanID(pcommon.SpanID{byte(n >> 16), byte(n >> 8), byte(n), 2})
		return e.ConsumeTraces(context.Background(), td)
	}
	for i := 0; i < per-1; i++ {
		if err := write(); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(path+".1", "in-the-way"), 0o755); err != nil {
		t.Fatal(err)
	}
	var failed bool
	for i := 0; i < 5; i++ {
		if err := write(); err != nil {
			failed = true
		}
	}
	if !failed {
		t.Fatal("a rotation onto a directory that is not empty did not fail; the test proves nothing")
	}
	if err := os.RemoveAll(path + ".1"); err != nil {
		t.Fatal(err)
	}
	if err := write(); err != nil {
		t.Fatalf("after the obstacle went, writes still fail: %v", err)
	}
	if st, err := os.Stat(path + ".1"); err != nil || !st.Mode().IsRegular() {
		t.Fatalf("no rotated file after the obstacle went: %v", err)
	}
}
