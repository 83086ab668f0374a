// Package dayreport is a day of turns with their verdicts, read from the
// traces the collector wrote (OTLP JSON lines, one export request a line),
// and its renderings: the per-turn table, the day's summary (turns by cause
// and the "done" reading) and one JSON object per turn. `percause lines`
// prints them; a page can render the same Day.
package dayreport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
)

// Turn is one turn: its readings from voice.turn and its verdict.
type Turn struct {
	Trace    string   `json:"trace"`
	Turn     int64    `json:"turn"`
	Link     string   `json:"link"`
	Cause    string   `json:"cause"` // "" when no verdict was found
	Causes   []string `json:"causes"`
	Evidence string   `json:"evidence"`
	Forced   string   `json:"forced,omitempty"`
	// The done reading's readings; nil when the turn did not report them.
	SpeechEndToPost *float64 `json:"speech_end_to_post,omitempty"`
	NotSent         *float64 `json:"not_sent,omitempty"`
	PoolResets      *int64   `json:"pool_resets,omitempty"`
	// Start orders the turns of a day (the voice.turn span's end).
	Start pcommon.Timestamp `json:"-"`
}

// Day is the turns read, in the order they happened.
type Day struct {
	Turns []Turn
	// Broken counts lines of the traces file that could not be read.
	Broken int
}

