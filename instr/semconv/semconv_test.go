package semconv

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/percause/percause/internal/testsupport/testenv"
)

var update = flag.Bool("update", false, "rewrite docs/semconv.md from the Registry")

// TestSemconvDoc fails when docs/semconv.md is out of step with the Registry;
// `go test ./instr/semconv -run TestSemconvDoc -update` (make semconv)
// rewrites it.
func TestSemconvDoc(t *testing.T) {
	path := filepath.Join("..", "..", DocPath)
	got := Markdown()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run `make semconv`)", err)
	}
	if n, w, g := testenv.FirstDifference(want, got); n > 0 {
		t.Fatalf("%s is out of step with instr/semconv (run `make semconv`); first difference at line %d:\n  file: %s\n  code: %s",
			DocPath, n, w, g)
	}
}

// TestRegistryComplete fails when a name constant of this package (any
// *_names.go file included) has no Registry entry, so a name added anywhere
// reaches the reference page.
func TestRegistryComplete(t *testing.T) {
	registered := map[string]bool{}
	for _, n := range Registry {
		registered[n.Name] = true
	}
	files, _ := filepath.Glob("*.go")
	fset := token.NewFileSet()
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !id.IsExported() || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, _ := strconv.Unquote(lit.Value)
					if !isWireName(v) || id.Name == "DocPath" {
						continue
					}
					checked++
					if !registered[v] {
						t.Errorf("%s: %s = %q has no Registry entry (add it to registry.go)", fset.Position(id.Pos()), id.Name, v)
					}
				}
			}
		}
	}
	if checked < 100 {
		t.Errorf("only %d name constants found; the scan is broken", checked)
	}
}

// isWireName tells names (dotted, or a Prometheus _total) from values, units
// and prefixes.
func isWireName(v string) bool {
	if strings.HasPrefix(v, ".") || strings.HasSuffix(v, ".") || strings.ContainsAny(v, " {}/") {
		return false
	}
	return strings.Contains(v, ".") || strings.HasSuffix(v, "_total")
}

func TestRegistryEntriesAreComplete(t *testing.T) {
	seen := map[string]bool{}
	attrs := map[string]bool{}
	for _, n := range Registry {
		if n.Kind == KindAttribute || n.Kind == KindResource {
			attrs[n.Name] = true
		}
	}
	for _, n := range Registry {
		key := string(n.Kind) + " " + n.Name
		if seen[key] {
			t.Errorf("%s registered twice", key)
		}
		seen[key] = true
		if n.Meaning == "" {
			t.Errorf("%s has no meaning", key)
		}
		switch n.Kind {
		case KindAttribute, KindResource:
			if n.Type == "" || len(n.Where) == 0 {
				t.Errorf("%s lacks a type or where it is carried", key)
			}
		case KindMetric:
			if n.Type == "" {
				t.Errorf("%s lacks an instrument", key)
			}
			for _, a := range n.Where {
				if !attrs[a] {
					t.Errorf("%s: attribute %s is not registered", key, a)
				}
			}
		}
	}
}

// TestEveryAttributeHasALevel: every attribute a client sends says what the
// verdict needs of it, and the levels name only registered attributes.
func TestEveryAttributeHasALevel(t *testing.T) {
	for _, n := range Registry {
		if n.Kind != KindAttribute && n.Kind != KindResource {
			continue
		}
		switch n.Requirement {
		case Required, Recommended, Optional:
		case Collector:
			if !strings.HasPrefix(n.Name, "percause.") {
				t.Errorf("%s is marked as the collector's", n.Name)
			}
		default:
			t.Errorf("%s has no requirement level", n.Name)
		}
	}
	for name := range levels {
		if _, ok := Lookup(name); !ok {
			t.Errorf("levels names %s, which is not registered", name)
		}
	}
	for _, n := range Registry {
		if n.Kind == KindSpan && (n.Parent == "" || n.SpanKind == "") {
			t.Errorf("span %s has no structure", n.Name)
		}
	}
}
