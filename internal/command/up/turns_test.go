package up

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/percause/percause/instr/semconv"
)

// testdata/verdicts.jsonl is the verdict file of two lab runs through the
// real collector: stale-pool (installation 2d6585b6…, its pool turn
// cd38bbb8…, pool_reset 0→2) and leak (installation 824a8cf7…, state on
// its turns 4 and 5).
const (
	poolInstallation  = "2d6585b6-ae68-4fba-9330-ac9864dc8aa8"
	poolTurn          = "cd38bbb8c094f20416a39f9d329435f0"
	stateInstallation = "824a8cf7-117c-4676-a3e6-2012d307f173"
	stateTurn5        = "ee16bfa694b6905f91e14656b070f7fd"
	verdictsFile      = "testdata/verdicts.jsonl"
)

// poolTurnEnded is when the pool turn ended (its percause.turn.time).
var poolTurnEnded = time.Unix(0, 1796138614702317778)

func TestFindTurn(t *testing.T) {
	for _, tc := range []struct {
		name, installation, cause string
		since                     time.Time
		want                      string // trace ID; "" for none
	}{
		{"the pool turn", poolInstallation, semconv.CausePool, time.Time{}, poolTurn},
		{"the pool turn, since just before it", poolInstallation, semconv.CausePool, poolTurnEnded.Add(-time.Second), poolTurn},
		{"nothing since after it", poolInstallation, semconv.CausePool, poolTurnEnded.Add(time.Millisecond), ""},
		{"the latest state turn of two", stateInstallation, semconv.CauseState, time.Time{}, stateTurn5},
		{"no state turn on the pool installation", poolInstallation, semconv.CauseState, time.Time{}, ""},
		{"no pool turn on the state installation", stateInstallation, semconv.CausePool, time.Time{}, ""},
		{"an installation never seen", "e2e-nobody", semconv.CausePool, time.Time{}, ""},
	} {
		got, ok, err := findTurn(verdictsFile, tc.installation, tc.cause, tc.since)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if (tc.want == "") == ok || got.TraceID != tc.want {
			t.Errorf("%s: %q %v, want %q", tc.name, got.TraceID, ok, tc.want)
		}
	}
	got, _, _ := findTurn(verdictsFile, poolInstallation, semconv.CausePool, time.Time{})
	if got.Turn != 2 || got.PoolBefore != 0 || got.PoolAfter != 2 || !got.HasPool || !got.HasPoolBefore ||
		got.Link != semconv.LinkWifi || !got.Ended.Equal(poolTurnEnded) || got.Installation != poolInstallation {
		t.Errorf("the pool turn reads %+v", got)
	}
	if _, ok, err := findTurn(filepath.Join(t.TempDir(), "none.jsonl"), poolInstallation, semconv.CausePool, time.Time{}); ok || err != nil {
		t.Errorf("a verdict file not written yet: %v %v", ok, err)
	}
}

// TestFindTurnSkipsWhatItCannotRead: a broken line, a line longer than
// the bound and a last line still being written are skipped; the turns
// around them are found.
func TestFindTurnSkipsWhatItCannotRead(t *testing.T) {
	good, err := os.ReadFile(verdictsFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(good, []byte("\n"))
	var b bytes.Buffer
	b.WriteString(`{"resourceSpans": [ broken ` + poolInstallation + "\n")
	b.WriteString(`"` + poolInstallation + `"` + strings.Repeat("x", maxVerdictLine+10) + "\n")
	b.Write(lines[1]) // the pool turn
	b.Write(bytes.TrimSuffix(lines[4], []byte("\n")))
	path := filepath.Join(t.TempDir(), "verdicts.jsonl")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, ok, err := findTurn(path, poolInstallation, semconv.CausePool, time.Time{})
	if err != nil || !ok || got.TraceID != poolTurn {
		t.Errorf("the pool turn behind a broken and a long line: %q %v %v", got.TraceID, ok, err)
	}
	if _, ok, _ := findTurn(path, stateInstallation, semconv.CauseNone, time.Time{}); ok {
		t.Error("a last line without its newline was read")
	}
}

// FuzzTurnsOf: any line of the verdict file reads without a panic, and a
// verdict span read has its trace ID.
func FuzzTurnsOf(f *testing.F) {
	good, err := os.ReadFile(verdictsFile)
	if err != nil {
		f.Fatal(err)
	}
	for _, l := range bytes.Split(good, []byte("\n"))[:2] {
		f.Add(l)
	}
	f.Add([]byte(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"name":"percause.verdict","attributes":[{"key":"percause.turn.time","value":{"stringValue":"x"}}]}]}]}]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, tr := range turnsOf(line) {
			if len(tr.TraceID) != 32 {
				t.Fatalf("a verdict with trace ID %q", tr.TraceID)
			}
		}
	})
}
