package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/percause/percause/dashboards"
)

func fakeRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte(modulePath+"\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "dashboards", "deep", "er"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestFindRepoRootWalksUp(t *testing.T) {
	root := fakeRepo(t)
	got, err := findRepoRoot(filepath.Join(root, "dashboards", "deep", "er"))
	if err != nil || got != root {
		t.Fatalf("findRepoRoot = %q, %v; want %q", got, err, root)
	}
	other := t.TempDir()
	if _, err := findRepoRoot(other); err == nil || !strings.Contains(err.Error(), "--dir") {
		t.Fatalf("outside a repository: %v, want an error naming --dir", err)
	}
}

func TestGenerateDashboardsWritesEveryFile(t *testing.T) {
	root := fakeRepo(t)
	var out bytes.Buffer
	if err := generateDashboards(root, &out); err != nil {
		t.Fatal(err)
	}
	want, err := dashboards.Files()
	if err != nil {
		t.Fatal(err)
	}
	for p, b := range want {
		got, err := os.ReadFile(filepath.Join(root, "dashboards", dashboards.GeneratedDir, filepath.FromSlash(p)))
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if !bytes.Equal(got, b) {
			t.Errorf("%s differs", p)
		}
	}
	if !strings.Contains(out.String(), "wrote") {
		t.Errorf("output: %q", out.String())
	}
}

func TestGenerateDashboardsRefusesAFolderWithoutDashboards(t *testing.T) {
	if err := generateDashboards(t.TempDir(), &bytes.Buffer{}); err == nil {
		t.Fatal("generated into a folder that is not the repository")
	}
}

func TestRunDashboardsFlags(t *testing.T) {
	if code := runDashboards(t.Context(), []string{"--no-such-flag"}); code != 2 {
		t.Errorf("bad flag: exit %d, want 2", code)
	}
	root := fakeRepo(t)
	if code := runDashboards(t.Context(), []string{"--dir", root}); code != 0 {
		t.Errorf("--dir %s: exit %d", root, code)
	}
}
