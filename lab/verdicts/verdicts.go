package verdicts

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/percause/percause/internal/leaf/follow"
	"github.com/percause/percause/internal/leaf/plural"
	"github.com/percause/percause/verdict"
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
			missing := len(ids) - len(out)
			return out, fmt.Errorf("verdicts: %d of %s %s no verdict in %s: %w", missing, plural.N(len(ids), "turn"), plural.Word(missing, "has", "have"), r.path, ctx.Err())
		case <-t.C:
		}
	}
}

// Parse reads one line of the verdict file (one OTLP JSON export request)
// and returns its verdicts, as the verdict model reads them.
func Parse(line []byte) ([]Verdict, error) {
	rs, err := verdict.Parse(line)
	if err != nil {
		return nil, fmt.Errorf("verdicts: %w", err)
	}
	out := make([]Verdict, len(rs))
	for i := range rs {
		out[i] = fromRecord(&rs[i])
	}
	return out, nil
}

// fromRecord is the lab's view of a verdict: what it compares with the
// scenario it ran.
func fromRecord(r *verdict.Record) Verdict {
	return Verdict{TraceID: r.TraceID.String(), Cause: r.Cause, Causes: r.Causes, Evidence: r.Evidence,
		Rules: r.Rules, Forced: r.Forced, Turn: r.Index, Underruns: r.Underruns, Silent: r.Silent,
		Implicated: r.Implicated}
}
