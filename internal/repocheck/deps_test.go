package repocheck

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/percause/percause/internal/testsupport/testenv"
)

// module is this repository's module path.
const module = "github.com/percause/percause"

// graph is the import graph of the module's non-test code: each package's
// direct imports.
type graph map[string][]string

// rule is one line of docs/architecture.md's "Which part may import which":
// no package under from may import, directly or through others, a package
// that forbidden reports (with why).
type rule struct {
	name string
	from []string // module-relative patterns: "instr/..." or "dashboards"; "..." is every package of ours
	// except are the packages of from the rule leaves out.
	except    []string
	forbidden func(path string) bool
	why       string
}

// applies reports whether the rule holds the module-relative package rel.
func (r rule) applies(rel string) bool {
	in := func(pat string) bool { return pat == "..." || under(rel, pat) }
	return slices.ContainsFunc(r.from, in) && !slices.ContainsFunc(r.except, func(pat string) bool { return under(rel, pat) })
}

// ours reports whether path is a package of this module, and which
// (module-relative, "" for the root).
func ours(path string) (rel string, ok bool) {
	if path == module {
		return "", true
	}
	rel, ok = strings.CutPrefix(path, module+"/")
	return rel, ok
}

// under reports whether the module-relative package rel matches pattern
// ("instr/..." is instr and everything below it; "dashboards" is that one
// package).
func under(rel, pattern string) bool {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return rel == base || strings.HasPrefix(rel, base+"/")
	}
	return rel == pattern
}

func oursUnder(patterns ...string) func(string) bool {
	return func(path string) bool {
		rel, ok := ours(path)
		if !ok {
			return false
		}
		for _, p := range patterns {
			if under(rel, p) {
				return true
			}
		}
		return false
	}
}

// collector is any package of the OpenTelemetry Collector or its contrib
// repository.
func collector(path string) bool {
	for _, prefix := range []string{"go.opentelemetry.io/collector", "github.com/open-telemetry/opentelemetry-collector-contrib"} {
		if path == prefix || strings.HasPrefix(path, prefix+"/") {
			return true
		}
	}
	return false
}

// collectorBeyondPdata is a collector package other than pdata and what
// pdata itself imports (its feature gates).
func collectorBeyondPdata(path string) bool {
	for _, p := range []string{"go.opentelemetry.io/collector/pdata", "go.opentelemetry.io/collector/featuregate"} {
		if path == p || strings.HasPrefix(path, p+"/") {
			return false
		}
	}
	return collector(path)
}

func either(fs ...func(string) bool) func(string) bool {
	return func(path string) bool {
		for _, f := range fs {
			if f(path) {
				return true
			}
		}
		return false
	}
}

// oursExcept is every package of this module but those matching allowed.
func oursExcept(allowed ...string) func(string) bool {
	allow := oursUnder(allowed...)
	return func(path string) bool {
		_, ok := ours(path)
		return ok && !allow(path)
	}
}

