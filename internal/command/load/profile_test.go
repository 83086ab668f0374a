package load_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"go.opentelemetry.io/collector/confmap"

	collectorconfig "github.com/percause/percause/collector-config"
	"github.com/percause/percause/internal/assembly/distro"
	"github.com/percause/percause/internal/command/load"
	"github.com/percause/percause/internal/testsupport/testenv"
)

// TestProfileOverlayKeepsExtensions: for each configuration the load tool
// starts, the pprof overlay layered on it the way the collector resolves
// two --config files (the distribution's own resolver: maps merged, lists
// replaced) leaves every extension the configuration lists, plus pprof,
// with its endpoint and CPU profile file.
func TestProfileOverlayKeepsExtensions(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  []byte
	}{
		{"local.yaml", collectorconfig.Local},
		{"passthrough.yaml", load.Passthrough},
		{"durablepeer.yaml", load.DurablePeer},
	} {
		t.Run(c.name, func(t *testing.T) {
			exts, err := load.ServiceExtensions(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if len(exts) == 0 {
				t.Fatal("no extensions read: nothing for the overlay to keep, so the test proves nothing")
			}
			dir := t.TempDir()
			cpu := filepath.Join(dir, "x.cpu.pprof")
			overlay, err := load.ProfileOverlay(exts, "127.0.0.1:1777", cpu)
			if err != nil {
				t.Fatal(err)
			}
			base, over := filepath.Join(dir, "base.yaml"), filepath.Join(dir, "overlay.yaml")
			if err := os.WriteFile(base, c.cfg, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(over, overlay, 0o644); err != nil {
				t.Fatal(err)
			}
			got := resolve(t, base, over)
			want := append(slices.Clone(exts), "pprof")
			if names := strings.Fields(strings.Trim(stringsOf(got.Get("service::extensions")), "[]")); !slices.Equal(names, want) {
				t.Errorf("service::extensions after the overlay = %v, want %v", names, want)
			}
			for _, e := range exts {
				if !got.IsSet("extensions::" + e) {
					t.Errorf("extension %s's settings lost under the overlay", e)
				}
			}
			if ep := got.Get("extensions::pprof::endpoint"); ep != "127.0.0.1:1777" {
				t.Errorf("pprof endpoint %v", ep)
			}
			if f := got.Get("extensions::pprof::save_to_file"); f != cpu {
				t.Errorf("pprof save_to_file %v, want %s", f, cpu)
			}
		})
	}
}

// resolve reads configuration files as the distribution does, each layered
// on the one before.
func resolve(t *testing.T, files ...string) *confmap.Conf {
	t.Helper()
	rs := distro.Settings("test", files...).ConfigProviderSettings.ResolverSettings
	r, err := confmap.NewResolver(rs)
	if err != nil {
		t.Fatal(err)
	}
	conf, err := r.Resolve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return conf
}

func stringsOf(v any) string {
	var names []string
	if l, ok := v.([]any); ok {
		for _, e := range l {
			if s, ok := e.(string); ok {
				names = append(names, s)
			}
		}
	}
	return "[" + strings.Join(names, " ") + "]"
}

// TestServiceExtensions: the last configuration that lists extensions
// gives them; one that lists none leaves the earlier list; a list the
// overlay could not copy (a variable) is an error, as is a configuration
// that profiles already.
func TestServiceExtensions(t *testing.T) {
	a := []byte("service:\n  extensions: [health_check, file_storage]\n")
	b := []byte("receivers:\n  otlp:\n")
	c := []byte("service:\n  extensions: [health_check]\n")
	for _, tc := range []struct {
		layers [][]byte
		want   []string
	}{
		{[][]byte{a}, []string{"health_check", "file_storage"}},
		{[][]byte{a, b}, []string{"health_check", "file_storage"}},
		{[][]byte{a, c}, []string{"health_check"}},
		{[][]byte{b}, nil},
	} {
		got, err := load.ServiceExtensions(tc.layers...)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ServiceExtensions = %v, %v; want %v", got, err, tc.want)
		}
	}
	if _, err := load.ServiceExtensions([]byte("service:\n  extensions: ${env:EXTS}\n")); err == nil || !strings.Contains(err.Error(), "not a list") {
		t.Errorf("extensions from a variable: err %v, want one saying it is not a list", err)
	}
	if _, err := load.ProfileOverlay([]string{"health_check", "pprof"}, "127.0.0.1:1", "x"); err == nil {
		t.Error("an overlay on a configuration that has pprof already: no error")
	}
}

// TestProfileRefusesToOverwrite: a profile already in the folder is kept
// and the collector not started.
func TestProfileRefusesToOverwrite(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "default.cpu.pprof")
	if err := os.WriteFile(old, []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := load.StartCollector(context.Background(), "/nonexistent/percause", "default", t.TempDir(), nil, load.WithProfile(dir))
	if err == nil || !strings.Contains(err.Error(), "exists") {
		t.Fatalf("err %v, want one naming the profile that exists", err)
	}
	if b, _ := os.ReadFile(old); string(b) != "kept" {
		t.Error("the profile already there was changed")
	}
}

// TestProfiledCollector: the embedded default started with the pprof
// overlay still has every extension it needs (it starts healthy and counts
// every turn: its storage is file_storage), and writes a heap profile on
// request and a CPU profile at a graceful stop, both readable by pprof.
func TestProfiledCollector(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the percause binary")
	}
	profiles := t.TempDir()
	c, err := load.StartCollector(context.Background(), testenv.PercauseBin(t), "default", t.TempDir(), nil, load.WithProfile(profiles))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	r, err := load.Drive(context.Background(), load.Target{TracesURL: c.TracesURL, PromURL: c.PromURL, Pid: c.Pid()},
		load.Options{Installations: 10, Turns: 200, RelaunchEvery: 3, Concurrency: 4, Seed: 5, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Exact {
		t.Fatalf("the profiled default miscounted: %v", r.Differences)
	}
	if err := c.WriteHeapProfile(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if got, want := c.CPUProfile, filepath.Join(profiles, "default.cpu.pprof"); got != want {
		t.Errorf("CPU profile at %s, want %s", got, want)
	}
	checkProfile(t, c.CPUProfile, "cpu")
	checkProfile(t, c.HeapProfile, "inuse_space")
}

// checkProfile opens a pprof file and checks it holds samples of kind.
func checkProfile(t *testing.T, path, kind string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var kinds []string
	for _, st := range p.SampleType {
		kinds = append(kinds, st.Type)
	}
	if !slices.Contains(kinds, kind) {
		t.Errorf("%s: sample types %v, want %s", path, kinds, kind)
	}
	if len(p.Sample) == 0 {
		t.Errorf("%s: no samples", path)
	}
}
