package linesconnector

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/exporters/textlines"
	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/testsupport/carried"
	"github.com/percause/percause/internal/testsupport/testenv"
)

// TestEveryCarriedReadingArrives (the line fields' part): the [voice-turn]
// line docs/semconv.md shows, which has every field the SDK writes (a
// textlines test holds it to the formatter), becomes a voice.turn span
// with every reading the verdict carries, and the page's table of the
// line's fields says which field each comes from. The verdict's readers,
// the stored codec and the page have their own part, under the same name.
func TestEveryCarriedReadingArrives(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "semconv.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "\n## Text lines\n")
	section, _, _ = strings.Cut(section, "\n## ")
	var example string
	for l := range strings.Lines(section) {
		if strings.HasPrefix(l, textlines.PrefixTurn) {
			example = l
			break
		}
	}
	if example == "" {
		t.Fatal("docs/semconv.md shows no [voice-turn] line under Text lines")
	}
	rec, err := textlines.Read(example)
	if err != nil {
		t.Fatal(err)
	}
	td := ptrace.NewTraces()
	l := &line{rec: rec, text: example, resource: pcommon.NewResource(), at: time.Unix(1, 0), timed: true}
	appendTurnSpans(td.ResourceSpans(), l, traceIDOf(rec.TraceID), nil)
	turn := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
	if turn.Name() != semconv.SpanVoiceTurn {
		t.Fatalf("the first span is %s", turn.Name())
	}
	if m := carried.Absent(turn.Attributes()); len(m) > 0 {
		t.Errorf("a [voice-turn] line with every field becomes a voice.turn without %v: a field of exporters/textlines (fields.go) or its span (spans.go) leaves them out", m)
	}
	for _, name := range carried.Names() {
		if !strings.Contains(section, "`"+name+"`") {
			t.Errorf("docs/semconv.md's table of the line's fields names no field that carries %s (instr/semconv/markdown.go)", name)
		}
	}
}
