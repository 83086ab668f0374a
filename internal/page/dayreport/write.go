package dayreport

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/percause/percause/instr/semconv"
)

// Writing a day: one row per turn, its summary, or JSON.

// turnsOf writes "1 turn", "2 turns".
func turnsOf(n int) string {
	if n == 1 {
		return "1 turn"
	}
	return fmt.Sprintf("%d turns", n)
}

// WriteTable writes one row per turn, in time order: its time (UTC), its
// launch (the first 8 characters of its service.instance.id), index,
// trace, link, verdict and evidence; a line where a launch begins (the
// turn's launch is not the row's above) names the launch and when it
// began, so a relaunch's turn 1 does not sit under the last launch's turns
// with nothing between them.
func WriteTable(w io.Writer, turns []JudgedTurn) error {
	bw := &errWriter{w: w}
	bw.printf("%-8s  %-8s  %-5s %-8s  %-11s %-10s %s\n", "time", "launch", "turn", "trace", "link", "verdict", "evidence")
	prev := ""
	for i, t := range turns {
		verdict, link := t.Cause, t.Link
		if verdict == "" {
			verdict = "(none)"
		}
		if link == "" {
			link = semconv.LinkUnknown
		}
		launch := shortID(t.Launch)
		if i == 0 || t.Launch != prev {
			began := ""
			if t.Start != 0 {
				began = " from " + t.Start.AsTime().UTC().Format("2006-01-02 15:04:05") + " UTC"
			}
			bw.printf("── launch %s%s\n", launch, began)
			prev = t.Launch
		}
		at := "-"
		if t.Start != 0 {
			at = t.Start.AsTime().UTC().Format("15:04:05")
		}
		ev := t.Evidence
		if len(t.Causes) > 1 {
			ev = "[" + strings.Join(t.Causes, ", ") + "] " + ev
		}
		bw.printf("%-8s  %-8s  %-5d %-8s  %-11s %-10s %s\n", at, launch, t.Turn, shortID(t.Trace), link, verdict, ev)
	}
	return bw.err
}

// shortID is the first 8 characters of an ID, "-" for none.
func shortID(id string) string {
	switch {
	case id == "":
		return "-"
	case len(id) > 8:
		return id[:8]
	}
	return id
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
	state := "not done"
	if s.Done.Done {
		state = "done"
	}
	bw.printf("%s:\n", state)
	for _, r := range s.Reasons() {
		bw.printf("  %s %s: %s\n", mark(r.OK), r.Part, r.Detail)
	}
	return bw.err
}

// WriteJSON writes one object per turn, then one with the summary
// ({"summary": …}).
func WriteJSON(w io.Writer, turns []JudgedTurn, s *Summary) error {
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
