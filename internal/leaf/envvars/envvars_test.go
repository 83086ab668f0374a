package envvars

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/percause/percause/internal/testsupport/testenv"
)

var update = flag.Bool("update", false, "rewrite docs/environment.md from the table")

// TestEnvironmentDoc fails when docs/environment.md is out of step with the
// table; `go test ./internal/leaf/envvars -run TestEnvironmentDoc -update`
// rewrites it.
func TestEnvironmentDoc(t *testing.T) {
	path := filepath.Join(testenv.RepoRoot(), DocPath)
	got := Markdown()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/leaf/envvars -run TestEnvironmentDoc -update)", err)
	}
	if n, w, g := testenv.FirstDifference(want, got); n > 0 {
		t.Fatalf("%s is out of step with the table (run go test ./internal/leaf/envvars -run TestEnvironmentDoc -update); first difference at line %d:\n  file:  %s\n  table: %s",
			DocPath, n, w, g)
	}
}

// percauseName is a variable's name in Go code ("PERCAUSE_" alone, a
// prefix, is not one).
var percauseName = regexp.MustCompile(`PERCAUSE_[A-Z0-9_]*[A-Z0-9]`)

// envRef is a configuration's ${env:NAME} or ${env:NAME:-default}.
var envRef = regexp.MustCompile(`\$\{env:(PERCAUSE_[A-Z0-9_]+)(:-([^}]*))?\}`)

// configRead is how a configuration reads a variable: its default, and
// whether it has one.
type configRead struct {
	def    string
	hasDef bool
}

// reads is what the repository reads: the Go files whose string literals
// name each variable, and each configuration's reads of it.
type reads struct {
	goFiles map[string][]string              // name → the Go files
	configs map[string]map[string]configRead // name → configuration → its read
}

// skipDir are the folders the scan leaves out: not the repository's code.
func skipDir(rel, name string) bool {
	return strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "bin" ||
		name == "percause-data" || rel == "internal/leaf/envvars"
}

