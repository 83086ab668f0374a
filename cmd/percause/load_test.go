package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	collectorconfig "github.com/percause/percause/collector-config"
	"github.com/percause/percause/components/verdictcountconnector"
	"github.com/percause/percause/internal/command/load"
	"github.com/percause/percause/internal/testsupport/testenv"
)

// shortLoad are the flags of a run long enough to go through every stage
// and short enough for a test: its figures mean nothing.
var shortLoad = []string{"--turns", "60", "--installations", "10", "--relaunch-every", "2", "--concurrency", "2", "--rounds", "3", "--warmup", "10", "--probe", "0"}

// TestLoadCompareTable: `percause load --compare` on the real binary
// measures the default, the stock pass-through and the durable peer side
// by side: its table names the sender count, has a row for each collector
// and one for each ratio, the default counted exactly; with --profile
// each collector's CPU and heap profiles are written, named, and readable
// by pprof. Only the shape is checked, never a figure.
func TestLoadCompareTable(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	dir := filepath.Join(t.TempDir(), "profiles")
	out, errOut, code := runBin(t, append([]string{"load", "--compare", "--profile", dir}, shortLoad...)...)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s\nstdout:\n%s", code, errOut, out)
	}
	t.Logf("\n%s", out)
	if !strings.Contains(out, "3 collectors side by side") || !strings.Contains(out, " 2 senders (--concurrency)") {
		t.Errorf("the header does not say three collectors and 2 senders:\n%s", out)
	}
	num := `\d+\.\d\d`
	for _, row := range []string{
		// the default's commits per request: its shared store's, at most one
		`default +` + num + ` +` + num + `–` + num + ` +` + num + ` .* (0\.\d{3}|1\.000) +yes$`,
		`passthrough +` + num + ` .* -$`,
		`durable +` + num + ` .* -$`,
		`default/passthrough +` + num + ` +` + num + `–` + num,
		`default/durable +` + num + ` +` + num + `–` + num,
	} {
		if !regexp.MustCompile(`(?m)^  ` + row).MatchString(out) {
			t.Errorf("no row matching %q in:\n%s", row, out)
		}
	}
	var want []string
	for _, name := range []string{"default", "passthrough", "durable"} {
		for _, kind := range []string{"cpu", "heap"} {
			f := filepath.Join(dir, name+"."+kind+".pprof")
			want = append(want, f)
			if !strings.Contains(out, "    "+f+"\n") {
				t.Errorf("%s is not named in the output", f)
			}
			readProfile(t, f)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != len(want) {
		t.Errorf("%d files in the profile folder, want %d", len(entries), len(want))
	}
	// Each profile broken down: a column a collector, a row a part.
	for _, row := range []string{
		`where the CPU went`,
		`\n +default +passthrough +durable\n`,
		// a short run's few samples fall in some parts only: a part's row,
		// whichever
		// whichever, per span and per request
		`\n    [a-z][a-zA-Z_:, ()]+ +` + num + ` +\d+\.\d \( ?\d+\.\d %\)`,
		`\n    all( +` + num + ` +\d+\.\d){3}\n`,
	} {
		if !regexp.MustCompile(row).MatchString(out) {
			t.Errorf("no breakdown line matching %q in:\n%s", row, out)
		}
	}
}

// TestLoadBreakdown: --breakdown reads CPU profiles written earlier (here
// one made for the test) and gives each sample to the first part its stack
// belongs to: the verdict file's write inside a request is the verdict
// file's, not the receiver's; with --turns, in CPU-µs per span and per
// request sent.
func TestLoadBreakdown(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	path := filepath.Join(t.TempDir(), "made.cpu.pprof")
	testenv.WriteProfile(t, path, testenv.CPUProfile(map[int64][]string{
		300e6: {"github.com/percause/percause/components/verdictexporter.(*verdictExporter).ConsumeTraces", "net/http.(*conn).serve"},
		700e6: {"net/http.(*conn).serve"},
	}))
	out, errOut, code := runBin(t, "load", "--breakdown", path)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	for _, row := range []string{
		`\n +made\n`,
		`\n    verdict file and page +0\.30 \(30\.0 %\)\n`,
		`\n    receiver, HTTP and protobuf +0\.70 \(70\.0 %\)\n`,
		`\n    all +1\.00\n`,
	} {
		if !regexp.MustCompile(row).MatchString(out) {
			t.Errorf("no line matching %q in:\n%s", row, out)
		}
	}
	// With the turns the profiled run sent each collector: 100 turns are
	// 1,100 spans in 200 requests, so 0.30 s is 272.73 µs a span and
	// 1,500.0 a request.
	out, errOut, code = runBin(t, "load", "--breakdown", path, "--turns", "100")
	if code != exitOK {
		t.Fatalf("--turns 100: exit %d; stderr:\n%s", code, errOut)
	}
	for _, row := range []string{
		`CPU-µs per span sent, per request sent`,
		`\n    verdict file and page +272\.73 +1500\.0 \(30\.0 %\)\n`,
		`\n    all +909\.09 +5000\.0\n`,
	} {
		if !regexp.MustCompile(row).MatchString(out) {
			t.Errorf("--turns 100: no line matching %q in:\n%s", row, out)
		}
	}
	if _, errOut, code := runBin(t, "load", "--breakdown", filepath.Join(t.TempDir(), "none.cpu.pprof")); code != exitFailed || !strings.Contains(errOut, "none.cpu.pprof") {
		t.Errorf("a missing profile: exit %d, stderr %q; want %d naming the file", code, errOut, exitFailed)
	}
}

// TestLoadCompareJSON: with --json, one object carries what the table
// shows: the sender count, three sides with their CPU per span and request
// latency, both ratios of the default, and the default's storage commits
// per request accepted, read from its own telemetry: above 0 (it keeps
// what it accepts) and at most 1 (its components share a commit); the
// others have no shared store.
func TestLoadCompareJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	out, errOut, code := runBin(t, append([]string{"load", "--compare", "--json"}, shortLoad...)...)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	var cmp load.Comparison
	if err := json.Unmarshal([]byte(out), &cmp); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	checkComparison(t, cmp, []string{"default", "passthrough", "durable"})
	if c := cmp.Sides[0].CommitsPerRequest; c <= 0 || c > 1 {
		t.Errorf("the default: %v storage commits per request, want more than 0 and at most 1", c)
	}
	if cmp.Sides[1].CommitsPerRequest != 0 || cmp.Sides[2].CommitsPerRequest != 0 {
		t.Errorf("commits per request %v and %v for collectors without shared_storage, want none", cmp.Sides[1].CommitsPerRequest, cmp.Sides[2].CommitsPerRequest)
	}
	if !cmp.Sides[0].Checked || !cmp.Sides[0].Exact || cmp.Sides[1].Checked || cmp.Sides[2].Checked {
		t.Errorf("counts checked %v/%v/%v, exact %v: want the default's alone checked, and exact",
			cmp.Sides[0].Checked, cmp.Sides[1].Checked, cmp.Sides[2].Checked, cmp.Sides[0].Exact)
	}
}

