package livecheck

import (
	"fmt"
	"io"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/follow"
)

// maxTraces bounds the traces a Watcher holds before their verdict.
const maxTraces = 10000

// Watcher follows a traces file (OTLP JSON lines, every span the pipeline
// saw, verdict spans included) and reports each turn once its verdict is
// written, and every span that arrives for a turn already reported.
type Watcher struct {
	file     *follow.File
	traces   map[string][]Span
	order    []string
	reported map[string]bool
	// Broken counts lines that could not be read.
	Broken int
}

// NewWatcher follows path (it need not exist yet).
func NewWatcher(path string) *Watcher {
	return &Watcher{file: follow.New(path), traces: map[string][]Span{}, reported: map[string]bool{}}
}

var unmarshaler = &ptrace.JSONUnmarshaler{}

// Refresh reads what was written since the last call and returns the
// reports it completes.
func (w *Watcher) Refresh() ([]Report, error) {
	var out []Report
	late := map[string][]Span{}
	err := w.file.Lines(func(line []byte) {
		td, err := unmarshaler.UnmarshalTraces(line)
		if err != nil {
			w.Broken++
			return
		}
		var verdicts []string
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			rs := rss.At(i)
			sss := rs.ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				spans := sss.At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					s := spans.At(k)
					id := s.TraceID().String()
					if w.reported[id] {
						late[id] = append(late[id], Span{rs.Resource(), s})
						continue
					}
					if _, ok := w.traces[id]; !ok {
						w.order = append(w.order, id)
					}
					w.traces[id] = append(w.traces[id], Span{rs.Resource(), s})
					if s.Name() == semconv.SpanVerdict {
						verdicts = append(verdicts, id)
					}
				}
			}
		}
		for _, id := range verdicts {
			out = append(out, Check(id, w.traces[id]))
			delete(w.traces, id)
			w.reported[id] = true
		}
	})
	if err != nil {
		return nil, err
	}
	for id, spans := range late {
		r := Report{Trace: id, Problems: []Problem{}}
		for _, s := range spans {
			where := s.Span.Name()
			if v, ok := s.Span.Attributes().Get(semconv.TakeID); ok {
				where += " " + v.AsString()
			}
			r.Problems = append(r.Problems, Problem{Kind: Late, Span: where,
				Detail: "arrived after its turn was decided: the verdict did not read it (send the turn's spans together, or set " + semconv.TurnUnits + ")"})
		}
		out = append(out, r)
	}
	// Bound what waits for a verdict: the oldest traces go first.
	for len(w.traces) > maxTraces && len(w.order) > 0 {
		delete(w.traces, w.order[0])
		w.order = w.order[1:]
	}
	if len(w.order) > 2*maxTraces {
		kept := w.order[:0]
		for _, id := range w.order {
			if _, ok := w.traces[id]; ok {
				kept = append(kept, id)
			}
		}
		w.order = kept
	}
	return out, nil
}

// WriteText writes a report for a person: the turn, its verdict, then each
// problem on a line of its own.
func WriteText(w io.Writer, r Report) error {
	head := fmt.Sprintf("turn %d  trace %s", r.Turn, r.Trace)
	if r.Verdict != nil {
		head += "  verdict " + r.Verdict.Cause
		if r.Verdict.Forced != "" {
			head += " (forced: " + r.Verdict.Forced + ")"
		}
	}
	faults := 0
	for _, p := range r.Problems {
		if p.Fault() {
			faults++
		}
	}
	status := "clean"
	if faults > 0 {
		status = fmt.Sprintf("%d faults", faults)
	}
	if _, err := fmt.Fprintf(w, "%s  %s\n", head, status); err != nil {
		return err
	}
	if r.Verdict != nil {
		if _, err := fmt.Fprintf(w, "  evidence  %s\n", r.Verdict.Evidence); err != nil {
			return err
		}
	}
	for _, p := range r.Problems {
		if _, err := fmt.Fprintf(w, "  %s\n", p); err != nil {
			return err
		}
	}
	return nil
}
