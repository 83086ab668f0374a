package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/percause/percause/dashboards"
)

// fakeRepo is a folder that looks like a percause checkout to the command:
// go.mod declaring the module and a dashboards/ folder.
func fakeRepo(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "go.mod"), "module "+modulePath+"\n\ngo 1.26\n")
	if err := os.MkdirAll(filepath.Join(root, "dashboards", "deep", "er"), 0o755); err != nil {
		t.Fatal(err)
	}
	return root
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
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

func TestModuleOf(t *testing.T) {
	for _, c := range []struct{ gomod, want string }{
		{"module github.com/percause/percause\n\ngo 1.26\n", modulePath},
		{"// a comment\nmodule   github.com/percause/percause // trailing\n", modulePath},
		{"module \"github.com/percause/percause\"\n", modulePath},
		{"module github.com/percause/percause-fork\n", "github.com/percause/percause-fork"},
		{"module github.com/someone/else\n", "github.com/someone/else"},
		{"modules github.com/percause/percause\n", ""},
		{"go 1.26\n", ""},
	} {
		if got := moduleOf([]byte(c.gomod)); got != c.want {
			t.Errorf("moduleOf(%q) = %q, want %q", c.gomod, got, c.want)
		}
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

// TestDashboardsRefusesAFolderThatIsNotACheckout: --dir on a folder that has
// a dashboards/generated folder but is not percause's checkout generates
// nothing and deletes nothing there.
func TestDashboardsRefusesAFolderThatIsNotACheckout(t *testing.T) {
	for _, c := range []struct {
		name  string
		gomod string // "" : no go.mod
		say   string
	}{
		{"no go.mod", "", "not a percause checkout"},
		{"another module", "module github.com/someone/else\n", `declares module "github.com/someone/else"`},
		{"a module whose name starts like ours", "module github.com/percause/percause-fork\n", "percause-fork"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if c.gomod != "" {
				writeFile(t, filepath.Join(dir, "go.mod"), c.gomod)
			}
			theirs := map[string]string{
				"dashboards/generated/their-dashboard.json":      "{}",
				"dashboards/generated/prometheus/alerts.yml":     "groups: []\n",
				"dashboards/generated/grafana/dashboards/a.json": "{}",
				"dashboards/readme.txt":                          "theirs",
			}
			for rel, content := range theirs {
				writeFile(t, filepath.Join(dir, filepath.FromSlash(rel)), content)
			}
			var out, errb bytes.Buffer
			if code := runDashboardsTo([]string{"--dir", dir}, &out, &errb); code != 2 {
				t.Errorf("exit %d, want 2 (stderr %q)", code, errb.String())
			}
			if !strings.Contains(errb.String(), c.say) {
				t.Errorf("stderr %q, want it to say %q", errb.String(), c.say)
			}
			for rel, content := range theirs {
				b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
				if err != nil || string(b) != content {
					t.Errorf("%s: %q, %v; want it untouched", rel, b, err)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "dashboards", "generated", dashboards.PathManifest)); !os.IsNotExist(err) {
				t.Errorf("a manifest was written into a folder that is not a checkout: %v", err)
			}
		})
	}
}

// TestDashboardsKeepsForeignFilesInACheckout: in a real checkout, files in
// dashboards/generated that the generator did not write survive a run.
func TestDashboardsKeepsForeignFilesInACheckout(t *testing.T) {
	root := fakeRepo(t)
	ownFile := filepath.Join(root, "dashboards", "generated", "grafana", "dashboards", "my-own.json")
	writeFile(t, ownFile, `{"title": "mine"}`)
	var out, errb bytes.Buffer
	if code := runDashboardsTo([]string{"--dir", root}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if b, err := os.ReadFile(ownFile); err != nil || string(b) != `{"title": "mine"}` {
		t.Errorf("my-own.json: %q, %v; want it kept", b, err)
	}
}

func TestRunDashboardsFlags(t *testing.T) {
	root := fakeRepo(t)
	for _, c := range []struct {
		args []string
		code int
		say  string
	}{
		{[]string{"--no-such-flag"}, 2, "flag provided but not defined"},
		{[]string{"--dir", root, "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"extra"}, 2, `unexpected argument "extra"`},
		{[]string{"--help"}, 0, "usage: percause dashboards"},
		{[]string{"-h"}, 0, "usage: percause dashboards"},
		{[]string{"--dir", root}, 0, ""},
	} {
		var out, errb bytes.Buffer
		code := runDashboardsTo(c.args, &out, &errb)
		if code != c.code || !strings.Contains(errb.String(), c.say) {
			t.Errorf("dashboards %q: exit %d, stderr %q; want exit %d saying %q", c.args, code, errb.String(), c.code, c.say)
		}
	}
}
