package verdictexporter

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/bearertokenauthextension"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/exporter"
	"go.opentelemetry.io/collector/exporter/exportertest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/percause/percause/components/verdictexporter/internal/metadata"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/leaf/vfs"
)

// host has the extensions a test starts: bearertokenauth.
type host struct {
	component.Host
	exts map[component.ID]component.Component
}

func (h *host) GetExtensions() map[component.ID]component.Component { return h.exts }

func newHost(testing.TB) *host {
	return &host{Host: componenttest.NewNopHost(), exts: map[component.ID]component.Component{}}
}

var tokenID = component.MustNewID("bearertokenauth")

func (h *host) withToken(t *testing.T, token string) *host {
	t.Helper()
	f := bearertokenauthextension.NewFactory()
	cfg := f.CreateDefaultConfig().(*bearertokenauthextension.Config)
	cfg.BearerToken = configopaque.String(token)
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ext.Shutdown(context.Background()) })
	h.exts[tokenID] = ext
	return h
}

// pageConfig is a config with the page on a free loopback port.
func pageConfig(path string) *Config {
	c := config(path)
	sc := defaultServerConfig()
	sc.NetAddr.Endpoint = "127.0.0.1:0"
	c.HTTP = configoptional.Some(sc)
	return c
}

// clock is the exporter's now, set by the test.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

var testNow = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// settings names the exporter as a configuration would.
func settings() exporter.Settings {
	set := exportertest.NewNopSettings(metadata.Type)
	set.ID = component.NewID(metadata.Type)
	return set
}

func startWith(t *testing.T, cfg *Config, h component.Host, c *clock) *verdictExporter {
	t.Helper()
	e, err := newExporter(settings(), cfg, vfs.OS)
	if err != nil {
		t.Fatal(err)
	}
	e.now = c.now
	if err := e.Start(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Shutdown(context.Background()) })
	return e
}

// turnAt is verdictBatch(n) with the turn's time set, an underrun event
// and the route.
func turnAt(n byte, at time.Time) ptrace.Traces {
	td := verdictBatch(n)
	s := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	a := s.Attributes()
	a.PutInt(semconv.VerdictTurnTime, at.UnixNano())
	a.PutEmptySlice(semconv.RouteOutputs).AppendEmpty().SetStr(semconv.PortBluetoothA2DP)
	a.PutBool(semconv.RouteBluetooth, true)
	ev := s.Events().AppendEmpty()
	ev.SetName(semconv.EventUnderrun)
	ea := ev.Attributes()
	ea.PutInt(semconv.UnitIndex, 3)
	ea.PutStr(semconv.TakeID, fmt.Sprintf("take-%d", n))
	ea.PutInt(semconv.UnitUnderruns, 2)
	ea.PutDouble(semconv.UnitSilent, 1.4)
	ea.PutDouble(semconv.UnitCushion, 1.5)
	ea.PutDouble(semconv.TakeNeed, 2.1)
	ea.PutStr(semconv.VerdictCause, semconv.CauseSynthesis)
	return td
}

func linkAt(n byte, at time.Time, status string) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr(semconv.AppInstallationID, "install-1")
	s := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	s.SetName(semconv.SpanLinkStatus)
	s.SetTraceID(pcommon.TraceID{0xDD, 15: n})
	s.SetSpanID(pcommon.SpanID{0xDD, 7: n})
	s.SetStartTimestamp(pcommon.NewTimestampFromTime(at))
	s.Attributes().PutStr(semconv.LinkStatus, status)
	s.Attributes().PutStr(semconv.LinkStatusMessage, "Pippa is restarting, back in a few seconds.")
	return td
}

func get(t *testing.T, url string, hdr ...string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "identity")
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b), resp.Header
}