// scanRepository finds every PERCAUSE_* variable that shipped Go code (its
// string literals: the names it reads, and the messages that name them)
// or a configuration (${env:…}) reads.
func scanRepository(t *testing.T, root string) reads {
	t.Helper()
	r := reads{goFiles: map[string][]string{}, configs: map[string]map[string]configRead{}}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path != root && skipDir(rel, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		switch ext := filepath.Ext(path); {
		case ext == ".go" && !strings.HasSuffix(path, "_test.go"):
			add := func(text string) {
				for _, name := range percauseName.FindAllString(text, -1) {
					if !slices.Contains(r.goFiles[name], rel) {
						r.goFiles[name] = append(r.goFiles[name], rel)
					}
				}
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				// A file being edited: its whole text, comments and all.
				b, rerr := os.ReadFile(path)
				if rerr != nil {
					return rerr
				}
				add(string(b))
				return nil
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					add(lit.Value)
				}
				return true
			})
		case ext == ".yaml" || ext == ".yml":
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range envRef.FindAllStringSubmatch(string(b), -1) {
				if r.configs[m[1]] == nil {
					r.configs[m[1]] = map[string]configRead{}
				}
				if _, seen := r.configs[m[1]][rel]; !seen {
					r.configs[m[1]][rel] = configRead{def: m[3], hasDef: m[2] != ""}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// mismatches are the differences between the table and what the
// repository reads: a variable read and not listed, one listed and read by
// nothing, a configuration the table does not name as a reader (or names
// wrongly), a default that differs from the embedded default's.
func mismatches(table []Var, shipped []string, r reads) []string {
	var out []string
	listed := map[string]Var{}
	for _, v := range table {
		listed[v.Name] = v
	}
	var read []string
	for name := range r.goFiles {
		read = append(read, name)
	}
	for name := range r.configs {
		if _, ok := r.goFiles[name]; !ok {
			read = append(read, name)
		}
	}
	sort.Strings(read)
	for _, name := range read {
		if _, ok := listed[name]; !ok {
			var where []string
			where = append(where, r.goFiles[name]...)
			for c := range r.configs[name] {
				where = append(where, c)
			}
			sort.Strings(where)
			out = append(out, name+" is read ("+strings.Join(where, ", ")+") but the table does not list it")
		}
	}
	configs := map[string]bool{}
	for _, byConfig := range r.configs {
		for c := range byConfig {
			configs[c] = true
		}
	}
	for c := range configs {
		if !slices.Contains(shipped, c) {
			out = append(out, c+" reads PERCAUSE_* variables but ShippedConfigs does not name it")
		}
	}
	for _, c := range shipped {
		if !configs[c] {
			out = append(out, "ShippedConfigs names "+c+", which reads no PERCAUSE_* variable")
		}
	}
	for _, v := range table {
		_, inGo := r.goFiles[v.Name]
		byConfig := r.configs[v.Name]
		if !inGo && len(byConfig) == 0 {
			out = append(out, "the table lists "+v.Name+", which nothing reads")
			continue
		}
		var got []string
		for c := range byConfig {
			got = append(got, c)
		}
		sort.Strings(got)
		want := slices.Clone(v.Configs)
		sort.Strings(want)
		if !slices.Equal(got, want) {
			out = append(out, v.Name+": the table says "+strings.Join(want, ", ")+" read it; the ones that do: "+strings.Join(got, ", "))
		}
		for c, read := range byConfig {
			out = append(out, defaultMismatch(v, c, read)...)
		}
	}
	sort.Strings(out)
	return out
}

// defaultMismatch: the embedded default's default is the table's Default
// (before any parenthesis naming another configuration's); another
// configuration's appears in it; a read without a default, or with an
// empty one, has none in the table.
func defaultMismatch(v Var, config string, read configRead) []string {
	own, _, _ := strings.Cut(v.Default, " (")
	switch {
	case !read.hasDef || read.def == "":
		if v.Default != "" {
			return []string{v.Name + ": " + config + " has no default, the table " + v.Default}
		}
	case config == local && own != read.def:
		return []string{v.Name + ": " + config + "'s default is " + read.def + ", the table's " + own}
	case !strings.Contains(v.Default, read.def):
		return []string{v.Name + ": " + config + "'s default " + read.def + " is not in the table's " + v.Default}
	}
	return nil
}

// TestTableListsWhatIsRead fails when shipped Go code or a configuration
// reads a PERCAUSE_* variable the table does not list, when the table
// lists one nothing reads, when a row's configurations are not the ones
// that read it, and when a default differs from the configurations'.
func TestTableListsWhatIsRead(t *testing.T) {
	r := scanRepository(t, testenv.RepoRoot())
	if len(r.goFiles) < 20 || len(r.configs) < 20 {
		t.Fatalf("the scan found %d variables in Go and %d in configurations: it missed some", len(r.goFiles), len(r.configs))
	}
	for _, m := range mismatches(Table, ShippedConfigs, r) {
		t.Error(m)
	}
}

// TestMismatchesFound: the check reports a variable read and not listed,
// and one listed that nothing reads.
func TestMismatchesFound(t *testing.T) {
	table := []Var{
		{Name: "PERCAUSE_A", Default: "1", Configs: []string{local}},
		{Name: "PERCAUSE_B", Unset: "none", Commands: []string{"up"}},
		{Name: "PERCAUSE_GONE", Unset: "none", Commands: []string{"up"}},
	}
	r := reads{
		goFiles: map[string][]string{"PERCAUSE_B": {"cmd/percause/up.go"}, "PERCAUSE_NEW": {"cmd/percause/turn.go"}},
		configs: map[string]map[string]configRead{
			"PERCAUSE_A":     {local: {def: "2", hasDef: true}},
			"PERCAUSE_OTHER": {local: {}},
		},
	}
	got := mismatches(table, []string{local}, r)
	for _, want := range []string{
		"PERCAUSE_NEW is read (cmd/percause/turn.go) but the table does not list it",
		"PERCAUSE_OTHER is read (collector-config/local.yaml) but the table does not list it",
		"the table lists PERCAUSE_GONE, which nothing reads",
		"PERCAUSE_A: collector-config/local.yaml's default is 2, the table's 1",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("not reported: %q\n(reported: %q)", want, got)
		}
	}
	if len(got) != 4 {
		t.Errorf("reported %d, want 4: %q", len(got), got)
	}
}

// TestTableRows: every row says what it sets and what unset means, is read
// by someone, names only commands of Commands, and every command reads
// something; a list's default is a list of its own words, and the words
// of a configuration's list are exporters that configuration defines.
func TestTableRows(t *testing.T) {
	names := map[string]bool{}
	for _, v := range Table {
		if names[v.Name] {
			t.Errorf("%s: listed twice", v.Name)
		}
		names[v.Name] = true
		if v.Means == "" || (v.Default == "") == (v.Unset == "") {
			t.Errorf("%s: wants what it sets, and either a default or what unset means", v.Name)
		}
		if len(v.Commands) == 0 && len(v.Configs) == 0 && v.Others == "" {
			t.Errorf("%s: read by no one", v.Name)
		}
		for _, c := range v.Commands {
			if _, ok := command(c); !ok {
				t.Errorf("%s: read by %q, which Commands does not hold", v.Name, c)
			}
		}
		if len(v.Words) > 0 && v.List == NotAList {
			t.Errorf("%s: words without a list", v.Name)
		}
		if own, _, _ := strings.Cut(v.Default, " ("); len(v.Words) > 0 && own != "" {
			if err := CheckWords(v.Name, own); err != nil {
				t.Errorf("its default is refused: %v", err)
			}
		}
		if v.List == YAMLList && len(v.Words) > 0 {
			for _, c := range v.Configs {
				defined := exportersOf(t, c)
				for _, w := range v.Words {
					if !slices.Contains(defined, w) {
						t.Errorf("%s accepts %s, which %s does not define (it has %v)", v.Name, w, c, defined)
					}
				}
			}
		}
	}
	for _, c := range Commands {
		if len(ForCommand(c.Name)) == 0 {
			t.Errorf("command %s reads nothing of the table", c.Name)
		}
	}
}

func exportersOf(t *testing.T, config string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), config))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Exporters map[string]any `yaml:"exporters"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", config, err)
	}
	var out []string
	for k := range doc.Exporters {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestWords(t *testing.T) {
	for in, want := range map[string][]string{
		"":                                    nil,
		"otlp":                                {"otlp"},
		"otlp,prometheus":                     {"otlp", "prometheus"},
		" otlp , prometheus ,":                {"otlp", "prometheus"},
		"[nop]":                               {"nop"},
		"[otlphttp/traces, nop]":              {"otlphttp/traces", "nop"},
		`["otlphttp/traces", 'nop']`:          {"otlphttp/traces", "nop"},
		"[]":                                  nil,
		"[prometheus, prometheusremotewrite]": {"prometheus", "prometheusremotewrite"},
	} {
		if got := Words(in); !slices.Equal(got, want) {
			t.Errorf("Words(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCheckWords: a word a list does not accept is refused by name, with
// the words it accepts; the ones it accepts pass.
func TestCheckWords(t *testing.T) {
	for _, c := range []struct {
		name, value string
		want        []string // substrings of the error; none: it passes
	}{
		{"PERCAUSE_ALLOW_UNAUTHENTICATED", "otlp,prometheus", nil},
		{"PERCAUSE_ALLOW_UNAUTHENTICATED", "otlp/2, prometheus/scraped", nil},
		{"PERCAUSE_ALLOW_UNAUTHENTICATED", "", nil},
		{"PERCAUSE_ALLOW_UNAUTHENTICATED", "otpl", []string{`PERCAUSE_ALLOW_UNAUTHENTICATED: "otpl" is not a word it accepts; it accepts otlp, prometheus (each may name an instance: otlp/NAME)`}},
		{"PERCAUSE_ALLOW_UNAUTHENTICATED", "otlp,promethus,verdict", []string{`"promethus", "verdict" are not words it accepts`, "it accepts otlp, prometheus"}},
		{"PERCAUSE_ALLOW_UNAUTHENTICATED", "otlpx/2", []string{`"otlpx/2" is not a word it accepts`}},
		{"PERCAUSE_FORWARD_EXPORTERS", "[otlphttp/traces]", nil},
		{"PERCAUSE_FORWARD_EXPORTERS", "[otlphttp/traces, nop]", nil},
		{"PERCAUSE_FORWARD_EXPORTERS", "[otlphtp/traces]", []string{`"otlphtp/traces" is not a word it accepts; it accepts nop, otlphttp/traces`}},
		{"PERCAUSE_FORWARD_EXPORTERS", "[otlphttp/2]", []string{`"otlphttp/2" is not a word it accepts`}}, // no instances: only what local.yaml defines
		{"PERCAUSE_METRICS_EXPORTERS", "[prometheus, prometheusremotewrite]", nil},
		{"PERCAUSE_METRICS_EXPORTERS", "[prometheus, remotewrite]", []string{`"remotewrite" is not a word it accepts; it accepts prometheus, prometheusremotewrite`}},
		{"PERCAUSE_LINES_INCLUDE", "[./anything/*.log]", nil}, // globs: any word
		{"PERCAUSE_DATA_DIR", "x,y", nil}, // not a list
	} {
		err := CheckWords(c.name, c.value)
		switch {
		case len(c.want) == 0 && err != nil:
			t.Errorf("%s=%q refused: %v", c.name, c.value, err)
		case len(c.want) > 0 && err == nil:
			t.Errorf("%s=%q passed, want %q", c.name, c.value, c.want)
		}
		for _, w := range c.want {
			if err != nil && !strings.Contains(err.Error(), w) {
				t.Errorf("%s=%q: the error does not say %q:\n%v", c.name, c.value, w, err)
			}
		}
	}
}

// TestCheckRead: only the variables a configuration reads are checked.
func TestCheckRead(t *testing.T) {
	env := map[string]string{"PERCAUSE_FORWARD_EXPORTERS": "[otlphtp/traces]", "PERCAUSE_METRICS_EXPORTERS": "[nope]"}
	getenv := func(k string) string { return env[k] }
	localYAML := []byte("exporters: ${env:PERCAUSE_FORWARD_EXPORTERS:-[nop]}\n")
	err := CheckRead(getenv, localYAML)
	if err == nil || !strings.Contains(err.Error(), `"otlphtp/traces"`) || strings.Contains(err.Error(), "METRICS") {
		t.Errorf("CheckRead on local.yaml's read: %v, want the forward exporters refused alone", err)
	}
	if err := CheckRead(getenv, []byte("exporters: [nop]\n# PERCAUSE_FORWARD_EXPORTERS\n")); err != nil {
		t.Errorf("a configuration that does not read it: %v", err)
	}
	if err := CheckRead(getenv, []byte("x: ${env:PERCAUSE_FORWARD_EXPORTERS_2}\n")); err != nil {
		t.Errorf("another variable with the same prefix: %v", err)
	}
}

// TestHelp: a command's help lists every variable it reads, with its
// default or what unset means; the collector's also what each shipped
// configuration reads beyond; a command that reads none writes nothing.
func TestHelp(t *testing.T) {
	var b strings.Builder
	Help(&b, "collector")
	got := b.String()
	for _, want := range []string{
		"environment: what the embedded default (collector-config/local.yaml) reads, and PERCAUSE_ALLOW_UNAUTHENTICATED with any configuration (docs/environment.md",
		"    collector-config/agent.yaml (contrib's distribution runs it): PERCAUSE_OTLP_TOKEN, ",
		"  PERCAUSE_OTLP_ENDPOINT=127.0.0.1:4318\n        OTLP/HTTP in",
		"  PERCAUSE_ALLOW_UNAUTHENTICATED  (unset: every listener beyond loopback needs an authenticator)\n",
		"; accepts otlp, prometheus (each may name an instance: otlp/NAME)",
		"PERCAUSE_FORWARD_EXPORTERS=[nop]",
		"    collector-config/gateway.yaml: PERCAUSE_OTLP_TOKEN, ",
		"    collector-config/lines.yaml: PERCAUSE_LINES_INCLUDE, PERCAUSE_LINES_WAIT\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the collector's help lacks %q:\n%s", want, got)
		}
	}
	for _, v := range ForCommand("collector") {
		if !strings.Contains(got, "  "+v.Name) {
			t.Errorf("the collector's help lacks %s", v.Name)
		}
	}
	if strings.Contains(got, "PERCAUSE_NOTIFY_URL") {
		t.Errorf("the collector's help lists up's variables:\n%s", got)
	}
	b.Reset()
	Help(&b, "poolsim")
	if b.Len() != 0 {
		t.Errorf("a command that reads none wrote %q", b.String())
	}
}
