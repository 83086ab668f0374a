package repocheck

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/percause/percause/internal/testsupport/testenv"
)

// layoutRow is a row of docs/architecture.md's layout table: its first cell,
// one path in backticks.
var layoutRow = regexp.MustCompile("(?m)^\\| `([^`]+)` \\|")

// layoutPaths reads the paths of the layout table, under "## Layout" and
// before the next section.
func layoutPaths(t *testing.T, arch string) map[string]bool {
	t.Helper()
	_, rest, ok := strings.Cut(arch, "\n## Layout\n")
	if !ok {
		t.Fatal("docs/architecture.md has no Layout section")
	}
	section, _, _ := strings.Cut(rest, "\n## ")
	paths := map[string]bool{}
	for _, m := range layoutRow.FindAllStringSubmatch(section, -1) {
		paths[m[1]] = true
	}
	return paths
}

// listPackages is every package of the module, module-relative ("" for
// the root).
func listPackages(t *testing.T) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "./...")
	cmd.Dir = testenv.RepoRoot()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v\n%s", err, stderr.String())
	}
	var pkgs []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if rel, ok := ours(strings.TrimSpace(sc.Text())); ok {
			pkgs = append(pkgs, rel)
		}
	}
	return pkgs
}

// missingFromLayout lists the packages the table has no row for. The
// generated telemetry packages (internal/metadata, mdatagen's) go with
// their component's row.
func missingFromLayout(paths map[string]bool, pkgs []string) []string {
	var missing []string
	for _, p := range pkgs {
		if p == "" || strings.HasSuffix(p, "/internal/metadata") {
			continue
		}
		if !paths[p] {
			missing = append(missing, p)
		}
	}
	return missing
}

// TestLayoutListsEveryPackage: docs/architecture.md's layout table has a
// row for every package of the module (by its path, in backticks), each
// row names a path that exists, and the collector-config row names every
// configuration in collector-config/.
func TestLayoutListsEveryPackage(t *testing.T) {
	root := testenv.RepoRoot()
	b, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	arch := string(b)
	paths := layoutPaths(t, arch)
	pkgs := listPackages(t)
	if len(pkgs) < 30 {
		t.Fatalf("go list found %d packages: the list is incomplete", len(pkgs))
	}
	for _, p := range missingFromLayout(paths, pkgs) {
		t.Errorf("docs/architecture.md's layout table has no row for package %s", p)
	}
	for p := range paths {
		if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
			t.Errorf("docs/architecture.md's layout table names %s, which does not exist", p)
		}
	}
	row := configRow(arch)
	configs, _ := filepath.Glob(filepath.Join(root, "collector-config", "*.yaml"))
	if len(configs) == 0 {
		t.Fatal("no collector-config/*.yaml found")
	}
	for _, c := range configs {
		if name := filepath.Base(c); !strings.Contains(row, "`"+name+"`") {
			t.Errorf("the layout's collector-config row does not name %s", name)
		}
	}
}

// configRow is the layout table's collector-config row.
func configRow(arch string) string {
	for line := range strings.SplitSeq(arch, "\n") {
		if strings.HasPrefix(line, "| `collector-config` |") {
			return line
		}
	}
	return ""
}

// TestLayoutCheckFindsAMissingRow: a package without a row is reported; a
// generated metadata package is not.
func TestLayoutCheckFindsAMissingRow(t *testing.T) {
	paths := layoutPaths(t, "# A\n\n## Layout\n\n| path | what |\n|---|---|\n| `verdict` | the model |\n\n## Next\n\n| `lab` | not the layout |\n")
	got := missingFromLayout(paths, []string{"verdict", "lab", "components/x/internal/metadata"})
	if len(got) != 1 || got[0] != "lab" {
		t.Fatalf("missing %v, want [lab]", got)
	}
}