// TestLoadCompareVariant: --variant starts this build once more, on the
// embedded default with the file layered over it, measured beside the
// others under the file's name. processor-only.yaml counts nothing, so a
// variant's counts are not checked; the default's still are.
func TestLoadCompareVariant(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	variant := filepath.Join("..", "..", "collector-config", "variants", "processor-only.yaml")
	out, errOut, code := runBin(t, append([]string{"load", "--compare", "--json", "--variant", variant}, shortLoad...)...)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	var cmp load.Comparison
	if err := json.Unmarshal([]byte(out), &cmp); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	checkComparison(t, cmp, []string{"default", "processor-only", "passthrough", "durable"})
	if !cmp.Sides[0].Checked || !cmp.Sides[0].Exact || cmp.Sides[1].Checked {
		t.Errorf("default checked %v, exact %v; variant checked %v: want the default's counts checked and exact, the variant's not",
			cmp.Sides[0].Checked, cmp.Sides[0].Exact, cmp.Sides[1].Checked)
	}
}

// TestStartVariants: each variant runs on the embedded default written
// out, with its file layered over it, named by the file; a name another
// collector of the run has, or a file that is not there, is refused
// before anything starts.
func TestStartVariants(t *testing.T) {
	dir, files := t.TempDir(), t.TempDir()
	write := func(name string) string {
		f := filepath.Join(files, name)
		if err := os.WriteFile(f, []byte("processors: {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	a, b := write("fewer-names.yaml"), write("no-page.yml")
	type started struct {
		name    string
		configs []string
	}
	var got []started
	start := func(name string, configs []string, _ ...load.StartOption) (*load.Collector, error) {
		got = append(got, started{name, configs})
		return &load.Collector{Name: name, PromURL: "http://127.0.0.1:1/metrics"}, nil
	}
	vs, _, err := startVariants(dir, a+","+b, start)
	if err != nil {
		t.Fatal(err)
	}
	local := filepath.Join(dir, "local.yaml")
	want := []started{{"fewer-names", []string{local, a}}, {"no-page", []string{local, b}}}
	if len(got) != len(want) || len(vs) != len(want) {
		t.Fatalf("started %v, returned %d; want %v", got, len(vs), want)
	}
	for i := range want {
		if got[i].name != want[i].name || !slices.Equal(got[i].configs, want[i].configs) {
			t.Errorf("started %v, want %v", got[i], want[i])
		}
		if vs[i].PromURL != "" {
			t.Errorf("%s: its counts would be checked (PromURL %q)", vs[i].Name, vs[i].PromURL)
		}
	}
	if b, err := os.ReadFile(local); err != nil || string(b) != string(collectorconfig.Local) {
		t.Errorf("%s is not the embedded default (%v)", local, err)
	}
	for _, list := range []string{write("default.yaml"), a + "," + a, filepath.Join(files, "missing.yaml")} {
		got = nil
		if _, _, err := startVariants(dir, list, start); err == nil || len(got) > 1 {
			t.Errorf("--variant %s: err %v after starting %v; want refused", list, err, got)
		}
	}
}

// TestLoadCompareFsyncJSON: --compare-fsync still runs, the default with
// fsync on against it with fsync off.
func TestLoadCompareFsyncJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	out, errOut, code := runBin(t, append([]string{"load", "--compare-fsync", "--json"}, shortLoad...)...)
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	var cmp load.Comparison
	if err := json.Unmarshal([]byte(out), &cmp); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	checkComparison(t, cmp, []string{"fsync-on", "fsync-off"})
	for _, s := range cmp.Sides {
		if !s.Checked || !s.Exact {
			t.Errorf("%s: counts checked %v, exact %v", s.Name, s.Checked, s.Exact)
		}
	}
}

func checkComparison(t *testing.T, cmp load.Comparison, names []string) {
	t.Helper()
	if cmp.Concurrency != 2 || cmp.Rounds != 3 || cmp.Turns != 60 || cmp.Spans == 0 {
		t.Errorf("concurrency %d, rounds %d, turns %d, spans %d; want 2, 3, 60 and some", cmp.Concurrency, cmp.Rounds, cmp.Turns, cmp.Spans)
	}
	var got []string
	for _, s := range cmp.Sides {
		got = append(got, s.Name)
		if s.Spans != cmp.Spans || s.Requests <= 0 || s.CPUPerSpan <= 0 || s.RequestP50Ms <= 0 || s.RequestP99Ms < s.RequestP50Ms || len(s.RoundCPUPerSpan) != cmp.Rounds {
			t.Errorf("side %s: spans %d, requests %d, CPU-µs/span %v, p50 %v, p99 %v, %d rounds: not a whole measurement", s.Name, s.Spans, s.Requests, s.CPUPerSpan, s.RequestP50Ms, s.RequestP99Ms, len(s.RoundCPUPerSpan))
		}
	}
	if !slices.Equal(got, names) {
		t.Errorf("sides %v, want %v", got, names)
	}
	if len(cmp.Ratios) != len(names)-1 {
		t.Fatalf("%d ratios, want %d", len(cmp.Ratios), len(names)-1)
	}
	for i, r := range cmp.Ratios {
		if r.Of != names[0] || r.To != names[i+1] || r.CPUPerSpan <= 0 || r.RoundsMin > r.RoundsMax {
			t.Errorf("ratio %d: %+v; want %s over %s", i, r, names[0], names[i+1])
		}
	}
	if cmp.Machine.CPUs <= 0 {
		t.Errorf("machine %+v: no CPU count", cmp.Machine)
	}
}

// TestLoadProfileWithoutCompare: --profile profiles the one collector a
// plain run starts.
func TestLoadProfileWithoutCompare(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	dir := t.TempDir()
	out, errOut, code := runBin(t, "load", "--turns", "50", "--installations", "10", "--probe", "0", "--profile", dir, "--json")
	if code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	var r load.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	want := []string{filepath.Join(dir, "default.cpu.pprof"), filepath.Join(dir, "default.heap.pprof")}
	if !slices.Equal(r.Profiles, want) {
		t.Errorf("profiles %v, want %v", r.Profiles, want)
	}
	for _, f := range want {
		readProfile(t, f)
	}
	// A second run keeps the first's profiles and says why it will not start.
	_, errOut, code = runBin(t, "load", "--turns", "10", "--installations", "10", "--probe", "0", "--profile", dir)
	if code != 1 || !strings.Contains(errOut, "exists") {
		t.Errorf("a second run on the same folder: exit %d, stderr %q; want 1 and the file that exists named", code, errOut)
	}
}

// TestLoadUsage: --profile is for the collectors the tool starts.
func TestLoadUsage(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	for _, args := range [][]string{
		{"load", "--otlp", "http://127.0.0.1:1", "--profile", t.TempDir()},
		{"load", "--warmup", "-1"},
		{"load", "--variant", "x.yaml"}, // measured beside the others: needs --compare
	} {
		if _, errOut, code := runBin(t, args...); code != exitUsage || errOut == "" {
			t.Errorf("percause %s: exit %d, stderr %q; want 2 and why", strings.Join(args, " "), code, errOut)
		}
	}
}

// readProfile opens a pprof file with pprof's own parser and checks it
// has samples.
func readProfile(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Error(err)
		return
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	if len(p.SampleType) == 0 {
		t.Errorf("%s: no sample types", path)
	}
	// A CPU profile is sampled every 10 ms of CPU, and a short run's
	// pass-through spends about 100 ms in all: a few samples, and now and
	// then none (a CI run read 0). A profile that covered its collector's
	// life still says how long it ran. A heap profile always has samples.
	if strings.HasSuffix(path, ".cpu.pprof") {
		if p.DurationNanos <= 0 {
			t.Errorf("%s: a CPU profile of %d ns", path, p.DurationNanos)
		}
		return
	}
	if len(p.Sample) == 0 {
		t.Errorf("%s: %d samples of %d types", path, len(p.Sample), len(p.SampleType))
	}
}

// TestLoadSettlesPastTheCountsFlush holds the load tool's settle to the
// count connector's flush_interval: a round's CPU is read a settle after
// its last request, and the counts of its last verdicts go on a
// flush_interval after they were stored. A settle no longer than the
// interval (with room for the hand-on itself) reads the round before its
// counts are handed on, and credits a longer interval with work it only
// moved past the reading.
func TestLoadSettlesPastTheCountsFlush(t *testing.T) {
	const handOn = 250 * time.Millisecond // a hand-on's own time, with room
	if load.Settle < verdictcountconnector.DefaultFlushInterval+handOn {
		t.Fatalf("load.Settle %s is not past the count connector's flush_interval %s and a hand-on (%s)",
			load.Settle, verdictcountconnector.DefaultFlushInterval, handOn)
	}
}