// TestPageShowsWhatItKeeps: over real HTTP on loopback, the page shows the
// verdicts written and the link status changes passed on, each once,
// under its headers; it refuses what is not a page request.
func TestPageShowsWhatItKeeps(t *testing.T) {
	c := &clock{testNow}
	e := startWith(t, pageConfig(filepath.Join(t.TempDir(), "v.jsonl")), newHost(t), c)
	ctx := context.Background()
	for _, td := range []ptrace.Traces{turnAt(1, testNow.Add(-3*time.Hour)), turnAt(2, testNow.Add(-2*time.Hour)),
		turnAt(2, testNow.Add(-2*time.Hour)), linkAt(1, testNow.Add(-30*time.Minute), semconv.LinkStatusEngineRestarting),
		linkAt(1, testNow.Add(-30*time.Minute), semconv.LinkStatusEngineRestarting)} {
		if err := e.ConsumeTraces(ctx, td); err != nil {
			t.Fatal(err)
		}
	}
	base := "http://" + e.addr + "/"
	code, body, h := get(t, base)
	if code != http.StatusOK {
		t.Fatalf("GET / = %d: %s", code, body)
	}
	for _, want := range []string{`<strong data-n="2">2</strong> turns`, `take-1`, `take-2`, `need <strong data-field="need">2.10 s</strong> &gt; cushion`,
		`bluetooth_a2dp (Bluetooth)`, `<strong class="tok">engine_restarting</strong>`, `Kept from the verdict file: 2 turns and 1 link status changes`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page does not say %s", want)
		}
	}
	if n := strings.Count(body, `<li data-status=`); n != 1 {
		t.Errorf("%d link changes shown, want 1", n)
	}
	if !strings.HasPrefix(h.Get("Content-Security-Policy"), "default-src 'none'") || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("headers %v", h)
	}
	if _, narrow, _ := get(t, base+"?range=1h"); !strings.Contains(narrow, `data-n="0">0</strong> turns`) {
		t.Error("the last hour shows turns from before it")
	}
	if _, other, _ := get(t, base+"?range=all&installation=someone-else"); !strings.Contains(other, `data-n="0">0</strong> turns`) {
		t.Error("another installation's page shows install-1's turns")
	}
	_, zipped, zh := get(t, base, "Accept-Encoding", "gzip")
	if zh.Get("Content-Encoding") != "gzip" || zipped != body {
		t.Errorf("gzip: encoding %q, same page %v", zh.Get("Content-Encoding"), zipped == body)
	}
	for url, want := range map[string]int{base + "favicon.ico": 404, base + "?range=2d": 400, base + "?installation=%0a": 400} {
		if code, _, _ := get(t, url); code != want {
			t.Errorf("GET %s = %d, want %d", url, code, want)
		}
	}
	resp, err := http.Post(base, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST / = %d", resp.StatusCode)
	}
	// The verdict file holds each verdict and link change once.
	if got := verdictIDs(t, e.cfg.Path); len(got) != 2 {
		t.Errorf("the verdict file holds %d verdicts, want 2", len(got))
	}
	if got := linkIDs(t, e.cfg.Path); len(got) != 1 {
		t.Errorf("the verdict file holds %d link changes, want 1", len(got))
	}
}