// rules are docs/architecture.md's, "Which part may import which".
var rules = []rule{
	{
		name:      "the SDK and the exporters",
		from:      []string{"instr/...", "exporters/..."},
		forbidden: either(collector, oursUnder("processors/...", "components/...", "lab/...", "dashboards/...", "cmd/...", "internal/assembly/distro/...")),
		why:       "what runs inside a phone or an engine never pulls in a collector, processors/, components/, lab/ or dashboards/",
	},
	{
		name:      "the lab",
		from:      []string{"lab/..."},
		forbidden: oursUnder("processors/...", "components/...", "internal/assembly/distro/...", "cmd/..."),
		why:       "the lab's verdicts come back through a running collector, never from processors/ or components/ in process",
	},
	{
		name:      "semconv",
		from:      []string{"instr/semconv"},
		forbidden: oursExcept("instr/semconv"),
		why:       "instr/semconv is the leaf: every part may import it, it imports nothing of this module",
	},
	{
		name:      "the leaves",
		from:      []string{"internal/leaf/..."},
		forbidden: oursExcept("internal/leaf/..."),
		why:       "internal/leaf/ holds the small parts every layer may share (the ID ring, observed counts, free ports, following a file, the loopback test, the environment's table, plurals): they import nothing of this module but each other",
	},
	{
		name:      "the page",
		from:      []string{"internal/page/..."},
		forbidden: oursExcept("internal/page/...", "internal/leaf/...", "verdict/...", "instr/semconv"),
		why:       "internal/page/ (the day report and the page's renderer) reads verdicts through verdict/ and names from instr/semconv; the exporter and the commands both render it",
	},
	{
		name:      "the command features",
		from:      []string{"internal/command/..."},
		forbidden: oursUnder("internal/assembly/...", "cmd/...", "lab/...", "processors/...", "components/...", "internal/testsupport/..."),
		why:       "a command's feature (load, check, up, poolsim) talks to a collector it starts or reads its files; it never builds one in process, and never pulls in the lab",
	},
	{
		name:      "the assemblies",
		from:      []string{"..."},
		except:    []string{"cmd/...", "internal/assembly/..."},
		forbidden: oursUnder("internal/assembly/..."),
		why:       "internal/assembly/ (the distribution's components, the collector in process) is the top of the tree: only cmd/ builds on it",
	},
	{
		name:      "test support",
		from:      []string{"..."},
		except:    []string{"internal/testsupport/..."},
		forbidden: oursUnder("internal/testsupport/..."),
		why:       "internal/testsupport/ is for tests: no code that ships imports it",
	},
	{
		name:      "the lab stays out of the product",
		from:      []string{"..."},
		except:    []string{"lab/...", "cmd/...", "internal/testsupport/..."},
		forbidden: oursUnder("lab/..."),
		why:       "only the binary's lab and demo commands (cmd/) and test support run the lab; a product package reads verdicts through verdict/",
	},
	{
		name:      "the dashboards",
		from:      []string{"dashboards/..."},
		forbidden: oursExcept("dashboards/...", "instr/semconv"),
		why:       "the dashboards know metric names and nothing else: of this module, only instr/semconv",
	},
	{
		name:      "the verdict model",
		from:      []string{"verdict/..."},
		forbidden: either(oursExcept("verdict/...", "instr/semconv"), collectorBeyondPdata),
		why:       "verdict/ is a leaf of pdata and instr/semconv: every part that reads or writes a verdict may import it",
	},
	{
		name:      "the verdict processor",
		from:      []string{"processors/..."},
		forbidden: oursExcept("processors/...", "instr/semconv", "internal/leaf/idring", "internal/leaf/observed", "verdict/..."),
		why:       "the processor reads names from instr/semconv and turns through verdict/, never the client library (of internal/leaf/, which imports nothing of this module: idring, its ring of decided IDs, and observed, its own counts)",
	},
	{
		name:      "the collector components",
		from:      []string{"components/..."},
		forbidden: oursUnder("instr", "instr/lanes/...", "instr/linkstatus/...", "exporters/otlp/...", "exporters/spool/...", "lab/...", "dashboards/...", "cmd/..."),
		why:       "a component reads names from instr/semconv (and the line grammar from exporters/textlines), never the client library",
	},
}

// violations returns, for every forbidden package that a package of r.from
// reaches, the shortest import chain to it (from whichever root is
// closest), sorted.
func (r rule) violations(g graph) []string {
	best := map[string][]string{}
	for root := range g {
		rel, ok := ours(root)
		if !ok || !r.applies(rel) {
			continue
		}
		parent := map[string]string{root: ""}
		queue := []string{root}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			for _, imp := range g[p] {
				if _, seen := parent[imp]; seen {
					continue
				}
				parent[imp] = p
				if !r.forbidden(imp) {
					queue = append(queue, imp)
					continue
				}
				// The chain ends at the first forbidden package.
				c := chain(parent, imp)
				if b, ok := best[imp]; !ok || len(c) < len(b) || len(c) == len(b) && strings.Join(c, " ") < strings.Join(b, " ") {
					best[imp] = c
				}
			}
		}
	}
	out := make([]string, 0, len(best))
	for _, c := range best {
		out = append(out, strings.Join(c, " → "))
	}
	sort.Strings(out)
	return out
}

// chain is the import path from the root to p, module packages shortened.
func chain(parent map[string]string, p string) []string {
	var names []string
	for ; p != ""; p = parent[p] {
		if rel, ok := ours(p); ok && rel != "" {
			names = append(names, rel)
		} else {
			names = append(names, p)
		}
	}
	slices.Reverse(names)
	return names
}

