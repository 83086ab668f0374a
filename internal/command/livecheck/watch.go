package livecheck

import (
	"fmt"
	"io"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/leaf/follow"
	"github.com/percause/percause/internal/leaf/plural"
	"github.com/percause/percause/verdict"
)

// maxTraces bounds the traces a Watcher holds before their verdict.
const maxTraces = 10000

// Watcher follows a traces file (OTLP JSON lines, every span the pipeline
// saw, verdict spans included) and reports each turn once its verdict is
// written, every span that arrives for a turn already reported, and, with a
// decision window, each trace that still has only tts.take spans once the
// window has passed since its first span.
type Watcher struct {
	file     *follow.File
	traces   map[string][]Span
	order    []string
	reported map[string]bool
	// Broken counts lines that could not be read.
	Broken int

	window    time.Duration
	now       func() time.Time
	firstSeen map[string]time.Time
	takesOnly map[string]bool // reported as takes without their turn
}

// WatchOption configures a Watcher.
type WatchOption func(*Watcher)

// WithDecisionWindow reports a trace that has only tts.take spans once d
// has passed since its first span was read: a turn is decided from its
// voice.turn, and none came in the time a turn waits for its spans.
func WithDecisionWindow(d time.Duration) WatchOption {
	return func(w *Watcher) { w.window = d }
}

// withClock replaces the clock (tests).
func withClock(now func() time.Time) WatchOption {
	return func(w *Watcher) { w.now = now }
}

// NewWatcher follows path (it need not exist yet).
func NewWatcher(path string, opts ...WatchOption) *Watcher {
	w := &Watcher{file: follow.New(path), traces: map[string][]Span{}, reported: map[string]bool{},
		now: time.Now, firstSeen: map[string]time.Time{}, takesOnly: map[string]bool{}}
	for _, o := range opts {
		o(w)
	}
	return w
}

var unmarshaler = &ptrace.JSONUnmarshaler{}

// Refresh reads what was written since the last call and returns the
// reports it completes.
func (w *Watcher) Refresh() ([]Report, error) {
	var out []Report
	now := w.now()
	late := map[string][]Span{}
	err := w.file.Lines(func(line []byte) {
		td, err := unmarshaler.UnmarshalTraces(line)
		if err != nil {
			w.Broken++
			return
		}
		var verdicts []string
		for res, s := range verdict.Spans(td) {
			id := s.TraceID().String()
			if w.reported[id] {
				late[id] = append(late[id], Span{res, s})
				continue
			}
			if _, ok := w.traces[id]; !ok {
				w.order = append(w.order, id)
				w.firstSeen[id] = now
			}
			w.traces[id] = append(w.traces[id], Span{res, s})
			if s.Name() == semconv.SpanVerdict {
				verdicts = append(verdicts, id)
			}
		}
		for _, id := range verdicts {
			out = append(out, Check(id, w.traces[id]))
			w.forget(id)
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
	out = append(out, w.takesWithoutTurn(now)...)
	// Bound what waits for a verdict: the oldest traces go first.
	for len(w.traces) > maxTraces && len(w.order) > 0 {
		w.forget(w.order[0])
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

func (w *Watcher) forget(id string) {
	delete(w.traces, id)
	delete(w.firstSeen, id)
	delete(w.takesOnly, id)
}

// takesWithoutTurn reports, once each, the traces that have had only
// tts.take spans for the decision window: the engine's takes of a turn the
// phone never sent here, or sent in another trace.
func (w *Watcher) takesWithoutTurn(now time.Time) []Report {
	if w.window <= 0 {
		return nil
	}
	var out []Report
	for _, id := range w.order {
		spans, ok := w.traces[id]
		if !ok || w.takesOnly[id] || now.Sub(w.firstSeen[id]) < w.window {
			continue
		}
		var takes []string
		for _, s := range spans {
			if s.Span.Name() != semconv.SpanTTSTake {
				takes = nil
				break
			}
			name := "?"
			if v, ok := s.Span.Attributes().Get(semconv.TakeID); ok {
				name = v.AsString()
			}
			takes = append(takes, name)
		}
		if len(takes) == 0 {
			continue
		}
		w.takesOnly[id] = true
		out = append(out, Report{Trace: id, TakesOnly: true, Problems: []Problem{{Kind: Structure, Span: "trace",
			Detail: fmt.Sprintf("has only tts.take spans (%s) after the decision window (%s): no %s arrived, so no turn is decided "+
				"(the phone must send its %s to this collector, and the engine continue the phone's traceparent)",
				strings.Join(takes, ", "), w.window, semconv.SpanVoiceTurn, semconv.SpanVoiceTurn)}}})
	}
	return out
}

// Summary counts what a check reported, for its end.
type Summary struct {
	Turns     int `json:"turns"` // turns reported with their verdict
	Clean     int `json:"clean"`
	Faulty    int `json:"with_faults"`
	TakesOnly int `json:"takes_only"` // traces that had only tts.take spans
	Late      int `json:"late"`       // reports of spans that came after their turn was decided
}

// Add counts one report.
func (s *Summary) Add(r Report) {
	switch {
	case r.Verdict != nil && r.Clean:
		s.Turns++
		s.Clean++
	case r.Verdict != nil:
		s.Turns++
		s.Faulty++
	case r.TakesOnly:
		s.TakesOnly++
	default:
		s.Late++
	}
}

// WriteSummary writes what a check reported, for a person.
func WriteSummary(w io.Writer, s Summary) error {
	line := fmt.Sprintf("summary: %s reported, %d clean, %d with faults", plural.N(s.Turns, "turn"), s.Clean, s.Faulty)
	if s.TakesOnly > 0 {
		line += fmt.Sprintf("; %s with only tts.take spans (no turn)", plural.N(s.TakesOnly, "trace"))
	}
	if s.Late > 0 {
		line += fmt.Sprintf("; %s with spans after %s verdict", plural.N(s.Late, "trace"), plural.Word(s.Late, "its", "their"))
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

// WriteText writes a report for a person: the turn, its verdict, then each
// problem on a line of its own.
func WriteText(w io.Writer, r Report) error {
	head := fmt.Sprintf("turn %d  trace %s", r.Turn, r.Trace)
	if r.Verdict == nil {
		head = "trace " + r.Trace
	}
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
		status = plural.N(faults, "fault")
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
