package verdicts

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/internal/follow"
)

// DefaultPoll is how often Wait reads the file again.
const DefaultPoll = 100 * time.Millisecond

// Verdict is one turn's verdict as the collector decided it.
type Verdict struct {
	TraceID   string   `json:"trace_id"`
	Cause     string   `json:"cause"`
	Causes    []string `json:"causes"`
	Evidence  string   `json:"evidence"`
	Rules     string   `json:"rules_version"`
	Forced    string   `json:"forced,omitempty"`
	Turn      int64    `json:"turn"`
	Underruns int64    `json:"underruns"`
	Silent    float64  `json:"silent"`
	// Implicated lists the causes of the verdict's percause.implicated
	// events (what the verdict count connector counts).
	Implicated []string `json:"implicated"`
}

// Reader follows one verdict file.
type Reader struct {
	path string

	mu       sync.Mutex
	file     *follow.File
	verdicts map[string]Verdict
	broken   int
}

// NewReader follows the verdict file at path (it need not exist yet).
func NewReader(path string) *Reader {
	return &Reader{path: path, file: follow.New(path), verdicts: map[string]Verdict{}}
}

// Broken is how many lines could not be read as OTLP JSON so far.
func (r *Reader) Broken() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.broken
}

// Refresh reads what was appended to the file since the last call. A file
// that does not exist yet has no verdicts.
func (r *Reader) Refresh() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.file.Lines(func(line []byte) {
		vs, err := Parse(line)
		if err != nil {
			r.broken++
			return
		}
		for _, v := range vs {
			r.verdicts[v.TraceID] = v
		}
	})
	if err != nil {
		return fmt.Errorf("verdicts: %w", err)
	}
	return nil
}

// Get returns the verdict of the turn with trace ID id (hex), if read.
func (r *Reader) Get(id string) (Verdict, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.verdicts[id]
	return v, ok
}

// All returns every verdict read so far, by trace ID.
func (r *Reader) All() map[string]Verdict {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]Verdict, len(r.verdicts))
	for k, v := range r.verdicts {
		out[k] = v
	}
	return out
}

// Wait reads the file until every trace ID in ids has a verdict or ctx ends;
// it returns the verdicts found and an error naming how many are missing.
func (r *Reader) Wait(ctx context.Context, ids []string) (map[string]Verdict, error) {
	t := time.NewTicker(DefaultPoll)
	defer t.Stop()
	for {
		if err := r.Refresh(); err != nil {
			return nil, err
		}
		out := make(map[string]Verdict, len(ids))
		for _, id := range ids {
			if v, ok := r.Get(id); ok {
				out[id] = v
			}
		}
		if len(out) == len(ids) {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return out, fmt.Errorf("verdicts: %d of %d turns have no verdict in %s: %w", len(ids)-len(out), len(ids), r.path, ctx.Err())
		case <-t.C:
		}
	}
}

var unmarshaler = &ptrace.JSONUnmarshaler{}

// Parse reads one OTLP JSON export request and returns its verdict spans.
func Parse(line []byte) ([]Verdict, error) {
	td, err := unmarshaler.UnmarshalTraces(line)
	if err != nil {
		return nil, fmt.Errorf("verdicts: %w", err)
	}
	var out []Verdict
	rss := td.ResourceSpans()
	for i := 0; i < rss.Len(); i++ {
		sss := rss.At(i).ScopeSpans()
		for j := 0; j < sss.Len(); j++ {
			spans := sss.At(j).Spans()
			for k := 0; k < spans.Len(); k++ {
				if s := spans.At(k); s.Name() == semconv.SpanVerdict {
					out = append(out, FromSpan(s))
				}
			}
		}
	}
	return out, nil
}

// FromSpan reads one percause.verdict span.
func FromSpan(s ptrace.Span) Verdict {
	a := s.Attributes()
	v := Verdict{
		TraceID:   s.TraceID().String(),
		Cause:     str(a, semconv.VerdictCause),
		Evidence:  str(a, semconv.VerdictEvidence),
		Rules:     str(a, semconv.VerdictRulesVersion),
		Forced:    str(a, semconv.VerdictForced),
		Turn:      integer(a, semconv.TurnIndex),
		Underruns: integer(a, semconv.VerdictUnderruns),
	}
	if x, ok := a.Get(semconv.VerdictSilent); ok && x.Type() == pcommon.ValueTypeDouble {
		v.Silent = x.Double()
	}
	if x, ok := a.Get(semconv.VerdictCauses); ok && x.Type() == pcommon.ValueTypeSlice {
		sl := x.Slice()
		for i := 0; i < sl.Len(); i++ {
			v.Causes = append(v.Causes, sl.At(i).AsString())
		}
	}
	evs := s.Events()
	for i := 0; i < evs.Len(); i++ {
		if ev := evs.At(i); ev.Name() == semconv.EventImplicated {
			v.Implicated = append(v.Implicated, str(ev.Attributes(), semconv.VerdictCause))
		}
	}
	return v
}

func str(m pcommon.Map, k string) string {
	if x, ok := m.Get(k); ok {
		return x.AsString()
	}
	return ""
}

func integer(m pcommon.Map, k string) int64 {
	if x, ok := m.Get(k); ok && x.Type() == pcommon.ValueTypeInt {
		return x.Int()
	}
	return 0
}
