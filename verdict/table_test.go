package verdict

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/percause/percause/instr/semconv"
)

// TestEveryCauseIsRuledAndShown: every cause of semconv.Causes but none and
// unknown is implicated by exactly one rule of the table, and no rule
// implicates an unregistered one; the component's metadata lists the same
// causes; the processor's README numbers the rules in the table's order,
// and the top-level README has a line for each, in that order. (The
// dashboards' TestEveryCauseHasARow holds the dashboards to semconv.Causes.)
func TestEveryCauseIsRuledAndShown(t *testing.T) {
	var ruled []string
	for i, r := range rules {
		if len(r.causes) == 0 || r.fire == nil || r.summary == "" {
			t.Errorf("rule %d lacks its causes, its fire or its summary", i+1)
		}
		for _, c := range r.causes {
			if !slices.Contains(semconv.Causes, c) {
				t.Errorf("rule %d implicates %q, which semconv.Causes does not list", i+1, c)
			}
			if slices.Contains(ruled, c) {
				t.Errorf("cause %q is implicated by two rules", c)
			}
			ruled = append(ruled, c)
		}
		for _, name := range r.reads {
			if _, ok := semconv.Lookup(name); !ok {
				t.Errorf("rule %d reads %q, which the registry does not list", i+1, name)
			}
		}
		if len(r.reads) == 0 {
			t.Errorf("rule %d names no reading it reads", i+1)
		}
		if r.takes && r.keep == nil {
			t.Errorf("rule %d reads the takes of the units it keeps, but keeps none", i+1)
		}
	}
	for _, c := range semconv.Causes {
		if c != semconv.CauseNone && c != semconv.CauseUnknown && !slices.Contains(ruled, c) {
			t.Errorf("cause %q has no rule in the table", c)
		}
	}

	// metadata.yaml's enum.
	b, err := os.ReadFile(filepath.Join("..", "processors", "verdictprocessor", "metadata.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var md struct {
		Attributes map[string]struct {
			Enum []string `yaml:"enum"`
		} `yaml:"attributes"`
	}
	if err := yaml.Unmarshal(b, &md); err != nil {
		t.Fatal(err)
	}
	if got := md.Attributes[semconv.VerdictCause].Enum; !slices.Equal(got, semconv.Causes) {
		t.Errorf("metadata.yaml lists causes %v, semconv.Causes %v", got, semconv.Causes)
	}

	// The processor's README: "1. **network / synthesis**", "2. **bluetooth**", …
	readme, err := os.ReadFile(filepath.Join("..", "processors", "verdictprocessor", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	numbered := regexp.MustCompile(`(?m)^(\d)\. \*\*([a-z /]+)\*\*`).FindAllStringSubmatch(string(readme), -1)
	var want []string
	for _, r := range rules {
		want = append(want, strings.Join(r.causes, " / "))
	}
	want = append(want, semconv.CauseNone)
	var got []string
	for _, m := range numbered {
		got = append(got, m[2])
	}
	if !slices.Equal(got, want) {
		t.Errorf("the processor README numbers the rules %v, the table's order is %v", got, want)
	}

	// The top-level README's table: "| network | …", in table order.
	top, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(top)
	if i := strings.Index(section, "## The rules"); i >= 0 {
		section = section[i:]
	}
	rows := regexp.MustCompile(`(?m)^\| ([a-z]+) \| [^|]`).FindAllStringSubmatch(section, -1)
	var rowCauses []string
	for _, m := range rows {
		if slices.Contains(semconv.Causes, m[1]) {
			rowCauses = append(rowCauses, m[1])
		}
	}
	wantRows := append(append([]string(nil), ruled...), semconv.CauseNone)
	if !slices.Equal(rowCauses, wantRows) {
		t.Errorf("the README's rules table has rows %v, want %v (every ruled cause, in the table's order, then none)", rowCauses, wantRows)
	}
}

// TestUnitsKeptAreTheUnitsRead: a unit is kept exactly when a rule reads it
// or it carries bad input, so a new rule that reads units gets them.
func TestUnitsKeptAreTheUnitsRead(t *testing.T) {
	c := DefaultRules()
	cases := []struct {
		name string
		u    Unit
		keep bool
		take bool
	}{
		{"clean", Unit{Index: 1, TakeID: "t1", Lead: 0.2, HasLead: true}, false, false},
		{"underran", Unit{Index: 1, TakeID: "t1", Underruns: 1}, true, true},
		{"underran, bad reading", Unit{Index: 1, TakeID: "t1", Underruns: 1, UnderrunBad: true, Problems: []string{"x"}}, true, false},
		{"late", Unit{Index: 1, TakeID: "t1", Lead: -0.5, HasLead: true}, true, false},
		{"lead at the threshold", Unit{Index: 1, TakeID: "t1", Lead: -0.1, HasLead: true}, false, false},
		{"bad input", Unit{Index: 1, Problems: []string{"unit 1: pippa.unit.lead is a string"}}, true, false},
	}
	for _, tc := range cases {
		if got := keepUnit(&tc.u, &c); got != tc.keep {
			t.Errorf("%s: kept %v, want %v", tc.name, got, tc.keep)
		}
		if got := needsTake(&tc.u, &c); got != tc.take {
			t.Errorf("%s: its take read %v, want %v", tc.name, got, tc.take)
		}
	}
}

// TestSecsApart: a reading and its threshold print with as many decimals
// as it takes (2 to 6) to read differently, the same in a sentence built
// in a buffer (appendNeedAgainstCushion) as alone (secsApart).
func TestSecsApart(t *testing.T) {
	for _, c := range []struct {
		a, b         float64
		wantA, wantB string
	}{
		{0.4, 1.5, "0.40 s", "1.50 s"},
		{1.504, 1.5, "1.504 s", "1.500 s"},
		{1.5, 1.5, "1.50 s", "1.50 s"},
		{1.0000001, 1, "1.000000 s", "1.000000 s"},
		{-0.0041, -0.004, "-0.0041 s", "-0.0040 s"},
		// Longer than the stack buffers the readings are formatted in.
		{1e30, 1e30 + 1e15, "1000000000000000019884624838656.00 s", "1000000000000001005047043325952.00 s"},
	} {
		a, b := secsApart(c.a, c.b)
		if a != c.wantA || b != c.wantB {
			t.Errorf("secsApart(%v, %v) = %q, %q, want %q, %q", c.a, c.b, a, b, c.wantA, c.wantB)
		}
		got := string(appendNeedAgainstCushion([]byte("unit 1"), "t1", c.a, " > ", c.b))
		if want := "unit 1; take t1 need " + c.wantA + " > cushion " + c.wantB; got != want {
			t.Errorf("appendNeedAgainstCushion = %q, want %q", got, want)
		}
	}
}
