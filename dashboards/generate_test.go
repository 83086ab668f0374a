package dashboards

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite dashboards/generated from the code")

// TestGeneratedFilesAreCommitted runs the generator into a temporary folder
// and compares every file with the committed one: regeneration leaves no
// diff, and no committed file is stale or left over.
func TestGeneratedFilesAreCommitted(t *testing.T) {
	if *update {
		if err := Generate("."); err != nil {
			t.Fatal(err)
		}
	}
	tmp := t.TempDir()
	if err := Generate(tmp); err != nil {
		t.Fatal(err)
	}
	want := readTree(t, filepath.Join(tmp, GeneratedDir))
	got := readTree(t, GeneratedDir)
	for p, w := range want {
		g, ok := got[p]
		if !ok {
			t.Errorf("%s is generated but not committed; run `percause dashboards`", p)
			continue
		}
		if !bytes.Equal(g, w) {
			t.Errorf("%s differs from what the generator writes; run `percause dashboards`", p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s is committed but no longer generated", p)
		}
	}
}

// TestGenerateIsDeterministic renders twice and compares byte for byte.
func TestGenerateIsDeterministic(t *testing.T) {
	a, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		b, err := Files()
		if err != nil {
			t.Fatal(err)
		}
		for p := range a {
			if !bytes.Equal(a[p], b[p]) {
				t.Fatalf("%s differs between two runs", p)
			}
		}
	}
}

func readTree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestGenerateKeepsFilesItDidNotWrite: files in the generated folder that the
// generator did not make (someone's own dashboard, notes) survive a run;
// a file an earlier run made and this one no longer makes is removed, with
// the folder it leaves empty; and a manifest naming files outside the
// folder removes nothing there.
func TestGenerateKeepsFilesItDidNotWrite(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, GeneratedDir)
	write := func(rel, content string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	foreign := map[string]string{
		GeneratedDir + "/notes.txt":                         "mine",
		GeneratedDir + "/grafana/dashboards/my-own.json":    "{}",
		GeneratedDir + "/grafana/dashboards/kept/deep.json": "{}",
		GeneratedDir + "/old/beside-a-stale-file.yaml":      "mine too",
		"outside.txt":              "beside the generated folder",
		"../beside-dashboards.txt": "two levels up",
	}
	for rel, c := range foreign {
		write(rel, c)
	}
	// What an earlier run made and this one no longer makes, and a
	// manifest that also names files it must never touch.
	write(GeneratedDir+"/old/stale.yaml", "stale")
	write(GeneratedDir+"/gone/alone.yaml", "stale")
	write(GeneratedDir+"/"+PathManifest, manifestHeader+
		"old/stale.yaml\ngone/alone.yaml\n../outside.txt\n../../beside-dashboards.txt\n/etc/hostname\n"+
		"grafana/dashboards/../dashboards/my-own.json\nnotes.txt/..\n")

	if err := Generate(dir); err != nil {
		t.Fatal(err)
	}
	for rel, c := range foreign {
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil || string(b) != c {
			t.Errorf("%s: %q, %v; want it left as it was", rel, b, err)
		}
	}
	for _, rel := range []string{"old/stale.yaml", "gone/alone.yaml", "gone"} {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(rel))); !os.IsNotExist(err) {
			t.Errorf("%s: %v; want it removed (an earlier run made it, this one does not)", rel, err)
		}
	}
	files, err := Files()
	if err != nil {
		t.Fatal(err)
	}
	got := readTree(t, root)
	for p := range files {
		if _, ok := got[p]; !ok {
			t.Errorf("%s not written", p)
		}
	}
	// The new manifest lists what this run made, and nothing foreign.
	listed, err := readManifest(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != len(files)+1 {
		t.Errorf("manifest lists %d files, want %d and itself", len(listed), len(files))
	}
	for _, p := range listed {
		if _, ok := files[p]; !ok && p != PathManifest {
			t.Errorf("manifest lists %s, which the generator does not make", p)
		}
	}
	// A second run over its own output changes nothing.
	if err := Generate(dir); err != nil {
		t.Fatal(err)
	}
	again := readTree(t, root)
	if len(again) != len(got) {
		t.Errorf("second run: %d files, first %d", len(again), len(got))
	}
}