// loadGraph lists the module's packages and everything they import
// (production code: test files are not what an app embeds).
func loadGraph(t *testing.T) graph {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
	cmd.Dir = testenv.RepoRoot()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./...: %v\n%s", err, stderr.String())
	}
	g := graph{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 0 {
			g[f[0]] = f[1:]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestDependencyDirection holds the module's code to docs/architecture.md's
// import rules, and names the chain of imports that breaks one.
func TestDependencyDirection(t *testing.T) {
	g := loadGraph(t)
	for _, must := range []string{module + "/instr", module + "/instr/semconv", module + "/exporters/otlp", module + "/lab",
		module + "/dashboards", module + "/processors/verdictprocessor"} {
		if _, ok := g[must]; !ok {
			t.Fatalf("go list found no %s: the graph is incomplete", must)
		}
	}
	for _, r := range rules {
		roots := 0
		for p := range g {
			if rel, ok := ours(p); ok && r.applies(rel) {
				roots++
			}
		}
		if roots == 0 {
			t.Errorf("%s: no package matches %v", r.name, r.from)
		}
		for _, v := range r.violations(g) {
			t.Errorf("%s: %s\n  (%s)", r.name, v, r.why)
		}
	}
}

// TestRulesCatchABadImport runs the rules over small made-up graphs: each
// breaks one rule through a chain, and the message names the chain.
func TestRulesCatchABadImport(t *testing.T) {
	m := func(rel string) string { return module + "/" + rel }
	for _, c := range []struct {
		name string
		g    graph
		want string // the chain reported; "" : none
	}{
		{"the SDK through a helper into the collector", graph{
			m("instr"):           {m("internal/helper"), "fmt"},
			m("internal/helper"): {"go.opentelemetry.io/collector/pdata/ptrace"},
			"go.opentelemetry.io/collector/pdata/ptrace": nil,
		}, "instr → internal/helper → go.opentelemetry.io/collector/pdata/ptrace"},
		{"an exporter into the collector, reported from the exporter", graph{
			m("instr"):          {m("exporters/otlp")},
			m("exporters/otlp"): {"go.opentelemetry.io/collector/pdata/pcommon"},
		}, "exporters/otlp → go.opentelemetry.io/collector/pdata/pcommon"},
		{"the SDK into contrib", graph{
			m("instr/lanes"): {"github.com/open-telemetry/opentelemetry-collector-contrib/pkg/x"},
		}, "instr/lanes → github.com/open-telemetry/opentelemetry-collector-contrib/pkg/x"},
		{"the SDK into the lab", graph{
			m("exporters/spool"): {m("lab/player")},
		}, "exporters/spool → lab/player"},
		{"the OTLP protos are not the collector", graph{
			m("instr"): {"go.opentelemetry.io/proto/otlp/collector/trace/v1"},
		}, ""},
		{"the lab into the processor", graph{
			m("lab"): {m("lab/engine")}, m("lab/engine"): {m("processors/verdictprocessor")},
		}, "lab/engine → processors/verdictprocessor"}, // the closest package that breaks it
		{"the lab through a helper into the processor", graph{
			m("lab"): {m("internal/helper")}, m("internal/helper"): {m("processors/verdictprocessor")},
		}, "lab → internal/helper → processors/verdictprocessor"},
		{"the lab into a component", graph{
			m("lab/phone"): {m("components/linesconnector")},
		}, "lab/phone → components/linesconnector"},
		{"semconv importing anything of ours", graph{
			m("instr/semconv"): {"strings", m("exporters/textlines")},
		}, "instr/semconv → exporters/textlines"},
		{"the dashboards into the SDK", graph{
			m("dashboards"): {m("instr/semconv"), m("instr")},
		}, "dashboards → instr"},
		{"a command feature into the lab", graph{
			m("internal/command/livecheck"): {m("lab/verdicts")},
		}, "internal/command/livecheck → lab/verdicts"},
		{"a product package into the lab", graph{
			m("internal/page/verdictpage"): {m("lab/verdicts")},
		}, "internal/page/verdictpage → lab/verdicts"},
		{"the binary runs the lab", graph{
			m("cmd/percause"): {m("lab"), m("internal/assembly/distro")},
		}, ""},
		{"a leaf into a command feature", graph{
			m("internal/leaf/follow"): {m("internal/command/load")},
		}, "internal/leaf/follow → internal/command/load"},
		{"a component into the assembly", graph{
			m("components/verdictexporter"): {m("internal/assembly/inproc")},
		}, "components/verdictexporter → internal/assembly/inproc"},
		{"shipped code into test support", graph{
			m("internal/command/up"): {m("internal/testsupport/testenv")},
		}, "internal/command/up → internal/testsupport/testenv"},
		{"the dashboards with semconv only", graph{
			m("dashboards"): {m("instr/semconv"), "github.com/grafana/grafana-foundation-sdk/go/dashboard"},
		}, ""},
	} {
		var got []string
		for _, r := range rules {
			got = append(got, r.violations(c.g)...)
		}
		// Rules overlap (the lab is out of bounds for several): one chain
		// is one finding.
		slices.Sort(got)
		got = slices.Compact(got)
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("%s: reported %q, want nothing", c.name, got)
		case c.want != "" && (len(got) != 1 || got[0] != c.want):
			t.Errorf("%s: reported %q, want [%q]", c.name, got, c.want)
		}
	}
}