// Read reads the traces file: every voice.turn span and every
// percause.verdict span, joined by trace.
func Read(r io.Reader) (*Day, error) {
	byTrace := map[string]*Turn{}
	get := func(id string) *Turn {
		t, ok := byTrace[id]
		if !ok {
			t = &Turn{Trace: id}
			byTrace[id] = t
		}
		return t
	}
	day := &Day{}
	un := &ptrace.JSONUnmarshaler{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		td, err := un.UnmarshalTraces(line)
		if err != nil {
			day.Broken++
			continue
		}
		rss := td.ResourceSpans()
		for i := 0; i < rss.Len(); i++ {
			sss := rss.At(i).ScopeSpans()
			for j := 0; j < sss.Len(); j++ {
				spans := sss.At(j).Spans()
				for k := 0; k < spans.Len(); k++ {
					s := spans.At(k)
					switch s.Name() {
					case semconv.SpanVoiceTurn:
						readTurn(get(s.TraceID().String()), s)
					case semconv.SpanVerdict:
						readVerdict(get(s.TraceID().String()), s)
					}
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("dayreport: %w", err)
	}
	for _, t := range byTrace {
		day.Turns = append(day.Turns, *t)
	}
	sort.Slice(day.Turns, func(i, j int) bool {
		a, b := day.Turns[i], day.Turns[j]
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		if a.Turn != b.Turn {
			return a.Turn < b.Turn
		}
		return a.Trace < b.Trace
	})
	return day, nil
}

func readTurn(t *Turn, s ptrace.Span) {
	a := s.Attributes()
	t.Start = s.EndTimestamp()
	if v, ok := a.Get(semconv.TurnIndex); ok && t.Turn == 0 {
		t.Turn = v.Int()
	}
	if v, ok := a.Get(semconv.NetworkConnectionType); ok && t.Link == "" {
		t.Link = v.AsString()
	}
	if v, ok := number(a, semconv.TurnSpeechEndPost); ok {
		t.SpeechEndToPost = &v
	}
	if v, ok := number(a, semconv.TurnNotSent); ok {
		t.NotSent = &v
	}
	if v, ok := a.Get(semconv.PoolResets); ok && v.Type() == pcommon.ValueTypeInt {
		n := v.Int()
		t.PoolResets = &n
	}
}

func readVerdict(t *Turn, s ptrace.Span) {
	a := s.Attributes()
	str := func(k string) string {
		if v, ok := a.Get(k); ok {
			return v.AsString()
		}
		return ""
	}
	t.Cause, t.Evidence, t.Forced = str(semconv.VerdictCause), str(semconv.VerdictEvidence), str(semconv.VerdictForced)
	if v, ok := a.Get(semconv.VerdictCauses); ok && v.Type() == pcommon.ValueTypeSlice {
		t.Causes = nil
		for i := 0; i < v.Slice().Len(); i++ {
			t.Causes = append(t.Causes, v.Slice().At(i).AsString())
		}
	}
	if v, ok := a.Get(semconv.TurnIndex); ok && v.Type() == pcommon.ValueTypeInt {
		t.Turn = v.Int()
	}
	if l := str(semconv.NetworkConnectionType); l != "" {
		t.Link = l
	}
	// The verdict carries the turn's time and the done reading's readings
	// too, so a file of verdicts alone reads as a day; a voice.turn span,
	// when the file has it, says the same.
	if v, ok := a.Get(semconv.VerdictTurnTime); ok && v.Type() == pcommon.ValueTypeInt && t.Start == 0 {
		t.Start = pcommon.Timestamp(v.Int())
	}
	if v, ok := number(a, semconv.TurnSpeechEndPost); ok && t.SpeechEndToPost == nil {
		t.SpeechEndToPost = &v
	}
	if v, ok := number(a, semconv.TurnNotSent); ok && t.NotSent == nil {
		t.NotSent = &v
	}
	if v, ok := a.Get(semconv.PoolResets); ok && v.Type() == pcommon.ValueTypeInt && t.PoolResets == nil {
		n := v.Int()
		t.PoolResets = &n
	}
}

func number(a pcommon.Map, k string) (float64, bool) {
	v, ok := a.Get(k)
	if !ok {
		return 0, false
	}
	switch v.Type() {
	case pcommon.ValueTypeDouble:
		return v.Double(), !math.IsNaN(v.Double())
	case pcommon.ValueTypeInt:
		return float64(v.Int()), true
	}
	return 0, false
}

// Summary is the day in numbers.
type Summary struct {
	Turns int `json:"turns"`
	// ByCause counts the turns by primary cause; NoVerdict the turns that
	// got none.
	ByCause   map[string]int `json:"by_cause"`
	NoVerdict int            `json:"no_verdict"`
	Done      Done           `json:"done"`
}

// Done is the criterion: every turn's speech-end-to-post within the budget,
// pool_reset at 0, no "not sent" wait.
type Done struct {
	Done bool `json:"done"`
	// Budget is the speech-end-to-post allowance, seconds.
	Budget float64 `json:"budget"`
	// PostWithin counts the turns within the budget, PostOver those over
	// it, PostMissing those that did not report it; SlowestPost is the
	// slowest reported.
	PostWithin  int     `json:"post_within"`
	PostOver    int     `json:"post_over"`
	PostMissing int     `json:"post_missing"`
	SlowestPost float64 `json:"slowest_post"`
	// PoolResetMax is the highest tally reported (-1: none reported).
	PoolResetMax int64 `json:"pool_reset_max"`
	// NotSentTurns counts the turns that showed a "not sent" wait;
	// NotSentMax is the longest.
	NotSentTurns int     `json:"not_sent_turns"`
	NotSentMax   float64 `json:"not_sent_max"`
	// NotSentMissing counts the turns that did not report the wait.
	NotSentMissing int `json:"not_sent_missing"`
}

// Summarize reads the day against the criterion with the given budget.
func (d *Day) Summarize(budget float64) Summary {
	s := Summary{Turns: len(d.Turns), ByCause: map[string]int{}, Done: Done{Budget: budget, PoolResetMax: -1}}
	for _, t := range d.Turns {
		if t.Cause == "" {
			s.NoVerdict++
		} else {
			s.ByCause[t.Cause]++
		}
		switch {
		case t.SpeechEndToPost == nil:
			s.Done.PostMissing++
		case *t.SpeechEndToPost <= budget:
			s.Done.PostWithin++
		default:
			s.Done.PostOver++
		}
		if t.SpeechEndToPost != nil {
			s.Done.SlowestPost = math.Max(s.Done.SlowestPost, *t.SpeechEndToPost)
		}
		if t.PoolResets != nil && *t.PoolResets > s.Done.PoolResetMax {
			s.Done.PoolResetMax = *t.PoolResets
		}
		if t.NotSent == nil {
			s.Done.NotSentMissing++
		}
		if t.NotSent != nil && *t.NotSent > 0 {
			s.Done.NotSentTurns++
			s.Done.NotSentMax = math.Max(s.Done.NotSentMax, *t.NotSent)
		}
	}
	// Done only on readings: a part nobody reported is not done.
	s.Done.Done = s.Turns > 0 && s.Done.PostOver == 0 && s.Done.PostMissing == 0 && s.Done.PoolResetMax == 0 &&
		s.Done.NotSentTurns == 0 && s.Done.NotSentMissing == 0
	return s
}

// WriteTable writes the per-turn table: turn, trace, link, verdict, evidence.
func WriteTable(w io.Writer, turns []Turn) error {
	bw := &errWriter{w: w}
	bw.printf("%-5s %-8s  %-11s %-10s %s\n", "turn", "trace", "link", "verdict", "evidence")
	for _, t := range turns {
		verdict, link := t.Cause, t.Link
		if verdict == "" {
			verdict = "(none)"
		}
		if link == "" {
			link = semconv.LinkUnknown
		}
		short := t.Trace
		if len(short) > 8 {
			short = short[:8]
		}
		ev := t.Evidence
		if len(t.Causes) > 1 {
			ev = "[" + strings.Join(t.Causes, ", ") + "] " + ev
		}
		bw.printf("%-5d %-8s  %-11s %-10s %s\n", t.Turn, short, link, verdict, ev)
	}
	return bw.err
}

// WriteSummary writes the day's summary: turns by cause and the done reading.
func WriteSummary(w io.Writer, s Summary) error {
	bw := &errWriter{w: w}
	var parts []string
	for _, c := range semconv.Causes {
		if n := s.ByCause[c]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", c, n))
		}
	}
	if s.NoVerdict > 0 {
		parts = append(parts, fmt.Sprintf("no verdict %d", s.NoVerdict))
	}
	bw.printf("%d turns by cause: %s\n", s.Turns, orNone(strings.Join(parts, ", ")))
	d := s.Done
	state := "not done"
	if d.Done {
		state = "done"
	}
	bw.printf("%s:\n", state)
	post := fmt.Sprintf("%d of %d turns", d.PostWithin, s.Turns)
	if d.PostWithin+d.PostOver > 0 {
		post += fmt.Sprintf(", slowest %.2f s", d.SlowestPost)
	}
	if d.PostMissing > 0 {
		post += fmt.Sprintf(", %d did not report it", d.PostMissing)
	}
	bw.printf("  %s speech-end-to-post within %.2f s: %s\n", mark(d.PostOver == 0 && d.PostMissing == 0 && s.Turns > 0), d.Budget, post)
	pool := "no turn reported it"
	if d.PoolResetMax >= 0 {
		pool = fmt.Sprintf("highest tally %d", d.PoolResetMax)
	}
	bw.printf("  %s pool_reset at 0: %s\n", mark(d.PoolResetMax == 0), pool)
	ns := "none shown"
	if d.NotSentTurns > 0 {
		ns = fmt.Sprintf("%d turns, longest %.2f s", d.NotSentTurns, d.NotSentMax)
	}
	if d.NotSentMissing > 0 {
		ns += fmt.Sprintf(", %d did not report it", d.NotSentMissing)
	}
	bw.printf("  %s no \"not sent\" wait: %s\n", mark(d.NotSentTurns == 0 && d.NotSentMissing == 0 && s.Turns > 0), ns)
	return bw.err
}

// WriteJSON writes one object per turn, then one with the summary
// ({"summary": …}).
func WriteJSON(w io.Writer, turns []Turn, s *Summary) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, t := range turns {
		if t.Causes == nil {
			t.Causes = []string{}
		}
		if err := enc.Encode(t); err != nil {
			return err
		}
	}
	if s != nil {
		return enc.Encode(struct {
			Summary Summary `json:"summary"`
		}{*s})
	}
	return nil
}

func mark(ok bool) string {
	if ok {
		return "yes"
	}
	return "NO "
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}