// TestPageKeepsWithinBounds: past keep.turns and keep.link_changes the
// oldest go, and so does what is older than keep.age.
func TestPageKeepsWithinBounds(t *testing.T) {
	c := &clock{testNow}
	cfg := pageConfig(filepath.Join(t.TempDir(), "v.jsonl"))
	cfg.Keep = KeepConfig{Age: 24 * time.Hour, Turns: 3, LinkChanges: 1}
	e := startWith(t, cfg, newHost(t), c)
	ctx := context.Background()
	// Turn 5 happened first; turn 6 is two days old on arrival.
	for i, at := range []time.Duration{4, 3, 2, 1, 5, 48} {
		if err := e.ConsumeTraces(ctx, turnAt(byte(i+1), testNow.Add(-at*time.Hour))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		if err := e.ConsumeTraces(ctx, linkAt(byte(i+1), testNow.Add(-time.Duration(3-i)*time.Minute), semconv.LinkStatusOK)); err != nil {
			t.Fatal(err)
		}
	}
	turns, links, _, kept, keptLinks := e.watch().snapshot(time.Time{}, c.t)
	if kept != 3 || len(turns) != 3 || keptLinks != 1 || len(links) != 1 {
		t.Fatalf("kept %d turns, %d links; want 3 and 1", kept, keptLinks)
	}
	for i, want := range []int64{2, 3, 4} {
		if turns[i].Turn != want {
			t.Errorf("kept turns %v, want the three newest (2, 3, 4) in order", []int64{turns[0].Turn, turns[1].Turn, turns[2].Turn})
			break
		}
	}
	// A day later everything is past keep.age: the page shows none of it.
	c.t = c.t.Add(25 * time.Hour)
	if turns, _, _, _, _ := e.watch().snapshot(time.Time{}, c.t); len(turns) != 0 {
		t.Errorf("%d turns older than keep.age shown", len(turns))
	}
	if err := e.ConsumeTraces(ctx, turnAt(9, c.t)); err != nil {
		t.Fatal(err)
	}
	if _, _, _, kept, keptLinks := e.watch().snapshot(time.Time{}, c.t); kept != 1 || keptLinks != 0 {
		t.Errorf("after a new turn a day later: %d turns, %d links kept, want 1 and 0", kept, keptLinks)
	}
}

// TestPageSurvivesARestart: a restarted exporter, with no storage of its
// own, shows the same page, read back from the verdict file alone: the
// turns and link changes it kept before, within the same bounds; a verdict
// or link change sent again after the restart is neither written nor kept
// twice.
func TestPageSurvivesARestart(t *testing.T) {
	dir := t.TempDir()
	c := &clock{testNow}
	cfg := pageConfig(filepath.Join(dir, "v.jsonl"))
	cfg.Keep.Turns, cfg.Keep.LinkChanges = 4, 2
	e := startWith(t, cfg, newHost(t), c)
	ctx := context.Background()
	for i := range 6 {
		if err := e.ConsumeTraces(ctx, turnAt(byte(i+1), testNow.Add(-time.Duration(6-i)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	for i, status := range []string{semconv.LinkStatusEngineRestarting, semconv.LinkStatusConnectionLost, semconv.LinkStatusDeviceOffline} {
		if err := e.ConsumeTraces(ctx, linkAt(byte(i+1), testNow.Add(-time.Duration(3-i)*time.Second), status)); err != nil {
			t.Fatal(err)
		}
	}
	_, before, _ := get(t, "http://"+e.addr+"/")
	if err := e.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the exporter left %d files in its folder, want the verdict file alone", len(entries))
	}

	e2 := startWith(t, cfg, newHost(t), c)
	_, after, _ := get(t, "http://"+e2.addr+"/")
	for _, want := range []string{`data-n="4">4</strong> turns`, "take-3", "take-6", "connection_lost", "device_offline",
		"Kept from the verdict file: 4 turns and 2 link status changes (at most 4 turns and 2 changes"} {
		if !strings.Contains(after, want) {
			t.Errorf("after the restart the page does not say %s", want)
		}
	}
	for _, not := range []string{"take-2", "engine_restarting"} {
		if strings.Contains(after, not) {
			t.Errorf("%s, let go before the restart, is back", not)
		}
	}
	cut := func(s string) string { // the rendering time and address aside
		return s[strings.Index(s, "<section"):]
	}
	if cut(before) != cut(after) {
		t.Error("the page after the restart differs from the page before it")
	}
	if st := e2.rebuilt; st.Turns != 4 || st.Links != 2 || st.Files != 1 || st.Broken != 0 {
		t.Errorf("the start read back %+v, want 4 turns and 2 link changes from one file", st)
	}
	// Sent again after the restart: the file has them, the page too.
	if err := e2.ConsumeTraces(ctx, turnAt(6, testNow.Add(-time.Minute))); err != nil {
		t.Fatal(err)
	}
	if err := e2.ConsumeTraces(ctx, linkAt(3, testNow.Add(-time.Second), semconv.LinkStatusDeviceOffline)); err != nil {
		t.Fatal(err)
	}
	if _, again, _ := get(t, "http://"+e2.addr+"/"); cut(again) != cut(after) {
		t.Error("a verdict or link change sent again changed the page")
	}
	if got := verdictIDs(t, cfg.Path); len(got) != 6 {
		t.Errorf("the verdict file holds %d verdicts, want 6", len(got))
	}
	if got := linkIDs(t, cfg.Path); len(got) != 3 {
		t.Errorf("the verdict file holds %d link changes, want 3", len(got))
	}
}

// linkIDs reads the file's link status span IDs in order.
func linkIDs(t *testing.T, path string) []pcommon.SpanID {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []pcommon.SpanID
	for _, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		td, err := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(line)
		if err != nil {
			t.Fatalf("a line of %s is not OTLP/JSON: %v", path, err)
		}
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			spans := rss.At(i).ScopeSpans().At(0).Spans()
			for k := 0; k < spans.Len(); k++ {
				if s := spans.At(k); s.Name() == semconv.SpanLinkStatus {
					out = append(out, s.SpanID())
				}
			}
		}
	}
	return out
}

// TestPageBehindAToken: with http.auth naming bearertokenauth, the page
// answers 401 without the token or with a wrong one, each with a
// WWW-Authenticate: Bearer challenge and counted in the exporter's
// telemetry, and the page with it.
func TestPageBehindAToken(t *testing.T) {
	cfg := pageConfig(filepath.Join(t.TempDir(), "v.jsonl"))
	sc := cfg.HTTP.Get()
	sc.NetAddr.Endpoint = "127.0.0.1:0"
	sc.Auth = configoptional.Some(confighttp.AuthConfig{Config: configauth.Config{AuthenticatorID: tokenID}})
	e, tel := startWithTelemetry(t, cfg, newHost(t).withToken(t, "right-token"), nil)
	base := "http://" + e.addr + "/"
	refused := [][]string{nil, {"Authorization", "Bearer wrong-token"}, {"Authorization", "right-token"}}
	for _, hdr := range refused {
		code, _, h := get(t, base, hdr...)
		if code != http.StatusUnauthorized {
			t.Errorf("GET / with %v = %d, want 401", hdr, code)
		}
		if c := h.Get("WWW-Authenticate"); !strings.HasPrefix(c, "Bearer ") {
			t.Errorf("GET / with %v: WWW-Authenticate %q, want a Bearer challenge", hdr, c)
		}
	}
	code, body, h := get(t, base, "Authorization", "Bearer right-token")
	if code != http.StatusOK || !strings.Contains(body, PageTitle) {
		t.Errorf("GET / with the token = %d", code)
	}
	if c := h.Get("WWW-Authenticate"); c != "" {
		t.Errorf("the page served with the token carries WWW-Authenticate %q", c)
	}
	if n := counted(tel, "otelcol_exporter_verdicts_page_unauthorized"); n != int64(len(refused)) {
		t.Errorf("otelcol_exporter_verdicts_page_unauthorized = %d, want %d", n, len(refused))
	}
	if n := counted(tel, "otelcol_exporter_verdicts_page_refused"); n != 0 {
		t.Errorf("otelcol_exporter_verdicts_page_refused = %d, want 0: a refused token is counted as unauthorized only", n)
	}
}

// linkDuring is a link status change in turn n's trace.
func linkDuring(n byte, at time.Time, status string) ptrace.Traces {
	td := linkAt(n, at, status)
	s := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	s.SetTraceID(pcommon.TraceID{0xAA, 15: n})
	s.SetSpanID(pcommon.SpanID{0xDE, 7: n})
	return td
}

func traceOf(n byte) string { return pcommon.TraceID{0xAA, 15: n}.String() }

// TestPageTurnsPagedFilteredAndLinked: over real HTTP, the list pages past
// page.turns and filters by cause; ?turn=TRACE is the turn's permalink
// (404 when it is not kept), with the link status of its trace, and
// ?turn=TRACE&format=text the turn as `percause turn` prints it.
func TestPageTurnsPagedFilteredAndLinked(t *testing.T) {
	c := &clock{testNow}
	cfg := pageConfig(filepath.Join(t.TempDir(), "v.jsonl"))
	cfg.Page.Turns = 2
	e := startWith(t, cfg, newHost(t), c)
	ctx := context.Background()
	for i := range 5 {
		if err := e.ConsumeTraces(ctx, turnAt(byte(i+1), testNow.Add(-time.Duration(50-i)*time.Minute))); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.ConsumeTraces(ctx, linkDuring(2, testNow.Add(-48*time.Minute), semconv.LinkStatusConnectionLost)); err != nil {
		t.Fatal(err)
	}
	base := "http://" + e.addr + "/"
	for q, want := range map[string][]byte{"": {5, 4}, "?page=2": {3, 2}, "?page=3": {1}, "?cause=synthesis&page=3": {1}, "?cause=network": nil} {
		code, body, _ := get(t, base+q)
		if code != http.StatusOK {
			t.Fatalf("GET %s = %d: %s", q, code, body)
		}
		var wantTraces []string
		for _, n := range want {
			wantTraces = append(wantTraces, traceOf(n))
		}
		var got []string
		for _, part := range strings.Split(body, `<li class="turn" id="t-`)[1:] {
			got = append(got, part[:32])
		}
		if strings.Join(got, ",") != strings.Join(wantTraces, ",") {
			t.Errorf("GET %s lists %v, want %v", q, got, wantTraces)
		}
	}
	if _, body, _ := get(t, base+"?page=2"); !strings.Contains(body, `rel="next" id="older"`) || !strings.Contains(body, `href="./" rel="prev"`) {
		t.Error("page 2 does not link to the pages beside it")
	}
	code, body, _ := get(t, base+"?turn="+strings.ToUpper(traceOf(2)))
	if code != http.StatusOK || !strings.Contains(body, `data-trace="`+traceOf(2)+`"`) || !strings.Contains(body, `<strong class="tok">connection_lost</strong>`) {
		t.Errorf("the permalink of turn 2 = %d, without its card or its link status", code)
	}
	if code, body, _ := get(t, base+"?turn="+traceOf(9)); code != http.StatusNotFound || !strings.Contains(body, `id="not-kept"`) {
		t.Errorf("the permalink of a turn not kept = %d", code)
	}
	code, text, h := get(t, base+"?turn="+traceOf(2)+"&format=text")
	if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		t.Fatalf("the turn as text = %d, %s", code, h.Get("Content-Type"))
	}
	for _, want := range []string{"turn 2 · ", "trace " + traceOf(2), "verdict              synthesis", "implicated           synthesis, wait",
		"unit 3, take take-2: 2 underruns, 1.40 s silent; need 2.10 s > cushion 1.50 s: read as synthesis", "connection_lost"} {
		if !strings.Contains(text, want) {
			t.Errorf("the turn as text does not say %q:\n%s", want, text)
		}
	}
	if code, _, _ := get(t, base+"?turn="+traceOf(9)+"&format=text"); code != http.StatusNotFound {
		t.Errorf("a turn not kept as text = %d", code)
	}
	for _, q := range []string{"?cause=bogus", "?page=0", "?turn=abc", "?format=text"} {
		if code, _, _ := get(t, base+q); code != http.StatusBadRequest {
			t.Errorf("GET %s = %d, want 400", q, code)
		}
	}
}

// TestPageKeepsTurnsWhileWatched: a verdict written while nobody looks at
// the page costs the page nothing (its store takes nothing in); the next
// page asked for reads what it missed back from the file and shows it; for
// watchFor after a look, each verdict is kept as it is written; past that,
// the store stops again until the next look.
func TestPageKeepsTurnsWhileWatched(t *testing.T) {
	c := &clock{testNow}
	e, tel := startWithTelemetry(t, pageConfig(filepath.Join(t.TempDir(), "v.jsonl")), newHost(t), c)
	kept := func() int64 { return counted(tel, "otelcol_exporter_verdicts_page_kept") }
	inStore := func() int { turns, _ := e.page.counts(); return turns }
	behind := func() bool { e.mu.Lock(); defer e.mu.Unlock(); return e.pageBehind }
	ctx := context.Background()
	consume := func(n byte, at time.Time) {
		t.Helper()
		if err := e.ConsumeTraces(ctx, turnAt(n, at)); err != nil {
			t.Fatal(err)
		}
	}
	base := "http://" + e.addr + "/"
	shows := func(turns int) {
		t.Helper()
		code, body, _ := get(t, base+"?range=all")
		if want := fmt.Sprintf(`<strong data-n="%d">%d</strong> turns`, turns, turns); code != http.StatusOK || !strings.Contains(body, want) {
			t.Fatalf("GET / = %d, not %q:\n%s", code, want, body)
		}
	}

	consume(1, testNow.Add(-2*time.Hour))
	consume(2, testNow.Add(-time.Hour))
	if n := inStore(); n != 0 || kept() != 0 || !behind() {
		t.Fatalf("nobody looked, yet the store holds %d turns (kept %d, behind %v): want none taken in", n, kept(), behind())
	}
	shows(2) // read back from the file
	if n := inStore(); n != 2 || kept() != 2 || behind() {
		t.Fatalf("after a look: %d turns in the store, %d kept, behind %v; want 2, 2, false", n, kept(), behind())
	}

	c.t = c.t.Add(watchFor / 2)
	consume(3, c.t.Add(-time.Minute))
	if n := inStore(); n != 3 || behind() {
		t.Fatalf("within watchFor of a look: %d turns in the store, behind %v; want the new one kept as written", n, behind())
	}

	c.t = c.t.Add(watchFor) // past watchFor since the look
	consume(4, c.t.Add(-time.Minute))
	if n := inStore(); n != 3 || !behind() {
		t.Fatalf("past watchFor: %d turns in the store, behind %v; want the new one left to the file", n, behind())
	}
	shows(4)
	if kept() != 4 {
		t.Errorf("otelcol_exporter_verdicts_page_kept = %d, want each of the 4 turns once", kept())
	}
}

// startWithTelemetry is startWith with telemetry of its own, for the test
// to read the exporter's counters (counted); a nil clock leaves the real
// one.
func startWithTelemetry(t *testing.T, cfg *Config, h component.Host, c *clock) (*verdictExporter, *componenttest.Telemetry) {
	t.Helper()
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { _ = tel.Shutdown(context.Background()) })
	set := settings()
	set.TelemetrySettings = tel.NewTelemetrySettings()
	e, err := newExporter(set, cfg, vfs.OS)
	if err != nil {
		t.Fatal(err)
	}
	if c != nil {
		e.now = c.now
	}
	if err := e.Start(context.Background(), h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Shutdown(context.Background()) })
	return e, tel
}

// counted is the sum of a counter's points (0 when never recorded).
func counted(tel *componenttest.Telemetry, name string) int64 {
	m, err := tel.GetMetric(name)
	if err != nil {
		return 0
	}
	var n int64
	if sum, ok := m.Data.(metricdata.Sum[int64]); ok {
		for _, dp := range sum.DataPoints {
			n += dp.Value
		}
	}
	return n
}
