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
